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
//! * roots: `STICKY_CLASS` for the boot loader's instance classes, `THREAD_OBJ` for each
//!   `JavaThread`'s `java.lang.Thread`, with a stack trace of its frames (`FRAME` records, from
//!   the thread walk), `JAVA_FRAME` for the objects those frames hold (monitors, receivers).
//!
//! The walk is `inspect histo`'s ([`super::walk`]); an object of a class not in the class loader
//! data graph is counted and left out, never written with an unknown class id.

use std::io;

use super::Note;
/// The field and element types, defined with the class table that reads them.
pub use super::classes::BasicType;
use super::classes::{self, ClassKind, ClassTable};
use super::spaces;
use super::walk::{CHUNK, KlassMap, ObjectLayout, Sizing, WalkStats, Walker};
use crate::error::Error;
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
}

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
    /// Class mirrors met in the heap (dumped as their classes).
    pub mirrors: u64,
    /// Objects of classes not in the class loader data graph, left out.
    pub unknown_class: u64,
    /// References to memory outside every walked space (left by dead objects), written as
    /// null.
    pub stale_references: u64,
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

struct Dumper<'a, S: HeapDumpSink + ?Sized> {
    sink: &'a mut S,
    mem: &'a dyn ReadMemory,
    table: &'a ClassTable,
    refs: Refs,
    array_length_at: u64,
    /// `java_lang_Class::_klass_offset`'s value: where a mirror keeps its `Klass*`.
    mirror_klass_at: Option<u64>,
    /// Per instance class: the (offset, type) of every non-static field up the chain.
    chains: KlassMap<std::rc::Rc<[(u64, BasicType)]>>,
    values: Vec<(BasicType, u64)>,
    ids: Vec<u64>,
    piece: Vec<u8>,
    /// What a reference may refer to.
    check: RefCheck,
    stats: DumpStats,
    failed: Option<io::Error>,
}

