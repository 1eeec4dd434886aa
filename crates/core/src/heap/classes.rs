//! Every loaded class, as a heap dump describes it: read from the class loader data graph
//! (`classfile/classLoaderDataGraph.hpp`, `classLoaderData.hpp`): `ClassLoaderDataGraph::_head`
//! → `ClassLoaderData::_next`, each loader's classes `ClassLoaderData::_klasses` →
//! `Klass::_next_link` (instance, object-array and type-array classes alike, hidden classes
//! included), the loader object `ClassLoaderData::_class_loader` (an `OopHandle`; an `oop` in
//! JDK 8). Per class: its name, `java.lang.Class` mirror, superclass, kind from
//! `Klass::_layout_helper` (`oops/klass.hpp`), and for an instance class its declared fields
//! (`JavaReader::declared_fields`).
//!
//! JDK 8's vmStructs export neither `ClassLoaderData::_klasses` nor `Klass::_next_link`
//! (`jdk8_links` finds them and checks them against the classes' own loader data).
//!
//! Every count and pointer is bounded: at most [`MAX_LOADERS`] loaders and [`MAX_CLASSES`]
//! classes; a list that loops or runs past them is an error, not a hang.

use super::walk::KlassMap;
use crate::error::{Error, VmError};
use crate::memory::ReadMemory;
use crate::vm::VmModel;
use crate::vm::java::JavaReader;

/// The most class loaders read.
pub const MAX_LOADERS: usize = 1 << 20;
/// The most classes read.
pub const MAX_CLASSES: usize = 1 << 22;

/// A basic type as HPROF codes it (`hprofTag`'s `HPROF_NORMAL_OBJECT` .. `HPROF_LONG`; the
/// primitive codes equal HotSpot's `BasicType` values, `utilities/globalDefinitions.hpp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum BasicType {
    /// A reference: an id.
    Object = 2,
    /// `boolean`, 1 byte.
    Boolean = 4,
    /// `char`, 2 bytes.
    Char = 5,
    /// `float`, 4 bytes.
    Float = 6,
    /// `double`, 8 bytes.
    Double = 7,
    /// `byte`, 1 byte.
    Byte = 8,
    /// `short`, 2 bytes.
    Short = 9,
    /// `int`, 4 bytes.
    Int = 10,
    /// `long`, 8 bytes.
    Long = 11,
}

impl BasicType {
    /// The type of a field of JVM signature `sig` (`L...;` and `[...` are references).
    pub fn of_signature(sig: &str) -> Option<BasicType> {
        Some(match sig.as_bytes().first()? {
            b'L' | b'[' => BasicType::Object,
            b'Z' => BasicType::Boolean,
            b'C' => BasicType::Char,
            b'F' => BasicType::Float,
            b'D' => BasicType::Double,
            b'B' => BasicType::Byte,
            b'S' => BasicType::Short,
            b'I' => BasicType::Int,
            b'J' => BasicType::Long,
            _ => return None,
        })
    }

    /// The type of a `BasicType` value (`T_BOOLEAN` 4 .. `T_LONG` 11), as a type array's
    /// layout helper holds it; `None` for others.
    pub fn of_basic_type(t: u8) -> Option<BasicType> {
        Some(match t {
            4 => BasicType::Boolean,
            5 => BasicType::Char,
            6 => BasicType::Float,
            7 => BasicType::Double,
            8 => BasicType::Byte,
            9 => BasicType::Short,
            10 => BasicType::Int,
            11 => BasicType::Long,
            _ => return None,
        })
    }

    /// Bytes a value takes in the file (an id for a reference).
    pub fn size(self) -> u32 {
        match self {
            BasicType::Object => 8,
            BasicType::Boolean | BasicType::Byte => 1,
            BasicType::Char | BasicType::Short => 2,
            BasicType::Float | BasicType::Int => 4,
            BasicType::Double | BasicType::Long => 8,
        }
    }
}

