//! The HotSpot VM model, read from the target's own introspection tables (issue 28, `inspect
//! threads`): `gHotSpotVMStructs`, `gHotSpotVMTypes`, `gHotSpotVMIntConstants` and
//! `gHotSpotVMLongConstants` ([`tables`]), the JDK version (`Abstract_VM_Version`), and the
//! `JVMFlag` table for the flags that decide how objects are laid out. `locate` uses the same
//! walk ([`find_perf_memory`]) for `PerfMemory` on stripped builds.
//!
//! Everything is looked up by HotSpot's own names (`JavaThread::_anchor`, `sizeof(Method)`,
//! `JavaThreadStatus::PARKED`), as the Serviceability Agent does (`HotSpotTypeDataBase`), so
//! the layouts follow each JDK build without hard-coded offsets; a missing entry is an error
//! that names it.

pub(crate) mod codec;
pub mod flags;
pub mod java;
pub mod paged;
pub mod tables;

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::error::{Error, VmEntry, VmError};
use crate::memory::ReadMemory;

/// Run-time addresses of `PerfMemory`'s static variables in the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfMemoryVars {
    /// `&PerfMemory::_start` (a `char*`: the region's address).
    pub start: u64,
    /// `&PerfMemory::_capacity` (a `size_t`: the region's size in bytes).
    pub capacity: u64,
    /// `&PerfMemory::_top` (a `char*`), when known.
    pub top: Option<u64>,
    /// `&PerfMemory::_initialized` (an `int`), when known.
    pub initialized: Option<u64>,
}

/// A field of a HotSpot type, as a `gHotSpotVMStructs` row describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The C++ type (`typeString`), when the row gives one.
    pub type_string: Option<String>,
    /// A static field (its `address` is meaningful) or a member (its `offset` is).
    pub is_static: bool,
    /// Byte offset of a member in its type.
    pub offset: u64,
    /// Address of a static field.
    pub address: u64,
}

/// A type of `gHotSpotVMTypes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Type {
    /// Its superclass, when it has one in the table.
    pub superclass: Option<String>,
    /// `sizeof`, in bytes.
    pub size: u64,
}

/// A pair of compressed-pointer parameters: `decoded = base + (narrow << shift)`
/// (`oops/compressedOops.hpp`, `oops/compressedKlass.hpp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Narrow {
    /// `_base`.
    pub base: u64,
    /// `_shift`.
    pub shift: u32,
}

impl Narrow {
    /// The full address of narrow value `n` (0 stays 0: a NULL).
    pub fn decode(&self, n: u32) -> u64 {
        if n == 0 {
            0
        } else {
            self.base.wrapping_add(u64::from(n) << self.shift)
        }
    }
}

/// The flags (`JVMFlag` table, `runtime/flags/jvmFlag.hpp`) and compressed-pointer parameters
/// that decide how objects are laid out in the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layout {
    /// `-XX:+UseCompressedOops`.
    pub compressed_oops: bool,
    /// `-XX:+UseCompressedClassPointers`.
    pub compressed_class_pointers: bool,
    /// `-XX:+UseCompactObjectHeaders` (JDK 24+; false before).
    pub compact_headers: bool,
    /// `-XX:ObjectAlignmentInBytes`.
    pub object_alignment: u32,
    /// Narrow oop base and shift (`CompressedOops`; `Universe::_narrow_oop` in JDK 11–12).
    pub narrow_oop: Narrow,
    /// Narrow klass base and shift (`CompressedKlassPointers`; `Universe::_narrow_klass` before).
    pub narrow_klass: Narrow,
    /// Generational ZGC (`-XX:+UseZGC`, with `-XX:+ZGenerational` in JDK 21–22, the only ZGC
    /// from 24): the oops in the heap and in OopStorage (`OopHandle`s) are coloured pointers,
    /// the address shifted left by `ZPointerLoadShift` with colour bits below
    /// (`gc/z/zAddress.hpp`, `ZPointer::uncolor`); this is that shift, read from
    /// `ZGlobalsForVMStructs::_instance_p->_ZPointerLoadShift`. Stack slots and registers hold
    /// plain addresses.
    pub zpointer_load_shift: Option<u32>,
    /// The collector the flags select (`UseSerialGC`, `UseParallelGC`, ...), when one is set.
    pub collector: Option<Collector>,
}

