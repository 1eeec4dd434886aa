//! Java frames of a thread, walked from its `JavaFrameAnchor` on x86_64, and their symbols.
//!
//! Layouts (x86_64; names as HotSpot and the Serviceability Agent use them):
//!
//! * **Code cache** (`code/codeCache.hpp`, `memory/heap.hpp`): `CodeCache::_heaps` (a
//!   `GrowableArray<CodeHeap*>*`: `GrowableArrayBase::_len`, `GrowableArray<int>::_data`;
//!   `GenericGrowableArray::_len` up to JDK 15), each `CodeHeap` with `_memory` and `_segmap`
//!   (`VirtualSpace::_low_boundary/_high_boundary`) and `_log2_segment_size`. A pc's block is
//!   found by the segment map: `seg = (pc - low) >> log2`, then `seg -= map[seg]` until the tag
//!   is 0 (0xFF: free), as `CodeHeap::find_blob` does (SA `CodeHeap.java` `blockBase`); the
//!   `CodeBlob` starts `sizeof(HeapBlock)` into the block.
//! * **CodeBlob** (`code/codeBlob.hpp`): `_name` (`"nmethod"`, `"native nmethod"`,
//!   `"Interpreter"`, stub names), `_frame_size` (words), and for nmethods
//!   (`code/nmethod.hpp`, `code/compiledMethod.hpp` up to JDK 22) `_method`.
//! * **Interpreter frames** (`cpu/x86/frame_x86.hpp`): from `fp`, the saved caller fp at
//!   `fp[0]`, return pc `fp[1]`, sender sp `fp + 2`, the caller's unextended sp
//!   `fp[-1]` (`interpreter_frame_sender_sp_offset`), `Method*` at `fp[-3]`
//!   (`interpreter_frame_method_offset`), bcp at `fp[-8]` (`interpreter_frame_bcp_offset`, JDK 9+:
//!   the mirror slot at `fp[-4]` came in 9). Method* and bcp stay absolute in JDK 21+ (only
//!   locals, last_sp and monitor_block_top were relativized).
//! * **Compiled and stub frames** (`frame_x86.cpp` `sender_for_compiled_frame`): sender sp =
//!   unextended sp + `_frame_size` words, return pc at sender sp − 1 word, saved fp at − 2.
//! * **Entry frames**: the return pc is `StubRoutines::_call_stub_return_address`; the
//!   `JavaCallWrapper*` is at `fp + frame::entry_frame_call_wrapper_offset` words (int constant),
//!   and its `_anchor` gives the previous chunk of Java frames (0 sp: the first entry frame).
//!   The offset is the target's: -6 on Linux x86_64, 2 on Windows x64 (`frame_x86.hpp` under
//!   `_WIN64`, whose call stub saves more registers), so a Windows JVM's minidump walks with the
//!   same code; the other layouts above are the same under `_WIN64`, and the interpreter keeps
//!   its bcp in `r13` there too (tests/integration/minidump_threads.rs).
//! * **Method** (`oops/method.hpp`, `constMethod.hpp`, `constantPool.hpp`, `symbol.hpp`):
//!   `Method::_constMethod`, `_access_flags` (`JVM_ACC_NATIVE` 0x0100); `ConstMethod::_constants`,
//!   `_code_size`, `_name_index`, `_signature_index`, `_flags` (`_flags._flags` in 21+) with
//!   `has_linenumber_table`; bytecodes at `ConstMethod + sizeof(ConstMethod)`, the compressed line
//!   number table right after them; `ConstantPool::_pool_holder` (the `InstanceKlass`),
//!   `_source_file_name_index` (JDK 15+; `InstanceKlass::_source_file_name_index` before), symbols
//!   at `ConstantPool + sizeof(ConstantPool) + 8 * index`; `Klass::_name`; `Symbol::_length`,
//!   `_body`.

use std::fmt::Write as _;

use std::rc::Rc;
use std::sync::Arc;

use super::list::Anchor;
use crate::error::{Error, VmError};
use crate::memory::{AddressMap, LeBytes, ReadMemory};
use crate::registers::{Arch, ThreadRegisters};
use crate::vm::VmModel;
use crate::vm::codec::line_numbers::LineNumberTable;
use crate::vm::codec::scopes::{
    self, DebugInfoFormat, LocationType, PcDesc, PcDescLayout, ScopeMethod, ScopeValue,
    decode_pc_descs, find_pc_desc, scope_chain,
};
use crate::vm::codec::unsigned5::Variant;
use crate::vm::java::external_name;

/// The most frames walked per thread (jcmd prints them all; a deeper stack is cut with a note).
pub const MAX_FRAMES: usize = 4096;
/// The most code heaps (JDK 9+ has 3 with segmented code cache).
const MAX_HEAPS: u64 = 16;
/// The longest symbol read (class and method names).
const MAX_SYMBOL: usize = 65_535;
/// The frame pointer as a `VMReg` (`as_VMReg`: the register's encoding × 2 slots), the one
/// register a callee saves in a known place (its frame's link): `rbp` (5) on x86_64, `r29` on
/// AArch64.
fn fp_vmreg(arch: Arch) -> u32 {
    match arch {
        Arch::X86_64 => 10,
        Arch::Aarch64 => 58,
    }
}

/// `frame::entry_frame_call_wrapper_offset` (words from an entry frame's fp to its
/// `JavaCallWrapper*`) where the tables do not export it: -8 on AArch64
/// (`cpu/aarch64/frame_aarch64.hpp`; x86's tables export theirs: -6 on Linux, 2 on Windows).
const AARCH64_CALL_WRAPPER_OFFSET: i64 = -8;
/// The most monitors read per frame.
const MAX_MONITORS: usize = 256;
/// An interpreter frame is at most this many bytes (`fp - sp`), as SA's `X86Frame` checks.
const MAX_INTERPRETER_FRAME: u64 = 4096 * 8;

/// What kind of frame a [`Frame`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FrameKind {
    /// An interpreted frame.
    Interpreted,
    /// A compiled frame (the outermost method of an nmethod at this pc).
    Compiled,
    /// A method inlined into a compiled frame.
    Inlined,
    /// A native method (an interpreted native call, or its compiled wrapper).
    Native,
}

/// One Java frame, symbolized.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Frame {
    /// The holder class's `InstanceKlass*`.
    #[serde(skip)]
    pub holder: u64,
    /// The holder class, external name (`java.lang.Object`).
    pub class: Arc<str>,
    /// The method name.
    pub method: Arc<str>,
    /// The method's signature (`(Ljava/lang/String;)V`), when `ConstMethod::_signature_index`
    /// is exported.
    #[serde(skip)]
    pub signature: Option<Arc<str>>,
    /// The holder's named module as `Thread.print` prefixes the source with it
    /// (`java.base@17.0.15`): filled by [`super::dump::annotate`] (`vm::java::ModuleNames`);
    /// `None` in the unnamed module, on JDK 8, and in a sampler's frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module: Option<Arc<str>>,
    /// The source file (`Object.java`), when the class records one.
    pub file: Option<Arc<str>>,
    /// The line, when known.
    pub line: Option<i32>,
    /// The bytecode index, when known.
    pub bci: Option<i32>,
    /// The kind.
    pub kind: FrameKind,
    /// The `Method*`.
    pub method_address: u64,
    /// A mark when the frame's identity is not certain (e.g. compiled frames whose inlining
    /// could not be decoded): printed with the frame, never dropped.
    pub mark: Option<String>,
    /// The lock lines printed under the frame (`- locked <…>`, ...), filled by
    /// [`super::locks`] from [`Frame::monitors`] and the thread's state.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub locks: Vec<LockLine>,
    /// The monitors the frame holds or is entering, oldest first, as `javaVFrame::monitors`
    /// lists them (`runtime/vframe.cpp`, `vframe_hp.cpp`): an interpreted frame's
    /// `BasicObjectLock`s, a compiled scope's `MonitorValue`s.
    #[serde(skip)]
    pub monitors: Vec<FrameMonitor>,
    /// Local 0 (the receiver) of the frame, for the top frame's `Object.wait` line.
    #[serde(skip)]
    pub receiver: Receiver,
    /// The physical frame's stack pointer (a compiled frame's unextended sp; the scopes inlined
    /// into one nmethod frame share it): the frame's slots lie from here up to the next frame's.
    /// 0 when not known (a frame of a stack chunk, or the last frame of a walk that stopped).
    #[serde(skip)]
    pub sp: u64,
}