/// A field of a class: name, type, offset (from the object's start; from the mirror's for a
/// static).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Its HPROF type.
    pub ty: BasicType,
    /// Its offset in bytes.
    pub offset: u64,
}

/// What kind of class, and what a dump needs of its instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassKind {
    /// An instance class (`InstanceKlass`): its declared fields, or `None` when its field
    /// metadata could not be read (its instances then carry only their superclasses' fields).
    Instance {
        /// Declared non-static fields, in the order of the field metadata.
        fields: Option<Vec<Field>>,
        /// Declared static fields (values in the mirror).
        statics: Vec<Field>,
    },
    /// An object array class (`ObjArrayKlass`): the header's bytes before the first element.
    ObjArray {
        /// Bytes before the first element.
        header: u64,
    },
    /// A primitive array class (`TypeArrayKlass`): the element type and the header's bytes.
    TypeArray {
        /// The element type.
        element: BasicType,
        /// Bytes before the first element.
        header: u64,
    },
}

/// A loaded class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassInfo {
    /// The `Klass*`.
    pub klass: u64,
    /// The internal name (`java/lang/String`, `[I`, `[Ljava/lang/Object;`).
    pub name: String,
    /// The `java.lang.Class` mirror (the class's id in a heap dump); never 0 here.
    pub mirror: u64,
    /// `Klass::_super` (0 for `java.lang.Object`, interfaces' is `java.lang.Object`; arrays'
    /// is `java.lang.Object` too).
    pub super_klass: u64,
    /// The defining loader object (0: the boot loader).
    pub loader: u64,
    /// What kind of class.
    pub kind: ClassKind,
    /// An instance class's constant pool's resolved references (`ConstantPool::_cache` →
    /// `ConstantPoolCache::_resolved_references`, an `OopHandle`; `oops/cpCache.hpp`): the
    /// `Object[]` holding the objects its `ldc`s resolved (string literals, method handles),
    /// which a heap dump writes as the class's `<resolved_references>` static, as HotSpot's
    /// `DumperSupport::dump_static_fields` does. 0 when there is none, it could not be read,
    /// or for an array class.
    pub resolved_references: u64,
}

/// The loaded classes, by `Klass*`, and what the read skipped.
#[derive(Debug, Default)]
pub struct ClassTable {
    /// The classes, in the graph's order.
    pub classes: Vec<ClassInfo>,
    /// `Klass*` → index in `classes`.
    pub index: KlassMap<usize>,
    /// Classes without a mirror (not yet linked, or CDS-archived and dormant): left out.
    pub without_mirror: u64,
    /// Classes that could not be read whole (left out) or whose field metadata could not be
    /// (kept without their fields): `(name or Klass*, why)`, the first 16.
    pub unreadable: Vec<(String, String)>,
    /// How many classes could not be read whole.
    pub unreadable_count: u64,
}

impl ClassTable {
    fn unreadable(&mut self, what: String, why: String) {
        self.unreadable_count += 1;
        if self.unreadable.len() < 16 {
            self.unreadable.push((what, why));
        }
    }

    /// The class of `klass`, if loaded.
    pub fn get(&self, klass: u64) -> Option<&ClassInfo> {
        self.index.get(&klass).map(|&i| &self.classes[i])
    }

    /// `java.lang.Object`'s `Klass*` (the instance class named so without a superclass).
    pub fn object_klass(&self) -> Option<u64> {
        self.classes
            .iter()
            .find(|c| c.super_klass == 0 && c.name == "java/lang/Object")
            .map(|c| c.klass)
    }
}

