//! A heap dump: every loaded class and every object of the heap, with the roots a reader needs
//! to keep them, handed to a [`HeapDumpSink`] as they are met (`format::hprof` writes them as an
//! HPROF file). What is dumped follows HotSpot's own dumper (`services/heapDumper.cpp`):
//!
//! * a class's id is the address of its `java.lang.Class` mirror, an object's its address
//!   (a reference's value decoded: narrow oops widened, a generational ZGC colour taken off);
//! * classes without a mirror are left out; `java.lang.Class` instances are dumped as their
//!   classes, except the primitive types' mirrors (no `Klass*`) and the mirrors of classes not
//!   loaded (kept by a CDS archive), dumped as instances;
//! * an instance's values: its class's declared non-static fields, then its superclass's, up to
//!   `java.lang.Object`; the VM's injected fields are not Java fields and are left out;
//! * a class's statics: its declared static fields, then, as HotSpot adds it, a
//!   `<resolved_references>` static holding its constant pool's resolved references array (the
//!   string literals and method handles its code resolved; [`super::classes::ClassInfo`]);
//! * roots: `STICKY_CLASS` for the boot loader's instance classes, `THREAD_OBJ` for each
//!   `JavaThread`'s `java.lang.Thread`, with a stack trace of its frames (`FRAME` records, from
//!   the thread walk), `JAVA_FRAME` for the objects those frames hold: their monitors, and
//!   every word of the thread's stack, from its top Java frame up to the stack's base, that is
//!   the address (or, with compressed oops, a half that is the narrow oop) of an object the
//!   dump writes (a conservative scan: the frames' oop maps are not read, so a dead slot that
//!   still holds an object's address roots it too; the root's depth is the frame whose slots
//!   hold the word).
//!
//! The heap is walked twice. The first walk (`inspect histo`'s, [`super::walk`]; the upper half
//! of a large heap on a second thread) marks in a [`Starts`] map every object the dump will
//! write; the second reads each of them again, in address order, and writes it. Every reference
//! written (a field, an element, a static, a root, a class's loader) is an object the dump holds
//! or null: a dead object's field may still hold the old address of an object moved or freed
//! since, into memory reused since (a G1 region or a ZGC page allocated again), where no object
//! starts now. A heap too large for the map ([`super::starts::MAX_BYTES`]) is walked once,
//! its references checked against the walked spaces and the TLABs' unused tails only.
//!
//! An object of a class not in the class loader data graph is counted and left out, never
//! written with an unknown class id.

use std::io;
use std::rc::Rc;

use super::Note;
/// The field and element types, defined with the class table that reads them.
pub use super::classes::BasicType;
use super::classes::{self, ClassKind, ClassTable};
use super::spaces::{self, SpaceKind};
use super::starts::{Place, Starts};
use super::walk::{CHUNK, Chunks, KlassCache, KlassMap, ObjectLayout, WalkStats, Walker};
use crate::error::{Error, VmError};
use crate::memory::{LeBytes, ReadMemory};
use crate::threads::list::ThreadLayout;
use crate::vm::VmModel;
use crate::vm::java::JavaReader;

/// A static field of a `CLASS_DUMP`: its name's id, type and value (an id for a reference, the
/// value's bits otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticField {
    /// The `UTF8` id of the field's name.
    pub name: u64,
    /// The field's type.
    pub ty: BasicType,
    /// The value, zero-extended (a reference's object id).
    pub value: u64,
}

/// The fixed part of a `CLASS_DUMP` sub-record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassDump {
    /// The class's id (its `java.lang.Class` mirror's address, as HotSpot writes it).
    pub class: u64,
    /// The superclass's id (0 for `java.lang.Object`).
    pub super_class: u64,
    /// The defining loader object (0: the boot loader).
    pub loader: u64,
    /// Bytes of an instance's field values in an `INSTANCE_DUMP` (every non-static field up
    /// the chain, references as ids).
    pub instance_size: u32,
    /// The declared static fields with their values.
    pub statics: Vec<StaticField>,
    /// The declared non-static fields: name id and type, in the order their values are
    /// written.
    pub fields: Vec<(u64, BasicType)>,
}

/// A thread as a heap dump lists it: its `java.lang.Thread` and its Java frames, top first
/// (from the thread walk of `inspect threads`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StackThread {
    /// The `java.lang.Thread` object (0: none yet; such a thread is left out).
    pub object: u64,
    /// The frames, top first.
    pub frames: Vec<StackFrame>,
    /// `[low, high)`: the part of its stack that its Java frames use, from the top Java
    /// frame's sp to the stack's base (`JavaThread::_stack_base`), at most
    /// [`MAX_STACK_SCANNED`] bytes of it; scanned for `JAVA_FRAME` roots. Empty: not scanned.
    pub stack: (u64, u64),
    /// Its `JavaThread*`, whose JNI local handles are `JNI_LOCAL` roots (0: not read).
    pub java_thread: u64,
}

/// Global roots besides `JNIHandles::_global_handles`, written as `JNI_GLOBAL` roots as
/// HotSpot's dumper writes them (found in libjvm's `.symtab` by the caller: not in vmStructs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobalRoots {
    /// Addresses of `OopStorage*` variables (JDK 16+: `Universe::_vm_global`).
    pub storages: Vec<u64>,
    /// Addresses of words each holding an oop (JDK 11 to 15: `Universe`'s static oops, which
    /// its `oops_do` visits).
    pub oops: Vec<u64>,
}

/// The most bytes of one thread's stack scanned for frame roots (from its top Java frame).
pub const MAX_STACK_SCANNED: u64 = 8 << 20;

/// A Java frame of a [`StackThread`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StackFrame {
    /// The method's holder class (`InstanceKlass*`).
    pub holder: u64,
    /// The method's name.
    pub method: String,
    /// The method's signature (empty when unknown).
    pub signature: String,
    /// The holder's source file.
    pub file: Option<String>,
    /// The line as HPROF codes it: a line number, -1 unknown, -2 compiled, -3 native.
    pub line: i32,
    /// Objects the frame refers to that it keeps alive: the monitors it holds or is entering,
    /// its receiver when read.
    pub objects: Vec<u64>,
    /// The physical frame's stack pointer (0: not known): the frame's slots lie from here up
    /// to the next frame's.
    pub sp: u64,
}

/// A GC root of a heap dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// A class the boot loader loaded (`ROOT_STICKY_CLASS`): its id.
    StickyClass(u64),
    /// A thread's `java.lang.Thread` (`ROOT_THREAD_OBJ`).
    ThreadObj {
        /// The object's id.
        id: u64,
        /// The thread's serial (1, 2, ... in the thread list's order).
        thread: u32,
        /// Its stack trace's serial.
        trace: u32,
    },
    /// An object a JNI global handle (or one of the VM's global handles, as HotSpot's dumper
    /// writes those) refers to (`ROOT_JNI_GLOBAL`).
    JniGlobal {
        /// The object's id.
        id: u64,
        /// The handle's address (HotSpot writes it as the JNI global ref's id).
        handle: u64,
    },
    /// An object a thread's JNI local handle refers to (`ROOT_JNI_LOCAL`).
    JniLocal {
        /// The object's id.
        id: u64,
        /// The thread's serial.
        thread: u32,
        /// The frame's depth (0: the top frame, as HotSpot writes a native top frame's).
        depth: u32,
    },
    /// An object a Java frame refers to (`ROOT_JAVA_FRAME`).
    JavaFrame {
        /// The object's id.
        id: u64,
        /// The thread's serial.
        thread: u32,
        /// The frame's depth (0: the top frame).
        depth: u32,
    },
}