/// A monitor recorded in a frame (`MonitorInfo`, `runtime/vframe.hpp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameMonitor {
    /// The locked object's address (a full oop). `eliminated`: C2 removed the lock
    /// (`MonitorValue::_eliminated`), jcmd prints `- eliminated <…>`.
    Object {
        /// The object.
        object: u64,
        /// Whether the lock was eliminated.
        eliminated: bool,
    },
    /// An eliminated lock whose owner was scalar-replaced: its class mirror when known
    /// (`- eliminated <owner is scalar replaced> (a X)`).
    ScalarReplaced {
        /// The `java.lang.Class` mirror of the owner's class.
        class_mirror: Option<u64>,
    },
    /// The owner is in a register (C2 keeps it in a callee-saved one across the runtime call
    /// that enters the monitor): not known from outside without unwinding the native frames.
    InRegister,
    /// The owner could not be read: why.
    Unknown(String),
}

/// What is known of a frame's local 0 (`javaVFrame::locals()->at(0)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Receiver {
    /// Not read (only the top frame's is).
    #[default]
    Unread,
    /// The frame has no locals (a compiled native wrapper: `compiledVFrame::locals` is empty).
    NoLocals,
    /// The word in local 0.
    Value(u64),
}

/// Bytes below an interpreter frame's fp of the slots the walk reads (`cpu/x86/frame_x86.hpp`,
/// `cpu/aarch64/frame_aarch64.hpp`): JDK 9 added the mirror slot at `fp[-4]` (JDK-8154580),
/// moving the later ones down a word; AArch64 has one more slot before the mirror from JDK 9
/// (`interpreter_frame_padding_offset`, `_extended_sp_offset` from JDK 20), so its bcp is at
/// `fp[-9]`. `Method*` is at `fp[-3]` on both.
#[derive(Debug, Clone, Copy)]
struct InterpreterSlots {
    /// `interpreter_frame_bcp_offset` (`bcx` in JDK 8): -7 words in JDK 8, -8 from 9.
    bcp: u64,
    /// `interpreter_frame_locals_offset`: -6, then -7.
    locals: u64,
    /// `interpreter_frame_monitor_block_top_offset` (= `initial_sp`, the monitor block's
    /// bottom): -8, then -9.
    monitor_block_top: u64,
}

impl InterpreterSlots {
    fn for_jdk(major: u32, arch: Arch) -> Self {
        let shift = match (major >= 9, arch) {
            (false, _) => 0,
            (true, Arch::X86_64) => 8,
            (true, Arch::Aarch64) => 16,
        };
        InterpreterSlots {
            bcp: 56 + shift,
            locals: 48 + shift,
            monitor_block_top: 64 + shift,
        }
    }
}

/// What a lock line says.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockKind {
    /// `- locked <obj>`.
    Locked,
    /// `- waiting to lock <obj>`.
    WaitingToLock,
    /// `- waiting on <obj>` (`Object.wait`).
    WaitingOn,
    /// `- waiting to re-lock in wait() <obj>`.
    WaitingToRelock,
    /// `- waiting on <no object reference available>`.
    WaitingOnUnknownObject,
    /// `- parking to wait for  <obj>`.
    ParkingToWaitFor,
    /// `- waiting on the Class initialization monitor for X` (JDK 17+; no object, `class` is
    /// the class being initialized).
    WaitingOnClassInitialization,
    /// `- eliminated <obj>`.
    Eliminated,
    /// `- eliminated <owner is scalar replaced>`.
    EliminatedScalarReplaced,
    /// A monitor of the frame whose owner could not be read, and why (printed as a note).
    Unreadable(String),
}

/// One lock line of a frame, or one ownable synchronizer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LockLine {
    /// What it says.
    pub kind: LockKind,
    /// The object's address (the full oop, as jcmd prints it).
    pub object: Option<u64>,
    /// Its class as jcmd names it (`java.lang.Object`, `java.lang.Class for X`), when readable.
    pub class: Option<String>,
}

impl LockLine {
    /// The line as jcmd prints it, without the leading tab and the newline.
    pub fn text(&self) -> String {
        let what = match &self.kind {
            LockKind::Locked => "locked",
            LockKind::WaitingToLock => "waiting to lock",
            LockKind::WaitingOn => "waiting on",
            LockKind::WaitingToRelock => "waiting to re-lock in wait()",
            LockKind::WaitingOnUnknownObject => {
                return "- waiting on <no object reference available>".into();
            }
            LockKind::ParkingToWaitFor => "parking to wait for ",
            LockKind::WaitingOnClassInitialization => {
                return format!(
                    "- waiting on the Class initialization monitor for {}",
                    self.class.as_deref().unwrap_or("?")
                );
            }
            LockKind::Eliminated | LockKind::EliminatedScalarReplaced => "eliminated",
            LockKind::Unreadable(why) => return format!("<inspect: a monitor not read: {why}>"),
        };
        let mut s = format!("- {what} ");
        match (&self.kind, self.object) {
            (LockKind::EliminatedScalarReplaced, _) => s.push_str("<owner is scalar replaced>"),
            (_, Some(o)) => {
                let _ = write!(s, "<{o:#018x}>");
            }
            (_, None) => s.push_str("<?>"),
        }
        if let Some(c) = &self.class {
            let _ = write!(s, " (a {c})");
        }
        s
    }
}

/// Where a thread's walk starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkStart {
    /// Its `JavaFrameAnchor`: the thread is blocked, parked, in native code or in the VM.
    Anchor(Anchor),
    /// Its registers, read while it was held: it was stopped running Java code (no anchor).
    /// The first frame must be interpreted or compiled; the interpreted one's bci comes from
    /// the bcp register, the compiled one's scope from the next recorded pc.
    Registers(ThreadRegisters),
}

/// A method's symbols, cached per `Method*`.
#[derive(Debug, Clone)]
struct MethodInfo {
    /// The holder's `InstanceKlass*`.
    holder: u64,
    class: Arc<str>,
    name: Arc<str>,
    signature: Option<Arc<str>>,
    file: Option<Arc<str>>,
    native: bool,
    const_method: u64,
    code_size: u64,
    has_lines: bool,
}

/// What a code blob is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlobKind {
    Interpreter,
    Nmethod,
    NativeNmethod,
    Other,
}

#[derive(Debug, Clone, Copy)]
struct Blob {
    address: u64,
    kind: BlobKind,
    frame_size: u64,
    /// An nmethod's `nmethod::_method` (its header, read with the blob's), else 0.
    method: u64,
    /// `CodeBlob::_frame_complete_offset`, when the tables give it.
    frame_complete: Option<i32>,
}

/// Where an nmethod's debug information is, JDK 9 to 22 (`code/compiledMethod.hpp`,
/// `code/nmethod.hpp`): `CodeBlob::_code_begin`; `CompiledMethod::_scopes_data_begin`
/// (a pointer) up to `this + _scopes_pcs_offset`; the `PcDesc` array from there up to
/// `this + _dependencies_offset`; the metadata (`Metadata*`s, 1-based in scopes) from
/// `this + _metadata_offset` up to the scopes data.
#[derive(Debug, Clone, Copy)]
struct DebugLayout {
    code_begin: u64,
    scopes_data_begin: u64,
    scopes_pcs_offset: u64,
    dependencies_offset: u64,
    metadata_offset: u64,
    deopt_handler_begin: Option<u64>,
    orig_pc_offset: Option<u64>,
    /// `nmethod::_oops_offset`: the oops table (constant oops of the debug info, 1-based) up to
    /// `_metadata_offset`.
    oops_offset: Option<u64>,
    /// JDK 8 (`code/nmethod.hpp`, `code/codeBlob.hpp` of jdk8u): `code_begin`,
    /// `scopes_data_begin` and `deopt_handler_begin` are `int` offsets from the nmethod
    /// (`CodeBlob::_code_offset`, `nmethod::_scopes_data_offset`, `_deoptimize_offset`), not
    /// pointers.
    header_offsets: bool,
}

/// Where an nmethod's debug information is from JDK 23 (JDK-8331087 moved the read-only parts
/// out of the code cache; `code/nmethod.hpp`, `code/codeBlob.hpp` of jdk-23 and jdk-25):
/// offsets from the nmethod (`header_begin`) in `CodeBlob` (`_code_offset` → code_begin,
/// `_data_offset` → data_begin, `_size` → data_end); the `PcDesc`s from `_immutable_data +
/// _scopes_pcs_offset` up to `+ _scopes_data_offset`, the scopes data from there up to
/// `_immutable_data_size` (JVMCI's speculations may follow; the decode offsets never reach
/// them); the oops table is the data section; the metadata table is at `data_begin +
/// nmethod::_metadata_offset` (JDK 23–24) or, from JDK 25 (JDK-8343789, mutable data out of the
/// code cache), at `CodeBlob::_mutable_data + _relocation_size` up to `_mutable_data_size`; the
/// deopt handler at `header_begin + nmethod::_deopt_handler_offset`.
#[derive(Debug, Clone, Copy)]
struct ImmutableLayout {
    code_offset: u64,
    data_offset: u64,
    size: u64,
    immutable_data: u64,
    immutable_data_size: u64,
    scopes_pcs_offset: u64,
    scopes_data_offset: u64,
    metadata: MetadataAt,
    deopt_handler_offset: Option<u64>,
    orig_pc_offset: Option<u64>,
}