/// Reads every loaded class of the VM (see the module documentation).
///
/// # Errors
/// [`Error::Vm`] when an entry is missing or a list is longer than its bound;
/// [`Error::Memory`] when the graph cannot be read.
pub fn read(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    java: &JavaReader<'_>,
) -> Result<ClassTable, Error> {
    // Single-generation ZGC: handles hold the colour of their store; the walk's is the good one.
    let view = super::spaces::z_single_generation_view(vm, mem)?;
    let recolour = |a: u64| super::spaces::recolour(view, a);
    let rd = |a: u64, what: &str| mem.read_u64(a).map_err(|e| Error::memory(what, e));
    let next = vm.offset("ClassLoaderData", "_next")?;
    let head = rd(
        vm.static_address("ClassLoaderDataGraph", "_head")?,
        "ClassLoaderDataGraph::_head",
    )?;
    let (klasses, next_link) = match (
        vm.offset("ClassLoaderData", "_klasses"),
        vm.offset("Klass", "_next_link"),
    ) {
        (Ok(k), Ok(n)) => (k, n),
        _ => jdk8_links(vm, mem, head, next)?,
    };
    let loader_at = vm.offset("ClassLoaderData", "_class_loader")?;
    let loader_is_oop = vm
        .field("ClassLoaderData", "_class_loader")
        .and_then(|f| f.type_string.as_deref())
        .is_some_and(|t| t == "oop");
    let super_at = vm.offset("Klass", "_super")?;
    let lh_at = vm.offset("Klass", "_layout_helper")?;
    let refs = ResolvedReferences::new(vm);
    let mut table = ClassTable::default();
    let mut cld = head;
    let mut loaders = 0usize;
    let mut seen = 0usize;
    let mut mirrors = std::collections::HashSet::new();
    let mut visited = std::collections::HashSet::new();
    while cld != 0 {
        loaders += 1;
        if loaders > MAX_LOADERS {
            return Err(VmError::Unterminated {
                what: "ClassLoaderDataGraph".into(),
                unit: "class loaders",
                max: MAX_LOADERS as u64,
            }
            .into());
        }
        let handle = rd(
            cld.wrapping_add(loader_at),
            "ClassLoaderData::_class_loader",
        )?;
        let loader = recolour(if loader_is_oop || handle == 0 {
            handle
        } else {
            vm.layout
                .heap_oop(rd(handle, "ClassLoaderData::_class_loader's OopHandle")?)
        });
        let mut k = rd(cld.wrapping_add(klasses), "ClassLoaderData::_klasses")?;
        while k != 0 {
            seen += 1;
            if seen > MAX_CLASSES {
                return Err(VmError::Unterminated {
                    what: "ClassLoaderDataGraph".into(),
                    unit: "classes",
                    max: MAX_CLASSES as u64,
                }
                .into());
            }
            if !visited.insert(k) {
                // A class met again: the list loops (a damaged core); the rest is not read.
                table.unreadable(format!("{k:#x}"), "met twice: the class list loops".into());
                break;
            }
            {
                match class(
                    mem,
                    java,
                    &mut table,
                    k,
                    loader,
                    (super_at, lh_at),
                    refs.as_ref(),
                ) {
                    Ok(Some(mut c)) => {
                        c.mirror = recolour(c.mirror);
                        if c.resolved_references != 0 {
                            c.resolved_references = recolour(c.resolved_references);
                        }
                        if !mirrors.insert(c.mirror) {
                            // Two classes cannot share a mirror: a damaged class is left out.
                            table.unreadable(
                                c.name,
                                format!("its mirror {:#x} is another class's", c.mirror),
                            );
                            k = rd(k.wrapping_add(next_link), "Klass::_next_link")?;
                            continue;
                        }
                        table.index.insert(k, table.classes.len());
                        table.classes.push(c);
                    }
                    Ok(None) => table.without_mirror += 1,
                    Err(e) => table.unreadable(format!("{k:#x}"), e.to_string()),
                }
            }
            k = rd(k.wrapping_add(next_link), "Klass::_next_link")?;
        }
        cld = rd(cld.wrapping_add(next), "ClassLoaderData::_next")?;
    }
    Ok(table)
}