/// What receives a heap dump, in this order: names ([`Self::utf8`]), classes
/// ([`Self::load_class`]), stack traces, then the heap part: class dumps, roots and objects.
/// Each method's `io::Error` ends the dump.
pub trait HeapDumpSink {
    /// Text `text` gets id `id` (class and field names).
    fn utf8(&mut self, id: u64, text: &[u8]) -> io::Result<()>;
    /// Class `class` (an id) is loaded, serial `serial`, named by the text of id `name`.
    fn load_class(&mut self, serial: u32, class: u64, trace: u32, name: u64) -> io::Result<()>;
    /// A stack frame: its id (a serial), the ids of its method's name, signature and source
    /// file (0: unknown), its class's serial and its line as HPROF codes it.
    fn frame(
        &mut self,
        id: u64,
        method: u64,
        signature: u64,
        source: u64,
        class_serial: u32,
        line: i32,
    ) -> io::Result<()>;
    /// A stack trace: its serial, its thread's serial (0: none) and its frames' ids.
    fn trace(&mut self, serial: u32, thread: u32, frames: &[u64]) -> io::Result<()>;
    /// A class's description.
    fn class_dump(&mut self, c: &ClassDump) -> io::Result<()>;
    /// A GC root.
    fn root(&mut self, root: Root) -> io::Result<()>;
    /// An instance: its id, its class's id and its field values in the class dumps' order
    /// (type and value: an object id, or a primitive's bits zero-extended).
    fn instance(&mut self, id: u64, class: u64, values: &[(BasicType, u64)]) -> io::Result<()>;
    /// Starts an object array of `len` elements, given next with [`Self::object_elements`].
    fn begin_object_array(&mut self, id: u64, class: u64, len: u32) -> io::Result<()>;
    /// Elements (object ids) of the object array begun.
    fn object_elements(&mut self, ids: &[u64]) -> io::Result<()>;
    /// Starts a primitive array of `len` elements of type `ty`, given next with
    /// [`Self::primitive_elements`].
    fn begin_primitive_array(&mut self, id: u64, ty: BasicType, len: u32) -> io::Result<()>;
    /// Elements of the primitive array begun, as the target stores them (little-endian).
    fn primitive_elements(&mut self, ty: BasicType, le: &[u8]) -> io::Result<()>;
}

/// What a dump held and skipped, for `-v` and the notes.
#[derive(Debug, Clone, Default)]
pub struct DumpStats {
    /// Classes dumped.
    pub classes: u64,
    /// Instances dumped.
    pub instances: u64,
    /// Object arrays dumped.
    pub object_arrays: u64,
    /// Primitive arrays dumped.
    pub primitive_arrays: u64,
    /// Roots written.
    pub roots: u64,
    /// Of those, `JAVA_FRAME` roots found by scanning the threads' stacks.
    pub stack_slot_roots: u64,
    /// Of those, `JNI_LOCAL` roots: the threads' JNI local handles.
    pub jni_local_roots: u64,
    /// Of those, `JNI_GLOBAL` roots: the JNI global handles.
    pub jni_global_roots: u64,
    /// Bytes of the threads' stacks scanned for them.
    pub stack_bytes_scanned: u64,
    /// Class mirrors met in the heap (dumped as their classes).
    pub mirrors: u64,
    /// Objects of classes not in the class loader data graph, left out.
    pub unknown_class: u64,
    /// References to where no object the dump holds starts (left by dead objects: outside
    /// every walked space, in a TLAB's unused tail, or inside a space reused since), written
    /// as null.
    pub stale_references: u64,
    /// Of [`Self::stale_references`], those inside a walked space (into memory reused since).
    pub stale_inside: u64,
    /// Bytes of the map of object starts the first walk filled (one bit per 8 bytes of the
    /// walked spaces; see [`super::starts`]).
    pub start_map_bytes: u64,
    /// The bytes the map of object starts would have taken, when more than
    /// [`super::starts::MAX_BYTES`]: there is no map, and a reference is checked only against
    /// the walked spaces and the TLABs' unused tails.
    pub start_map_refused: Option<u64>,
    /// Objects the first walk found that the second did not write (the target changed between
    /// the walks, or their bytes could not be read again; 0 when the target is held or a core
    /// and readable): references to them were written and do not resolve.
    pub unmatched: u64,
    /// Arrays cut to fit a record's `u4` length.
    pub truncated_arrays: u64,
    /// Objects whose bytes could not be read, left out.
    pub unreadable: u64,
    /// Classes without a mirror, left out.
    pub classes_without_mirror: u64,
    /// Classes not read whole: `(name or Klass*, why)`, the first 16.
    pub unreadable_classes: Vec<(String, String)>,
    /// How many classes were not read whole.
    pub unreadable_class_count: u64,
    /// The walk's figures.
    pub walk: WalkStats,
    /// Where the walk stopped early.
    pub notes: Vec<Note>,
}

/// The most bytes of a stack read at a time.
const STACK_PIECE: usize = 64 << 10;

/// A thread's stack as [`stack_roots`] scans it: `[low, high)` and the frames' sps
/// ([`frame_sps`]).
struct ScannedStack {
    low: u64,
    high: u64,
    sps: Vec<(u64, u32)>,
    java_thread: u64,
}

/// Each distinct known frame sp, ascending, with the depth of the first (innermost) frame at
/// it: what [`stack_roots`] gives a slot's depth from.
fn frame_sps(frames: &[StackFrame]) -> Vec<(u64, u32)> {
    let mut sps: Vec<(u64, u32)> = Vec::new();
    for (depth, f) in frames.iter().enumerate() {
        if f.sp != 0 && sps.last().is_none_or(|&(sp, _)| f.sp > sp) {
            sps.push((f.sp, depth as u32));
        }
    }
    sps
}

/// Whether an object the dump writes starts at `v`.
fn is_object(starts: &Starts, v: u64) -> bool {
    v != 0 && v & 7 == 0 && starts.contains(v)
}

/// The references a word read from a stack or a handle may be: itself (a full oop), decoded as
/// the heap's references are (a ZGC colour taken off) and, with compressed oops, each nonzero
/// half as a narrow oop.
fn candidates(refs: Refs, raw: u64) -> impl Iterator<Item = u64> {
    let b = raw.to_le_bytes();
    let (decoded, lo, hi) = if refs.layout.compressed_oops {
        let lo = if raw as u32 != 0 {
            refs.decode(&b[..4])
        } else {
            0
        };
        let hi = if raw >> 32 != 0 {
            refs.decode(&b[4..])
        } else {
            0
        };
        (0, lo, hi)
    } else {
        let d = refs.decode(&b);
        (if d != raw { d } else { 0 }, 0, 0)
    };
    [raw, decoded, lo, hi].into_iter().filter(|&v| v != 0)
}

/// A thread's JNI local handles (`runtime/jniHandles.hpp`): `Thread::_active_handles`, a
/// chain of `JNIHandleBlock`s (`_next`), each with `_top` handles used of its `_handles`
/// (`JNIHandleBlock::block_size_in_oops`, 32). `None` when vmStructs lacks one of them.
struct JniHandles {
    active: u64,
    handles: u64,
    top: u64,
    next: u64,
}

/// The most `JNIHandleBlock`s followed from one thread (a damaged chain may loop).
const MAX_HANDLE_BLOCKS: usize = 4096;

/// The most handles one block holds (HotSpot's is 32).
const MAX_BLOCK_HANDLES: u64 = 1024;

impl JniHandles {
    fn new(vm: &VmModel) -> Option<Self> {
        Some(JniHandles {
            // `Thread::_active_handles` (JDK 8 to 21), `JavaThread::` later.
            active: vm
                .offset("Thread", "_active_handles")
                .or_else(|_| vm.offset("JavaThread", "_active_handles"))
                .ok()?,
            handles: vm.offset("JNIHandleBlock", "_handles").ok()?,
            top: vm.offset("JNIHandleBlock", "_top").ok()?,
            next: vm.offset("JNIHandleBlock", "_next").ok()?,
        })
    }