/// The garbage collector a JVM runs, as its `Use*GC` flag names it (`gc/shared/gcConfig.cpp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collector {
    /// `-XX:+UseSerialGC`.
    Serial,
    /// `-XX:+UseParallelGC`.
    Parallel,
    /// `-XX:+UseG1GC`.
    G1,
    /// `-XX:+UseZGC`.
    Z,
    /// `-XX:+UseShenandoahGC`.
    Shenandoah,
    /// `-XX:+UseEpsilonGC`.
    Epsilon,
    /// `-XX:+UseConcMarkSweepGC` (JDK 8 to 13): ParNew's young generation, CMS's old one.
    ConcMarkSweep,
}

/// `ZPointerRemappedShift` (`gc/z/zAddress.hpp`, JDK 21-25): the lowest of a generational ZGC
/// pointer's four remapped bits, above its reserved (4), remembered (2) and marked (6) bits.
const ZPOINTER_REMAPPED_SHIFT: u32 = 12;

impl Layout {
    /// Where an array's `int` length is (`arrayOopDesc::length_offset_in_bytes`,
    /// `oops/arrayOop.hpp`): after the mark word with compact headers (8), in the klass gap
    /// with compressed class pointers (12), after a full klass pointer otherwise (16).
    pub fn array_length_offset(&self) -> u64 {
        if self.compact_headers {
            8
        } else if self.compressed_class_pointers {
            12
        } else {
            16
        }
    }

    /// The address of the object a heap field or an OopHandle holding `raw` refers to: `raw`
    /// itself, or with generational ZGC its colour taken off.
    ///
    /// A coloured pointer's shift is its own: it depends on which of the four remapped bits it
    /// carries (`ZPointer::load_shift_lookup`, `ZPointerLoadShiftTable`: `ZPointerRemappedShift`
    /// (12) plus the bit's index plus one), and `ZPointerLoadShift` is only that of the
    /// currently good colour. A pointer coloured in an earlier GC phase (an object not touched
    /// since) has another one. When the good shift read is not one of that layout's (13-16),
    /// the layout is not the known one and the good shift is used for every pointer.
    pub fn heap_oop(&self, raw: u64) -> u64 {
        match self.zpointer_load_shift {
            Some(good) => {
                let remapped = (raw >> ZPOINTER_REMAPPED_SHIFT) & 0xF;
                let known =
                    (ZPOINTER_REMAPPED_SHIFT + 1..=ZPOINTER_REMAPPED_SHIFT + 4).contains(&good);
                let shift = if known && remapped != 0 {
                    ZPOINTER_REMAPPED_SHIFT + 1 + remapped.trailing_zeros()
                } else {
                    good
                };
                raw.checked_shr(shift).unwrap_or(0)
            }
            None => raw,
        }
    }
}

/// The target VM's tables, version and layout flags.
#[derive(Debug, Clone)]
pub struct VmModel {
    fields: HashMap<String, HashMap<String, Field>>,
    types: HashMap<String, Type>,
    ints: HashMap<String, i64>,
    longs: HashMap<String, u64>,
    /// `Abstract_VM_Version::_s_vm_release` (e.g. `17.0.12+7-Debian-1deb12u1`), when readable.
    pub release: Option<String>,
    /// The JDK feature release (8, 17, 21, ...): `Abstract_VM_Version::_vm_major_version`, or
    /// for HotSpot Express (JDK 7 and 8: 21-25) the JDK it shipped in.
    pub major: u32,
    /// The object layout flags.
    pub layout: Layout,
    /// Whether a thread's native priority is the OS's (`UseThreadPriorities` and a
    /// `ThreadPriorityPolicy` other than 0): on Linux `os::get_native_priority` then returns the
    /// thread's nice value, and otherwise `java_to_os_priority[NormPriority]` (0), which is what
    /// `jcmd Thread.print` prints as `os_prio=` (`os_linux.cpp`). False when the flags are not
    /// read.
    pub os_thread_priorities: bool,
    /// The target's CPU (the frame layouts the tables do not export): this build's own by
    /// default; a core's from its ELF header ([`VmModel::with_arch`]).
    pub arch: crate::registers::Arch,
}

