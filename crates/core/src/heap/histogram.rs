//! The class histogram: instances and bytes per class over every space, as
//! `jcmd <pid> GC.class_histogram -all` counts them (`memory/heapInspection.cpp`: every object
//! the heap walk meets, dead or alive; a class whose mirror is not set up yet — a dormant CDS
//! archived object's — is not counted).

use super::Note;
use super::spaces::{self, Space};
use super::walk::{KlassMap, ObjectLayout, WalkStats, Walker};
use crate::error::Error;
use crate::memory::ReadMemory;
use crate::threads::list::ThreadLayout;
use crate::vm::VmModel;
use crate::vm::java::JavaReader;

/// One class's line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Row {
    /// Objects of the class.
    pub instances: u64,
    /// Their bytes (each object's size, aligned to `ObjectAlignmentInBytes`).
    pub bytes: u64,
    /// The class's external name as jcmd prints it (`java.lang.String`, `[B`,
    /// `[Ljava.lang.String;`, a hidden class's `Foo$$Lambda/0x...`).
    pub class_name: String,
    /// `name@version` of the class's named module (`java.base@17.0.15`), `None` in the unnamed
    /// module (or when it could not be read).
    pub module: Option<String>,
    /// The `Klass*` (two loaders' classes of one name are two rows).
    pub klass: u64,
}

/// A class histogram of a heap.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Histogram {
    /// The classes, in jcmd's order ([`sort`]).
    pub rows: Vec<Row>,
    /// Spaces whose walk stopped early, and why.
    pub notes: Vec<Note>,
    /// The spaces walked.
    pub spaces: Vec<Space>,
    /// The walk's figures.
    pub stats: WalkStats,
    /// Objects of classes without a mirror (not counted, as jcmd does not).
    pub dormant: u64,
    /// The target's JDK feature release (JDK 8 has no modules, and its jmap its own header).
    pub jdk: u32,
}

impl Histogram {
    /// Total instances and bytes over the rows.
    pub fn total(&self) -> (u64, u64) {
        self.rows
            .iter()
            .fold((0, 0), |(i, b), r| (i + r.instances, b + r.bytes))
    }
}

/// Sorts rows as `KlassInfoEntry::compare` (`heapInspection.cpp`): bytes descending, then array
/// classes (names starting `[`) before instance classes, then the names' bytes.
pub fn sort(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| {
                let (da, db) = (a.class_name.starts_with('['), b.class_name.starts_with('['));
                db.cmp(&da)
            })
            .then_with(|| a.class_name.as_bytes().cmp(b.class_name.as_bytes()))
    });
}

/// Instances and bytes per klass over `spaces` (one walker, its own reader), the notes of the
/// spaces whose walk stopped early, and the walk's figures.
type Counts = (KlassMap<(u64, u64)>, Vec<Note>, WalkStats);

fn count(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    layout: ObjectLayout,
    spaces: &[Space],
    tlabs: &[super::Tlab],
) -> Result<Counts, Error> {
    let reader = JavaReader::new(vm, mem)?;
    let mut walker = Walker::sized_by(mem, &reader, layout);
    let mut counts: KlassMap<(u64, u64)> = KlassMap::default();
    let mut notes = Vec::new();
    // A run of objects of one class is summed here and added to `counts` when it ends.
    let mut run = (0u64, 0u64, 0u64);
    for space in spaces {
        let note = walker.walk(space, tlabs, &mut |_, klass, size, _| {
            if run.0 != klass {
                if run.1 > 0 {
                    let c = counts.entry(run.0).or_default();
                    c.0 += run.1;
                    c.1 += run.2;
                }
                run = (klass, 0, 0);
            }
            run.1 += 1;
            run.2 += size;
        });
        notes.extend(note);
    }
    if run.1 > 0 {
        let c = counts.entry(run.0).or_default();
        c.0 += run.1;
        c.1 += run.2;
    }
    let stats = walker.stats;
    drop(walker);
    Ok((counts, notes, stats))
}

/// What a walk of the whole heap needs: the collector's spaces, every thread's TLAB (its
/// unused tail jumped over), the object layout.
///
/// # Errors
/// As [`spaces::spaces`], `spaces::tlabs` and [`ObjectLayout::new`].
pub(crate) fn walk_plan(
    vm: &VmModel,
    mem: &dyn ReadMemory,
) -> Result<(Vec<Space>, Vec<super::Tlab>, ObjectLayout), Error> {
    let spaces = spaces::spaces(vm, mem)?;
    let threads = ThreadLayout::new(vm)?
        .thread_addresses(mem)
        .map(|(_, t)| t)
        .unwrap_or_default();
    let tlabs = spaces::tlabs(vm, mem, &threads)?;
    Ok((spaces, tlabs, ObjectLayout::new(vm, mem)?))
}