    /// The non-null words the handles of `thread` (a `JavaThread*`; 0 gives none) hold, read
    /// until a block is unreadable or implausible.
    fn locals(&self, mem: &dyn ReadMemory, thread: u64) -> Vec<u64> {
        if thread == 0 {
            return Vec::new();
        }
        match mem.read_u64(thread.wrapping_add(self.active)) {
            Ok(block) => self.chain(mem, block).into_iter().map(|(_, w)| w).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The non-null handles of the chain of blocks from `block` (JDK 8 keeps its JNI global
    /// handles in such a chain too: `JNIHandles::_global_handles`), each as (its address, the
    /// word it holds), read until a block is unreadable or implausible.
    fn chain(&self, mem: &dyn ReadMemory, mut block: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for _ in 0..MAX_HANDLE_BLOCKS {
            if block == 0 {
                break;
            }
            let Ok(top) = mem.read_u32(block.wrapping_add(self.top)) else {
                break;
            };
            let top = u64::from(top);
            if top > MAX_BLOCK_HANDLES {
                break;
            }
            let mut buf = vec![0u8; top as usize * 8];
            if mem
                .read_exact_at(block.wrapping_add(self.handles), &mut buf)
                .is_err()
            {
                break;
            }
            for (i, w) in buf.chunks_exact(8).enumerate() {
                let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
                if w != 0 {
                    out.push((block + self.handles + 8 * i as u64, w));
                }
            }
            match mem.read_u64(block.wrapping_add(self.next)) {
                Ok(n) => block = n,
                Err(_) => break,
            }
        }
        out
    }
}

/// The most blocks of an `OopStorage` read (64 handles each).
const MAX_STORAGE_BLOCKS: u64 = 1 << 20;

/// The handles of the `OopStorage` that the pointer at `at` points to (JNI's global handles,
/// `JNIHandles::_global_handles`, JDK 11+; the VM's, `Universe::_vm_global`, JDK 16+), each
/// as (its address, the word it holds). `OopStorage`'s own layout is not in vmStructs; what is
/// read is from `gc/shared/oopStorage.inline.hpp`: its `ActiveArray` (`_size`,
/// `_block_count`, then the `Block*`s at +24) and each `Block` (`oop _data[64]`, then
/// `_allocated_bitmask` at +512 and its owner's address at +520). The `ActiveArray*`'s place
/// in the `OopStorage` (after its name, which changed shape between releases) is found by
/// trying each of its first words: the one whose first block names this storage as its owner.
/// Empty when nothing checks out; a block whose owner is not this storage is skipped.
fn storage_handles(mem: &dyn ReadMemory, at: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let Some(storage) = mem.read_u64(at).ok().filter(|&s| s != 0) else {
        return out;
    };
    let owned = |block: u64| mem.read_u64(block.wrapping_add(520)).ok() == Some(storage);
    let array = (0..16u64).find_map(|i| {
        let a = mem.read_u64(storage.wrapping_add(8 * i)).ok()?;
        let size = mem.read_u64(a).ok()?;
        let count = mem.read_u64(a.wrapping_add(8)).ok()?;
        let first = mem.read_u64(a.wrapping_add(24)).ok()?;
        (count >= 1 && count <= size && size <= MAX_STORAGE_BLOCKS && owned(first))
            .then_some((a, count))
    });
    let Some((array, count)) = array else {
        return out;
    };
    let mut block = [0u8; 520];
    for i in 0..count {
        let Ok(b) = mem.read_u64(array.wrapping_add(24 + 8 * i)) else {
            break;
        };
        if !owned(b) || mem.read_exact_at(b, &mut block).is_err() {
            continue;
        }
        let bitmask = u64::from_le_bytes(block[512..520].try_into().unwrap_or([0; 8]));
        for slot in 0..64usize {
            if bitmask & (1 << slot) != 0 {
                let raw =
                    u64::from_le_bytes(block[slot * 8..slot * 8 + 8].try_into().unwrap_or([0; 8]));
                if raw != 0 {
                    out.push((b + 8 * slot as u64, raw));
                }
            }
        }
    }
    out
}

/// The objects a thread's stack refers to, each with the depth of the frame whose slots hold
/// the reference, and the bytes scanned. Each aligned word is taken as a full oop (as is, and
/// decoded as the heap's references are: a ZGC colour taken off) and, with compressed oops,
/// each of its halves as a narrow oop ([`candidates`]); a value counts when an object the dump
/// writes starts there. An unreadable piece of the stack ends the scan.
fn stack_roots(
    mem: &dyn ReadMemory,
    refs: Refs,
    stack: &ScannedStack,
    starts: &Starts,
    buf: &mut [u8],
) -> (Vec<(u64, u32)>, u64) {
    let sps = &stack.sps;
    let low = stack.low & !7;
    let high = stack.high.min(low.saturating_add(MAX_STACK_SCANNED));
    let mut found = Vec::new();
    let mut at = low;
    let mut scanned = 0u64;
    let depth_at = |a: u64| {
        let i = sps.partition_point(|&(sp, _)| sp <= a);
        if i == 0 { 0 } else { sps[i - 1].1 }
    };
    while at < high {
        let n = ((high - at) as usize).min(buf.len());
        if mem.read_exact_at(at, &mut buf[..n]).is_err() {
            break;
        }
        for (k, word) in buf[..n].chunks_exact(8).enumerate() {
            let raw = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
            if raw == 0 {
                continue;
            }
            // A full oop, else each narrow oop the word holds (C2 packs two in a word).
            let depth = depth_at(at + 8 * k as u64);
            let mut hits = candidates(refs, raw).filter(|&v| is_object(starts, v));
            if let Some(first) = hits.next() {
                found.push((first, depth));
                if first != raw {
                    found.extend(hits.filter(|&v| v != first).map(|v| (v, depth)));
                }
            }
        }
        scanned += n as u64;
        at += n as u64;
    }
    (found, scanned)
}

/// Decodes the references stored in objects into ids.
#[derive(Clone, Copy)]
struct Refs {
    layout: crate::vm::Layout,
    /// Single-generation ZGC: every reference recoloured good.
    z_view: Option<spaces::ZView>,
}

impl Refs {
    fn width(self) -> usize {
        if self.layout.compressed_oops { 4 } else { 8 }
    }

    /// The id of the reference stored in `b` (little-endian, [`Self::width`] bytes).
    fn decode(self, b: &[u8]) -> u64 {
        if self.layout.compressed_oops {
            let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            self.layout.narrow_oop.decode(n)
        } else {
            let raw = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
            match self.z_view {
                Some(view) => view.recolour(raw),
                None => self.layout.heap_oop(raw),
            }
        }
    }
}

/// The most bytes of one array read at a time when it is not in the walker's buffer.
const PIECE: usize = CHUNK;

/// How the objects of one class are written, worked out once per class.
enum Shape {
    /// Instances: the non-static fields up the chain (offset, bytes in the object, type), the
    /// bytes of an object the fields need, and whether the class is `java.lang.Class`.
    Instance {
        fields: Box<[(usize, usize, BasicType)]>,
        need: usize,
        mirrors: bool,
    },
    /// Object arrays: the header's bytes.
    ObjArray { header: u64 },
    /// Primitive arrays: the element type and the header's bytes.
    TypeArray { element: BasicType, header: u64 },
}

/// What the dump writes for an object: `class` is its class's index in the [`ClassTable`].
#[derive(Clone, Copy)]
enum Plan {
    /// A `java.lang.Class` mirror of a class in the table: its `CLASS_DUMP` stands for it.
    Mirror,
    /// An `INSTANCE_DUMP`.
    Instance { class: usize },
    /// An `OBJ_ARRAY_DUMP` of `len` elements.
    ObjArray { class: usize, len: u64 },
    /// A `PRIM_ARRAY_DUMP` of `len` elements.
    TypeArray { class: usize, len: u64 },
}

/// Why an object is left out of the dump.
#[derive(Clone, Copy)]
enum Skip {
    /// Its class is not in the class loader data graph.
    UnknownClass,
    /// Its bytes (fields, array length) could not be read.
    Unreadable,
}

/// The non-static fields of `klass` and its superclasses, this class's first: offset and
/// type.
fn field_chain(table: &ClassTable, klass: u64) -> Vec<(u64, BasicType)> {
    let mut out = Vec::new();
    let mut k = klass;
    for _ in 0..64 {
        let Some(c) = table.get(k) else { break };
        if let ClassKind::Instance {
            fields: Some(f), ..
        } = &c.kind
        {
            out.extend(f.iter().map(|f| (f.offset, f.ty)));
        }
        k = c.super_klass;
        if k == 0 {
            break;
        }
    }
    out
}

/// A field as the dump reads it: its offset in the object, its bytes (a reference's `width`),
/// its type.
type FieldSlot = (usize, usize, BasicType);

/// An instance class's fields as the dump reads them and the bytes of an object they need.
fn instance_fields(table: &ClassTable, klass: u64, width: usize) -> (Box<[FieldSlot]>, usize) {
    let fields: Box<[FieldSlot]> = field_chain(table, klass)
        .into_iter()
        .map(|(off, ty)| {
            let n = if ty == BasicType::Object {
                width
            } else {
                ty.size() as usize
            };
            (usize::try_from(off).unwrap_or(usize::MAX), n, ty)
        })
        .collect();
    let need = fields
        .iter()
        .map(|&(off, n, _)| off.saturating_add(n))
        .max()
        .unwrap_or(0);
    (fields, need)
}

/// Pass one's question of each object met: will the dump write it? Its class must be in the
/// table and, an instance, hold its fields (what [`Dumper::plan`] will find, known from the
/// class and the size alone). One per walking thread.
struct Finder<'a> {
    table: &'a ClassTable,
    width: usize,
    /// Per klass: the bytes its instances' fields need (0: an array), [`Finder::UNKNOWN`]
    /// for a klass not in the table.
    recent: KlassCache<u64>,
    needs: KlassMap<u64>,
}

impl<'a> Finder<'a> {
    const UNKNOWN: u64 = u64::MAX;

    fn new(table: &'a ClassTable, width: usize) -> Self {
        Finder {
            table,
            width,
            recent: KlassCache::new(0),
            needs: KlassMap::default(),
        }
    }

    fn will_write(&mut self, klass: u64, size: u64) -> Result<(), Skip> {
        let need = match self.recent.get(klass) {
            Some(n) => n,
            None => {
                let n = match self.needs.get(&klass) {
                    Some(&n) => n,
                    None => {
                        let n = match self.table.get(klass).map(|c| &c.kind) {
                            None => Self::UNKNOWN,
                            Some(ClassKind::Instance { .. }) => {
                                let need = instance_fields(self.table, klass, self.width).1;
                                (need as u64).min(Self::UNKNOWN - 1)
                            }
                            Some(_) => 0,
                        };
                        if self.needs.len() < super::walk::MAX_KLASSES {
                            self.needs.insert(klass, n);
                        }
                        n
                    }
                };
                self.recent.put(klass, n);
                n
            }
        };
        if need == Self::UNKNOWN {
            Err(Skip::UnknownClass)
        } else if need > size {
            Err(Skip::Unreadable)
        } else {
            Ok(())
        }
    }
}

/// What a first walk of some spaces found.
struct Found {
    starts: Starts,
    notes: Vec<Note>,
    walk: WalkStats,
    unknown_class: u64,
    unreadable: u64,
}

/// Pass one over `spaces` (sorted, not overlapping): every object the dump will write, in a
/// map of starts of those spaces; `None` when they need more than
/// [`super::starts::MAX_BYTES`].
fn first_walk(
    mem: &dyn ReadMemory,
    java: &JavaReader<'_>,
    layout: ObjectLayout,
    table: &ClassTable,
    width: usize,
    spaces: &[super::Space],
    tlabs: &[super::Tlab],
) -> Option<Found> {
    let mut starts = Starts::new(spaces).ok()?;
    let mut finder = Finder::new(table, width);
    let mut walker = Walker::sized_by(mem, java, layout);
    let (mut notes, mut unknown_class, mut unreadable) = (Vec::new(), 0, 0);
    for (i, space) in spaces.iter().enumerate() {
        let note = walker.walk(space, tlabs, &mut |at, klass, size, _| match finder
            .will_write(klass, size)
        {
            Ok(()) => {
                starts.set_in(i, at);
            }
            Err(Skip::UnknownClass) => unknown_class += 1,
            Err(Skip::Unreadable) => unreadable += 1,
        });
        notes.extend(note);
    }
    Some(Found {
        starts,
        notes,
        walk: walker.stats,
        unknown_class,
        unreadable,
    })
}

/// Pass one over all the dump's `spaces` (sorted, not overlapping), in two halves on two
/// threads for a large heap ([`super::walk::walk_in_halves`]), each with its own reader and map,
/// the maps joined after. `None` when the spaces need a map of more than
/// [`super::starts::MAX_BYTES`].
#[allow(clippy::too_many_arguments)]
fn first_walks(
    vm: &VmModel,
    mem: &(dyn ReadMemory + Sync),
    layout: ObjectLayout,
    table: &ClassTable,
    width: usize,
    spaces: &[super::Space],
    tlabs: &[super::Tlab],
) -> Option<Found> {
    let halves = super::walk::walk_in_halves(spaces, |half| {
        let java = JavaReader::new(vm, mem).ok()?;
        first_walk(mem, &java, layout, table, width, half, tlabs)
    });
    let mut halves = halves.into_iter();
    let mut found = halves.next()??;
    for upper in halves {
        let upper = upper?;
        found.notes.extend(upper.notes);
        found.walk.add(&upper.walk);
        found.unknown_class += upper.unknown_class;
        found.unreadable += upper.unreadable;
        // The upper half's spaces lie above the lower's: its map joins.
        found.starts.append(upper.starts).ok()?;
    }
    Some(found)
}

/// `u32::MAX` in [`Dumper::cache`]: a klass not in the table.
const NOT_A_CLASS: u32 = u32::MAX;

struct Dumper<'a, S: HeapDumpSink + ?Sized> {
    sink: &'a mut S,
    mem: &'a dyn ReadMemory,
    table: &'a ClassTable,
    refs: Refs,
    array_length_at: u64,
    /// `java_lang_Class::_klass_offset`'s value: where a mirror keeps its `Klass*`.
    mirror_klass_at: Option<u64>,
    /// By the class's index in the table: how its objects are written (built when first met).
    shapes: Vec<Option<Shape>>,
    /// `Klass*` → index in the table ([`NOT_A_CLASS`]: none), for the klasses met lately.
    cache: KlassCache<u32>,
    values: Vec<(BasicType, u64)>,
    ids: Vec<u64>,
    piece: Vec<u8>,
    /// What a reference may refer to.
    check: RefCheck,
    /// The loaded classes' mirrors: each is written as its CLASS_DUMP only.
    mirror_ids: KlassMap<()>,
    /// How objects are laid out (the header, for the second pass).
    layout: ObjectLayout,
    stats: DumpStats,
    failed: Option<io::Error>,
}

impl<S: HeapDumpSink + ?Sized> Dumper<'_, S> {
    /// `id` if an object the dump holds starts there, else 0 (see [`RefCheck::check`]).
    fn checked(&mut self, id: u64) -> u64 {
        self.check.check(self.mem, id)
    }