fn string(b: Vec<u8>) -> String {
    String::from_utf8_lossy(&b).into_owned()
}

fn missing(entry: VmEntry) -> Error {
    VmError::MissingEntry { entry }.into()
}

impl VmModel {
    /// The same model of a target of CPU `arch` (a core of another architecture than this
    /// build's).
    pub fn with_arch(mut self, arch: crate::registers::Arch) -> Self {
        self.arch = arch;
        self
    }

    /// Reads the four tables through `mem`; `resolve` gives the run-time address of an exported
    /// symbol ([`tables::all_symbols`]). Then the version, the layout flags and the
    /// compressed-pointer parameters.
    ///
    /// # Errors
    /// [`Error::Vm`] when a table's symbol is not exported, a layout is implausible, a
    /// table is corrupt, or an entry the model needs (the `JVMFlag` table) is missing;
    /// [`Error::Memory`] when a read fails.
    pub fn read(
        mem: &dyn ReadMemory,
        resolve: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<Self, Error> {
        let mut fields: HashMap<String, HashMap<String, Field>> = HashMap::new();
        tables::walk_structs(mem, resolve, None, |row| {
            fields.entry(string(row.type_name)).or_default().insert(
                string(row.field_name),
                Field {
                    type_string: row.type_string.map(string),
                    is_static: row.is_static,
                    offset: row.offset,
                    address: row.address,
                },
            );
            ControlFlow::Continue(())
        })?;
        let types = tables::read_types(mem, resolve)?
            .into_iter()
            .map(|t| {
                (
                    string(t.type_name),
                    Type {
                        superclass: t.superclass.map(string),
                        size: t.size,
                    },
                )
            })
            .collect();
        let ints = tables::read_constants(mem, resolve, false)?
            .into_iter()
            .map(|(n, v)| (string(n), v as i64))
            .collect();
        let longs = tables::read_constants(mem, resolve, true)?
            .into_iter()
            .map(|(n, v)| (string(n), v))
            .collect();
        let mut model = VmModel {
            fields,
            types,
            ints,
            longs,
            release: None,
            major: 0,
            layout: Layout::default(),
            os_thread_priorities: false,
            arch: crate::registers::Arch::host().unwrap_or(crate::registers::Arch::X86_64),
        };
        model.read_version(mem)?;
        model.read_layout(mem)?;
        Ok(model)
    }

    /// A model of a JDK `major` whose `gHotSpotVMStructs` holds `members` (type, field, offset)
    /// and `statics` (type, field, address), and nothing else (for tests of the walks).
    #[cfg(test)]
    pub(crate) fn with_entries(
        major: u32,
        members: &[(&str, &str, u64)],
        statics: &[(&str, &str, u64)],
    ) -> Self {
        let mut fields: HashMap<String, HashMap<String, Field>> = HashMap::new();
        let rows = members
            .iter()
            .map(|&(t, n, offset)| (t, n, false, offset, 0))
            .chain(
                statics
                    .iter()
                    .map(|&(t, n, address)| (t, n, true, 0, address)),
            );
        for (ty, name, is_static, offset, address) in rows {
            fields.entry(ty.to_owned()).or_default().insert(
                name.to_owned(),
                Field {
                    type_string: None,
                    is_static,
                    offset,
                    address,
                },
            );
        }
        VmModel {
            fields,
            types: HashMap::new(),
            ints: HashMap::new(),
            longs: HashMap::new(),
            release: None,
            major,
            layout: Layout::default(),
            os_thread_priorities: false,
            arch: crate::registers::Arch::X86_64,
        }
    }

    /// The field `ty::name`, if the tables have it.
    pub fn field(&self, ty: &str, name: &str) -> Option<&Field> {
        self.fields.get(ty)?.get(name)
    }

    /// The byte offset of member `ty::name`.
    ///
    /// # Errors
    /// [`Error::Vm`] naming the entry when the table has no such member.
    pub fn offset(&self, ty: &str, name: &str) -> Result<u64, Error> {
        match self.field(ty, name) {
            Some(f) if !f.is_static => Ok(f.offset),
            _ => Err(missing(VmEntry::member(ty, name))),
        }
    }

    /// The first of `names` that `ty` has as a member (fields renamed between JDKs): its offset
    /// and its index in `names`.
    ///
    /// # Errors
    /// [`Error::Vm`] naming every alternative when none is there.
    pub fn offset_any(&self, ty: &str, names: &[&str]) -> Result<(u64, usize), Error> {
        names
            .iter()
            .enumerate()
            .find_map(|(i, n)| self.offset(ty, n).ok().map(|o| (o, i)))
            .ok_or_else(|| {
                VmError::NoneOf {
                    entries: names.iter().map(|n| VmEntry::member(ty, n)).collect(),
                }
                .into()
            })
    }

    /// The address of static field `ty::name`.
    ///
    /// # Errors
    /// [`Error::Vm`] naming the entry when the table has no such static field.
    pub fn static_address(&self, ty: &str, name: &str) -> Result<u64, Error> {
        match self.field(ty, name) {
            Some(f) if f.is_static => Ok(f.address),
            _ => Err(missing(VmEntry::static_field(ty, name))),
        }
    }

    /// `sizeof(ty)` from `gHotSpotVMTypes`.
    ///
    /// # Errors
    /// [`Error::Vm`] naming the type when it is not in the table.
    pub fn size_of(&self, ty: &str) -> Result<u64, Error> {
        self.types
            .get(ty)
            .map(|t| t.size)
            .ok_or_else(|| missing(VmEntry::Type(ty.to_owned())))
    }

    /// Whether `gHotSpotVMTypes` has `ty`.
    pub fn has_type(&self, ty: &str) -> bool {
        self.types.contains_key(ty)
    }

    /// The value of int constant `name` (`gHotSpotVMIntConstants`).
    ///
    /// # Errors
    /// [`Error::Vm`] naming the constant when it is not in the table.
    pub fn int(&self, name: &str) -> Result<i64, Error> {
        self.ints
            .get(name)
            .copied()
            .ok_or_else(|| missing(VmEntry::IntConstant(name.to_owned())))
    }

    /// The value of int constant `name`, if present.
    pub fn int_opt(&self, name: &str) -> Option<i64> {
        self.ints.get(name).copied()
    }

    /// The value of long constant `name` (`gHotSpotVMLongConstants`).
    ///
    /// # Errors
    /// [`Error::Vm`] naming the constant when it is not in the table.
    pub fn long(&self, name: &str) -> Result<u64, Error> {
        self.longs
            .get(name)
            .copied()
            .ok_or_else(|| missing(VmEntry::LongConstant(name.to_owned())))
    }

    /// How many rows each table had: structs, types, int and long constants (for `-v`).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        (
            self.fields.values().map(HashMap::len).sum(),
            self.types.len(),
            self.ints.len(),
            self.longs.len(),
        )
    }

    /// `Abstract_VM_Version::_s_vm_release` and `_vm_major_version` (`runtime/abstract_vm_version.hpp`).
    fn read_version(&mut self, mem: &dyn ReadMemory) -> Result<(), Error> {
        let major = self.static_address("Abstract_VM_Version", "_vm_major_version")?;
        self.major = mem
            .read_u32(major)
            .map_err(|e| Error::memory("Abstract_VM_Version::_vm_major_version", e))?;
        if let Ok(at) = self.static_address("Abstract_VM_Version", "_s_vm_release") {
            self.release = mem
                .read_u64(at)
                .ok()
                .and_then(|p| mem.read_c_string(p, 128).ok().flatten())
                .map(string);
        }
        // Up to JDK 8 the VM had its own numbering (HotSpot Express: 25 in JDK 8, 21-24 in JDK
        // 7, releases like `25.402-b06`); JDK 9 made it the JDK's. HotSpot 25 is told from JDK
        // 25 by its release string, or without one by the missing `ThreadsSMRSupport` (JDK 10+).
        let express = match &self.release {
            Some(r) => r.contains("-b") && !r.contains('+'),
            None => !self.has_type("ThreadsSMRSupport"),
        };
        if express && (20..=25).contains(&self.major) {
            self.major = if self.major == 25 { 8 } else { 7 };
        }
        Ok(())
    }

    /// The `JVMFlag` table (`JVMFlag::flags`, `JVMFlag::numFlags`; each entry's `_name` and
    /// `_addr`, `runtime/flags/jvmFlag.hpp`; `Flag` in `runtime/globals.hpp` up to JDK 10) for
    /// the layout flags, and the narrow oop/klass parameters.
    fn read_layout(&mut self, mem: &dyn ReadMemory) -> Result<(), Error> {
        let rows = flags::rows(self, mem, false)?;
        let mut layout = Layout {
            object_alignment: 8,
            ..Layout::default()
        };
        let (mut use_zgc, mut zgenerational) = (false, false);
        let (mut use_priorities, mut priority_policy) = (false, 0u64);
        for flags::FlagRow { name, addr, .. } in rows {
            let byte = || -> Result<bool, Error> {
                let b = mem.read_u8(addr).map_err(|e| {
                    Error::memory(format!("flag {}", String::from_utf8_lossy(&name)), e)
                })?;
                Ok(b != 0)
            };
            match name.as_slice() {
                b"UseCompressedOops" => layout.compressed_oops = byte()?,
                b"UseCompressedClassPointers" => layout.compressed_class_pointers = byte()?,
                b"UseCompactObjectHeaders" => layout.compact_headers = byte()?,
                b"UseZGC" => {
                    use_zgc = byte()?;
                    if use_zgc {
                        layout.collector = Some(Collector::Z);
                    }
                }
                b"UseSerialGC"
                | b"UseParallelGC"
                | b"UseG1GC"
                | b"UseShenandoahGC"
                | b"UseEpsilonGC"
                | b"UseConcMarkSweepGC"
                    if byte()? =>
                {
                    layout.collector = Some(match name.as_slice() {
                        b"UseSerialGC" => Collector::Serial,
                        b"UseConcMarkSweepGC" => Collector::ConcMarkSweep,
                        b"UseParallelGC" => Collector::Parallel,
                        b"UseG1GC" => Collector::G1,
                        b"UseShenandoahGC" => Collector::Shenandoah,
                        _ => Collector::Epsilon,
                    });
                }
                b"ZGenerational" => zgenerational = byte()?,
                b"UseThreadPriorities" => use_priorities = byte()?,
                b"ThreadPriorityPolicy" => {
                    priority_policy = mem
                        .read_u64(addr)
                        .map_err(|e| Error::memory("flag ThreadPriorityPolicy", e))?;
                }
                b"ObjectAlignmentInBytes" => {
                    layout.object_alignment = mem
                        .read_u32(addr)
                        .map_err(|e| Error::memory("flag ObjectAlignmentInBytes", e))?;
                }
                _ => {}
            }
        }
        if !layout.object_alignment.is_power_of_two() || layout.object_alignment > 256 {
            return Err(VmError::Implausible {
                what: "ObjectAlignmentInBytes".into(),
                detail: format!(
                    "{} (a power of two of at most 256)",
                    layout.object_alignment
                ),
            }
            .into());
        }
        // Compact headers (JDK 24+) keep the narrow klass in the mark word: class pointers are
        // compressed whatever the flag says (`UseCompressedClassPointers` is forced on).
        if layout.compact_headers {
            layout.compressed_class_pointers = true;
        }
        layout.narrow_oop = self.narrow(
            mem,
            &[
                ("CompressedOops", "_base", "_shift"),
                ("CompressedOops", "_narrow_oop._base", "_narrow_oop._shift"),
                ("Universe", "_narrow_oop._base", "_narrow_oop._shift"),
            ],
            layout.compressed_oops,
            8,
        )?;
        layout.narrow_klass = self.narrow(
            mem,
            &[
                ("CompressedKlassPointers", "_base", "_shift"),
                (
                    "CompressedKlassPointers",
                    "_narrow_klass._base",
                    "_narrow_klass._shift",
                ),
                ("Universe", "_narrow_klass._base", "_narrow_klass._shift"),
            ],
            layout.compressed_class_pointers,
            31,
        )?;
        // Generational ZGC's load shift (the flags decide whether its colours apply).
        if use_zgc && (zgenerational || self.major >= 24) {
            const SHIFT: &str = "ZGlobalsForVMStructs::_ZPointerLoadShift";
            let instance = rd(
                mem,
                self.static_address("ZGlobalsForVMStructs", "_instance_p")?,
                "ZGlobalsForVMStructs::_instance_p",
            )?;
            let at = self.offset("ZGlobalsForVMStructs", "_ZPointerLoadShift")?;
            let ptr = rd(mem, instance.wrapping_add(at), SHIFT)?;
            let shift = rd(mem, ptr, "generational ZGC's ZPointerLoadShift")?;
            if shift >= 64 {
                return Err(VmError::Implausible {
                    what: SHIFT.into(),
                    detail: format!("{shift} (generational ZGC's load shift is below 64)"),
                }
                .into());
            }
            layout.zpointer_load_shift = Some(shift as u32);
        }
        self.layout = layout;
        self.os_thread_priorities = use_priorities && priority_policy != 0;
        Ok(())
    }

    /// The first of `names` (type, base field, shift field) the tables have, read; all zero when
    /// `used` is false.
    ///
    /// `max_shift` bounds the shift read: 8 for oops (`LogMinObjAlignmentInBytes`, alignment at
    /// most 256), 31 for class pointers (with compact headers the narrow klass is 22 bits and
    /// its shift `CompressedKlassPointers::max_shift()`, 10 in JDK 24–25).
    fn narrow(
        &self,
        mem: &dyn ReadMemory,
        names: &[(&str, &str, &str)],
        used: bool,
        max_shift: u32,
    ) -> Result<Narrow, Error> {
        if !used {
            return Ok(Narrow::default());
        }
        for (ty, base_field, shift_field) in names {
            let (Ok(b), Ok(s)) = (
                self.static_address(ty, base_field),
                self.static_address(ty, shift_field),
            ) else {
                continue;
            };
            let base = mem
                .read_u64(b)
                .map_err(|e| Error::memory(format!("{ty}::{base_field}"), e))?;
            let shift = mem
                .read_u32(s)
                .map_err(|e| Error::memory(format!("{ty}::{shift_field}"), e))?;
            if shift > max_shift {
                return Err(VmError::Implausible {
                    what: format!("{ty}::{shift_field}").into(),
                    detail: format!("{shift} (at most {max_shift})"),
                }
                .into());
            }
            return Ok(Narrow { base, shift });
        }
        Err(VmError::NoneOf {
            entries: names
                .iter()
                .map(|(t, b, _)| VmEntry::static_field(t, b))
                .collect(),
        }
        .into())
    }
}