/// Where a JDK 23+ nmethod's metadata table is.
#[derive(Debug, Clone, Copy)]
enum MetadataAt {
    /// JDK 23–24: `data_begin + nmethod::_metadata_offset` up to `data_end`.
    Data { metadata_offset: u64 },
    /// JDK 25+: `CodeBlob::_mutable_data + _relocation_size` up to `+ _mutable_data_size`.
    Mutable {
        mutable_data: u64,
        mutable_data_size: u64,
        relocation_size: u64,
    },
}

/// An nmethod's decoded debug information (cached per nmethod).
#[derive(Debug)]
struct NmethodInfo {
    code_begin: u64,
    scopes_data: Vec<u8>,
    pcs: Vec<PcDesc>,
    metadata: Vec<u64>,
    oops: Vec<u64>,
    deopt_handler: Option<u64>,
    orig_pc_offset: Option<u64>,
}

/// The largest debug info section read per nmethod.
const MAX_DEBUG_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone, Copy)]
struct Heap {
    low: u64,
    high: u64,
    segmap: u64,
    log2: u32,
}

/// The offsets the walk needs, and its caches (one per dump: the target is stopped).
pub struct Walker<'a> {
    mem: &'a dyn ReadMemory,
    heaps: Vec<Heap>,
    heap_block: u64,
    blob_name: u64,
    blob_frame_size: u64,
    /// `CodeBlob::_frame_complete_offset` and whether it is an `int16_t` (JDK 23+) rather than
    /// an `int`, when the tables have it.
    frame_complete: Option<(u64, bool)>,
    nmethod_method: u64,
    /// JDK ≤ 22 nmethod debug info layout, when the tables have it.
    debug: Option<DebugLayout>,
    /// JDK 23+ nmethod debug info layout, when the tables have it.
    immutable: Option<ImmutableLayout>,
    scopes_format: DebugInfoFormat,
    call_stub_return: u64,
    call_wrapper_offset: i64,
    wrapper_anchor: u64,
    anchor_sp: u64,
    anchor_fp: u64,
    anchor_pc: u64,
    method_const: u64,
    method_flags: u64,
    cm_constants: u64,
    cm_code_size: u64,
    cm_name_index: u64,
    /// `ConstMethod::_signature_index` (not in every JDK's vmStructs).
    cm_signature_index: Option<u64>,
    cm_flags: u64,
    cm_size: u64,
    cm_has_lines: u32,
    cp_holder: u64,
    cp_size: u64,
    cp_source_file: Option<u64>,
    ik_source_file: Option<u64>,
    klass_name: u64,
    /// JDK ≤ 14 VM-anonymous classes (`Unsafe.defineAnonymousClass`, lambdas in 8–14):
    /// `InstanceKlass::_misc_flags` and its `_misc_is_anonymous` bit (int constant).
    anonymous: Option<(u64, u32)>,
    /// JDK 8's VM-anonymous classes, told from their class loader data, and their mirrors'
    /// identity hashes.
    anonymous8: Option<super::anonymous8::AnonymousNames>,
    symbol_length: u64,
    symbol_body: u64,
    line_variant: Variant,
    layout: crate::vm::Layout,
    /// `sizeof(BasicObjectLock)` and `BasicObjectLock::_obj`.
    basic_object_lock: (u64, u64),
    /// Where the interpreter frame's slots are below its fp.
    slots: InterpreterSlots,
    /// The frame pointer's `VMReg` number.
    fp_vmreg: u32,
    /// `interpreter_frame_locals_offset` holds an fp-relative word offset (JDK 21+,
    /// JDK-8299795) rather than an address.
    relative_locals: bool,
    /// `interpreter_frame_monitor_block_top_offset` is fp-relative (JDK 22+, JDK-8315966).
    relative_monitor_top: bool,
    /// `Location::Type` numbering with `vector` (JDK 16+).
    vector_locations: bool,
    caches: WalkCaches,
    /// The frames of the thread being walked ([`Walker::walk`]), kept for the next.
    scratch: Vec<Frame>,
}

/// What walks learn of the code cache and the methods, by address: code blobs, nmethods'
/// debug info, `Method`s, line number tables (by `ConstMethod*`), `Symbol`s. Read once per
/// stopped target; a sampler keeps them from one sample to the next ([`Walker::with_kept`])
/// for as long as nothing can have freed what they describe.
#[derive(Default)]
pub struct WalkCaches {
    /// The code heaps and `StubRoutines::_call_stub_return_address`.
    code: Option<(Vec<Heap>, u64)>,
    nmethods: AddressMap<Option<Rc<NmethodInfo>>>,
    methods: AddressMap<Option<MethodInfo>>,
    lines: AddressMap<Option<Rc<LineNumberTable>>>,
    blobs: AddressMap<Option<Blob>>,
    /// The code blob's address for each pc looked up (the segment map's answer), so a kept
    /// cache finds a sampled thread's blobs without reading the segment map again.
    blob_at: AddressMap<Option<u64>>,
    symbols: AddressMap<Option<String>>,
}

impl WalkCaches {
    /// How many entries they hold, all kinds together.
    pub fn len(&self) -> usize {
        self.nmethods.len()
            + self.methods.len()
            + self.lines.len()
            + self.blobs.len()
            + self.blob_at.len()
            + self.symbols.len()
    }

    /// Whether they hold nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn rd(mem: &dyn ReadMemory, addr: u64) -> Option<u64> {
    mem.read_u64(addr).ok()
}

fn rd32(mem: &dyn ReadMemory, addr: u64) -> Option<u32> {
    mem.read_u32(addr).ok()
}

fn rd16(mem: &dyn ReadMemory, addr: u64) -> Option<u16> {
    mem.read_u16(addr).ok()
}

impl<'a> Walker<'a> {
    /// Resolves the layout from `vm` and reads the code heaps.
    ///
    /// # Errors
    /// [`Error::Vm`] naming a missing entry; [`Error::Memory`] when the code cache's
    /// descriptors cannot be read.
    pub fn new(vm: &VmModel, mem: &'a dyn ReadMemory) -> Result<Self, Error> {
        Self::with_kept(vm, mem, WalkCaches::default())
    }

