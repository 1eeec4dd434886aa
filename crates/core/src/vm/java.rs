//! A thread's Java identity: the fields of its `java.lang.Thread` object.
//!
//! * The object's class from its header (`oops/oop.hpp`, `oops/markWord.hpp`): the klass word
//!   after the 8-byte mark, narrow (`u32`, decoded with `CompressedKlassPointers` base/shift)
//!   with `UseCompressedClassPointers`, full otherwise; with compact headers (JDK 24+) the narrow
//!   klass is the mark word's top bits (`markWord::klass_shift`, a long constant).
//! * Field offsets of `java.lang.Thread`, its `FieldHolder` (JDK 19+, field `holder`) and
//!   `java.lang.String` are not in vmStructs (`java_lang_Thread::_name_offset` is not
//!   exported): they come from the classes' own field metadata (`InstanceKlass::_fields` up to
//!   JDK 20, `_fieldinfo_stream` from 21; decoded by `vm::codec`).
//! * Reference fields are narrow oops (`u32`, `CompressedOops` base/shift) with
//!   `UseCompressedOops`, full words otherwise.
//! * `threadStatus` is a JVMTI thread state bit set (`classfile/javaThreadStatus.hpp`), named
//!   as `java_lang_Thread::thread_status_name` names it (`classfile/javaClasses.cpp`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::VmModel;
use super::codec::{field_info, java_string};
use crate::error::{Error, VmEntry, VmError};
use crate::memory::{AddressMap, ReadMemory};

/// The fields of a `java.lang.Thread` a dump prints.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct JavaIdentity {
    /// `name`.
    pub name: String,
    /// `tid` (jcmd's `#N`).
    pub tid: i64,
    /// `daemon`.
    pub daemon: bool,
    /// `priority`.
    pub priority: i32,
    /// `threadStatus` (JVMTI bits).
    pub status: i32,
    /// `java.lang.Thread.State` as jcmd prints it, when the status is a known one.
    pub state: Option<String>,
}

/// `java_lang_Thread::thread_status_name` for the JVMTI-bit values of `JavaThreadStatus`
/// (`classfile/javaThreadStatus.hpp`: NEW 0, RUNNABLE 0x5, SLEEPING 0xE1, IN_OBJECT_WAIT 0x191,
/// IN_OBJECT_WAIT_TIMED 0x1A1, PARKED 0x291, PARKED_TIMED 0x2A1, BLOCKED_ON_MONITOR_ENTER
/// 0x401, TERMINATED 0x2; the same values in every JDK since 5, as JVMTI fixes them).
pub fn thread_status_name(status: i32) -> Option<&'static str> {
    Some(match status {
        0 => "NEW",
        0x5 => "RUNNABLE",
        0xE1 => "TIMED_WAITING (sleeping)",
        0x191 => "WAITING (on object monitor)",
        0x1A1 => "TIMED_WAITING (on object monitor)",
        0x291 => "WAITING (parking)",
        0x2A1 => "TIMED_WAITING (parking)",
        0x401 => "BLOCKED (on object monitor)",
        0x2 => "TERMINATED",
        _ => return None,
    })
}

/// Where a thread's state and daemon flag are, resolved once per JVM
/// ([`JavaReader::status_fields`]) and kept between no-stop reads (`threads::states`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusFields {
    /// `java.lang.Thread`'s `Klass*`.
    pub thread_class: u64,
    /// JDK 19+: `Thread.holder`'s offset and `Thread$FieldHolder`'s `Klass*`; the fields below
    /// are the holder's then, the thread's own before.
    pub holder: Option<(u64, u64)>,
    /// `daemon` (a `boolean`).
    pub daemon: u64,
    /// `threadStatus` (an `int`).
    pub status: u64,
}

/// The most fields decoded per class.
const MAX_FIELDS: usize = 4096;
/// The longest metadata array read (fields, field info stream), in bytes.
const MAX_FIELD_BYTES: usize = 1 << 20;
/// The longest thread name decoded, in bytes of its `value` array.
const MAX_NAME_BYTES: usize = 64 * 1024;
/// The deepest class hierarchy followed to `java.lang.Thread`.
const MAX_SUPERS: usize = 64;

/// A [`VmError::NoField`]: no field `name` of signature `sig`, or (`found`) one of another
/// signature.
fn no_field(name: &str, sig: &str, is_static: bool, found: Option<&str>) -> Error {
    VmError::NoField {
        name: name.to_owned(),
        signature: sig.to_owned(),
        is_static,
        found: found.map(str::to_owned),
    }
    .into()
}

/// A field's offset and signature; a static field's offset is in the class's mirror
/// (`java.lang.Class`), and a `static final` primitive's value may be a constant pool entry.
#[derive(Debug, Clone)]
struct FieldAt {
    offset: u64,
    signature: String,
    is_static: bool,
    /// The `ConstantValue` attribute's constant pool index (0: none).
    initializer: u16,
}