/// Finds the addresses of `PerfMemory::_start`, `_capacity`, `_top` and `_initialized` by walking
/// `gHotSpotVMStructs` (the static fields `PerfMemory` has in `VM_STRUCTS` since JDK 8,
/// `runtime/vmStructs.cpp`); `resolve` gives the run-time address of an exported symbol. The
/// walk stops once the four are found and reads only `PerfMemory` rows' field names.
///
/// # Errors
/// [`Error::Vm`] when a symbol is not exported, a layout value is implausible, the table
/// is not terminated within [`tables::MAX_ENTRIES`] rows, or it has no
/// `PerfMemory::_start`/`_capacity` rows; [`Error::Memory`] when the target's memory cannot be
/// read.
pub fn find_perf_memory(
    mem: &dyn ReadMemory,
    resolve: &dyn Fn(&str) -> Option<u64>,
) -> Result<PerfMemoryVars, Error> {
    let mut vars = PartialVars::default();
    // Only the first six layout variables, as `locate` always read: the row's `address` is all
    // it needs (a carved jvm.dll keeps only those, `scripts/carve-jvm-dll.py`).
    let first_six = |name: &str| {
        if tables::STRUCT_SYMBOLS[..6].contains(&name) {
            resolve(name)
        } else {
            None
        }
    };
    tables::walk_structs(mem, &first_six, Some(b"PerfMemory"), |row| {
        if row.is_static {
            vars.set(&row.field_name, row.address);
        }
        if vars.complete() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    vars.finish()
}

#[derive(Default)]
struct PartialVars {
    start: Option<u64>,
    capacity: Option<u64>,
    top: Option<u64>,
    initialized: Option<u64>,
}

impl PartialVars {
    fn set(&mut self, field: &[u8], address: u64) {
        let slot = match field {
            b"_start" => &mut self.start,
            b"_capacity" => &mut self.capacity,
            b"_top" => &mut self.top,
            b"_initialized" => &mut self.initialized,
            _ => return,
        };
        slot.get_or_insert(address);
    }

    fn complete(&self) -> bool {
        self.start.is_some()
            && self.capacity.is_some()
            && self.top.is_some()
            && self.initialized.is_some()
    }

    fn finish(self) -> Result<PerfMemoryVars, Error> {
        match (self.start, self.capacity) {
            (Some(start), Some(capacity)) => Ok(PerfMemoryVars {
                start,
                capacity,
                top: self.top,
                initialized: self.initialized,
            }),
            (start, _) => Err(missing(VmEntry::static_field(
                "PerfMemory",
                if start.is_none() {
                    "_start"
                } else {
                    "_capacity"
                },
            ))),
        }
    }
}

/// The `u64` at `addr`, a failure naming `what`.
pub(crate) fn rd(mem: &dyn ReadMemory, addr: u64, what: &str) -> Result<u64, Error> {
    mem.read_u64(addr)
        .map_err(|e| Error::memory(what.to_string(), e))
}

#[cfg(test)]
mod tests {
    //! The walker over a synthetic address space laid out as `vmStructs.cpp` lays it out on LP64
    //! (typeName 0, fieldName 8, typeString 16, isStatic 24, offset 32, address 40, stride 48).
    //! Real JVMs exercise it in the integration tests (stripped libjvm).
    use super::*;
    #[test]
    fn generational_zgc_pointers_are_uncoloured_by_their_own_remapped_bit() {
        let layout = Layout {
            zpointer_load_shift: Some(13),
            ..Layout::default()
        };
        let address = 0x0000_0400_0460_d780u64;
        for bit in 0..4u32 {
            // The address above the remapped bit that is set, the marked bits below it.
            let raw = (address << (13 + bit)) | (1 << (12 + bit)) | 0x3f0;
            assert_eq!(layout.heap_oop(raw), address, "remapped bit {bit}");
        }
        // A good shift outside the known layout is used as it is.
        let other = Layout {
            zpointer_load_shift: Some(20),
            ..Layout::default()
        };
        assert_eq!(other.heap_oop(address << 20), address);
        assert_eq!(layout.heap_oop(0), 0);
    }

    use crate::memory::MemoryError;

    struct Space {
        base: u64,
        bytes: Vec<u8>,
    }

    impl ReadMemory for Space {
        fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
            let off = addr.checked_sub(self.base).map(|o| o as usize);
            match off.and_then(|o| self.bytes.get(o..o + buf.len())) {
                Some(src) => {
                    buf.copy_from_slice(src);
                    Ok(())
                }
                None => Err(MemoryError::Unmapped {
                    addr,
                    len: buf.len(),
                }),
            }
        }
    }

    const BASE: u64 = 0x10_0000;
    const STRINGS: u64 = 0x100; // offset of the string pool
    const VARS: u64 = 0x800; // offset of the exported layout variables
    const TABLE: u64 = 0x1000; // offset of the table

    fn put(bytes: &mut [u8], off: u64, v: u64) {
        bytes[off as usize..off as usize + 8].copy_from_slice(&v.to_le_bytes());
    }

    /// Builds a space with `rows` (type, field, is_static, address) and a terminating row unless
    /// `terminate` is false. Returns it and the resolver of the exported symbols.
    fn space(rows: &[(&str, &str, u32, u64)], terminate: bool, stride: u64) -> Space {
        let mut bytes = vec![0u8; 0x1000 + (rows.len() + 1) * stride.max(48) as usize];
        let mut pool = STRINGS;
        let mut intern = |bytes: &mut Vec<u8>, s: &str| {
            let at = pool;
            bytes[at as usize..at as usize + s.len()].copy_from_slice(s.as_bytes());
            pool += s.len() as u64 + 1;
            BASE + at
        };
        for (i, (ty, field, is_static, address)) in rows.iter().enumerate() {
            let row = TABLE + i as u64 * stride;
            let t = intern(&mut bytes, ty);
            let f = intern(&mut bytes, field);
            put(&mut bytes, row, t);
            put(&mut bytes, row + 8, f);
            bytes[row as usize + 24..row as usize + 28].copy_from_slice(&is_static.to_le_bytes());
            put(&mut bytes, row + 40, *address);
        }
        if !terminate {
            bytes.truncate((TABLE + rows.len() as u64 * stride) as usize);
        }
        for (i, v) in [BASE + TABLE, 0, 8, 24, 40, stride].into_iter().enumerate() {
            put(&mut bytes, VARS + 8 * i as u64, v);
        }
        Space { base: BASE, bytes }
    }

    fn resolve(name: &str) -> Option<u64> {
        tables::STRUCT_SYMBOLS
            .iter()
            .position(|s| *s == name)
            .map(|i| BASE + VARS + 8 * i as u64)
    }

    #[test]
    fn finds_the_static_perf_memory_fields() {
        let mem = space(
            &[
                ("Klass", "_name", 0, 0),
                ("PerfMemory", "_end", 1, 0x5000),
                ("PerfMemory", "_start", 1, 0x5008),
                ("PerfMemory", "_top", 1, 0x5010),
                ("PerfMemory", "_capacity", 1, 0x5018),
                ("PerfMemory", "_initialized", 1, 0x5020),
            ],
            true,
            48,
        );
        let vars = find_perf_memory(&mem, &resolve).unwrap();
        assert_eq!(
            vars,
            PerfMemoryVars {
                start: 0x5008,
                capacity: 0x5018,
                top: Some(0x5010),
                initialized: Some(0x5020)
            }
        );
    }

    #[test]
    fn a_missing_entry_is_typed_and_named() {
        let vm = VmModel::with_entries(21, &[("Klass", "_name", 16)], &[]);
        assert_eq!(vm.offset("Klass", "_name").unwrap(), 16);
        assert!(matches!(
            vm.offset("Klass", "_super"),
            Err(Error::Vm(VmError::MissingEntry {
                entry: VmEntry::Member { ref ty, ref name }
            })) if ty == "Klass" && name == "_super"
        ));
        // A member is not a static field, nor the reverse.
        assert!(matches!(
            vm.static_address("Klass", "_name"),
            Err(Error::Vm(VmError::MissingEntry {
                entry: VmEntry::Static { .. }
            }))
        ));
        let err = vm
            .offset_any("Klass", &["_next", "_next_link"])
            .unwrap_err();
        match &err {
            Error::Vm(VmError::NoneOf { entries }) => assert_eq!(entries.len(), 2),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            err.to_string(),
            "none of Klass::_next, Klass::_next_link in gHotSpotVMStructs"
        );
        assert!(matches!(
            vm.long("ZGranuleSizeShift"),
            Err(Error::Vm(VmError::MissingEntry {
                entry: VmEntry::LongConstant(_)
            }))
        ));
    }

    #[test]
    fn a_table_without_perf_memory_is_an_error() {
        let mem = space(&[("Klass", "_name", 0, 0)], true, 48);
        let err = find_perf_memory(&mem, &resolve).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Vm(VmError::MissingEntry {
                    entry: VmEntry::Static { ty, name }
                }) if ty == "PerfMemory" && name == "_start"
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "no static field PerfMemory::_start in gHotSpotVMStructs"
        );
    }

    #[test]
    fn an_unterminated_table_ends_at_unreadable_memory_with_an_error() {
        let rows: Vec<_> = (0..100).map(|_| ("Klass", "_name", 0, 0)).collect();
        let mem = space(&rows, false, 48);
        let err = find_perf_memory(&mem, &resolve).unwrap_err().to_string();
        assert!(err.contains("gHotSpotVMStructs row 100"), "{err}");
    }

    #[test]
    fn an_implausible_layout_is_refused() {
        let mem = space(&[("PerfMemory", "_start", 1, 1)], true, 8);
        let err = find_perf_memory(&mem, &resolve).unwrap_err();
        assert!(
            matches!(&err, Error::Vm(VmError::TableLayout { stride: 8, .. })),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains("implausible gHotSpotVMStructs entry layout"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_export_is_named() {
        let mem = space(&[], true, 48);
        let err = find_perf_memory(&mem, &|n| {
            if n == tables::STRUCT_SYMBOLS[0] {
                None
            } else {
                resolve(n)
            }
        })
        .unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Vm(VmError::MissingEntry {
                    entry: VmEntry::Symbol(s)
                }) if s == "gHotSpotVMStructs"
            ),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains("symbol gHotSpotVMStructs is not exported"),
            "{err}"
        );
    }
}