    /// As [`Walker::new`], with what an earlier walker of the same target learnt (`caches`,
    /// from [`Walker::into_caches`]): the code heaps' bounds and the call stub's return address
    /// (fixed once the VM runs) are not read again.
    ///
    /// # Errors
    /// As [`Walker::new`].
    pub fn with_kept(
        vm: &VmModel,
        mem: &'a dyn ReadMemory,
        mut caches: WalkCaches,
    ) -> Result<Self, Error> {
        let kept = caches.code.take();
        let (heaps, call_stub_return) = match kept {
            Some(code) => code,
            None => {
                let memory = vm.offset("CodeHeap", "_memory")?;
                let segmap = vm.offset("CodeHeap", "_segmap")?;
                let log2 = vm.offset("CodeHeap", "_log2_segment_size")?;
                let low_b = vm.offset("VirtualSpace", "_low_boundary")?;
                let high_b = vm.offset("VirtualSpace", "_high_boundary")?;
                // JDK 9+ (segmented code cache): `CodeCache::_heaps`; JDK 8: the one `CodeCache::_heap`.
                let heap_pointers: Vec<u64> = match vm.static_address("CodeCache", "_heaps") {
                    Ok(heaps_var) => {
                        let (len_off, _) = vm
                            .offset_any("GrowableArrayBase", &["_len"])
                            .or_else(|_| vm.offset_any("GenericGrowableArray", &["_len"]))?;
                        let data_off = vm.offset("GrowableArray<int>", "_data")?;
                        let array = mem
                            .read_u64(heaps_var)
                            .map_err(|e| Error::memory("CodeCache::_heaps", e))?;
                        let len = u64::from(rd32(mem, array + len_off).unwrap_or(0));
                        if len > MAX_HEAPS {
                            return Err(VmError::Bound {
                                what: "CodeCache::_heaps' length".into(),
                                count: len,
                                max: MAX_HEAPS,
                            }
                            .into());
                        }
                        let data = mem
                            .read_u64(array + data_off)
                            .map_err(|e| Error::memory("CodeCache::_heaps->_data", e))?;
                        mem.read_pointers(data, len as usize, MAX_HEAPS as usize)
                            .map_err(|e| Error::memory("the CodeHeap*s", e))?
                    }
                    Err(e) => match vm.static_address("CodeCache", "_heap") {
                        Ok(heap_var) => vec![
                            mem.read_u64(heap_var)
                                .map_err(|e| Error::memory("CodeCache::_heap", e))?,
                        ],
                        Err(_) => return Err(e),
                    },
                };
                let mut heaps = Vec::new();
                for heap in heap_pointers {
                    let r = |o: u64| {
                        mem.read_u64(heap + o)
                            .map_err(|e| Error::memory("a CodeHeap", e))
                    };
                    heaps.push(Heap {
                        low: r(memory + low_b)?,
                        high: r(memory + high_b)?,
                        segmap: r(segmap + low_b)?,
                        log2: rd32(mem, heap + log2).unwrap_or(0),
                    });
                }
                if heaps
                    .iter()
                    .any(|h| h.log2 == 0 || h.log2 > 16 || h.high <= h.low)
                {
                    return Err(VmError::Implausible {
                        what: "code heaps".into(),
                        detail: format!("{heaps:?}"),
                    }
                    .into());
                }
                let call_stub_return = mem
                    .read_u64(vm.static_address("StubRoutines", "_call_stub_return_address")?)
                    .map_err(|e| Error::memory("StubRoutines::_call_stub_return_address", e))?;
                (heaps, call_stub_return)
            }
        };
        let cm_flags = vm
            .offset("ConstMethod", "_flags._flags")
            .or_else(|_| vm.offset("ConstMethod", "_flags"))?;
        let cm_has_lines = vm
            .int_opt("ConstMethodFlags::_misc_has_linenumber_table")
            .or_else(|| vm.int_opt("ConstMethod::_has_linenumber_table"))
            .unwrap_or(1) as u32;
        Ok(Walker {
            mem,
            heaps,
            heap_block: vm.size_of("HeapBlock")?,
            blob_name: vm.offset("CodeBlob", "_name")?,
            blob_frame_size: vm.offset("CodeBlob", "_frame_size")?,
            frame_complete: vm
                .field("CodeBlob", "_frame_complete_offset")
                .filter(|f| !f.is_static)
                .map(|f| {
                    let narrow = f
                        .type_string
                        .as_deref()
                        .is_some_and(|t| t.contains("16") || t == "short");
                    (f.offset, narrow)
                }),
            nmethod_method: vm
                .offset("CompiledMethod", "_method")
                .or_else(|_| vm.offset("nmethod", "_method"))?,
            debug: (|| {
                let cm = |f: &str| {
                    vm.offset("CompiledMethod", f)
                        .or_else(|_| vm.offset("nmethod", f))
                        .ok()
                };
                if let Some(scopes_data_offset) = vm.offset("nmethod", "_scopes_data_offset").ok()
                    && vm.field("CodeBlob", "_code_begin").is_none()
                {
                    // JDK 8.
                    return Some(DebugLayout {
                        code_begin: vm.offset("CodeBlob", "_code_offset").ok()?,
                        scopes_data_begin: scopes_data_offset,
                        scopes_pcs_offset: vm.offset("nmethod", "_scopes_pcs_offset").ok()?,
                        dependencies_offset: vm.offset("nmethod", "_dependencies_offset").ok()?,
                        metadata_offset: vm.offset("nmethod", "_metadata_offset").ok()?,
                        deopt_handler_begin: vm.offset("nmethod", "_deoptimize_offset").ok(),
                        orig_pc_offset: vm.offset("nmethod", "_orig_pc_offset").ok(),
                        oops_offset: vm.offset("nmethod", "_oops_offset").ok(),
                        header_offsets: true,
                    });
                }
                Some(DebugLayout {
                    header_offsets: false,
                    code_begin: vm.offset("CodeBlob", "_code_begin").ok()?,
                    scopes_data_begin: cm("_scopes_data_begin")?,
                    scopes_pcs_offset: vm.offset("nmethod", "_scopes_pcs_offset").ok()?,
                    dependencies_offset: vm.offset("nmethod", "_dependencies_offset").ok()?,
                    metadata_offset: vm.offset("nmethod", "_metadata_offset").ok()?,
                    deopt_handler_begin: cm("_deopt_handler_begin"),
                    orig_pc_offset: vm.offset("nmethod", "_orig_pc_offset").ok(),
                    oops_offset: vm.offset("nmethod", "_oops_offset").ok(),
                })
            })(),
            immutable: (|| {
                let n = |f: &str| vm.offset("nmethod", f).ok();
                let b = |f: &str| vm.offset("CodeBlob", f).ok();
                let metadata = match n("_metadata_offset") {
                    Some(metadata_offset) => MetadataAt::Data { metadata_offset },
                    None => MetadataAt::Mutable {
                        mutable_data: b("_mutable_data")?,
                        mutable_data_size: b("_mutable_data_size")?,
                        relocation_size: b("_relocation_size")?,
                    },
                };
                Some(ImmutableLayout {
                    code_offset: b("_code_offset")?,
                    data_offset: b("_data_offset")?,
                    size: b("_size")?,
                    immutable_data: n("_immutable_data")?,
                    immutable_data_size: n("_immutable_data_size")?,
                    scopes_pcs_offset: n("_scopes_pcs_offset")?,
                    scopes_data_offset: n("_scopes_data_offset")?,
                    metadata,
                    deopt_handler_offset: n("_deopt_handler_offset"),
                    orig_pc_offset: n("_orig_pc_offset"),
                })
            })(),
            scopes_format: DebugInfoFormat::for_jdk(vm.major),
            call_stub_return,
            call_wrapper_offset: match (
                vm.int_opt("frame::entry_frame_call_wrapper_offset"),
                vm.arch,
            ) {
                (Some(o), _) => o,
                (None, Arch::Aarch64) => AARCH64_CALL_WRAPPER_OFFSET,
                (None, Arch::X86_64) => vm.int("frame::entry_frame_call_wrapper_offset")?,
            },
            fp_vmreg: fp_vmreg(vm.arch),
            wrapper_anchor: vm.offset("JavaCallWrapper", "_anchor")?,
            anchor_sp: vm.offset("JavaFrameAnchor", "_last_Java_sp")?,
            anchor_fp: vm.offset("JavaFrameAnchor", "_last_Java_fp")?,
            anchor_pc: vm.offset("JavaFrameAnchor", "_last_Java_pc")?,
            method_const: vm.offset("Method", "_constMethod")?,
            method_flags: vm.offset("Method", "_access_flags")?,
            cm_constants: vm.offset("ConstMethod", "_constants")?,
            cm_code_size: vm.offset("ConstMethod", "_code_size")?,
            cm_name_index: vm.offset("ConstMethod", "_name_index")?,
            cm_signature_index: vm.offset("ConstMethod", "_signature_index").ok(),
            cm_flags,
            cm_size: vm.size_of("ConstMethod")?,
            cm_has_lines,
            cp_holder: vm.offset("ConstantPool", "_pool_holder")?,
            cp_size: vm.size_of("ConstantPool")?,
            cp_source_file: vm.offset("ConstantPool", "_source_file_name_index").ok(),
            ik_source_file: vm.offset("InstanceKlass", "_source_file_name_index").ok(),
            klass_name: vm.offset("Klass", "_name")?,
            anonymous: vm
                .offset("InstanceKlass", "_misc_flags")
                .ok()
                .zip(
                    vm.int_opt("InstanceKlass::_misc_is_anonymous")
                        .or_else(|| vm.int_opt("InstanceKlass::_misc_is_unsafe_anonymous")),
                )
                .map(|(o, bit)| (o, bit as u32)),
            anonymous8: super::anonymous8::AnonymousNames::new(vm),
            symbol_length: vm.offset("Symbol", "_length")?,
            symbol_body: vm.offset("Symbol", "_body")?,
            line_variant: Variant::for_compressed_stream(vm.major),
            layout: vm.layout,
            basic_object_lock: (
                vm.size_of("BasicObjectLock")?,
                vm.offset("BasicObjectLock", "_obj")?,
            ),
            slots: InterpreterSlots::for_jdk(vm.major, vm.arch),
            relative_locals: vm.major >= 21,
            relative_monitor_top: vm.major >= 22,
            vector_locations: vm.major >= 16,
            caches,
            scratch: Vec::new(),
        })
    }

    /// What this walker learnt, for a later walker of the same target.
    pub fn into_caches(mut self) -> WalkCaches {
        self.caches.code = Some((self.heaps, self.call_stub_return));
        self.caches
    }

    /// Whether `pc` is in the code cache.
    fn heap_of(&self, pc: u64) -> Option<Heap> {
        self.heaps
            .iter()
            .copied()
            .find(|h| pc >= h.low && pc < h.high)
    }