    /// The table index of `klass`, through the cache.
    #[inline]
    fn class_index(&mut self, klass: u64) -> Option<usize> {
        let i = match self.cache.get(klass) {
            Some(i) => i,
            None => {
                let i = self
                    .table
                    .index
                    .get(&klass)
                    .map_or(NOT_A_CLASS, |&i| i as u32);
                self.cache.put(klass, i);
                i
            }
        };
        (i != NOT_A_CLASS).then_some(i as usize)
    }

    /// How the objects of the class at `index` (below the table's length) are written.
    #[inline]
    fn shape(&mut self, index: usize) -> &Shape {
        if self.shapes[index].is_none() {
            self.make_shape(index);
        }
        self.shapes[index].as_ref().expect("made above")
    }

    #[cold]
    fn make_shape(&mut self, index: usize) {
        if let Some(c) = self.table.classes.get(index) {
            let shape = match &c.kind {
                ClassKind::Instance { .. } => {
                    let (fields, need) = instance_fields(self.table, c.klass, self.refs.width());
                    Shape::Instance {
                        fields,
                        need,
                        mirrors: c.name == "java/lang/Class",
                    }
                }
                ClassKind::ObjArray { header } => Shape::ObjArray { header: *header },
                ClassKind::TypeArray { element, header } => Shape::TypeArray {
                    element: *element,
                    header: *header,
                },
            };
            self.shapes[index] = Some(shape);
        }
    }