/// JDK 8's `ClassLoaderData::_klasses` and `Klass::_next_link` offsets, which its vmStructs do
/// not export. From `classfile/classLoaderData.hpp` and `oops/klass.hpp` (JDK 8): `_klasses` is
/// one of the loader data's first words (after `_class_loader`, before `_next`), and
/// `_next_link` is the word before `_class_loader_data` (exported, as `InstanceKlass`'s). The
/// `_klasses` offset is the one at which, for the most loaders, the instance classes of the
/// list name that loader as theirs: it must hold for every loader whose list has one.
///
/// # Errors
/// [`Error::Unsupported`] when no offset checks out.
fn jdk8_links(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    head: u64,
    next: u64,
) -> Result<(u64, u64), Error> {
    let unsupported = || Error::Unsupported {
        what: "the class table of this JDK (its vmStructs export neither ClassLoaderData::_klasses nor Klass::_next_link, and no layout checks out)",
        os: std::env::consts::OS,
    };
    let cld_at = vm
        .offset("Klass", "_class_loader_data")
        .or_else(|_| vm.offset("InstanceKlass", "_class_loader_data"))
        .map_err(|_| unsupported())?;
    let lh_at = vm.offset("Klass", "_layout_helper")?;
    let next_link = cld_at.checked_sub(8).ok_or_else(unsupported)?;
    let word = |a: u64| mem.read_u64(a).ok();
    let mut clds = Vec::new();
    let mut cld = head;
    while cld != 0 && clds.len() < MAX_LOADERS {
        clds.push(cld);
        cld = word(cld.wrapping_add(next)).ok_or_else(unsupported)?;
    }
    // For one loader and a candidate offset: Some(true) when its list's first few instance
    // classes are all its own, Some(false) when one is not, None when it has none to tell.
    let agrees = |cld: u64, off: u64| -> Option<bool> {
        let mut k = word(cld.wrapping_add(off))?;
        let mut told = None;
        for _ in 0..8 {
            if k == 0 {
                break;
            }
            let lh = mem.read_u32(k.wrapping_add(lh_at)).ok()? as i32;
            if lh > 0 {
                if word(k.wrapping_add(cld_at))? != cld {
                    return Some(false);
                }
                told = Some(true);
            }
            k = word(k.wrapping_add(next_link))?;
        }
        told
    };
    let mut best = None;
    for off in (8..next).step_by(8) {
        let votes: Vec<Option<bool>> = clds.iter().map(|&c| agrees(c, off)).collect();
        let yes = votes.iter().filter(|v| **v == Some(true)).count();
        let no = votes.iter().filter(|v| **v == Some(false)).count();
        if yes > 0 && no == 0 && best.is_none_or(|(_, y)| yes > y) {
            best = Some((off, yes));
        }
    }
    best.map(|(off, _)| (off, next_link))
        .ok_or_else(unsupported)
}

/// Where a class's resolved references are: `InstanceKlass::_constants` → `ConstantPool::_cache`
/// → `ConstantPoolCache::_resolved_references` (an `OopHandle`: the address of a slot in
/// OopStorage holding the array's oop, coloured under generational ZGC). JDK 8 keeps a JNI
/// handle (the address of a slot holding the oop) in `ConstantPool::_resolved_references`.
struct ResolvedReferences {
    constants: u64,
    /// `ConstantPool::_cache`, then its `_resolved_references`; `None` on JDK 8, whose
    /// `ConstantPool::_resolved_references` (at `handle`) is the handle itself.
    cache: Option<u64>,
    handle: u64,
    layout: crate::vm::Layout,
}

impl ResolvedReferences {
    fn new(vm: &VmModel) -> Option<Self> {
        let constants = vm.offset("InstanceKlass", "_constants").ok()?;
        let later = (|| {
            Some((
                vm.offset("ConstantPool", "_cache").ok()?,
                vm.offset("ConstantPoolCache", "_resolved_references")
                    .ok()?,
            ))
        })();
        let (cache, handle) = match later {
            Some((cache, handle)) => (Some(cache), handle),
            None => (
                None,
                vm.offset("ConstantPool", "_resolved_references").ok()?,
            ),
        };
        Some(ResolvedReferences {
            constants,
            cache,
            handle,
            layout: vm.layout,
        })
    }