    /// The code blob holding `pc`, via the segment map (`CodeHeap::find_blob`).
    fn blob(&mut self, pc: u64) -> Option<Blob> {
        let address = match self.caches.blob_at.get(&pc) {
            Some(a) => (*a)?,
            None => {
                let a = self.blob_address(pc);
                self.caches.blob_at.insert(pc, a);
                a?
            }
        };
        if let Some(b) = self.caches.blobs.get(&address) {
            return *b;
        }
        let blob = (|| {
            let name = rd(self.mem, address + self.blob_name)?;
            let name = self.mem.read_c_string(name, 64).ok()??;
            let kind = if name.starts_with(b"native nmethod") {
                BlobKind::NativeNmethod
            } else if name.starts_with(b"nmethod") {
                BlobKind::Nmethod
            } else if name.starts_with(b"Interpreter") {
                BlobKind::Interpreter
            } else {
                BlobKind::Other
            };
            let frame_size = u64::from(rd32(self.mem, address + self.blob_frame_size)?);
            let method = match kind {
                BlobKind::Nmethod | BlobKind::NativeNmethod => {
                    rd(self.mem, address + self.nmethod_method).unwrap_or(0)
                }
                _ => 0,
            };
            let frame_complete = self.frame_complete.and_then(|(at, narrow)| match narrow {
                true => rd16(self.mem, address + at).map(|o| i32::from(o as i16)),
                false => rd32(self.mem, address + at).map(|o| o as i32),
            });
            Some(Blob {
                address,
                kind,
                frame_size,
                method,
                frame_complete,
            })
        })();
        self.caches.blobs.insert(address, blob);
        blob
    }

    /// The address of the code blob holding `pc`: the segment map's entries lead back from
    /// `pc`'s segment to the blob's first (`CodeHeap::find_blob`), past its `HeapBlock` header.
    fn blob_address(&self, pc: u64) -> Option<u64> {
        let heap = self.heap_of(pc)?;
        let mut seg = (pc - heap.low) >> heap.log2;
        let mut hops = 0u32;
        loop {
            let mut b = [0u8; 1];
            self.mem.read_exact_at(heap.segmap + seg, &mut b).ok()?;
            match b[0] {
                0 => break,
                0xFF => return None,
                t => seg = seg.checked_sub(u64::from(t))?,
            }
            hops += 1;
            if hops > 1 << 20 {
                return None;
            }
        }
        Some(heap.low + (seg << heap.log2) + self.heap_block)
    }

    /// A `Symbol`'s text (`oops/symbol.hpp`: `_length` u16, `_body` bytes, modified UTF-8).
    fn symbol(&mut self, sym: u64) -> Option<String> {
        if let Some(s) = self.caches.symbols.get(&sym) {
            return s.clone();
        }
        let s = (|| {
            let len = usize::from(rd16(self.mem, sym + self.symbol_length)?).min(MAX_SYMBOL);
            let mut body = vec![0u8; len];
            self.mem
                .read_exact_at(sym + self.symbol_body, &mut body)
                .ok()?;
            Some(String::from_utf8_lossy(&body).into_owned())
        })();
        self.caches.symbols.insert(sym, s.clone());
        s
    }

    /// The symbol at constant pool index `index` (`ConstantPool::symbol_at`).
    fn cp_symbol(&mut self, cp: u64, index: u64) -> Option<String> {
        let slot = rd(self.mem, cp + self.cp_size + 8 * index)?;
        self.symbol(slot & !1)
    }

    fn method(&mut self, method: u64) -> Option<MethodInfo> {
        if let Some(m) = self.caches.methods.get(&method) {
            return m.clone();
        }
        let info = (|| {
            let cm = rd(self.mem, method + self.method_const)?;
            let flags = rd32(self.mem, method + self.method_flags)?;
            let cp = rd(self.mem, cm + self.cm_constants)?;
            let holder = rd(self.mem, cp + self.cp_holder)?;
            let class = self.symbol(rd(self.mem, holder + self.klass_name)?)?;
            let name_index = u64::from(rd16(self.mem, cm + self.cm_name_index)?);
            let name = self.cp_symbol(cp, name_index)?;
            let signature = self
                .cm_signature_index
                .and_then(|o| rd16(self.mem, cm + o))
                .and_then(|i| self.cp_symbol(cp, u64::from(i)));
            let file_index = match (self.cp_source_file, self.ik_source_file) {
                (Some(o), _) => rd16(self.mem, cp + o),
                (None, Some(o)) => rd16(self.mem, holder + o),
                _ => None,
            };
            let file = file_index
                .filter(|&i| i != 0)
                .and_then(|i| self.cp_symbol(cp, u64::from(i)));
            let code_size = u64::from(rd16(self.mem, cm + self.cm_code_size)?);
            let cm_flags = rd32(self.mem, cm + self.cm_flags)?;
            let mut class = external_name(&class);
            // `Klass::external_name` of JDK 9–14: a VM-anonymous class is `Name/0x<Klass*>`;
            // of JDK 8: `Name/<the mirror's identity hash>` (none when it has no hash yet).
            if let Some((flags_at, bit)) = self.anonymous
                && rd16(self.mem, holder + flags_at).is_some_and(|f| u32::from(f) & bit != 0)
            {
                class = format!("{class}/{holder:#018x}");
            } else if let Some(names) = self.anonymous8.as_mut()
                && let Some(hash) = names.hash(self.mem, holder)
            {
                class = format!("{class}/{hash}");
            }
            Some(MethodInfo {
                holder,
                class: class.into(),
                name: name.into(),
                signature: signature.map(Into::into),
                file: file.map(Into::into),
                native: flags & 0x0100 != 0,
                const_method: cm,
                code_size,
                has_lines: cm_flags & self.cm_has_lines != 0,
            })
        })();
        self.caches.methods.insert(method, info.clone());
        info
    }

    /// The line of `bci` in `m` from its compressed line number table (decoded once per
    /// method: a dump's frames share few methods).
    fn line(&mut self, m: &MethodInfo, bci: i32) -> Option<i32> {
        if !m.has_lines || m.native {
            return None;
        }
        let table = match self.caches.lines.get(&m.const_method) {
            Some(t) => t.clone(),
            None => {
                let at = m.const_method + self.cm_size + m.code_size;
                // The table's length is not stored: read up to 4 KiB (bounded by the page it
                // ends on).
                let mut buf = vec![0u8; 4096];
                let mut n = buf.len();
                while n >= 64 && self.mem.read_exact_at(at, &mut buf[..n]).is_err() {
                    n /= 2;
                }
                let t = LineNumberTable::decode(&buf[..n], self.line_variant, 65_536)
                    .ok()
                    .map(Rc::new);
                self.caches.lines.insert(m.const_method, t.clone());
                t
            }
        };
        table?.line_for_bci(bci, Some(m.code_size as u32))
    }

    fn frame(&mut self, method: u64, bci: Option<i32>, kind: FrameKind) -> Option<Frame> {
        let m = self.method(method)?;
        let kind = if m.native { FrameKind::Native } else { kind };
        let line = match bci {
            Some(b) => self.line(&m, b),
            None => None,
        };
        Some(Frame {
            holder: m.holder,
            class: m.class,
            method: m.name,
            signature: m.signature,
            module: None,
            file: m.file,
            line,
            bci,
            kind,
            method_address: method,
            mark: None,
            locks: Vec::new(),
            monitors: Vec::new(),
            receiver: Receiver::Unread,
            sp: 0,
        })
    }

    /// Why a thread stopped at `pc` in `blob` cannot be walked from its registers: its frame is
    /// not built yet (`CodeBlob::is_frame_complete_at`: the pc is before `code_begin +
    /// _frame_complete_offset`, in the prologue), so the sender is not where the frame size
    /// says. `None` when the frame is complete, or the offset is not in the tables.
    fn frame_incomplete(&mut self, blob: &Blob, pc: u64) -> Option<String> {
        let offset = blob.frame_complete?;
        let code_begin = self.nmethod(blob.address)?.code_begin;
        (offset >= 0 && pc < code_begin + offset as u64).then(|| {
            format!(
                "stopped in the prologue of compiled code at pc {pc:#x} (frame not built): its frames are not walked"
            )
        })
    }