    /// What the dump writes for the object at `at` of the class at `class` in the table
    /// (`body` its bytes, at least those the plan reads), or why it leaves it out. The first
    /// walk's [`Finder`] knows the same from the class and the object's size.
    fn plan(&mut self, at: u64, class: usize, body: &[u8]) -> Result<Plan, Skip> {
        let mirror_klass_at = self.mirror_klass_at;
        let table = self.table;
        // The object at a loaded class's mirror is that class's CLASS_DUMP, whatever its header
        // or its `_klass` field say now (a damaged core can make it look like another object):
        // never written a second time as an instance or an array.
        if self.mirror_ids.contains_key(&at) {
            return Ok(Plan::Mirror);
        }
        match self.shape(class) {
            Shape::Instance { need, mirrors, .. } => {
                if *mirrors {
                    // A mirror is its class's CLASS_DUMP. A primitive type's mirror (no
                    // `Klass*`) and the mirror of a class not loaded (CDS archives keep
                    // mirrors of classes before they are loaded) are instances: references
                    // to them stay resolvable.
                    let mirrored =
                        mirror_klass_at.and_then(|off| LeBytes::new(body).u64_at(off as usize));
                    if mirrored.is_some_and(|k| table.get(k).is_some_and(|m| m.mirror == at)) {
                        return Ok(Plan::Mirror);
                    }
                }
                if *need > body.len() {
                    return Err(Skip::Unreadable);
                }
                Ok(Plan::Instance { class })
            }
            Shape::ObjArray { .. } => match self.array_length(at, body) {
                Some(len) => Ok(Plan::ObjArray { class, len }),
                None => Err(Skip::Unreadable),
            },
            Shape::TypeArray { .. } => match self.array_length(at, body) {
                Some(len) => Ok(Plan::TypeArray { class, len }),
                None => Err(Skip::Unreadable),
            },
        }
    }

    /// Pass two: writes the object at `at`, one of the starts the first walk found, in a space
    /// whose objects end by `limit`; its bytes from `chunks`. An object that cannot be read
    /// now, or is not what the first walk saw, is left out and counted.
    fn object_at(&mut self, chunks: &mut Chunks, walk: &mut WalkStats, at: u64, limit: u64) {
        if self.failed.is_some() {
            return;
        }
        let header = self.layout.header_len() as usize;
        let array_length_at = self.array_length_at as usize;
        let Some((klass, length)) = chunks.get(self.mem, walk, at, header, limit).and_then(|h| {
            let h = LeBytes::new(h);
            Some((self.layout.klass(h)?, h.i32_at(array_length_at)))
        }) else {
            self.stats.unmatched += 1;
            return;
        };
        let Some(class) = self.class_index(klass) else {
            self.stats.unmatched += 1;
            return;
        };
        let mirror_klass_at = self.mirror_klass_at;
        let w = self.refs.width() as u64;
        let length = length.and_then(|l| u64::try_from(l).ok());
        // The bytes the dump reads of it: the fields (a mirror's `Klass*` too), or the header
        // and the elements (a large array's beyond a chunk are read in pieces).
        let (want, array) = match self.shape(class) {
            Shape::Instance { need, mirrors, .. } => {
                let mirror = match mirror_klass_at {
                    Some(off) if *mirrors => off.saturating_add(8),
                    _ => 0,
                };
                ((*need as u64).max(mirror), false)
            }
            Shape::ObjArray { header } => match length {
                Some(len) => (header.saturating_add(len.saturating_mul(w)), true),
                None => (u64::MAX, true),
            },
            Shape::TypeArray { element, header } => match length {
                Some(len) => (
                    header.saturating_add(len.saturating_mul(u64::from(element.size()))),
                    true,
                ),
                None => (u64::MAX, true),
            },
        };
        if want == u64::MAX {
            self.stats.unmatched += 1;
            return;
        }
        let want = want.min(CHUNK as u64) as usize;
        let mem = self.mem;
        // An array whose elements cannot all be read with it: its header alone, the elements
        // read in pieces (as a large array's), those unreadable written as nulls or zeros.
        let least = if array { header } else { want };
        let Some(body) = chunks.get_or_least(mem, walk, at, want, least, limit) else {
            self.stats.unmatched += 1;
            return;
        };
        match self.try_object(at, class, body) {
            Ok(None) => {}
            Ok(Some(_)) => self.stats.unmatched += 1,
            Err(e) => self.failed = Some(e),
        }
    }

    /// Writes the object at `at` met by a walk without a map of starts (a heap too large for
    /// one): `body` its bytes when the walker read them.
    fn walked(&mut self, at: u64, klass: u64, size: u64, body: Option<&[u8]>) {
        if self.failed.is_some() {
            return;
        }
        let owned;
        let body = match body {
            Some(b) => b,
            None => {
                let mut b = vec![0u8; size.min(PIECE as u64) as usize];
                owned = self.mem.read_exact_at(at, &mut b).is_ok().then_some(b);
                owned.as_deref().unwrap_or(&[])
            }
        };
        let Some(class) = self.class_index(klass) else {
            self.stats.unknown_class += 1;
            return;
        };
        match self.try_object(at, class, body) {
            Ok(None) => {}
            Ok(Some(Skip::UnknownClass)) => self.stats.unknown_class += 1,
            Ok(Some(Skip::Unreadable)) => self.stats.unreadable += 1,
            Err(e) => self.failed = Some(e),
        }
    }

    /// Writes the object at `at` of the class at `class` in the table (`body` its bytes, as
    /// many as [`Self::plan`] reads of it, or all); `Some` when it is left out, and why.
    fn try_object(&mut self, at: u64, class: usize, body: &[u8]) -> io::Result<Option<Skip>> {
        let plan = match self.plan(at, class, body) {
            Ok(p) => p,
            Err(skip) => return Ok(Some(skip)),
        };
        let table = self.table;
        let written = match plan {
            Plan::Mirror => {
                self.stats.mirrors += 1;
                Ok(())
            }
            Plan::Instance { class } => {
                let Some(Shape::Instance {
                    fields,
                    need,
                    mirrors,
                }) = self.shapes[class].take()
                else {
                    return Ok(Some(Skip::Unreadable));
                };
                self.values.clear();
                for &(off, n, ty) in fields.iter() {
                    // `plan` saw every field within the body.
                    let b = &body[off..off + n];
                    let v = if ty == BasicType::Object {
                        let id = self.refs.decode(b);
                        self.checked(id)
                    } else {
                        let mut le = [0u8; 8];
                        le[..n].copy_from_slice(b);
                        u64::from_le_bytes(le)
                    };
                    self.values.push((ty, v));
                }
                self.shapes[class] = Some(Shape::Instance {
                    fields,
                    need,
                    mirrors,
                });
                self.stats.instances += 1;
                self.sink
                    .instance(at, table.classes[class].mirror, &self.values)
            }
            Plan::ObjArray { class, len } => {
                let Some(&Shape::ObjArray { header }) = self.shapes[class].as_ref() else {
                    return Ok(Some(Skip::Unreadable));
                };
                self.object_array(at, table.classes[class].mirror, header, len, body)
            }
            Plan::TypeArray { class, len } => {
                let Some(&Shape::TypeArray { element, header }) = self.shapes[class].as_ref()
                else {
                    return Ok(Some(Skip::Unreadable));
                };
                self.primitive_array(at, element, header, len, body)
            }
        };
        written.map(|()| None)
    }

    fn object_array(
        &mut self,
        at: u64,
        class: u64,
        header: u64,
        len: u64,
        body: &[u8],
    ) -> io::Result<()> {
        let w = self.refs.width() as u64;
        // 1 + 8 + 4 + 4 + 8 bytes before the elements, a u4 record length in all.
        let max = (u64::from(u32::MAX) - 25) / 8;
        let n = len.min(max);
        if n < len {
            self.stats.truncated_arrays += 1;
        }
        self.stats.object_arrays += 1;
        self.sink.begin_object_array(at, class, n as u32)?;
        let first = at.wrapping_add(header);
        let mut done = 0u64;
        while done < n {
            let take = (n - done).min(PIECE as u64 / w);
            let from = (header + done * w) as usize;
            let bytes = (take * w) as usize;
            let slice = match body.get(from..from + bytes) {
                Some(s) => s,
                None => {
                    self.piece.resize(bytes, 0);
                    if self
                        .mem
                        .read_exact_at(first.wrapping_add(done * w), &mut self.piece)
                        .is_err()
                    {
                        // Elements that cannot be read are written as nulls.
                        self.piece.fill(0);
                    }
                    &self.piece[..]
                }
            };
            let refs = self.refs;
            let mut ids = std::mem::take(&mut self.ids);
            ids.clear();
            for e in slice.chunks_exact(w as usize) {
                ids.push(self.check.check(self.mem, refs.decode(e)));
            }
            let written = self.sink.object_elements(&ids);
            self.ids = ids;
            written?;
            done += take;
        }
        Ok(())
    }