/// The most classes named (rows): more distinct klasses than this means a corrupt walk.
const MAX_ROWS: usize = 1 << 20;

/// Counts the objects of the heap of `vm` through `mem` (the JVM held still, or a core).
///
/// # Errors
/// As [`spaces::spaces`] (an unsupported collector, missing entries); [`Error::Vm`] when
/// the object layout entries are missing. A space that cannot be walked to its top is a
/// [`Note`], not an error.
pub fn histogram(vm: &VmModel, mem: &(dyn ReadMemory + Sync)) -> Result<Histogram, Error> {
    let (spaces, tlabs, layout) = walk_plan(vm, mem)?;
    let halves = super::walk::walk_in_halves(&spaces, |half| count(vm, mem, layout, half, &tlabs));
    let mut counts: KlassMap<(u64, u64)> = KlassMap::default();
    let mut notes = Vec::new();
    let mut stats = WalkStats::default();
    for half in halves {
        let (half_counts, half_notes, half_stats) = half?;
        if counts.is_empty() {
            counts = half_counts;
        } else {
            for (klass, (n, b)) in half_counts {
                let c = counts.entry(klass).or_default();
                c.0 += n;
                c.1 += b;
            }
        }
        notes.extend(half_notes);
        stats.add(&half_stats);
    }
    let reader = JavaReader::new(vm, mem)?;
    let mut modules = crate::vm::java::ModuleNames::default();
    let mut rows = Vec::with_capacity(counts.len().min(MAX_ROWS));
    let mut dormant = 0;
    // JDK 9-14's VM-anonymous classes (lambdas) are named `Name/0x<Klass*>`
    // (`Klass::external_name`), told by a bit of `InstanceKlass::_misc_flags`.
    let anonymous = vm.offset("InstanceKlass", "_misc_flags").ok().zip(
        vm.int_opt("InstanceKlass::_misc_is_anonymous")
            .or_else(|| vm.int_opt("InstanceKlass::_misc_is_unsafe_anonymous")),
    );
    let mut anonymous8 = crate::threads::anonymous8::AnonymousNames::new(vm);
    for (klass, (instances, bytes)) in counts.into_iter().take(MAX_ROWS) {
        let mut class_name = reader
            .name_of_klass(klass)
            .map(|n| crate::vm::java::external_name(&n))
            .unwrap_or_else(|_| format!("<klass {klass:#x}>"));
        if let Some((flags_at, bit)) = anonymous
            && mem
                .read_u16(klass.wrapping_add(flags_at))
                .is_ok_and(|f| i64::from(f) & bit != 0)
        {
            class_name = format!("{class_name}/{klass:#018x}");
        } else if let Some(names) = anonymous8.as_mut()
            && let Some(hash) = names.hash(mem, klass)
        {
            // JDK 8: `Name/<the mirror's identity hash>`.
            class_name = format!("{class_name}/{hash}");
        }
        let mirror = reader.mirror_of(klass).unwrap_or(1);
        if mirror == 0 {
            dormant += instances;
            continue;
        }
        let module = modules
            .of_mirror(&reader, mirror)
            .as_deref()
            .map(str::to_string);
        rows.push(Row {
            instances,
            bytes,
            class_name,
            module,
            klass,
        });
    }
    sort(&mut rows);
    Ok(Histogram {
        rows,
        notes,
        spaces,
        stats,
        dormant,
        jdk: vm.major,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(bytes: u64, name: &str) -> Row {
        Row {
            instances: 1,
            bytes,
            class_name: name.into(),
            module: None,
            klass: 0,
        }
    }

    #[test]
    fn names_classes_as_jcmd() {
        let name = crate::vm::java::external_name;
        assert_eq!(name("[B"), "[B");
        assert_eq!(name("[Ljava/lang/String;"), "[Ljava.lang.String;");
        assert_eq!(name("[[Ljava/lang/Object;"), "[[Ljava.lang.Object;");
        assert_eq!(name("java/util/HashMap$Node"), "java.util.HashMap$Node");
        // A hidden class (a lambda proxy): `+0x<address>` printed as `/0x<address>`.
        assert_eq!(
            name("HeapTarget$$Lambda+0x00007f3c4c00a000"),
            "HeapTarget$$Lambda/0x00007f3c4c00a000"
        );
        assert_eq!(
            name("[Ljdk/internal/vm/FillerElement;"),
            "[Ljdk.internal.vm.FillerElement;"
        );
    }

    #[test]
    fn sorts_as_jcmd() {
        let mut rows = vec![
            row(16, "java.lang.Object"),
            row(16, "[I"),
            row(32, "b"),
            row(16, "[B"),
            row(16, "Z"),
        ];
        sort(&mut rows);
        let names: Vec<_> = rows.iter().map(|r| r.class_name.as_str()).collect();
        assert_eq!(names, ["b", "[B", "[I", "Z", "java.lang.Object"]);
    }
}