/// The offsets and flags objects are read with, resolved once from a [`VmModel`]
/// (`Klass::_name`, `_super`, `InstanceKlass::_constants` and its field metadata,
/// `sizeof(ConstantPool)`, `Symbol::_length`/`_body`, the object layout, `markWord::klass_shift`
/// with compact headers, `java_lang_Class::_klass_offset`): a few dozen bytes a reader of many
/// JVMs keeps instead of their models.
#[derive(Debug, Clone, Copy)]
pub struct JavaLayout {
    klass_name: u64,
    klass_super: u64,
    ik_constants: u64,
    cp_size: u64,
    fields: Fields,
    symbol_length: u64,
    symbol_body: u64,
    oops: super::Layout,
    klass_shift: Option<u64>,
    major: u32,
    class_klass_offset: Option<u64>,
    /// `Klass::_java_mirror` (an `OopHandle`: the address of the mirror's slot).
    java_mirror: Option<u64>,
    /// Whether `Klass::_java_mirror` is the mirror itself (an `oop`, JDK 8 and 9) rather than
    /// an `OopHandle`.
    mirror_is_oop: bool,
    /// `Klass::_layout_helper` (an instance class's size in bytes).
    layout_helper: Option<u64>,
}

impl JavaLayout {
    /// Resolves the entries from `vm`.
    ///
    /// # Errors
    /// [`Error::Vm`] when an entry it needs is missing.
    pub fn new(vm: &VmModel) -> Result<Self, Error> {
        let fields = match vm.offset("InstanceKlass", "_fieldinfo_stream") {
            Ok(stream) => Fields::Stream { stream },
            Err(_) => Fields::Array {
                fields: vm.offset("InstanceKlass", "_fields")?,
                java_count: vm.offset("InstanceKlass", "_java_fields_count")?,
            },
        };
        Ok(JavaLayout {
            klass_name: vm.offset("Klass", "_name")?,
            klass_super: vm.offset("Klass", "_super")?,
            ik_constants: vm.offset("InstanceKlass", "_constants")?,
            cp_size: vm.size_of("ConstantPool")?,
            fields,
            symbol_length: vm.offset("Symbol", "_length")?,
            symbol_body: vm.offset("Symbol", "_body")?,
            oops: vm.layout,
            klass_shift: if vm.layout.compact_headers {
                Some(vm.long("markWord::klass_shift")?)
            } else {
                None
            },
            major: vm.major,
            class_klass_offset: vm.static_address("java_lang_Class", "_klass_offset").ok(),
            java_mirror: vm.offset("Klass", "_java_mirror").ok(),
            mirror_is_oop: vm
                .field("Klass", "_java_mirror")
                .and_then(|f| f.type_string.as_deref())
                .is_some_and(|t| t == "oop"),
            layout_helper: vm.offset("Klass", "_layout_helper").ok(),
        })
    }
}

/// Reads `java.lang.Thread` objects.
pub struct JavaReader<'a> {
    mem: &'a dyn ReadMemory,
    layout: JavaLayout,
    /// Fields by class (`Klass*`): name → offset and signature (a class declares one field
    /// of a name).
    cache: RefCell<HashMap<u64, Rc<HashMap<String, FieldAt>>>>,
}

/// A field a class declares ([`JavaReader::declared_fields`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredField {
    /// The field's name.
    pub name: String,
    /// Its JVM signature (`I`, `Ljava/lang/String;`, `[B`, ...).
    pub signature: String,
    /// Its offset in bytes: from the object's start, or from the `java.lang.Class` mirror's
    /// for a static field.
    pub offset: u64,
    /// Whether it is static.
    pub is_static: bool,
    /// The `ConstantValue` attribute's constant pool index (0: none).
    pub initializer: u16,
}

/// Where a class's field metadata is.
#[derive(Debug, Clone, Copy)]
enum Fields {
    /// JDK ≤ 20: `InstanceKlass::_fields` (`Array<u2>*`) and `_java_fields_count`.
    Array { fields: u64, java_count: u64 },
    /// JDK 21+: `InstanceKlass::_fieldinfo_stream` (`Array<u1>*`).
    Stream { stream: u64 },
}

impl<'a> JavaReader<'a> {
    /// A reader for `vm`'s heap through `mem`.
    ///
    /// # Errors
    /// [`Error::Vm`] when an entry it needs is missing.
    pub fn new(vm: &VmModel, mem: &'a dyn ReadMemory) -> Result<Self, Error> {
        Ok(JavaReader::with_layout(JavaLayout::new(vm)?, mem))
    }

    /// A reader through `mem` with offsets resolved before.
    pub fn with_layout(layout: JavaLayout, mem: &'a dyn ReadMemory) -> Self {
        JavaReader {
            mem,
            layout,
            cache: RefCell::new(HashMap::new()),
        }
    }

    fn u64_at(&self, addr: u64, what: &str) -> Result<u64, Error> {
        self.mem
            .read_u64(addr)
            .map_err(|e| Error::memory(what.to_string(), e))
    }

    fn u32_at(&self, addr: u64, what: &str) -> Result<u32, Error> {
        self.mem
            .read_u32(addr)
            .map_err(|e| Error::memory(what.to_string(), e))
    }

    fn u8_at(&self, addr: u64, what: &str) -> Result<u8, Error> {
        self.mem
            .read_u8(addr)
            .map_err(|e| Error::memory(what.to_string(), e))
    }