    fn primitive_array(
        &mut self,
        at: u64,
        element: BasicType,
        header: u64,
        len: u64,
        body: &[u8],
    ) -> io::Result<()> {
        let e = u64::from(element.size());
        let max = (u64::from(u32::MAX) - 18) / e;
        let n = len.min(max);
        if n < len {
            self.stats.truncated_arrays += 1;
        }
        self.stats.primitive_arrays += 1;
        self.sink.begin_primitive_array(at, element, n as u32)?;
        let total = n * e;
        let mut done = 0u64;
        while done < total {
            let take = (total - done).min(PIECE as u64);
            let from = (header + done) as usize;
            match body.get(from..from + take as usize) {
                Some(s) => self.sink.primitive_elements(element, s)?,
                None => {
                    self.piece.resize(take as usize, 0);
                    if self
                        .mem
                        .read_exact_at(at.wrapping_add(header + done), &mut self.piece)
                        .is_err()
                    {
                        self.piece.fill(0);
                    }
                    self.sink.primitive_elements(element, &self.piece)?;
                }
            }
            done += take;
        }
        Ok(())
    }

    /// An array's length, from its bytes or (a big array) read.
    fn array_length(&self, at: u64, body: &[u8]) -> Option<u64> {
        let off = self.array_length_at;
        let len = match LeBytes::new(body).i32_at(off as usize) {
            Some(l) => l,
            None => self.mem.read_i32(at.wrapping_add(off)).ok()?,
        };
        u64::try_from(len).ok()
    }
}

/// What a reference may refer to: an object start the first walk found ([`Starts`]), or, when
/// the heap is too large for that map, anywhere in a walked space outside the TLABs' unused
/// tails.
struct RefCheck {
    /// Every object start the dump writes, once the first walk has filled it.
    starts: Option<Rc<Starts>>,
    /// `[bottom, top)` of each walked space, sorted, and whether it is a collection set whose
    /// objects may have been copied out (Shenandoah's).
    ranges: Vec<(u64, u64, bool)>,
    /// The TLABs' unused tails `[top, end)`, sorted: nothing lives there.
    holes: Vec<(u64, u64)>,
    /// References written as null.
    stale: u64,
    /// Of those, references inside a walked space where no object starts.
    stale_inside: u64,
    /// The range the last reference was in (most refer near each other).
    last: (u64, u64),
}

impl RefCheck {
    fn new(spaces: &[super::Space], tlabs: &[super::Tlab]) -> Self {
        let mut ranges: Vec<(u64, u64, bool)> = spaces
            .iter()
            .map(|s| {
                let top = if s.kind == super::SpaceKind::HumongousStart {
                    // One object that may run on past the region: its start is enough.
                    s.bottom.saturating_add(1).max(s.top)
                } else {
                    s.top
                };
                (s.bottom, top, s.kind == super::SpaceKind::CollectionSet)
            })
            .collect();
        ranges.sort_unstable();
        let mut holes: Vec<(u64, u64)> = tlabs.iter().map(|t| (t.top, t.end)).collect();
        holes.sort_unstable();
        RefCheck {
            starts: None,
            ranges,
            holes,
            stale: 0,
            stale_inside: 0,
            last: (0, 0),
        }
    }

    fn find(&self, id: u64) -> Option<&(u64, u64, bool)> {
        let i = self.ranges.partition_point(|r| r.1 <= id);
        let hole = self.holes.partition_point(|h| h.1 <= id);
        if self.holes.get(hole).is_some_and(|h| h.0 <= id) {
            return None;
        }
        self.ranges.get(i).filter(|r| r.0 <= id)
    }

    /// The id to write for reference `id`: itself when it is null or an object the dump
    /// writes starts there; its copy when it is an object of a collection set forwarded
    /// elsewhere (its mark word's lock bits `0b11`: a field not updated yet), as the walk steps
    /// over such objects; else 0, counted: a dead object's field may still refer to memory
    /// freed since (a G1 region collected after the last marking) or reused since (a ZGC page
    /// allocated again, where another object or the middle of one lies now), and a reader must
    /// find every reference in the file.
    ///
    /// Without the map of starts (a heap too large for it): itself when it is inside a walked
    /// space, outside the TLABs' unused tails.
    fn check(&mut self, mem: &dyn ReadMemory, id: u64) -> u64 {
        if id == 0 {
            return 0;
        }
        if let Some(starts) = &self.starts {
            let place = starts.find(id);
            let good = match place {
                Place::Start => return id,
                Place::Inside(true) => match mem.read_u64(id) {
                    Ok(mark) if mark & 3 == 3 && starts.contains(mark & !3) => Some(mark & !3),
                    _ => None,
                },
                Place::Inside(false) | Place::Outside => None,
            };
            if let Some(copy) = good {
                return copy;
            }
            self.stale += 1;
            if place != Place::Outside {
                self.stale_inside += 1;
            }
            return 0;
        }
        if self.last.0 <= id && id < self.last.1 {
            return id;
        }
        match self.find(id) {
            Some(&(bottom, top, false)) => {
                // A range without a TLAB tail in it can be trusted whole next time.
                let h = self.holes.partition_point(|h| h.1 <= bottom);
                if self.holes.get(h).is_none_or(|h| h.0 >= top) {
                    self.last = (bottom, top);
                }
                id
            }
            Some(&(_, _, true)) => match mem.read_u64(id) {
                Ok(mark) if mark & 3 == 3 => {
                    let copy = mark & !3;
                    if self.find(copy).is_some_and(|r| !r.2) {
                        copy
                    } else {
                        self.stale += 1;
                        0
                    }
                }
                _ => id,
            },
            None => {
                self.stale += 1;
                0
            }
        }
    }
}

/// Names by text, each given an id and written once.
#[derive(Default)]
struct Names {
    ids: std::collections::HashMap<String, u64>,
}

impl Names {
    fn id(&mut self, sink: &mut (impl HeapDumpSink + ?Sized), text: &str) -> io::Result<u64> {
        if let Some(&id) = self.ids.get(text) {
            return Ok(id);
        }
        let id = self.ids.len() as u64 + 1;
        sink.utf8(id, text.as_bytes())?;
        self.ids.insert(text.to_string(), id);
        Ok(id)
    }
}