    /// The array's address, or 0 (none, or a pointer on the way unreadable: a dump leaves the
    /// static out rather than failing the class).
    fn read(&self, mem: &dyn ReadMemory, klass: u64) -> u64 {
        let word = |a: u64| mem.read_u64(a).ok().filter(|&w| w != 0);
        (|| {
            let cp = word(klass.checked_add(self.constants)?)?;
            let holder = match self.cache {
                Some(cache) => word(cp.checked_add(cache)?)?,
                None => cp,
            };
            let slot = word(holder.checked_add(self.handle)?)?;
            Some(self.layout.heap_oop(word(slot)?))
        })()
        .unwrap_or(0)
    }
}

/// One class, or `None` when it has no mirror.
fn class(
    mem: &dyn ReadMemory,
    java: &JavaReader<'_>,
    table: &mut ClassTable,
    klass: u64,
    loader: u64,
    (super_at, lh_at): (u64, u64),
    refs: Option<&ResolvedReferences>,
) -> Result<Option<ClassInfo>, Error> {
    let mirror = java.mirror_of(klass)?;
    if mirror == 0 {
        return Ok(None);
    }
    let name = java.name_of_klass(klass)?;
    let super_klass = mem
        .read_u64(klass.wrapping_add(super_at))
        .map_err(|e| Error::memory("Klass::_super", e))?;
    let lh = mem
        .read_i32(klass.wrapping_add(lh_at))
        .map_err(|e| Error::memory("Klass::_layout_helper", e))?;
    let kind = if lh > 0 {
        let (fields, statics) = match java.declared_fields(klass) {
            Ok(all) => {
                let (statics, fields): (Vec<_>, Vec<_>) =
                    all.into_iter().partition(|f| f.is_static);
                let typed = |v: Vec<crate::vm::java::DeclaredField>| -> Vec<Field> {
                    v.into_iter()
                        .filter_map(|f| {
                            Some(Field {
                                ty: BasicType::of_signature(&f.signature)?,
                                name: f.name,
                                offset: f.offset,
                            })
                        })
                        .collect()
                };
                (Some(typed(fields)), typed(statics))
            }
            Err(e) => {
                table.unreadable(name.clone(), e.to_string());
                (None, Vec::new())
            }
        };
        ClassKind::Instance { fields, statics }
    } else {
        // `Klass::array_layout_helper`: tag in the top two bits (-1 type array, -2 object
        // array), header bytes in bits 16-23, the element's BasicType in 8-15.
        let tag = lh >> 30;
        let header = ((lh >> 16) & 0xff) as u64;
        let element = ((lh >> 8) & 0xff) as u8;
        match tag {
            -2 => ClassKind::ObjArray { header },
            -1 => match BasicType::of_basic_type(element) {
                Some(element) => ClassKind::TypeArray { element, header },
                None => {
                    return Err(VmError::Implausible {
                        what: format!("{name}'s element type").into(),
                        detail: format!("{element}, not a BasicType of a type array"),
                    }
                    .into());
                }
            },
            _ => {
                return Err(VmError::Implausible {
                    what: format!("{name}'s Klass::_layout_helper").into(),
                    detail: format!("{:#x}, neither an instance nor an array", lh as u32),
                }
                .into());
            }
        }
    };
    let resolved_references = match (&kind, refs) {
        (ClassKind::Instance { .. }, Some(r)) => r.read(mem, klass),
        _ => 0,
    };
    Ok(Some(ClassInfo {
        klass,
        name,
        mirror,
        super_klass,
        loader,
        kind,
        resolved_references,
    }))
}