    /// The debug information of the nmethod at `nm` (JDK 9–22 layout).
    fn nmethod(&mut self, nm: u64) -> Option<Rc<NmethodInfo>> {
        if let Some(n) = self.caches.nmethods.get(&nm) {
            return n.clone();
        }
        let info = (|| {
            if let Some(l) = self.immutable {
                return self.nmethod_immutable(nm, l);
            }
            let d = self.debug?;
            let int = |o: u64| rd32(self.mem, nm + o).map(u64::from);
            // A pointer field, or (JDK 8) an int offset from the nmethod.
            let at = |o: u64| {
                if d.header_offsets {
                    int(o).map(|off| nm + off)
                } else {
                    rd(self.mem, nm + o)
                }
            };
            let code_begin = at(d.code_begin)?;
            let scopes_begin = at(d.scopes_data_begin)?;
            let pcs_begin = nm + int(d.scopes_pcs_offset)?;
            let pcs_end = nm + int(d.dependencies_offset)?;
            let meta_begin = nm + int(d.metadata_offset)?;
            let bytes = |from: u64, to: u64| -> Option<Vec<u8>> {
                let len = to.checked_sub(from).filter(|&n| n <= MAX_DEBUG_BYTES)?;
                let mut b = vec![0u8; len as usize];
                self.mem.read_exact_at(from, &mut b).ok()?;
                Some(b)
            };
            let scopes_data = bytes(scopes_begin, pcs_begin)?;
            let pcs = decode_pc_descs(&bytes(pcs_begin, pcs_end)?, &PcDescLayout::HOTSPOT, 1 << 20)
                .ok()?;
            let metadata = LeBytes::new(&bytes(meta_begin, scopes_begin)?)
                .u64s()
                .collect();
            let oops = match d.oops_offset.and_then(int) {
                Some(o) => LeBytes::new(&bytes(nm + o, meta_begin)?).u64s().collect(),
                None => Vec::new(),
            };
            Some(Rc::new(NmethodInfo {
                code_begin,
                scopes_data,
                pcs,
                metadata,
                oops,
                deopt_handler: d.deopt_handler_begin.and_then(at),
                orig_pc_offset: d.orig_pc_offset.and_then(int),
            }))
        })();
        self.caches.nmethods.insert(nm, info.clone());
        info
    }

    /// The debug information of the nmethod at `nm`, JDK 23+ layout ([`ImmutableLayout`]).
    fn nmethod_immutable(&self, nm: u64, l: ImmutableLayout) -> Option<Rc<NmethodInfo>> {
        let int = |o: u64| rd32(self.mem, nm + o).map(u64::from);
        let bytes = |from: u64, to: u64| -> Option<Vec<u8>> {
            let len = to.checked_sub(from).filter(|&n| n <= MAX_DEBUG_BYTES)?;
            let mut b = vec![0u8; len as usize];
            self.mem.read_exact_at(from, &mut b).ok()?;
            Some(b)
        };
        let code_begin = nm + int(l.code_offset)?;
        let data_begin = nm + int(l.data_offset)?;
        let data_end = nm + int(l.size)?;
        let imm = rd(self.mem, nm + l.immutable_data)?;
        let imm_size = int(l.immutable_data_size)?;
        let pcs_begin = imm + int(l.scopes_pcs_offset)?;
        let scopes_begin = imm + int(l.scopes_data_offset)?;
        let scopes_data = bytes(scopes_begin, imm + imm_size)?;
        let pcs = decode_pc_descs(
            &bytes(pcs_begin, scopes_begin)?,
            &PcDescLayout::HOTSPOT,
            1 << 20,
        )
        .ok()?;
        let (meta_begin, meta_end, oops_end) = match l.metadata {
            MetadataAt::Data { metadata_offset } => {
                let m = data_begin + int(metadata_offset)?;
                (m, data_end, m)
            }
            MetadataAt::Mutable {
                mutable_data,
                mutable_data_size,
                relocation_size,
            } => {
                let md = rd(self.mem, nm + mutable_data)?;
                (
                    md + int(relocation_size)?,
                    md + int(mutable_data_size)?,
                    data_end,
                )
            }
        };
        let words = |from, to| -> Option<Vec<u64>> {
            Some(LeBytes::new(&bytes(from, to)?).u64s().collect())
        };
        Some(Rc::new(NmethodInfo {
            code_begin,
            scopes_data,
            pcs,
            metadata: words(meta_begin, meta_end)?,
            oops: words(data_begin, oops_end).unwrap_or_default(),
            deopt_handler: l.deopt_handler_offset.and_then(int).map(|o| nm + o),
            orig_pc_offset: l.orig_pc_offset.and_then(int),
        }))
    }

    /// The frames of a compiled frame at `pc` in nmethod `blob`, innermost first, from its
    /// `PcDesc` and `ScopeDesc` chain (`code/nmethod.cpp` `pc_desc_at`, `scope_desc_at`);
    /// `None` when the debug information cannot be read (the caller marks the frame).
    ///
    /// `running`: the pc is where a thread running compiled code was stopped, between the
    /// recorded points: the scope of the next recorded point is used (`nmethod::pc_desc_near`),
    /// and the frames are marked so.
    fn compiled_frames(
        &mut self,
        blob: &Blob,
        pc: u64,
        sp: u64,
        fp: u64,
        running: bool,
    ) -> Option<Vec<Frame>> {
        let info = self.nmethod(blob.address)?;
        let offset = i32::try_from(pc.checked_sub(info.code_begin)?).ok()?;
        let (pcd, exact) = match find_pc_desc(&info.pcs, offset, false) {
            Some(p) => (*p, true),
            None => (*find_pc_desc(&info.pcs, offset, true)?, false),
        };
        let chain = scope_chain(&info.scopes_data, &pcd, self.scopes_format.variant, 256).ok()?;
        let mut frames = Vec::new();
        for (i, scope) in chain.iter().enumerate() {
            let method = match scope.method {
                ScopeMethod::Metadata(0) => return None,
                ScopeMethod::Metadata(m) => *info.metadata.get(m as usize - 1)?,
                ScopeMethod::NmethodMethod => Some(blob.method).filter(|&m| m != 0)?,
            };
            let kind = if i + 1 == chain.len() {
                FrameKind::Compiled
            } else {
                FrameKind::Inlined
            };
            let mut f = self.frame(method, Some(scope.bci.max(0)), kind)?;
            f.monitors = self.compiled_monitors(&info, scope.monitors_decode_offset, sp, fp);
            if !exact {
                f.mark = Some(if running {
                    format!(
                        "running compiled code at pc {pc:#x}: scope of the next safepoint or call"
                    )
                } else {
                    format!("pc {pc:#x} is not a recorded pc: nearest debug info used")
                });
            }
            frames.push(f);
        }
        let _ = scopes::SERIALIZED_NULL;
        Some(frames)
    }

    /// The monitors of a compiled scope (`compiledVFrame::monitors`, `runtime/vframe_hp.cpp`):
    /// each `MonitorValue`'s owner read from the frame whose unextended sp is `sp` (a stack
    /// slot, `StackValue::create_stack_value`), or the nmethod's oops table (a constant oop).
    fn compiled_monitors(
        &self,
        info: &NmethodInfo,
        offset: u32,
        sp: u64,
        fp: u64,
    ) -> Vec<FrameMonitor> {
        let values = match scopes::decode_monitors(
            &info.scopes_data,
            offset,
            self.scopes_format,
            MAX_MONITORS,
            1024,
        ) {
            Ok(v) => v,
            Err(e) => return vec![FrameMonitor::Unknown(format!("monitors not decoded: {e}"))],
        };
        let has_vector = self.vector_locations;
        let constant = |index: u32| -> Option<u64> {
            if index == 0 {
                return Some(0);
            }
            info.oops.get(index as usize - 1).copied()
        };
        values
            .into_iter()
            .map(|m| {
                let eliminated = m.eliminated;
                match &m.owner {
                    ScopeValue::Object(o) if eliminated => FrameMonitor::ScalarReplaced {
                        class_mirror: match o.klass {
                            ScopeValue::ConstantOop(i) => constant(i),
                            _ => None,
                        },
                    },
                    ScopeValue::ConstantOop(i) => match constant(*i) {
                        Some(object) => FrameMonitor::Object { object, eliminated },
                        None => FrameMonitor::Unknown(format!("oop #{i} not in the oops table")),
                    },
                    ScopeValue::Location(loc) => {
                        let at = match (loc.stack_offset_bytes(), loc.register_number()) {
                            (Some(off), _) => Some(sp + u64::from(off)),
                            // The frame pointer: its value in this frame is what the callee
                            // saved (`update_map_with_saved_link`).
                            (None, Some(r)) if r == self.fp_vmreg => None,
                            _ => return FrameMonitor::InRegister,
                        };
                        let object = match (loc.location_type(has_vector), at) {
                            (LocationType::Oop, Some(at)) => rd(self.mem, at),
                            (LocationType::NarrowOop, Some(at)) => {
                                rd32(self.mem, at).map(|n| self.layout.narrow_oop.decode(n))
                            }
                            (LocationType::Oop, None) => Some(fp),
                            (LocationType::NarrowOop, None) => {
                                Some(self.layout.narrow_oop.decode(fp as u32))
                            }
                            t => {
                                return FrameMonitor::Unknown(format!(
                                    "the owner's location has type {t:?}"
                                ));
                            }
                        };
                        match object {
                            Some(object) => FrameMonitor::Object { object, eliminated },
                            None => {
                                FrameMonitor::Unknown(format!("stack slot {at:x?} not readable"))
                            }
                        }
                    }
                    other => FrameMonitor::Unknown(format!("owner {other:?}")),
                }
            })
            .filter(|m| !matches!(m, FrameMonitor::Object { object: 0, .. }))
            .collect()
    }