/// Dumps the heap of the VM `vm` read through `mem` into `sink` (see the module
/// documentation). The target should be held still: objects allocated or moved during the
/// walk end a space's walk early with a [`Note`].
///
/// # Errors
/// [`Error::DumpOutput`] when the sink fails (the output is then incomplete);
/// [`Error::Vm`] when an entry is missing or the class graph is implausible;
/// [`Error::Memory`] when the class graph or the heap's layout cannot be read.
pub fn dump(
    vm: &VmModel,
    mem: &(dyn ReadMemory + Sync),
    stacks: &[StackThread],
    globals: &GlobalRoots,
    sink: &mut (impl HeapDumpSink + ?Sized),
) -> Result<DumpStats, Error> {
    let out = Error::DumpOutput;
    let java = JavaReader::new(vm, mem)?;
    let table = classes::read(vm, mem, &java)?;
    let object = table
        .object_klass()
        .and_then(|k| table.get(k))
        .map(|c| c.mirror)
        .ok_or(VmError::ClassNotLoaded {
            class: "java/lang/Object".into(),
        })?;
    let thread_layout = ThreadLayout::new(vm)?;
    let threads = thread_layout
        .thread_addresses(mem)
        .map(|(_, t)| t)
        .unwrap_or_default();
    let mut spaces = spaces::spaces(vm, mem)?;
    // An object must be written once: a space overlapping one before it (a damaged region
    // table) is left out with a note.
    spaces.sort_by_key(|s| s.bottom);
    let mut overlapping = Vec::new();
    let mut end = 0u64;
    spaces.retain(|s| {
        // A humongous start's object runs on past its top: its start is a granule of the map.
        let least = if s.kind == SpaceKind::HumongousStart {
            super::starts::GRANULE
        } else {
            1
        };
        let top = s.top.max(s.bottom.saturating_add(least));
        if s.bottom < end {
            overlapping.push(Note {
                space: s.name.clone(),
                at: s.bottom,
                skipped: s.top.saturating_sub(s.bottom),
                reason: format!("it overlaps a space before it (up to {end:#x}): not walked"),
            });
            return false;
        }
        end = top;
        true
    });
    let tlabs = spaces::tlabs(vm, mem, &threads)?;
    let layout = ObjectLayout::new(vm, mem)?;

    // Names first, then the classes, then the stack traces (the first, serial 1, empty:
    // what objects are allocated at), then the heap part.
    let mut names = Names::default();
    let mut class_names = Vec::with_capacity(table.classes.len());
    for c in &table.classes {
        class_names.push(names.id(sink, &c.name).map_err(out)?);
    }
    let mut field_names: KlassMap<(Vec<u64>, Vec<u64>)> = KlassMap::default();
    for c in &table.classes {
        if let ClassKind::Instance { fields, statics } = &c.kind {
            let mut f = Vec::new();
            for x in fields.iter().flatten() {
                f.push(names.id(sink, &x.name).map_err(out)?);
            }
            let mut s = Vec::new();
            for x in statics {
                s.push(names.id(sink, &x.name).map_err(out)?);
            }
            field_names.insert(c.klass, (f, s));
        }
    }
    let resolved_references_name = names.id(sink, "<resolved_references>").map_err(out)?;
    for (i, (c, name)) in table.classes.iter().zip(&class_names).enumerate() {
        sink.load_class(i as u32 + 1, c.mirror, 1, *name)
            .map_err(out)?;
    }
    sink.trace(1, 0, &[]).map_err(out)?;
    // A thread's serial is its place among the threads with an object (from 1), its trace's
    // serial one more (HotSpot's numbering); frames are numbered across the dump from 1.
    let serials: std::collections::HashMap<u64, u32> = table
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.klass, i as u32 + 1))
        .collect();
    let mut thread_objs = Vec::new();
    let mut frame_id = 0u64;
    let mut frame_roots = Vec::new();
    let from_walk: Vec<&StackThread> = stacks.iter().filter(|t| t.object != 0).collect();
    let listed: Vec<StackThread>;
    let threads_dumped: Vec<&StackThread> = if from_walk.is_empty() {
        // No walk (or an empty one): the thread list's objects, without frames.
        listed = threads
            .iter()
            .filter_map(|&t| thread_layout.thread_obj(mem, t).ok())
            .filter(|&o| o != 0)
            .map(|object| StackThread {
                object,
                frames: Vec::new(),
                stack: (0, 0),
                java_thread: 0,
            })
            .collect();
        listed.iter().collect()
    } else {
        from_walk
    };
    let mut dumped_stacks: Vec<ScannedStack> = Vec::new();
    for t in threads_dumped {
        let serial = thread_objs.len() as u32 + 1;
        dumped_stacks.push(ScannedStack {
            low: t.stack.0,
            high: t.stack.1,
            sps: frame_sps(&t.frames),
            java_thread: t.java_thread,
        });
        let mut ids = Vec::with_capacity(t.frames.len());
        for (depth, f) in t.frames.iter().enumerate() {
            frame_id += 1;
            let method = names.id(sink, &f.method).map_err(out)?;
            let signature = names.id(sink, &f.signature).map_err(out)?;
            let source = match &f.file {
                Some(file) => names.id(sink, file).map_err(out)?,
                None => 0,
            };
            let class_serial = serials.get(&f.holder).copied().unwrap_or(0);
            sink.frame(frame_id, method, signature, source, class_serial, f.line)
                .map_err(out)?;
            ids.push(frame_id);
            for &o in &f.objects {
                frame_roots.push(Root::JavaFrame {
                    id: o,
                    thread: serial,
                    depth: depth as u32,
                });
            }
        }
        sink.trace(serial + 1, serial, &ids).map_err(out)?;
        thread_objs.push(t.object);
    }

    let refs = Refs {
        layout: vm.layout,
        z_view: spaces::z_single_generation_view(vm, mem)?,
    };
    let stats = DumpStats {
        classes_without_mirror: table.without_mirror,
        unreadable_classes: table.unreadable.clone(),
        unreadable_class_count: table.unreadable_count,
        ..DumpStats::default()
    };
    let mut dumper = Dumper {
        sink,
        mem,
        table: &table,
        refs,
        array_length_at: vm.layout.array_length_offset(),
        mirror_klass_at: vm
            .static_address("java_lang_Class", "_klass_offset")
            .ok()
            .and_then(|a| mem.read_u32(a).ok())
            .map(u64::from),
        shapes: std::iter::repeat_with(|| None)
            .take(table.classes.len())
            .collect(),
        cache: KlassCache::new(NOT_A_CLASS),
        values: Vec::new(),
        ids: Vec::new(),
        piece: Vec::new(),
        check: RefCheck::new(&spaces, &tlabs),
        mirror_ids: table.classes.iter().map(|c| (c.mirror, ())).collect(),
        layout,
        stats,
        failed: None,
    };

    // Pass one: where every object the dump writes starts, so that each reference written
    // (statics, roots, fields, elements) points at one of them or is null.
    let mut notes = overlapping;
    let mut walked = WalkStats::default();
    let found = match Starts::bytes_for(&spaces) {
        Ok(_) => {
            first_walks(vm, mem, layout, &table, refs.width(), &spaces, &tlabs).ok_or(u64::MAX)
        }
        Err(bytes) => Err(bytes),
    };
    let starts = match found {
        Ok(found) => {
            notes.extend(found.notes);
            walked = found.walk;
            dumper.stats.unknown_class = found.unknown_class;
            dumper.stats.unreadable = found.unreadable;
            dumper.stats.start_map_bytes = found.starts.bytes();
            let starts = Rc::new(found.starts);
            dumper.check.starts = Some(starts.clone());
            Some(starts)
        }
        Err(bytes) => {
            dumper.stats.start_map_refused = Some(bytes);
            None
        }
    };

    for c in &table.classes {
        let super_id = |k: u64| table.get(k).map_or(0, |s| s.mirror);
        let dump = match &c.kind {
            ClassKind::Instance { fields, statics } => {
                let (fnames, snames) = &field_names[&c.klass];
                let instance_size: u32 = field_chain(&table, c.klass)
                    .iter()
                    .map(|(_, ty)| ty.size())
                    .sum();
                let mut sv = Vec::with_capacity(statics.len());
                for (f, name) in statics.iter().zip(snames) {
                    let at = c.mirror.wrapping_add(f.offset);
                    let value = if f.ty == BasicType::Object {
                        let mut b = [0u8; 8];
                        let w = refs.width();
                        match mem.read_exact_at(at, &mut b[..w]) {
                            Ok(()) => dumper.check.check(mem, refs.decode(&b)),
                            Err(_) => 0,
                        }
                    } else {
                        let n = f.ty.size() as usize;
                        let mut b = [0u8; 8];
                        match mem.read_exact_at(at, &mut b[..n]) {
                            Ok(()) => u64::from_le_bytes(b),
                            Err(_) => 0,
                        }
                    };
                    sv.push(StaticField {
                        name: *name,
                        ty: f.ty,
                        value,
                    });
                }
                // HotSpot writes the constant pool's resolved references as one more static,
                // so that the array (and the string literals only it holds) is reachable.
                if c.resolved_references != 0 {
                    sv.push(StaticField {
                        name: resolved_references_name,
                        ty: BasicType::Object,
                        value: dumper.check.check(mem, c.resolved_references),
                    });
                }
                ClassDump {
                    class: c.mirror,
                    super_class: super_id(c.super_klass),
                    loader: dumper.check.check(mem, c.loader),
                    instance_size,
                    statics: sv,
                    fields: fields
                        .iter()
                        .flatten()
                        .zip(fnames)
                        .map(|(f, n)| (*n, f.ty))
                        .collect(),
                }
            }
            ClassKind::ObjArray { .. } | ClassKind::TypeArray { .. } => ClassDump {
                class: c.mirror,
                super_class: object,
                loader: dumper.check.check(mem, c.loader),
                instance_size: 0,
                statics: Vec::new(),
                fields: Vec::new(),
            },
        };
        dumper.sink.class_dump(&dump).map_err(out)?;
        dumper.stats.classes += 1;
    }
    for c in &table.classes {
        if c.loader == 0 && matches!(c.kind, ClassKind::Instance { .. }) {
            dumper.sink.root(Root::StickyClass(c.mirror)).map_err(out)?;
            dumper.stats.roots += 1;
        }
    }
    for (i, &obj) in thread_objs.iter().enumerate() {
        let serial = i as u32 + 1;
        let obj = dumper.check.check(mem, obj);
        if obj == 0 {
            continue;
        }
        dumper
            .sink
            .root(Root::ThreadObj {
                id: obj,
                thread: serial,
                trace: serial + 1,
            })
            .map_err(out)?;
        dumper.stats.roots += 1;
    }
    let mut rooted = std::collections::HashSet::new();
    for mut r in frame_roots {
        if let Root::JavaFrame { id, thread, .. } = &mut r {
            *id = dumper.check.check(mem, *id);
            if *id == 0 || !rooted.insert((*thread, *id)) {
                continue;
            }
        }
        dumper.sink.root(r).map_err(out)?;
        dumper.stats.roots += 1;
    }
    // The handles and the frames' slots: only against the map of starts (without it, any
    // aligned word inside a space would pass).
    if let Some(starts) = dumper.check.starts.clone() {
        let handles = JniHandles::new(vm);
        // The object a handle's word refers to, when the dump writes it and `seen` had not.
        let new_object = |raw: u64, seen: &mut std::collections::HashSet<u64>| {
            candidates(refs, raw)
                .find(|&v| is_object(&starts, v))
                .filter(|&id| seen.insert(id))
        };
        let mut global_rooted = std::collections::HashSet::new();
        // JDK 11+: an `OopStorage`; JDK 8: a chain of `JNIHandleBlock`s, whose deleted handles
        // hold `JNIHandles::_deleted_handle` (an object, not a root).
        let jni_at = vm.static_address("JNIHandles", "_global_handles").ok();
        let in_blocks = vm
            .field("JNIHandles", "_global_handles")
            .and_then(|f| f.type_string.as_deref())
            == Some("JNIHandleBlock*");
        let jni = jni_at.filter(|_| !in_blocks);
        let deleted = vm
            .static_address("JNIHandles", "_deleted_handle")
            .ok()
            .and_then(|a| mem.read_u64(a).ok())
            .unwrap_or(0);
        let blocks = match (jni_at, &handles) {
            (Some(at), Some(h)) if in_blocks => mem
                .read_u64(at)
                .map(|b| h.chain(mem, b))
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let blocks = blocks.into_iter().filter(move |&(_, w)| w != deleted);
        let words = globals
            .oops
            .iter()
            .filter_map(|&at| Some((at, mem.read_u64(at).ok()?)));
        for (handle, raw) in jni
            .iter()
            .chain(&globals.storages)
            .flat_map(|&at| storage_handles(mem, at))
            .chain(words)
            .chain(blocks)
        {
            let Some(id) = new_object(raw, &mut global_rooted) else {
                continue;
            };
            dumper
                .sink
                .root(Root::JniGlobal { id, handle })
                .map_err(out)?;
            dumper.stats.roots += 1;
            dumper.stats.jni_global_roots += 1;
        }
        let mut buf = vec![0u8; STACK_PIECE];
        for (i, t) in dumped_stacks.iter().enumerate() {
            let serial = i as u32 + 1;
            if let Some(h) = &handles {
                let mut jni_rooted = std::collections::HashSet::new();
                for raw in h.locals(mem, t.java_thread) {
                    let Some(id) = new_object(raw, &mut jni_rooted) else {
                        continue;
                    };
                    dumper
                        .sink
                        .root(Root::JniLocal {
                            id,
                            thread: serial,
                            depth: 0,
                        })
                        .map_err(out)?;
                    dumper.stats.roots += 1;
                    dumper.stats.jni_local_roots += 1;
                }
            }
            let (found, scanned) = stack_roots(mem, refs, t, &starts, &mut buf);
            dumper.stats.stack_bytes_scanned += scanned;
            for (id, depth) in found {
                if !rooted.insert((serial, id)) {
                    continue;
                }
                dumper
                    .sink
                    .root(Root::JavaFrame {
                        id,
                        thread: serial,
                        depth,
                    })
                    .map_err(out)?;
                dumper.stats.roots += 1;
                dumper.stats.stack_slot_roots += 1;
            }
        }
    }

    // Pass two: the objects the first found, in address order, each read again (the target
    // is held, or a core: they are where they were).
    match starts {
        Some(starts) => {
            let mut chunks = Chunks::default();
            for (i, space) in spaces.iter().enumerate() {
                // A humongous object may run on past its space's top.
                let limit = if space.kind == SpaceKind::HumongousStart {
                    space.bottom.saturating_add(super::walk::MAX_OBJECT)
                } else {
                    space.top
                };
                for at in starts.starts_in(i) {
                    dumper.object_at(&mut chunks, &mut walked, at, limit);
                }
                if dumper.failed.is_some() {
                    break;
                }
            }
        }
        None => {
            let mut walker = Walker::sized_by(mem, &java, layout).with_bodies();
            for space in &spaces {
                let note = walker.walk(space, &tlabs, &mut |at, klass, size, body| {
                    dumper.walked(at, klass, size, body);
                });
                notes.extend(note);
                if dumper.failed.is_some() {
                    break;
                }
            }
            walked = walker.stats;
        }
    }
    if let Some(e) = dumper.failed.take() {
        return Err(Error::DumpOutput(e));
    }
    let mut stats = dumper.stats;
    stats.stale_references = dumper.check.stale;
    stats.stale_inside = dumper.check.stale_inside;
    stats.walk = walked;
    stats.notes = notes;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::{Space, SpaceKind, Tlab};
    use crate::memory::MemoryCopy;

    fn space(bottom: u64, top: u64, kind: SpaceKind) -> Space {
        Space {
            name: format!("{bottom:#x}"),
            bottom,
            top,
            kind,
        }
    }

    /// A space at 0x1000, a collection set at 0x2000 whose object at 0x2040 was copied to
    /// 0x1020 (its mark word forwarded) and whose one at 0x2080 claims a copy at 0x1010, where
    /// no object starts; a TLAB's unused tail at 0x10c0.
    fn spaces_and_memory() -> (Vec<Space>, Vec<Tlab>, MemoryCopy) {
        let spaces = vec![
            space(0x1000, 0x1100, SpaceKind::Contiguous),
            space(0x2000, 0x2100, SpaceKind::CollectionSet),
        ];
        let tlabs = vec![Tlab {
            start: 0x1080,
            top: 0x10c0,
            end: 0x1100,
        }];
        let mut bytes = vec![0u8; 0x1100];
        bytes[0x1040..0x1048].copy_from_slice(&(0x1020u64 | 3).to_le_bytes());
        bytes[0x1080..0x1088].copy_from_slice(&(0x1010u64 | 3).to_le_bytes());
        (spaces, tlabs, MemoryCopy::new(0x1000, bytes, 4096))
    }

    #[test]
    fn with_a_map_only_object_starts_are_written() {
        let (spaces, tlabs, mem) = spaces_and_memory();
        let mut check = RefCheck::new(&spaces, &tlabs);
        let mut starts = Starts::new(&spaces).unwrap();
        for (span, at) in [(0, 0x1000), (0, 0x1020), (1, 0x2000)] {
            assert!(starts.set_in(span, at));
        }
        check.starts = Some(Rc::new(starts));
        assert_eq!(check.check(&mem, 0), 0);
        assert_eq!(check.check(&mem, 0x1020), 0x1020);
        assert_eq!(check.check(&mem, 0x2000), 0x2000);
        // Inside a space where no object starts (a page reused since): null.
        assert_eq!(check.check(&mem, 0x1010), 0);
        assert_eq!(check.check(&mem, 0x1024), 0);
        // In a TLAB's tail, outside every space.
        assert_eq!(check.check(&mem, 0x10c8), 0);
        assert_eq!(check.check(&mem, 0x5000), 0);
        assert_eq!((check.stale, check.stale_inside), (4, 3));
        // A forwarded object of the collection set: its copy, when an object starts there.
        assert_eq!(check.check(&mem, 0x2040), 0x1020);
        assert_eq!(check.check(&mem, 0x2080), 0);
        assert_eq!((check.stale, check.stale_inside), (5, 4));
    }

    #[test]
    fn without_a_map_a_reference_into_a_space_is_written() {
        let (spaces, tlabs, mem) = spaces_and_memory();
        let mut check = RefCheck::new(&spaces, &tlabs);
        assert_eq!(check.check(&mem, 0x1010), 0x1010);
        assert_eq!(check.check(&mem, 0x10c8), 0, "a TLAB's tail");
        assert_eq!(check.check(&mem, 0x5000), 0);
        assert_eq!(check.check(&mem, 0x2040), 0x1020);
        assert_eq!(check.stale, 2);
    }
}