    fn symbol(&self, sym: u64) -> Result<String, Error> {
        let len = self
            .mem
            .read_u16(sym.wrapping_add(self.layout.symbol_length))
            .map_err(|e| Error::memory("Symbol::_length", e))?;
        // A u16 length: at most 65535 bytes, HotSpot's own limit for a Symbol.
        let body = self
            .mem
            .read_vec(
                sym.wrapping_add(self.layout.symbol_body),
                usize::from(len),
                usize::from(u16::MAX),
            )
            .map_err(|e| Error::memory("Symbol::_body", e))?;
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// The `Klass*` of the object at `oop` (`oopDesc::klass`).
    fn klass_of(&self, oop: u64) -> Result<u64, Error> {
        let layout = &self.layout.oops;
        if let (true, Some(shift)) = (layout.compact_headers, self.layout.klass_shift) {
            let mark = self.u64_at(oop, "an object's mark word")?;
            return Ok(layout.narrow_klass.decode((mark >> shift) as u32));
        }
        if layout.compressed_class_pointers {
            let n = self.u32_at(oop.wrapping_add(8), "an object's narrow klass")?;
            Ok(layout.narrow_klass.decode(n))
        } else {
            self.u64_at(oop.wrapping_add(8), "an object's klass")
        }
    }

    /// Reads a reference field at `addr` (narrow with `UseCompressedOops`).
    fn oop_at(&self, addr: u64, what: &str) -> Result<u64, Error> {
        let layout = &self.layout.oops;
        if layout.compressed_oops {
            Ok(layout.narrow_oop.decode(self.u32_at(addr, what)?))
        } else {
            Ok(layout.heap_oop(self.u64_at(addr, what)?))
        }
    }

    /// The fields `klass` declares, by name.
    fn fields_of(&self, klass: u64) -> Result<Rc<HashMap<String, FieldAt>>, Error> {
        if let Some(f) = self.cache.borrow().get(&klass) {
            return Ok(f.clone());
        }
        let out: HashMap<String, FieldAt> = self
            .declared_fields(klass)?
            .into_iter()
            .map(|f| {
                (
                    f.name,
                    FieldAt {
                        offset: f.offset,
                        signature: f.signature,
                        is_static: f.is_static,
                        initializer: f.initializer,
                    },
                )
            })
            .collect();
        let out = Rc::new(out);
        self.cache.borrow_mut().insert(klass, out.clone());
        Ok(out)
    }

    /// The Java fields instance class `klass` declares, in the order of its field metadata
    /// (`InstanceKlass::_fields` up to JDK 20, `_fieldinfo_stream` from 21; the declaration
    /// order): static and non-static, the VM's injected fields left out as HotSpot's heap
    /// dumper leaves them out. Offsets are from the object's start (from the mirror's for
    /// statics).
    ///
    /// # Errors
    /// [`Error::Vm`] when the metadata is implausible or cannot be decoded;
    /// [`Error::Memory`].
    pub fn declared_fields(&self, klass: u64) -> Result<Vec<DeclaredField>, Error> {
        let cp = self.u64_at(
            klass.wrapping_add(self.layout.ik_constants),
            "InstanceKlass::_constants",
        )?;
        let array = |ptr_off: u64, what: &str| -> Result<Vec<u8>, Error> {
            let arr = self.u64_at(klass.wrapping_add(ptr_off), what)?;
            let len = self.u32_at(arr, what)? as usize;
            let (width, data) = match self.layout.fields {
                Fields::Array { .. } => (2, 4),
                Fields::Stream { .. } => (1, 4),
            };
            let bytes = len
                .checked_mul(width)
                .filter(|&n| n <= MAX_FIELD_BYTES)
                .ok_or_else(|| VmError::Bound {
                    what: format!("{what}'s length").into(),
                    count: len as u64,
                    max: (MAX_FIELD_BYTES / width) as u64,
                })?;
            let mut buf = vec![0u8; bytes];
            self.mem
                .read_exact_at(arr.wrapping_add(data), &mut buf)
                .map_err(|e| Error::memory(what.to_string(), e))?;
            Ok(buf)
        };
        let codec_err = |e: super::codec::CodecError| Error::Vm(VmError::Codec(e));
        let decoded = match self.layout.fields {
            Fields::Array { fields, java_count } => {
                let bytes = array(fields, "InstanceKlass::_fields")?;
                let java_fields = self
                    .mem
                    .read_u16(klass.wrapping_add(java_count))
                    .map_err(|e| Error::memory("InstanceKlass::_java_fields_count", e))?;
                field_info::decode_fields_array(
                    &bytes,
                    java_fields,
                    &field_info::FieldsArrayLayout::for_jdk(self.layout.major),
                    MAX_FIELDS,
                )
                .map_err(codec_err)?
            }
            Fields::Stream { stream } => {
                let bytes = array(stream, "InstanceKlass::_fieldinfo_stream")?;
                field_info::decode_fieldinfo_stream(
                    &bytes,
                    &field_info::FieldFlagBits::HOTSPOT,
                    MAX_FIELDS,
                )
                .map_err(codec_err)?
            }
        };
        let mut out = Vec::with_capacity(decoded.java_fields as usize);
        for f in decoded.fields.iter().take(decoded.java_fields as usize) {
            let Some(offset) = f.offset else {
                continue;
            };
            let sym = |index: u16| -> Result<String, Error> {
                let slot = self.u64_at(
                    cp.wrapping_add(self.layout.cp_size + 8 * u64::from(index)),
                    "a constant pool symbol",
                )?;
                self.symbol(slot & !1)
            };
            out.push(DeclaredField {
                name: sym(f.name_index)?,
                signature: sym(f.signature_index)?,
                offset: u64::from(offset),
                is_static: f.is_static(),
                initializer: f.initializer_index,
            });
        }
        Ok(out)
    }

    /// The field `name` of the class of `klass` or its superclasses up to `holder_name`.
    fn class_named(&self, mut klass: u64, holder_name: &str) -> Result<u64, Error> {
        let mut found = None;
        for _ in 0..MAX_SUPERS {
            if klass == 0 {
                break;
            }
            let name = self
                .symbol(self.u64_at(klass.wrapping_add(self.layout.klass_name), "Klass::_name")?)?;
            if name == holder_name {
                return Ok(klass);
            }
            found.get_or_insert(name);
            klass = self.u64_at(klass.wrapping_add(self.layout.klass_super), "Klass::_super")?;
        }
        Err(VmError::WrongClass {
            what: "the object".into(),
            expected: holder_name.to_owned().into(),
            found,
        }
        .into())
    }

    fn field(&self, klass: u64, name: &str, sig: &str) -> Result<u64, Error> {
        let fields = self.fields_of(klass)?;
        match fields.get(name).filter(|f| !f.is_static) {
            Some(f) if f.signature == sig => Ok(f.offset),
            Some(f) => Err(no_field(name, sig, false, Some(&f.signature))),
            None => Err(no_field(name, sig, false, None)),
        }
    }

    /// Where an array's length and first element are, for elements of `elem` bytes
    /// (`arrayOopDesc`, `oops/arrayOop.hpp`): the length after the mark and klass words; the
    /// elements after it, aligned to a word up to JDK 21 and to the element size from 22.
    fn array_layout(&self, elem: u64) -> (u64, u64) {
        let length_at = self.layout.oops.array_length_offset();
        let align = if self.layout.major >= 22 { elem } else { 8 };
        (length_at, (length_at + 4).div_ceil(align) * align)
    }

    /// The text of the `java.lang.String` at `oop` (`value` + `coder`, JDK 9+; `char[]` in 8).
    fn string(&self, oop: u64) -> Result<String, Error> {
        let klass = self.class_named(self.klass_of(oop)?, "java/lang/String")?;
        let (value_off, coder) = match self.field(klass, "value", "[B") {
            Ok(v) => {
                let coder_off = self.field(klass, "coder", "B")?;
                (
                    v,
                    Some(self.u8_at(oop.wrapping_add(coder_off), "String.coder")?),
                )
            }
            Err(_) => (self.field(klass, "value", "[C")?, None),
        };
        let array = self.oop_at(oop.wrapping_add(value_off), "String.value")?;
        let elem: u64 = if coder.is_some() { 1 } else { 2 };
        let (length_at, base) = self.array_layout(elem);
        let len = u64::from(self.u32_at(array.wrapping_add(length_at), "String.value's length")?);
        let bytes = len * elem;
        if bytes > MAX_NAME_BYTES as u64 {
            return Err(VmError::Bound {
                what: "String.value's length in bytes".into(),
                count: bytes,
                max: MAX_NAME_BYTES as u64,
            }
            .into());
        }
        let mut buf = vec![0u8; bytes as usize];
        self.mem
            .read_exact_at(array.wrapping_add(base), &mut buf)
            .map_err(|e| Error::memory("String.value", e))?;
        java_string::decode_value(&buf, coder, MAX_NAME_BYTES)
            .map_err(|e| Error::Vm(VmError::Codec(e)))
    }

    /// The class of the object at `oop` as a thread dump names it after `(a `
    /// (`javaVFrame::print_locked_object_class_name`, `runtime/vframe.cpp`): the class's
    /// external name (`Klass::external_name`), or `java.lang.Class for X` for a class mirror
    /// (the mirrored `Klass*` at `java_lang_Class::_klass_offset`, a static int of vmStructs).
    ///
    /// # Errors
    /// [`Error::Memory`] when the header or the names cannot be read.
    pub fn class_name_of(&self, oop: u64) -> Result<String, Error> {
        let klass = self.klass_of(oop)?;
        let name = self.klass_name(klass)?;
        if name == "java/lang/Class"
            && let Some(at) = self.layout.class_klass_offset
        {
            let offset = u64::from(self.u32_at(at, "java_lang_Class::_klass_offset")?);
            let mirrored = self.u64_at(oop.wrapping_add(offset), "a class mirror's Klass*")?;
            if mirrored != 0 {
                let of = external_name(&self.klass_name(mirrored)?);
                return Ok(format!("java.lang.Class for {of}"));
            }
        }
        Ok(external_name(&name))
    }

    /// The internal name (`java/lang/Object`) of `klass` (`Klass::_name`).
    fn klass_name(&self, klass: u64) -> Result<String, Error> {
        self.symbol(self.u64_at(klass.wrapping_add(self.layout.klass_name), "Klass::_name")?)
    }

    /// `Thread.parkBlocker` of the `java.lang.Thread` at `thread` (0: none), as
    /// `JavaThread::current_park_blocker` reads it (`java_lang_Thread::park_blocker`).
    ///
    /// # Errors
    /// [`Error::Vm`] when the class has no such field; [`Error::Memory`].
    pub fn park_blocker(&self, thread: u64) -> Result<u64, Error> {
        let klass = self.class_named(self.klass_of(thread)?, "java/lang/Thread")?;
        let off = self.field(klass, "parkBlocker", "Ljava/lang/Object;")?;
        self.oop_at(thread.wrapping_add(off), "Thread.parkBlocker")
    }

    /// The owner of `blocker` when it is a `java.util.concurrent.locks.
    /// AbstractOwnableSynchronizer` (its `exclusiveOwnerThread`, a `java.lang.Thread` oop; 0:
    /// not owned), `None` when it is not one (`java_util_concurrent_locks_
    /// AbstractOwnableSynchronizer::get_owner_threadObj`).
    ///
    /// # Errors
    /// [`Error::Memory`] when the object cannot be read.
    pub fn synchronizer_owner(&self, blocker: u64) -> Result<Option<u64>, Error> {
        let Ok(aos) = self.class_named(
            self.klass_of(blocker)?,
            "java/util/concurrent/locks/AbstractOwnableSynchronizer",
        ) else {
            return Ok(None);
        };
        let off = self.field(aos, "exclusiveOwnerThread", "Ljava/lang/Thread;")?;
        self.oop_at(blocker.wrapping_add(off), "exclusiveOwnerThread")
            .map(Some)
    }

    /// `Thread.tid` of the `java.lang.Thread` (or a subclass: `java.lang.VirtualThread`) at
    /// `oop`: jcmd's `#N`.
    ///
    /// # Errors
    /// As [`JavaReader::identity`].
    pub fn thread_id(&self, oop: u64) -> Result<i64, Error> {
        let thread = self.class_named(self.klass_of(oop)?, "java/lang/Thread")?;
        Ok(self.u64_at(
            oop.wrapping_add(self.field(thread, "tid", "J")?),
            "Thread.tid",
        )? as i64)
    }

    /// `Thread.name` of the `java.lang.Thread` (or subclass) at `oop` (empty when null).
    ///
    /// # Errors
    /// As [`JavaReader::identity`].
    pub fn thread_name(&self, oop: u64) -> Result<String, Error> {
        let thread = self.class_named(self.klass_of(oop)?, "java/lang/Thread")?;
        let name_oop = self.oop_at(
            oop.wrapping_add(self.field(thread, "name", "Ljava/lang/String;")?),
            "Thread.name",
        )?;
        if name_oop == 0 {
            Ok(String::new())
        } else {
            self.string(name_oop)
        }
    }

    /// Where the state and daemon flag of the thread whose `java.lang.Thread` (or subclass)
    /// is `oop` are: `threadStatus` and `daemon` of the thread, or of its `holder` from JDK 19.
    ///
    /// # Errors
    /// [`Error::Vm`] when the object is not a thread or the fields cannot be decoded;
    /// [`Error::Memory`].
    pub fn status_fields(&self, oop: u64) -> Result<StatusFields, Error> {
        let thread = self.class_named(self.klass_of(oop)?, "java/lang/Thread")?;
        let (holder, klass) = match self.field(thread, "holder", "Ljava/lang/Thread$FieldHolder;") {
            Ok(off) => {
                let obj = self.oop_at(oop.wrapping_add(off), "Thread.holder")?;
                if obj == 0 {
                    return Err(VmError::NullReference {
                        what: "Thread.holder",
                    }
                    .into());
                }
                let klass = self.klass_of(obj)?;
                self.class_named(klass, "java/lang/Thread$FieldHolder")?;
                (Some((off, klass)), klass)
            }
            Err(_) => (None, thread),
        };
        Ok(StatusFields {
            thread_class: thread,
            holder,
            daemon: self.field(klass, "daemon", "Z")?,
            status: self.field(klass, "threadStatus", "I")?,
        })
    }

    /// The `Klass*` of the object at `oop`.
    ///
    /// # Errors
    /// [`Error::Memory`] when its header cannot be read.
    pub fn klass_at(&self, oop: u64) -> Result<u64, Error> {
        self.klass_of(oop)
    }

    /// Whether class `klass` is `ancestor` or extends it (`Klass::_super`, at most 64 levels).
    ///
    /// # Errors
    /// [`Error::Memory`] when a class cannot be read.
    pub fn extends(&self, mut klass: u64, ancestor: u64) -> Result<bool, Error> {
        for _ in 0..MAX_SUPERS {
            if klass == ancestor {
                return Ok(true);
            }
            if klass == 0 {
                return Ok(false);
            }
            klass = self.u64_at(klass.wrapping_add(self.layout.klass_super), "Klass::_super")?;
        }
        Ok(false)
    }

    /// `threadStatus` and `daemon` of the thread whose `java.lang.Thread` is `oop`, at
    /// `fields`; from JDK 19 the holder must be a `Thread$FieldHolder`.
    ///
    /// # Errors
    /// [`Error::Vm`] when the holder is missing or of another class (a torn read);
    /// [`Error::Memory`].
    pub fn status(&self, oop: u64, fields: &StatusFields) -> Result<(i32, bool), Error> {
        let obj = match fields.holder {
            Some((off, klass)) => {
                let holder = self.oop_at(oop.wrapping_add(off), "Thread.holder")?;
                if holder == 0 {
                    return Err(VmError::NullReference {
                        what: "Thread.holder",
                    }
                    .into());
                }
                if self.klass_of(holder)? != klass {
                    return Err(VmError::WrongClass {
                        what: "Thread.holder".into(),
                        expected: "java/lang/Thread$FieldHolder".into(),
                        found: None,
                    }
                    .into());
                }
                holder
            }
            None => oop,
        };
        let status = self.u32_at(obj.wrapping_add(fields.status), "threadStatus")? as i32;
        let daemon = self.u8_at(obj.wrapping_add(fields.daemon), "daemon")? != 0;
        Ok((status, daemon))
    }

    /// The identity of the thread whose `java.lang.Thread` is `oop`.
    ///
    /// # Errors
    /// [`Error::Vm`] when the class's field metadata cannot be decoded, [`Error::Memory`]
    /// when the object cannot be read.
    pub fn identity(&self, oop: u64) -> Result<JavaIdentity, Error> {
        let thread = self.class_named(self.klass_of(oop)?, "java/lang/Thread")?;
        let name = self.thread_name(oop)?;
        let tid = self.u64_at(
            oop.wrapping_add(self.field(thread, "tid", "J")?),
            "Thread.tid",
        )? as i64;
        // JDK 19+: daemon, priority and threadStatus moved to Thread.FieldHolder (`holder`).
        let (obj, klass) = match self.field(thread, "holder", "Ljava/lang/Thread$FieldHolder;") {
            Ok(off) => {
                let holder = self.oop_at(oop.wrapping_add(off), "Thread.holder")?;
                if holder == 0 {
                    return Err(VmError::NullReference {
                        what: "Thread.holder",
                    }
                    .into());
                }
                (holder, self.klass_of(holder)?)
            }
            Err(_) => (oop, thread),
        };
        let daemon = self.u8_at(
            obj.wrapping_add(self.field(klass, "daemon", "Z")?),
            "daemon",
        )? != 0;
        let priority = self.u32_at(
            obj.wrapping_add(self.field(klass, "priority", "I")?),
            "priority",
        )? as i32;
        let status = self.u32_at(
            obj.wrapping_add(self.field(klass, "threadStatus", "I")?),
            "threadStatus",
        )? as i32;
        Ok(JavaIdentity {
            name,
            tid,
            daemon,
            priority,
            status,
            state: thread_status_name(status).map(str::to_string),
        })
    }

    /// The offset of instance field `name` (signature `sig`) of class `klass` or the nearest
    /// superclass declaring it.
    ///
    /// # Errors
    /// [`Error::Vm`] when no class up the hierarchy declares it; [`Error::Memory`].
    pub fn field_in(&self, mut klass: u64, name: &str, sig: &str) -> Result<u64, Error> {
        for _ in 0..MAX_SUPERS {
            if klass == 0 {
                break;
            }
            if let Some(f) = self.fields_of(klass)?.get(name).filter(|f| !f.is_static) {
                return if f.signature == sig {
                    Ok(f.offset)
                } else {
                    Err(no_field(name, sig, false, Some(&f.signature)))
                };
            }
            klass = self.u64_at(klass.wrapping_add(self.layout.klass_super), "Klass::_super")?;
        }
        Err(no_field(name, sig, false, None))
    }

    /// The reference at `addr` (a field or an array element: narrow with
    /// `UseCompressedOops`, a generational ZGC pointer's colour taken off).
    ///
    /// # Errors
    /// [`Error::Memory`].
    pub fn reference_at(&self, addr: u64, what: &str) -> Result<u64, Error> {
        self.oop_at(addr, what)
    }

    /// The `int` at `addr`.
    ///
    /// # Errors
    /// [`Error::Memory`].
    pub fn int_at(&self, addr: u64, what: &str) -> Result<i32, Error> {
        Ok(self.u32_at(addr, what)? as i32)
    }

    /// The `java.lang.Class` mirror of `klass` (`Klass::_java_mirror`, an `OopHandle`); 0 for
    /// a class that has none (yet).
    ///
    /// # Errors
    /// [`Error::Vm`] when `Klass::_java_mirror` is not exported; [`Error::Memory`].
    pub fn mirror_of(&self, klass: u64) -> Result<u64, Error> {
        let at = self
            .layout
            .java_mirror
            .ok_or_else(|| VmError::MissingEntry {
                entry: VmEntry::member("Klass", "_java_mirror"),
            })?;
        let handle = self.u64_at(klass.wrapping_add(at), "Klass::_java_mirror")?;
        if handle == 0 {
            return Ok(0);
        }
        self.mirror(klass)
    }

    /// The text of the `java.lang.String` at `oop` (at most 64 KiB of its `value`).
    ///
    /// # Errors
    /// [`Error::Vm`] when the object is not a String; [`Error::Memory`].
    pub fn string_at(&self, oop: u64) -> Result<String, Error> {
        self.string(oop)
    }

    /// The `java.lang.Class` mirror of `klass` (`Klass::_java_mirror`, an `OopHandle`).
    fn mirror(&self, klass: u64) -> Result<u64, Error> {
        let at = self
            .layout
            .java_mirror
            .ok_or_else(|| VmError::MissingEntry {
                entry: VmEntry::member("Klass", "_java_mirror"),
            })?;
        let handle = self.u64_at(klass.wrapping_add(at), "Klass::_java_mirror")?;
        if self.layout.mirror_is_oop {
            return Ok(handle);
        }
        let raw = self.u64_at(handle, "a class mirror's OopHandle")?;
        Ok(self.layout.oops.heap_oop(raw))
    }

    /// Static reference field `name` (signature `sig`) of class `klass`: its value, read from
    /// the class's mirror (static fields live in the `java.lang.Class` instance).
    ///
    /// # Errors
    /// [`Error::Vm`] when the class declares no such static field; [`Error::Memory`].
    pub fn static_reference(&self, klass: u64, name: &str, sig: &str) -> Result<u64, Error> {
        let fields = self.fields_of(klass)?;
        let f = fields
            .get(name)
            .filter(|f| f.is_static && f.signature == sig)
            .ok_or_else(|| no_field(name, sig, true, None))?;
        let mirror = self.mirror(klass)?;
        self.oop_at(mirror.wrapping_add(f.offset), name)
    }

    /// The `static final int` constants class `klass` declares (their `ConstantValue`, an
    /// `int` entry of the class's constant pool): name and value.
    ///
    /// # Errors
    /// [`Error::Vm`] when the field metadata cannot be decoded; [`Error::Memory`].
    pub fn int_constants(&self, klass: u64) -> Result<Vec<(String, i32)>, Error> {
        let cp = self.u64_at(
            klass.wrapping_add(self.layout.ik_constants),
            "InstanceKlass::_constants",
        )?;
        let mut out = Vec::new();
        for (name, f) in self.fields_of(klass)?.iter() {
            if f.is_static && f.signature == "I" && f.initializer != 0 {
                let at = cp.wrapping_add(self.layout.cp_size + 8 * u64::from(f.initializer));
                out.push((name.clone(), self.u32_at(at, "a constant pool int")? as i32));
            }
        }
        out.sort_by_key(|(_, v)| *v);
        Ok(out)
    }

    /// The instance size of class `klass` in bytes (`Klass::_layout_helper` of an instance
    /// class, its slow-path bit cleared).
    ///
    /// # Errors
    /// [`Error::Vm`] when the layout helper is not exported or not an instance size;
    /// [`Error::Memory`].
    pub fn instance_size(&self, klass: u64) -> Result<u64, Error> {
        let at = self
            .layout
            .layout_helper
            .ok_or_else(|| VmError::MissingEntry {
                entry: VmEntry::member("Klass", "_layout_helper"),
            })?;
        let lh = self.u32_at(klass.wrapping_add(at), "Klass::_layout_helper")? as i32;
        if lh <= 0 || lh > 1 << 20 {
            return Err(VmError::Implausible {
                what: "Klass::_layout_helper".into(),
                detail: format!("{lh:#x}, not an instance size"),
            }
            .into());
        }
        Ok(u64::from(lh as u32) & !7)
    }

    /// The elements of the object array at `oop` (references, nulls included), at most `max`.
    ///
    /// # Errors
    /// [`Error::Vm`] when the array is longer than `max`; [`Error::Memory`].
    pub fn object_array(&self, oop: u64, max: usize) -> Result<Vec<u64>, Error> {
        let width: u64 = if self.layout.oops.compressed_oops {
            4
        } else {
            8
        };
        let (length_at, base) = self.array_layout(width);
        let len = self.u32_at(oop.wrapping_add(length_at), "an array's length")? as usize;
        if len > max {
            return Err(VmError::Bound {
                what: "an array's length".into(),
                count: len as u64,
                max: max as u64,
            }
            .into());
        }
        let bytes = self
            .mem
            .read_vec(oop.wrapping_add(base), len * width as usize, max * 8)
            .map_err(|e| Error::memory("an object array", e))?;
        Ok(bytes
            .chunks_exact(width as usize)
            .map(|c| {
                if width == 4 {
                    let n = u32::from_le_bytes(c.try_into().expect("4 bytes"));
                    self.layout.oops.narrow_oop.decode(n)
                } else {
                    let raw = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                    self.layout.oops.heap_oop(raw)
                }
            })
            .collect())
    }

    /// The internal name of the class of the object at `oop` (`java/lang/VirtualThread`).
    ///
    /// # Errors
    /// [`Error::Memory`].
    pub fn class_of(&self, oop: u64) -> Result<(u64, String), Error> {
        let klass = self.klass_of(oop)?;
        Ok((klass, self.klass_name(klass)?))
    }

    /// The internal name of class `klass`.
    ///
    /// # Errors
    /// [`Error::Memory`].
    pub fn name_of_klass(&self, klass: u64) -> Result<String, Error> {
        self.klass_name(klass)
    }
}

/// A class's external name as `Klass::external_name` gives it (`oops/klass.cpp`): `/` → `.`, and
/// a hidden class's `+0x<address>` suffix (JDK 15+, `ClassFileParser`'s naming) printed as
/// `/0x<address>`.
pub fn external_name(internal: &str) -> String {
    let dotted = internal.replace('/', ".");
    if let Some(i) = dotted.rfind("+0x")
        && dotted.len() > i + 3
        && dotted[i + 3..].bytes().all(|b| b.is_ascii_hexdigit())
    {
        return format!("{}/{}", &dotted[..i], &dotted[i + 1..]);
    }
    dotted
}
/// At most this many classes and modules are remembered by [`ModuleNames`] (a bound on what a
/// hostile target can make us hold).
const MAX_CACHED_CLASSES: usize = 1 << 20;

/// The named modules of classes as `ModuleEntry` names them for jcmd (`name@version`:
/// `java.base@17.0.15`), the histogram's `(module@version)` column and the `module@version/`
/// prefix of a frame in `Thread.print` (`java_lang_Throwable::print_stack_element_to_buffer`,
/// `classfile/javaClasses.cpp`). Read from the Java objects (`Class.module` → `Module.name`,
/// `Module.descriptor.version.version`, or its `rawVersionString`), cached by `Module` and by
/// klass. `None` for the unnamed module, for JDK 8 (no `Class.module`), and for what cannot be
/// read.
#[derive(Default)]
pub struct ModuleNames {
    by_module: AddressMap<Option<std::sync::Arc<str>>>,
    by_klass: AddressMap<Option<std::sync::Arc<str>>>,
    /// `Class.module`'s offset: `Some(None)` once it is known not to exist (JDK 8).
    class_module: Option<Option<u64>>,
}

impl ModuleNames {
    /// The named module of the class whose `Klass*` is `klass`, by its mirror.
    pub fn of_klass(&mut self, reader: &JavaReader<'_>, klass: u64) -> Option<std::sync::Arc<str>> {
        if let Some(m) = self.by_klass.get(&klass) {
            return m.clone();
        }
        let named = match reader.mirror_of(klass) {
            Ok(mirror) if mirror != 0 => self.of_mirror(reader, mirror),
            _ => None,
        };
        if self.by_klass.len() < MAX_CACHED_CLASSES {
            self.by_klass.insert(klass, named.clone());
        }
        named
    }