    /// The `BasicObjectLock`s of the interpreter frame at `fp` (`interpretedVFrame::monitors`):
    /// from `interpreter_frame_monitor_begin` (`fp - 9` words) down to the monitor block top
    /// (the address in `fp[-9]`, an fp-relative word offset from JDK 22), oldest first; unused
    /// slots (a null `_obj`) left out.
    fn interpreter_monitors(&self, fp: u64) -> Vec<FrameMonitor> {
        let begin = fp.wrapping_sub(self.slots.monitor_block_top);
        let Some(top) = rd(self.mem, begin) else {
            return vec![FrameMonitor::Unknown(
                "monitor block top not readable".into(),
            )];
        };
        let end = if self.relative_monitor_top {
            fp.wrapping_add_signed((top as i64).wrapping_mul(8))
        } else {
            top
        };
        let (size, obj) = self.basic_object_lock;
        if end > begin || begin - end > MAX_INTERPRETER_FRAME || size == 0 || obj + 8 > size {
            return vec![FrameMonitor::Unknown(format!(
                "implausible monitor block {end:#x}..{begin:#x}"
            ))];
        }
        let count = ((begin - end) / size).min(MAX_MONITORS as u64);
        let mut out = Vec::new();
        for k in 1..=count {
            match rd(self.mem, begin - k * size + obj) {
                Some(0) => {}
                Some(object) => out.push(FrameMonitor::Object {
                    object,
                    eliminated: false,
                }),
                None => out.push(FrameMonitor::Unknown("BasicObjectLock not readable".into())),
            }
        }
        out
    }

    /// Local 0 of the interpreter frame at `fp` (`interpreter_frame_local_at(0)`: the address in
    /// `fp[-7]`, an fp-relative word offset from JDK 21).
    fn interpreter_local0(&self, fp: u64) -> Receiver {
        let Some(v) = rd(self.mem, fp.wrapping_sub(self.slots.locals)) else {
            return Receiver::Unread;
        };
        let locals = if self.relative_locals {
            fp.wrapping_add_signed((v as i64).wrapping_mul(8))
        } else {
            v
        };
        rd(self.mem, locals).map_or(Receiver::Unread, Receiver::Value)
    }

    /// Walks the Java frames of a thread from its anchor or its registers; `stack` is `(base,
    /// size)`. Returns the frames and, when the walk stopped before the first entry frame, why.
    pub fn walk(&mut self, start: WalkStart, stack: (u64, u64)) -> (Vec<Frame>, Option<String>) {
        // Walked into a buffer kept from one thread to the next, then moved into a vector of
        // the right size: a thread's frames are one allocation, not a vector grown by doubling.
        let scratch = std::mem::take(&mut self.scratch);
        let (mut walked, why) = self.walk_frames(scratch, start, stack);
        let mut frames = Vec::with_capacity(walked.len());
        frames.append(&mut walked);
        self.scratch = walked;
        (frames, why)
    }

    /// [`Walker::walk`] into `frames` (empty; its room is reused).
    fn walk_frames(
        &mut self,
        mut frames: Vec<Frame>,
        start: WalkStart,
        stack: (u64, u64),
    ) -> (Vec<Frame>, Option<String>) {
        let (base, size) = stack;
        let low = base.saturating_sub(size);
        let in_stack = |a: u64| a >= low && a < base;
        let (mut sp, mut fp, mut pc, mut top) = match start {
            WalkStart::Anchor(anchor) => {
                if anchor.sp == 0 {
                    return (frames, None);
                }
                let pc = if anchor.pc != 0 {
                    anchor.pc
                } else {
                    match rd(self.mem, anchor.sp.wrapping_sub(8)) {
                        Some(pc) => pc,
                        None => {
                            return (
                                frames,
                                Some(format!(
                                    "return address at {:#x} not readable",
                                    anchor.sp.wrapping_sub(8)
                                )),
                            );
                        }
                    }
                };
                (anchor.sp, anchor.fp, pc, None)
            }
            WalkStart::Registers(r) => (r.sp, r.fp, r.pc, Some(r)),
        };
        let mut unextended_sp = sp;
        let mut last_sp = 0u64;
        while frames.len() < MAX_FRAMES {
            // The registers speak for the first frame only.
            let from_registers = top.take();
            if let Some(r) = from_registers {
                match self.blob(pc) {
                    Some(b) if b.kind == BlobKind::Interpreter || b.kind == BlobKind::Nmethod => {}
                    _ => {
                        let place = if self.heap_of(pc).is_some() {
                            "a stub or runtime code in the code cache"
                        } else {
                            "native or VM code"
                        };
                        return (
                            frames,
                            Some(format!(
                                "running at pc {:#x} in {place} with no frame anchor: its frames are not walked",
                                r.pc
                            )),
                        );
                    }
                }
            }
            if !in_stack(sp) || sp < last_sp {
                return (
                    frames,
                    Some(format!(
                        "walk stopped: sp {sp:#x} outside the stack or not increasing"
                    )),
                );
            }
            last_sp = sp;
            if pc == self.call_stub_return {
                // An entry frame: continue from the JavaCallWrapper's anchor.
                let wrapper = fp.wrapping_add_signed(self.call_wrapper_offset * 8);
                let Some(w) = rd(self.mem, wrapper) else {
                    return (
                        frames,
                        Some("entry frame: JavaCallWrapper not readable".into()),
                    );
                };
                let a = w + self.wrapper_anchor;
                let (Some(nsp), Some(nfp), Some(npc)) = (
                    rd(self.mem, a + self.anchor_sp),
                    rd(self.mem, a + self.anchor_fp),
                    rd(self.mem, a + self.anchor_pc),
                ) else {
                    return (
                        frames,
                        Some("entry frame: JavaCallWrapper's anchor not readable".into()),
                    );
                };
                if nsp == 0 {
                    return (frames, None); // the first entry frame: done
                }
                sp = nsp;
                unextended_sp = nsp;
                fp = nfp;
                pc = if npc != 0 {
                    npc
                } else {
                    match rd(self.mem, nsp - 8) {
                        Some(p) => p,
                        None => {
                            return (
                                frames,
                                Some("entry frame: return address not readable".into()),
                            );
                        }
                    }
                };
                last_sp = 0;
                continue;
            }
            let Some(blob) = self.blob(pc) else {
                let why = if self.heap_of(pc).is_some() {
                    format!("pc {pc:#x}: no code blob found in the code cache")
                } else {
                    format!("pc {pc:#x} is outside the code cache")
                };
                return (frames, Some(why));
            };
            let first = frames.len();
            let frame_sp = if blob.kind == BlobKind::Interpreter {
                sp
            } else {
                unextended_sp
            };
            match blob.kind {
                BlobKind::Interpreter => {
                    if fp <= sp.saturating_sub(16)
                        || fp.checked_sub(sp).is_none_or(|d| d > MAX_INTERPRETER_FRAME)
                        || !in_stack(fp)
                    {
                        return (
                            frames,
                            Some(format!(
                                "interpreter frame with fp {fp:#x} not plausible for sp {sp:#x}"
                            )),
                        );
                    }
                    let (Some(method), Some(bcp)) =
                        (rd(self.mem, fp - 24), rd(self.mem, fp - self.slots.bcp))
                    else {
                        return (frames, Some("interpreter frame slots not readable".into()));
                    };
                    // A running top frame's bcp is in the interpreter's bcp register; its slot
                    // is written only at calls (`save_bcp`), so it may be stale.
                    let bcp_register = from_registers.map(|r| r.bcp);
                    let bci = self.method(method).and_then(|m| {
                        let start = m.const_method + self.cm_size;
                        let in_code = |b: u64| b >= start && b < start + m.code_size.max(1);
                        if m.native {
                            Some(0)
                        } else if let Some(b) = bcp_register.filter(|&b| in_code(b)) {
                            Some((b - start) as i32)
                        } else if in_code(bcp) {
                            Some((bcp - start) as i32)
                        } else {
                            None
                        }
                    });
                    match self.frame(method, bci, FrameKind::Interpreted) {
                        Some(mut f) => {
                            f.monitors = self.interpreter_monitors(fp);
                            if frames.is_empty() {
                                f.receiver = self.interpreter_local0(fp);
                            }
                            if bci.is_none() && f.kind != FrameKind::Native {
                                f.mark =
                                    Some(format!("bcp {bcp:#x} outside the method's bytecodes"));
                            }
                            frames.push(f);
                        }
                        None => {
                            return (
                                frames,
                                Some(format!(
                                    "interpreter frame: Method* {method:#x} not readable"
                                )),
                            );
                        }
                    }
                    let (Some(sender_unext), Some(link), Some(ret)) =
                        (rd(self.mem, fp - 8), rd(self.mem, fp), rd(self.mem, fp + 8))
                    else {
                        return (frames, Some("interpreter frame links not readable".into()));
                    };
                    sp = fp + 16;
                    unextended_sp = sender_unext;
                    fp = link;
                    pc = ret;
                }
                BlobKind::Nmethod | BlobKind::NativeNmethod | BlobKind::Other => {
                    let mut frame_pc = pc;
                    if blob.kind == BlobKind::Nmethod
                        && let Some(info) = self.nmethod(blob.address)
                        && info.deopt_handler == Some(pc)
                        && let Some(o) = info.orig_pc_offset
                    {
                        // A frame being deoptimized: its own pc was saved in the frame
                        // (`nmethod::get_original_pc`, frame_x86.cpp `adjust_unextended_sp`).
                        match rd(self.mem, unextended_sp + o) {
                            Some(orig) => frame_pc = orig,
                            None => {
                                return (
                                    frames,
                                    Some("deoptimized frame: original pc not readable".into()),
                                );
                            }
                        }
                    }
                    if from_registers.is_some()
                        && let Some(why) = self.frame_incomplete(&blob, pc)
                    {
                        return (frames, Some(why));
                    }
                    let compiled = if blob.kind == BlobKind::Nmethod {
                        self.compiled_frames(
                            &blob,
                            frame_pc,
                            unextended_sp,
                            fp,
                            from_registers.is_some(),
                        )
                    } else {
                        None
                    };
                    if let Some(c) = compiled {
                        frames.extend(c);
                    } else if blob.kind == BlobKind::NativeNmethod
                        && let Some(mut f) = self.frame(blob.method, None, FrameKind::Native)
                    {
                        // A native wrapper has no scope: no locals, and monitors only for a
                        // synchronized method (`compiledVFrame::monitors`; not read here).
                        f.receiver = Receiver::NoLocals;
                        frames.push(f);
                    } else if blob.kind != BlobKind::Other {
                        match self.undecoded_frame(&blob) {
                            Some(f) => frames.push(f),
                            None => {
                                return (
                                    frames,
                                    Some(format!(
                                        "nmethod {:#x}: Method* not readable",
                                        blob.address
                                    )),
                                );
                            }
                        }
                    }
                    if blob.frame_size == 0 {
                        return (
                            frames,
                            Some(format!(
                                "code blob at {:#x} has no frame size",
                                blob.address
                            )),
                        );
                    }
                    let sender_sp = unextended_sp.wrapping_add(blob.frame_size * 8);
                    let (Some(ret), Some(link)) =
                        (rd(self.mem, sender_sp - 8), rd(self.mem, sender_sp - 16))
                    else {
                        return (frames, Some("compiled frame links not readable".into()));
                    };
                    sp = sender_sp;
                    unextended_sp = sender_sp;
                    fp = link;
                    pc = ret;
                }
            }
            for f in &mut frames[first..] {
                f.sp = frame_sp;
            }
        }
        (frames, Some(format!("stopped after {MAX_FRAMES} frames")))
    }