impl<S: HeapDumpSink + ?Sized> Dumper<'_, S> {
    /// `id` if it refers into a walked space, else 0: a dead object's field may still refer to
    /// memory freed since (a G1 region collected after the last marking), and a reader must
    /// find every reference in the file.
    fn checked(&mut self, id: u64) -> u64 {
        self.check.check(self.mem, id)
    }

    /// The non-static fields of `klass` and its superclasses, this class's first.
    fn chain(&mut self, klass: u64) -> std::rc::Rc<[(u64, BasicType)]> {
        if let Some(c) = self.chains.get(&klass) {
            return c.clone();
        }
        let mut out = Vec::new();
        let mut k = klass;
        for _ in 0..64 {
            let Some(c) = self.table.get(k) else { break };
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
        let out: std::rc::Rc<[(u64, BasicType)]> = out.into();
        self.chains.insert(klass, out.clone());
        out
    }

    fn object(&mut self, at: u64, klass: u64, size: u64, body: Option<&[u8]>) {
        if self.failed.is_some() {
            return;
        }
        if let Err(e) = self.try_object(at, klass, size, body) {
            self.failed = Some(e);
        }
    }

    fn try_object(
        &mut self,
        at: u64,
        klass: u64,
        size: u64,
        body: Option<&[u8]>,
    ) -> io::Result<()> {
        let table = self.table;
        let Some(c) = table.get(klass) else {
            self.stats.unknown_class += 1;
            return Ok(());
        };
        let owned;
        let body = match body {
            Some(b) => b,
            None if size <= PIECE as u64 => {
                let mut b = vec![0u8; size as usize];
                if self.mem.read_exact_at(at, &mut b).is_err() {
                    self.stats.unreadable += 1;
                    return Ok(());
                }
                owned = b;
                &owned[..]
            }
            None => &[][..],
        };
        match &c.kind {
            ClassKind::Instance { .. } => {
                if c.name == "java/lang/Class" {
                    // A mirror is its class's CLASS_DUMP. A primitive type's mirror (no
                    // `Klass*`) and the mirror of a class not loaded (CDS archives keep
                    // mirrors of classes before they are loaded) are instances: references
                    // to them stay resolvable.
                    let mirrored = self
                        .mirror_klass_at
                        .and_then(|off| LeBytes::new(body).u64_at(off as usize));
                    if mirrored.is_some_and(|k| table.get(k).is_some_and(|m| m.mirror == at)) {
                        self.stats.mirrors += 1;
                        return Ok(());
                    }
                }
                let chain = self.chain(klass);
                self.values.clear();
                let w = self.refs.width();
                for &(off, ty) in chain.iter() {
                    let off = off as usize;
                    let n = if ty == BasicType::Object {
                        w
                    } else {
                        ty.size() as usize
                    };
                    let Some(b) = body.get(off..off + n) else {
                        self.stats.unreadable += 1;
                        return Ok(());
                    };
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
                self.stats.instances += 1;
                self.sink.instance(at, c.mirror, &self.values)
            }
            ClassKind::ObjArray { header } => {
                let w = self.refs.width() as u64;
                let Some(len) = self.array_length(at, body) else {
                    self.stats.unreadable += 1;
                    return Ok(());
                };
                // 1 + 8 + 4 + 4 + 8 bytes before the elements, a u4 record length in all.
                let max = (u64::from(u32::MAX) - 25) / 8;
                let n = len.min(max);
                if n < len {
                    self.stats.truncated_arrays += 1;
                }
                self.stats.object_arrays += 1;
                self.sink.begin_object_array(at, c.mirror, n as u32)?;
                let first = at.wrapping_add(*header);
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
            ClassKind::TypeArray { element, header } => {
                let e = u64::from(element.size());
                let Some(len) = self.array_length(at, body) else {
                    self.stats.unreadable += 1;
                    return Ok(());
                };
                let max = (u64::from(u32::MAX) - 18) / e;
                let n = len.min(max);
                if n < len {
                    self.stats.truncated_arrays += 1;
                }
                self.stats.primitive_arrays += 1;
                self.sink.begin_primitive_array(at, *element, n as u32)?;
                let total = n * e;
                let mut done = 0u64;
                while done < total {
                    let take = (total - done).min(PIECE as u64);
                    let from = (header + done) as usize;
                    match body.get(from..from + take as usize) {
                        Some(s) => self.sink.primitive_elements(*element, s)?,
                        None => {
                            self.piece.resize(take as usize, 0);
                            if self
                                .mem
                                .read_exact_at(at.wrapping_add(header + done), &mut self.piece)
                                .is_err()
                            {
                                self.piece.fill(0);
                            }
                            self.sink.primitive_elements(*element, &self.piece)?;
                        }
                    }
                    done += take;
                }
                Ok(())
            }
        }
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

/// The walked spaces a reference may refer into.
struct RefCheck {
    /// `[bottom, top)` of each walked space, sorted, and whether it is a collection set whose
    /// objects may have been copied out (Shenandoah's).
    ranges: Vec<(u64, u64, bool)>,
    /// The TLABs' unused tails `[top, end)`, sorted: nothing lives there.
    holes: Vec<(u64, u64)>,
    /// References written as null.
    stale: u64,
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
            ranges,
            holes,
            stale: 0,
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

    /// The id to write for reference `id`: itself when it is null or inside a walked space
    /// (outside the TLABs' unused tails, which may hold a former life's objects);
    /// its copy when it is an object of a collection set forwarded elsewhere (its mark word's
    /// lock bits `0b11`: a field not updated yet), as the walk steps over such objects; else 0,
    /// counted (a dead object's field may still refer to memory freed since, e.g. a G1 region
    /// collected after the last marking, and a reader must find every reference in the file).
    fn check(&mut self, mem: &dyn ReadMemory, id: u64) -> u64 {
        if id == 0 {
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
/// [`Error::VmStructs`] when an entry is missing or the class graph is implausible;
/// [`Error::Memory`] when the class graph or the heap's layout cannot be read.
pub fn dump(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    stacks: &[StackThread],
    sink: &mut (impl HeapDumpSink + ?Sized),
) -> Result<DumpStats, Error> {
    let out = Error::DumpOutput;
    let java = JavaReader::new(vm, mem)?;
    let table = classes::read(vm, mem, &java)?;
    let object = table
        .object_klass()
        .and_then(|k| table.get(k))
        .map(|c| c.mirror)
        .ok_or_else(|| {
            Error::VmStructs("java/lang/Object is not among the loaded classes".into())
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
        let top = s.top.max(s.bottom.saturating_add(1));
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
            })
            .collect();
        listed.iter().collect()
    } else {
        from_walk
    };
    for t in threads_dumped {
        let serial = thread_objs.len() as u32 + 1;
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
        chains: KlassMap::default(),
        values: Vec::new(),
        ids: Vec::new(),
        piece: Vec::new(),
        check: RefCheck::new(&spaces, &tlabs),
        stats,
        failed: None,
    };
    for c in &table.classes {
        let super_id = |k: u64| table.get(k).map_or(0, |s| s.mirror);
        let dump = match &c.kind {
            ClassKind::Instance { fields, statics } => {
                let (fnames, snames) = &field_names[&c.klass];
                let instance_size: u32 =
                    dumper.chain(c.klass).iter().map(|(_, ty)| ty.size()).sum();
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
                ClassDump {
                    class: c.mirror,
                    super_class: super_id(c.super_klass),
                    loader: c.loader,
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
                loader: c.loader,
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
    for mut r in frame_roots {
        if let Root::JavaFrame { id, .. } = &mut r {
            *id = dumper.check.check(mem, *id);
            if *id == 0 {
                continue;
            }
        }
        dumper.sink.root(r).map_err(out)?;
        dumper.stats.roots += 1;
    }

    let lh_at = layout.layout_helper;
    let resolve =
        |klass: u64| -> Result<Sizing, String> { super::walk::sizing_of(mem, &java, lh_at, klass) };
    let mut walker = Walker::new(mem, layout, Box::new(resolve)).with_bodies();
    let mut notes = overlapping;
    for space in &spaces {
        let note = walker.walk(space, &tlabs, &mut |at, klass, size, body| {
            dumper.object(at, klass, size, body);
        });
        notes.extend(note);
        if dumper.failed.is_some() {
            break;
        }
    }
    if let Some(e) = dumper.failed.take() {
        return Err(Error::DumpOutput(e));
    }
    let mut stats = dumper.stats;
    stats.stale_references = dumper.check.stale;
    stats.walk = walker.stats;
    stats.notes = notes;
    Ok(stats)
}