    /// The named module of the class whose `java.lang.Class` mirror is `mirror`.
    pub fn of_mirror(
        &mut self,
        reader: &JavaReader<'_>,
        mirror: u64,
    ) -> Option<std::sync::Arc<str>> {
        let class_module = match self.class_module {
            Some(o) => o?,
            None => {
                let o = reader
                    .klass_at(mirror)
                    .and_then(|k| reader.field_in(k, "module", "Ljava/lang/Module;"))
                    .ok();
                self.class_module = Some(o);
                o?
            }
        };
        let module = reader
            .reference_at(mirror.wrapping_add(class_module), "Class.module")
            .ok()?;
        if module == 0 {
            return None;
        }
        if let Some(m) = self.by_module.get(&module) {
            return m.clone();
        }
        let named = Self::read(reader, module).map(std::sync::Arc::from);
        if self.by_module.len() < MAX_CACHED_CLASSES {
            self.by_module.insert(module, named.clone());
        }
        named
    }

    fn read(reader: &JavaReader<'_>, module: u64) -> Option<String> {
        let reference = |obj: u64, name: &str, sig: &str| -> Option<u64> {
            let k = reader.klass_at(obj).ok()?;
            let off = reader.field_in(k, name, sig).ok()?;
            reader.reference_at(obj.wrapping_add(off), name).ok()
        };
        let name = reference(module, "name", "Ljava/lang/String;")?;
        if name == 0 {
            return None;
        }
        let name = reader.string_at(name).ok()?;
        let version = reference(module, "descriptor", "Ljava/lang/module/ModuleDescriptor;")
            .filter(|&d| d != 0)
            .and_then(|d| {
                let v = reference(d, "version", "Ljava/lang/module/ModuleDescriptor$Version;")
                    .filter(|&v| v != 0)
                    .and_then(|v| reference(v, "version", "Ljava/lang/String;"));
                match v {
                    Some(s) if s != 0 => Some(s),
                    _ => reference(d, "rawVersionString", "Ljava/lang/String;"),
                }
            })
            .filter(|&s| s != 0)
            .and_then(|s| reader.string_at(s).ok());
        Some(match version {
            Some(v) => format!("{name}@{v}"),
            None => name,
        })
    }
}