    /// The frame of an nmethod whose scopes were not decoded: its method, marked so when it is
    /// compiled Java code (a native wrapper has no scopes to decode).
    fn undecoded_frame(&mut self, blob: &Blob) -> Option<Frame> {
        let method = blob.method;
        let kind = if blob.kind == BlobKind::NativeNmethod {
            FrameKind::Native
        } else {
            FrameKind::Compiled
        };
        let mut f = self.frame(method, None, kind)?;
        if kind == FrameKind::Compiled {
            f.mark = Some("compiled frame: inlined frames and line not decoded".into());
        }
        Some(f)
    }

    /// Walks the frames frozen in a stack chunk (`jdk.internal.vm.StackChunk`, the heap copy
    /// of an unmounted virtual thread's stack) from its top frame at `sp` down to `bottom`
    /// (addresses), as `StackChunkFrameStream` does (`oops/stackChunkOop.hpp`,
    /// `runtime/stackChunkFrameStream.inline.hpp`, `cpu/*/stackChunkFrameStream_*.inline.hpp`):
    /// a frame's pc is the word below its sp; a compiled frame's caller starts `frame_size`
    /// words above it; an interpreted frame's fp is the word two below its sp plus that word's
    /// value in words (freezing relativizes it, `FreezeBase::relativize_interpreted_frame_metadata`),
    /// its locals, sender sp and last sp are fp-relative, and its caller starts two words above
    /// its fp. The walk ends when an interpreted frame's locals reach `bottom`, or a compiled
    /// caller would start within two words of it.
    ///
    /// Monitors are not read: a chunk's oops may have been compressed in place by the GC.
    pub fn walk_chunk(&mut self, sp: u64, bottom: u64) -> (Vec<Frame>, Option<String>) {
        let mut frames = Vec::new();
        let mut sp = sp;
        let mut unextended_sp = sp;
        let word = |mem: &dyn ReadMemory, a: u64| rd(mem, a);
        while sp < bottom {
            if frames.len() >= MAX_FRAMES {
                return (frames, Some(format!("stopped after {MAX_FRAMES} frames")));
            }
            let Some(pc) = word(self.mem, sp - 8) else {
                return (
                    frames,
                    Some(format!("chunk: pc at {:#x} not readable", sp - 8)),
                );
            };
            let Some(blob) = self.blob(pc) else {
                return (
                    frames,
                    Some(format!(
                        "chunk: pc {pc:#x}: no code blob found in the code cache"
                    )),
                );
            };
            if blob.kind == BlobKind::Interpreter {
                let link_at = sp - 16;
                let Some(rel) = word(self.mem, link_at) else {
                    return (
                        frames,
                        Some("chunk: interpreted frame's fp not readable".into()),
                    );
                };
                let fp = link_at.wrapping_add_signed((rel as i64).wrapping_mul(8));
                if fp < sp || fp >= bottom || fp - sp > MAX_INTERPRETER_FRAME {
                    return (
                        frames,
                        Some(format!(
                            "chunk: interpreter frame fp {fp:#x} not plausible for sp {sp:#x}"
                        )),
                    );
                }
                let rel_at = |mem: &dyn ReadMemory, slot: u64| {
                    rd(mem, fp.wrapping_sub(slot))
                        .map(|v| fp.wrapping_add_signed((v as i64).wrapping_mul(8)))
                };
                let (Some(method), Some(bcp), Some(locals), Some(sender_sp)) = (
                    rd(self.mem, fp - 24),
                    rd(self.mem, fp - self.slots.bcp),
                    rel_at(self.mem, self.slots.locals),
                    rel_at(self.mem, 8),
                ) else {
                    return (
                        frames,
                        Some("chunk: interpreter frame slots not readable".into()),
                    );
                };
                let bci = self.method(method).and_then(|m| {
                    let start = m.const_method + self.cm_size;
                    if m.native {
                        Some(0)
                    } else if bcp >= start && bcp < start + m.code_size.max(1) {
                        Some((bcp - start) as i32)
                    } else {
                        None
                    }
                });
                match self.frame(method, bci, FrameKind::Interpreted) {
                    Some(mut f) => {
                        if bci.is_none() && f.kind != FrameKind::Native {
                            f.mark = Some(format!("bcp {bcp:#x} outside the method's bytecodes"));
                        }
                        frames.push(f);
                    }
                    None => {
                        return (
                            frames,
                            Some(format!(
                                "chunk: interpreter frame: Method* {method:#x} not readable"
                            )),
                        );
                    }
                }
                if locals.saturating_add(8) >= bottom {
                    return (frames, None);
                }
                unextended_sp = sender_sp;
                sp = fp + 16;
            } else {
                if blob.kind == BlobKind::Nmethod {
                    match self.compiled_frames(&blob, pc, unextended_sp, 0, false) {
                        Some(mut c) => {
                            for f in &mut c {
                                f.monitors.clear();
                            }
                            frames.extend(c);
                        }
                        None => match self.undecoded_frame(&blob) {
                            Some(f) => frames.push(f),
                            None => {
                                return (
                                    frames,
                                    Some(format!(
                                        "chunk: nmethod {:#x}: Method* not readable",
                                        blob.address
                                    )),
                                );
                            }
                        },
                    }
                } else if blob.kind == BlobKind::NativeNmethod
                    && let Some(mut f) = self.undecoded_frame(&blob)
                {
                    f.receiver = Receiver::NoLocals;
                    frames.push(f);
                }
                if blob.frame_size == 0 {
                    return (
                        frames,
                        Some(format!(
                            "chunk: code blob at {:#x} has no frame size",
                            blob.address
                        )),
                    );
                }
                let next = unextended_sp.wrapping_add(blob.frame_size * 8);
                if next <= sp {
                    return (frames, Some("chunk: sp not increasing".into()));
                }
                if next >= bottom.saturating_sub(16) {
                    return (frames, None);
                }
                sp = next;
                unextended_sp = next;
            }
        }
        (frames, None)
    }
}
