//! The library's error type. Every variant's message says what happened and, where there is one,
//! what the user can do about it. A message never repeats its cause: a variant that wraps another
//! error returns it from [`std::error::Error::source`], so print the chain (anyhow's `{:#}`, or
//! [`with_causes`]) to see both.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::memory::MemoryError;
use crate::perfdata::ParseError;
use crate::pid::Pid;

/// Everything that can go wrong between naming a target and holding its parsed PerfData.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be opened, read or mapped.
    #[error("{}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An ELF file is malformed or of a kind we cannot read.
    #[error("{}: {reason}", path.display())]
    Elf {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The PerfData bytes are malformed.
    #[error(transparent)]
    PerfData(#[from] ParseError),
    /// Reading the target's memory failed.
    #[error("{what}")]
    Memory {
        /// What was being read.
        what: MemoryItem,
        /// The failure.
        source: MemoryError,
    },
    /// No process has this pid.
    #[error("no process with pid {0}")]
    NoSuchProcess(Pid),
    /// The number is a thread of a process, not a process (`top -H`, `jstack` and `ps -L` show
    /// thread ids).
    #[error(
        "{tid} is a thread of process {pid} ({comm}), not a process: give the process's pid (`inspect {pid}`, or `inspect -F {pid}`)"
    )]
    ThreadOfProcess {
        /// The number given: a thread id.
        tid: Pid,
        /// The process the thread belongs to (its thread group id).
        pid: Pid,
        /// That process's command name.
        comm: String,
    },
    /// The process exited while it was being read.
    #[error("process {0} exited while it was being read")]
    ProcessExited(Pid),
    /// The pid now names another process than when the read began.
    #[error("pid {0} was reused by another process during the read; run again")]
    PidReused(Pid),
    /// The process has no libjvm mapped (no jvm.dll loaded, on Windows).
    #[cfg_attr(
        windows,
        error("process {pid} ({comm}) is not a HotSpot JVM: no jvm.dll among its modules")
    )]
    #[cfg_attr(
        not(windows),
        error("process {pid} ({comm}) is not a HotSpot JVM: no libjvm.so in /proc/{pid}/maps")
    )]
    NotAJvm {
        /// The pid.
        pid: Pid,
        /// Its command name.
        comm: String,
    },
    /// `PerfMemory::_start` is NULL.
    #[error(
        "perf data is disabled in the target (-XX:-UsePerfData): PerfMemory::_start is NULL in process {0}"
    )]
    PerfDataDisabled(Pid),
    /// The region's `accessible` flag stayed 0 for the whole wait.
    #[error(
        "the PerfData region of process {pid} is not accessible yet (the JVM is still starting) after waiting {waited_ms} ms; try again or pass a longer --wait"
    )]
    NotAccessible {
        /// The pid.
        pid: Pid,
        /// How long we waited.
        waited_ms: u64,
    },
    /// The OS refused an operation on the target for lack of permission.
    #[error("{what}: permission denied. {hint}")]
    PermissionDenied {
        /// What was refused.
        what: String,
        /// The cause and the fix.
        hint: String,
    },
    /// A ptrace operation failed for another reason (Linux).
    #[error("ptrace {op} on thread {tid}")]
    Ptrace {
        /// The request.
        op: &'static str,
        /// The thread.
        tid: Pid,
        /// The errno.
        source: std::io::Error,
    },
    /// This build cannot do that on this OS (e.g. read a live JVM on macOS, or with the
    /// library's `live` feature off); files and cores still work.
    #[error("{what} is not supported on {os}")]
    Unsupported {
        /// What was asked, e.g. "reading a live JVM".
        what: &'static str,
        /// `std::env::consts::OS`.
        os: &'static str,
    },
    /// Another process traces the target (a debugger, or another `inspect -F` whose hold outlasted
    /// the wait), so it cannot be stopped for the read.
    #[error("{}", already_traced(*pid, *tracer, command, *waited_ms))]
    AlreadyTraced {
        /// The pid.
        pid: Pid,
        /// `TracerPid` from `/proc/<pid>/status`; 0 when the tracer had let go by the time it
        /// was looked up (another reader's attach won the race and its hold was brief).
        tracer: Pid,
        /// The tracer's command line (`/proc/<tracer>/cmdline`, else its `comm`), or `?`.
        command: String,
        /// How long the tracer was waited for.
        waited_ms: u64,
    },
    /// No symbol source gave `PerfMemory::_start` / `_capacity`.
    #[error("cannot locate PerfMemory in {}: {reason}", path.display())]
    Locate {
        /// The libjvm that was searched.
        path: PathBuf,
        /// Why: no copy of the file could be used, or no symbol source had the variables.
        reason: LocateFailure,
    },
    /// The libjvm file opened is not the one mapped in the target.
    #[error("{}: build-id {file_id} differs from the build-id {memory_id} of the libjvm mapped in the target (the file was replaced); symbols from it would give wrong addresses", path.display())]
    BuildIdMismatch {
        /// The file that was opened.
        path: PathBuf,
        /// Its build-id (hex).
        file_id: String,
        /// The build-id in the target's memory (hex).
        memory_id: String,
    },
    /// A PE image (`jvm.dll`) in the target or on disk is malformed or of a kind we cannot read.
    #[error("{module}: {reason}")]
    Pe {
        /// The module (`jvm.dll`, or a file's path).
        module: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An operating system call on the target failed (Windows: a handle, the debug attach, a
    /// snapshot), or the target is of a kind this build cannot read.
    #[error("{what}")]
    Os {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Writing a heap dump failed (a full disk, a closed pipe): the output is incomplete.
    #[error("writing the heap dump")]
    DumpOutput(#[source] std::io::Error),
    /// The VM's own structures could not be read as HotSpot lays them out: an entry of its
    /// vmStructs tables is missing, or a value read through them is out of bounds or implausible.
    #[error(transparent)]
    Vm(#[from] VmError),
    /// A loaded ELF image (libjvm) in the target's memory could not give its exported symbols:
    /// its headers, `PT_DYNAMIC` or hash table (`elf/dynamic.rs`).
    #[error("{} in the target's memory: {problem}", path.display())]
    ImageSymbols {
        /// The image's file, as the target's mappings name it.
        path: PathBuf,
        /// What is wrong with it.
        problem: DynamicProblem,
    },
    /// `_capacity` or `_start` hold values no JVM would have.
    #[error("implausible PerfData region in the target: {0}")]
    ImplausibleRegion(String),
    /// An hsperfdata file failed a safety rule, or is missing.
    #[error("{}: {reason}", path.display())]
    HsperfdataFile {
        /// The file or directory.
        path: PathBuf,
        /// The rule broken and what to do.
        reason: String,
    },
    /// The JVM's hsperfdata file exists but has stayed shorter than a PerfData prologue for the
    /// whole wait: HotSpot creates the file, then sizes it (`ftruncate`), then maps it
    /// (`create_sharedmem_resources` in `perfMemory_posix.cpp`), so it is a JVM still starting,
    /// or held at that point (a debugger, a stopped process).
    #[error(
        "{}: is {size} bytes after waiting {waited_ms} ms: HotSpot creates the file, then sizes it, so the JVM is still starting (or held there, e.g. by a debugger); try again, pass a longer --wait, or read its memory with `inspect -F {pid}`",
        path.display()
    )]
    HsperfdataFileNotSized {
        /// The pid.
        pid: Pid,
        /// The file.
        path: PathBuf,
        /// Its size in bytes (less than [`crate::perfdata::PROLOGUE_SIZE`]).
        size: u64,
        /// How long it was waited for.
        waited_ms: u64,
    },
    /// The shared-file path found no hsperfdata file for the pid.
    #[error(
        "no hsperfdata file for process {pid} (looked for {}); {why}",
        looked_for(tried)
    )]
    NoHsperfdataFile {
        /// The pid.
        pid: Pid,
        /// Every place looked in (a file, a directory, the user database that names the
        /// directory), and why it was not usable.
        tried: Vec<Looked>,
        /// The likely cause and a fix this user can apply.
        why: String,
    },
    /// A core file cannot be used.
    #[error("{}: {reason}", path.display())]
    Core {
        /// The core file.
        path: PathBuf,
        /// What is wrong and what would help.
        reason: String,
    },
}

/// One place [`Error::NoHsperfdataFile`] looked in, and why it was not usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Looked {
    /// The file (or the user database that names its directory).
    pub path: PathBuf,
    /// Why it was not usable ("no such file", "no such directory", "directory is owned by uid
    /// 1000, not by the JVM's uid 1001: skipped", ...).
    pub why: String,
}

/// "a: why, b: why", or what it means that nothing could be looked for.
fn looked_for(tried: &[Looked]) -> String {
    if tried.is_empty() {
        return "nothing: no place to look was known".to_string();
    }
    tried
        .iter()
        .map(|l| format!("{}: {}", l.path.display(), l.why))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What a failed read of target memory was after ([`Error::Memory`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryItem {
    /// A variable of the target, by name (`PerfMemory::_start`, a vmStructs row, ...).
    Variable(String),
    /// The PerfData region itself: `capacity` bytes at `start`.
    Region {
        /// `PerfMemory::_start`.
        start: u64,
        /// `PerfMemory::_capacity`, in bytes.
        capacity: u64,
    },
}

impl std::fmt::Display for MemoryItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemoryItem::Variable(name) => f.write_str(name),
            MemoryItem::Region { start, capacity } => {
                write!(f, "the PerfData region ({capacity} bytes at {start:#x})")
            }
        }
    }
}

impl From<&str> for MemoryItem {
    fn from(name: &str) -> Self {
        MemoryItem::Variable(name.to_owned())
    }
}

impl From<String> for MemoryItem {
    fn from(name: String) -> Self {
        MemoryItem::Variable(name)
    }
}

/// Why `PerfMemory`'s variables could not be located in a libjvm ([`Error::Locate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocateFailure {
    /// No candidate file for the library could be opened and matched to the target's mappings:
    /// each candidate's failure, in the order tried.
    NoUsableCopy(Vec<String>),
    /// The library was opened, but no symbol source (debug file, `.symtab`, `.gnu_debuglink`,
    /// `gHotSpotVMStructs`) gave the variables: each source's failure, in the order tried.
    NoSymbols(Vec<String>),
}

impl std::fmt::Display for LocateFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LocateFailure::NoUsableCopy(errors) => {
                write!(f, "no usable copy of the library: {}", errors.join("; "))
            }
            LocateFailure::NoSymbols(tried) => f.write_str(&tried.join("; ")),
        }
    }
}

/// An error and each of its causes, joined by `": "` (what anyhow's `{:#}` prints), for
/// messages that list several failures in one line.
pub fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_owned(),
            source,
        }
    }

    /// An [`Error::Core`] about the core file at `path`.
    pub fn core(path: &Path, reason: impl Into<String>) -> Self {
        Error::Core {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }

    /// An [`Error::Memory`] reading `what`.
    pub fn memory(what: impl Into<MemoryItem>, source: MemoryError) -> Self {
        Error::Memory {
            what: what.into(),
            source,
        }
    }
}

/// The text of [`Error::AlreadyTraced`].
fn already_traced(pid: Pid, tracer: Pid, command: &str, waited_ms: u64) -> String {
    if tracer == 0 {
        return format!(
            "process {pid} was held by another tracer at every try for {waited_ms} ms (another reader stopping it, such as `inspect`, or a debugger attaching; it had let go when looked up): it cannot be stopped while another tracer holds it. Try again, give a longer `--wait`, or read it without stopping it (`--no-stop`)"
        );
    }
    format!(
        "process {pid} is traced by process {tracer} ({command}) and stayed so for {waited_ms} ms: it cannot be stopped for the read while another tracer holds it (a debugger, or another `inspect -F` reading it). Read it without stopping it, `inspect -F --no-stop {pid}`, or detach process {tracer} first"
    )
}

/// Why the VM's own structures could not be read ([`Error::Vm`]): what HotSpot exports to its
/// Serviceability Agent (the `gHotSpotVMStructs`, `gHotSpotVMTypes`, `gHotSpotVMIntConstants`
/// and `gHotSpotVMLongConstants` tables of `runtime/vmStructs.cpp`) lacks an entry a walk needs,
/// or a value read through them is outside the walk's bounds or one no JVM would hold (a VM
/// still starting, a torn read of a running one, a corrupt core).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VmError {
    /// An entry the walk needs is absent from the VM's tables or exports (an older or newer JDK
    /// than the walk knows, or a build that leaves it out).
    #[error("{}", missing_entry(entry))]
    MissingEntry {
        /// The entry.
        entry: VmEntry,
    },
    /// None of several alternatives is present (names that changed between JDKs), in the order
    /// tried.
    #[error("none of {} in {}", names(entries), entries.first().map_or("the VM's tables", VmEntry::table))]
    NoneOf {
        /// The alternatives.
        entries: Vec<VmEntry>,
    },
    /// A table's layout variables (its `...EntryArrayStride` and field offsets, exported symbols
    /// of `vmStructs.cpp`) do not describe a table: a stride outside 16..=1024 bytes or a
    /// field that does not fit in it.
    #[error("implausible {table} entry layout: stride {stride}, fields (offset, width) {fields:?}")]
    TableLayout {
        /// The table (`gHotSpotVMStructs`, ...).
        table: String,
        /// Bytes from one row to the next.
        stride: u64,
        /// Each field's offset in a row and width, in bytes.
        fields: Vec<(u64, u64)>,
    },
    /// A count or length read from the target is above the walk's bound: the structure is
    /// corrupt (or torn).
    #[error("{what} is {count}, more than {max}: corrupt")]
    Bound {
        /// What was counted (`ThreadsList::_length`, `G1HeapRegionTable::_length`, "an array's
        /// length", ...).
        what: Cow<'static, str>,
        /// The count read.
        count: u64,
        /// The walk's bound.
        max: u64,
    },
    /// A list or table walked did not end within the walk's bound: it loops, or is corrupt.
    #[error("{what}: no end within {max} {unit} (a loop, or corrupt)")]
    Unterminated {
        /// The list (`Threads::_thread_list`, `ClassLoaderDataGraph`, a vmStructs table, ...).
        what: Cow<'static, str>,
        /// What it holds, plural (`rows`, `threads`, `classes`, ...).
        unit: &'static str,
        /// The walk's bound, in `unit`s.
        max: u64,
    },
    /// A value read from the target is one no JVM would hold.
    #[error("implausible {what}: {detail}")]
    Implausible {
        /// The value (`ObjectAlignmentInBytes`, `Klass::_layout_helper`, a space's top, ...).
        what: Cow<'static, str>,
        /// The value read and, where it helps, what it should be.
        detail: String,
    },
    /// A root of the VM is still NULL (`Universe::_collectedHeap`,
    /// `ThreadsSMRSupport::_java_thread_list`, `System.props`, a vmStructs table): the VM is
    /// still starting.
    #[error("{what} is NULL (the VM is not initialized yet: still starting?)")]
    NotInitialized {
        /// The root.
        what: Cow<'static, str>,
    },
    /// A Java reference the walk follows is null where the JDK always sets it (`Thread.holder`
    /// of a thread still being constructed).
    #[error("{what} is null")]
    NullReference {
        /// The field.
        what: &'static str,
    },
    /// A Java object is not of the class the walk expects.
    #[error("{what} is not a {expected}{}", found.as_ref().map(|f| format!(" but a {f}")).unwrap_or_default())]
    WrongClass {
        /// The object (`Thread.holder`, "a thread set", ...).
        what: Cow<'static, str>,
        /// The class expected, as the VM names it (`java/lang/Thread$FieldHolder`).
        expected: Cow<'static, str>,
        /// The class found, when it was read.
        found: Option<String>,
    },
    /// A Java class has no field of that name and signature (`InstanceKlass` field metadata,
    /// `oops/fieldInfo.hpp`), or has it with another signature.
    #[error("{}", no_field(name, signature, *is_static, found.as_deref()))]
    NoField {
        /// The field's name (`threadStatus`).
        name: String,
        /// The signature expected (`I`, `Ljava/lang/Thread$FieldHolder;`).
        signature: String,
        /// Whether a static field was asked for.
        is_static: bool,
        /// The signature the class declares the field with, when it has one of that name.
        found: Option<String>,
    },
    /// A class the walk needs is not loaded (or not found among the loaded classes).
    #[error("{class} is not loaded")]
    ClassNotLoaded {
        /// The class, as the VM names it (`java/lang/System`).
        class: Cow<'static, str>,
    },
    /// The JVM is older than the feature asked for.
    #[error("{what} came in JDK {since}; this JVM is JDK {major}")]
    Unsupported {
        /// The feature ("virtual threads").
        what: &'static str,
        /// The first JDK feature release that has it.
        since: u32,
        /// The target's JDK feature release.
        major: u32,
    },
    /// The thread object of a `JavaThread` (`JavaThread::_threadObj`) is not a
    /// `java.lang.Thread`: a torn read, or a corrupt thread.
    #[error("JavaThread {thread:#x}: its thread object is not a java.lang.Thread")]
    NotAThread {
        /// The `JavaThread*`.
        thread: u64,
    },
    /// No thread of the list had a `java.lang.Thread` that could be read.
    #[error("none of the {threads} threads' java.lang.Thread could be read")]
    NoThreadObject {
        /// How many threads were tried.
        threads: u64,
    },
    /// The published thread list (`ThreadsSMRSupport::_java_thread_list`) was replaced during
    /// every read of it (threads starting and ending fast).
    #[error("the thread list was replaced during each of {tries} reads")]
    ThreadListChanging {
        /// How many reads were tried.
        tries: u32,
    },
    /// A value only a thread's TLAB holds could not be read: no thread has one.
    #[error("{what}: no thread has a TLAB to read it from")]
    NoTlab {
        /// The value (generational ZGC's heap base).
        what: &'static str,
    },
    /// A decoder refused the bytes of a VM structure (field metadata, a `String`'s value).
    #[error(transparent)]
    Codec(#[from] CodecError),
}

/// An entry of the VM's tables or exports (what [`VmError::MissingEntry`] names).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VmEntry {
    /// A non-static field of `gHotSpotVMStructs` (its byte offset in the type).
    Member {
        /// The C++ type (`JavaThread`).
        ty: String,
        /// The field (`_threadObj`).
        name: String,
    },
    /// A static field of `gHotSpotVMStructs` (its address).
    Static {
        /// The C++ type (`Universe`).
        ty: String,
        /// The field (`_collectedHeap`).
        name: String,
    },
    /// A type of `gHotSpotVMTypes`.
    Type(String),
    /// A constant of `gHotSpotVMIntConstants`.
    IntConstant(String),
    /// A constant of `gHotSpotVMLongConstants`.
    LongConstant(String),
    /// A symbol libjvm exports (`gHotSpotVMStructs`, `gHotSpotVMStructEntryArrayStride`, ...).
    Symbol(String),
}

impl VmEntry {
    /// A [`VmEntry::Member`].
    pub fn member(ty: &str, name: &str) -> Self {
        VmEntry::Member {
            ty: ty.to_owned(),
            name: name.to_owned(),
        }
    }

    /// A [`VmEntry::Static`].
    pub fn static_field(ty: &str, name: &str) -> Self {
        VmEntry::Static {
            ty: ty.to_owned(),
            name: name.to_owned(),
        }
    }

    /// The table that holds it, or "libjvm's exports" for a symbol.
    pub fn table(&self) -> &'static str {
        match self {
            VmEntry::Member { .. } | VmEntry::Static { .. } => "gHotSpotVMStructs",
            VmEntry::Type(_) => "gHotSpotVMTypes",
            VmEntry::IntConstant(_) => "gHotSpotVMIntConstants",
            VmEntry::LongConstant(_) => "gHotSpotVMLongConstants",
            VmEntry::Symbol(_) => "libjvm's exports",
        }
    }
}

/// Its name: `Type::_field`, or the type's, constant's or symbol's name.
impl fmt::Display for VmEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VmEntry::Member { ty, name } | VmEntry::Static { ty, name } => {
                write!(f, "{ty}::{name}")
            }
            VmEntry::Type(n)
            | VmEntry::IntConstant(n)
            | VmEntry::LongConstant(n)
            | VmEntry::Symbol(n) => f.write_str(n),
        }
    }
}

/// The text of [`VmError::MissingEntry`].
fn missing_entry(entry: &VmEntry) -> String {
    let kind = match entry {
        VmEntry::Symbol(n) => return format!("symbol {n} is not exported"),
        VmEntry::Member { .. } => "member",
        VmEntry::Static { .. } => "static field",
        VmEntry::Type(_) => "type",
        VmEntry::IntConstant(_) => "int constant",
        VmEntry::LongConstant(_) => "long constant",
    };
    format!("no {kind} {entry} in {}", entry.table())
}

/// "a, b, c" of the entries' names.
fn names(entries: &[VmEntry]) -> String {
    entries
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text of [`VmError::NoField`].
fn no_field(name: &str, signature: &str, is_static: bool, found: Option<&str>) -> String {
    match found {
        Some(found) => format!("field {name} has signature {found} (expected {signature})"),
        None if is_static => format!("no static field {name} {signature}"),
        None => format!("no field {name} {signature}"),
    }
}

/// A decoder's refusal of its input (the decoders of HotSpot's metadata formats: UNSIGNED5,
/// `CompressedReadStream`, field info, `String` values). `what` names the structure being
/// decoded; `at` is the byte offset into the input where decoding stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The input ends inside a value.
    #[error("{what}: the data ends at byte {at}, inside a value")]
    Truncated {
        /// The structure being decoded.
        what: &'static str,
        /// Where the data ended (its length, or the limit given).
        at: usize,
    },
    /// The input holds something the format does not allow.
    #[error("{what}: {why} at byte {at}")]
    Malformed {
        /// The structure being decoded.
        what: &'static str,
        /// Where.
        at: usize,
        /// What is wrong.
        why: &'static str,
    },
    /// A count or length is larger than the caller's (or the decoder's) limit.
    #[error("{what}: {count} is more than the limit of {max}")]
    TooMany {
        /// The structure being decoded.
        what: &'static str,
        /// The count found (or reached).
        count: u64,
        /// The limit.
        max: u64,
    },
}

/// What is wrong with a loaded ELF image's dynamic section in the target's memory
/// ([`Error::ImageSymbols`]): the gABI's `PT_DYNAMIC`, `_DYNAMIC` array and `DT_GNU_HASH` or
/// `DT_HASH` table, as glibc's `dl-lookup.c` reads them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DynamicProblem {
    /// The ELF header or program headers at the image's start are not readable (a core that
    /// left them out).
    #[error("its ELF headers are not readable")]
    HeadersUnreadable,
    /// No `PT_DYNAMIC` program header.
    #[error("it has no PT_DYNAMIC")]
    NoDynamicSegment,
    /// The `_DYNAMIC` array lacks a tag (`DT_SYMTAB`, `DT_STRTAB`, `DT_STRSZ`, a hash table).
    #[error("_DYNAMIC has no {0}")]
    MissingTag(&'static str),
    /// A hash table's header holds counts no linker writes.
    #[error("implausible {table} header {header:?}")]
    ImplausibleHash {
        /// `DT_GNU_HASH` or `DT_HASH`.
        table: &'static str,
        /// Its first words, as read.
        header: Vec<u32>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_entry_names_its_table() {
        let text = |entry| VmError::MissingEntry { entry }.to_string();
        assert_eq!(
            text(VmEntry::member("ObjectMonitor", "_object")),
            "no member ObjectMonitor::_object in gHotSpotVMStructs"
        );
        assert_eq!(
            text(VmEntry::static_field("Universe", "_collectedHeap")),
            "no static field Universe::_collectedHeap in gHotSpotVMStructs"
        );
        assert_eq!(
            text(VmEntry::Type("JVMFlag".into())),
            "no type JVMFlag in gHotSpotVMTypes"
        );
        assert_eq!(
            text(VmEntry::IntConstant("ZPageTypeLarge".into())),
            "no int constant ZPageTypeLarge in gHotSpotVMIntConstants"
        );
        assert_eq!(
            text(VmEntry::LongConstant("ZGranuleSizeShift".into())),
            "no long constant ZGranuleSizeShift in gHotSpotVMLongConstants"
        );
        assert_eq!(
            text(VmEntry::Symbol("gHotSpotVMStructs".into())),
            "symbol gHotSpotVMStructs is not exported"
        );
        let none = VmError::NoneOf {
            entries: vec![
                VmEntry::member("GrowableArrayBase", "_len"),
                VmEntry::member("GenericGrowableArray", "_len"),
            ],
        };
        assert_eq!(
            none.to_string(),
            "none of GrowableArrayBase::_len, GenericGrowableArray::_len in gHotSpotVMStructs"
        );
    }

    #[test]
    fn messages_keep_what_users_and_tests_look_for() {
        let starting = Error::from(VmError::NotInitialized {
            what: "Universe::_collectedHeap".into(),
        })
        .to_string();
        assert!(
            starting.starts_with("Universe::_collectedHeap is NULL")
                && starting.contains("not initialized yet")
                && starting.contains("still starting"),
            "{starting}"
        );
        assert_eq!(
            VmError::Unsupported {
                what: "virtual threads",
                since: 21,
                major: 17
            }
            .to_string(),
            "virtual threads came in JDK 21; this JVM is JDK 17"
        );
        assert_eq!(
            VmError::Bound {
                what: "ThreadsList::_length".into(),
                count: 200_000,
                max: 100_000
            }
            .to_string(),
            "ThreadsList::_length is 200000, more than 100000: corrupt"
        );
        assert_eq!(
            VmError::Unterminated {
                what: "gHotSpotVMStructs".into(),
                unit: "rows (no terminating row)",
                max: 10
            }
            .to_string(),
            "gHotSpotVMStructs: no end within 10 rows (no terminating row) (a loop, or corrupt)"
        );
        assert_eq!(
            VmError::Implausible {
                what: "ObjectAlignmentInBytes".into(),
                detail: "3".into()
            }
            .to_string(),
            "implausible ObjectAlignmentInBytes: 3"
        );
        assert_eq!(
            VmError::NotAThread { thread: 0x7f00 }.to_string(),
            "JavaThread 0x7f00: its thread object is not a java.lang.Thread"
        );
    }

    #[test]
    fn java_object_failures_say_which_class_and_field() {
        let wrong = |found| VmError::WrongClass {
            what: "a thread set".into(),
            expected: "java/util/concurrent/ConcurrentHashMap$KeySetView".into(),
            found,
        };
        assert_eq!(
            wrong(None).to_string(),
            "a thread set is not a java/util/concurrent/ConcurrentHashMap$KeySetView"
        );
        assert_eq!(
            wrong(Some("java/util/HashSet".into())).to_string(),
            "a thread set is not a java/util/concurrent/ConcurrentHashMap$KeySetView but a java/util/HashSet"
        );
        let field = |is_static, found: Option<&str>| {
            VmError::NoField {
                name: "props".into(),
                signature: "Ljava/util/Properties;".into(),
                is_static,
                found: found.map(str::to_owned),
            }
            .to_string()
        };
        assert_eq!(field(false, None), "no field props Ljava/util/Properties;");
        assert_eq!(
            field(true, None),
            "no static field props Ljava/util/Properties;"
        );
        assert_eq!(
            field(false, Some("I")),
            "field props has signature I (expected Ljava/util/Properties;)"
        );
    }

    #[test]
    fn wrapped_failures_print_as_their_cause() {
        let codec = CodecError::Truncated {
            what: "field info stream",
            at: 7,
        };
        assert_eq!(
            Error::from(VmError::Codec(codec.clone())).to_string(),
            codec.to_string()
        );
        let image = Error::ImageSymbols {
            path: PathBuf::from("/usr/lib/jvm/lib/server/libjvm.so"),
            problem: DynamicProblem::MissingTag("DT_SYMTAB"),
        };
        assert_eq!(
            image.to_string(),
            "/usr/lib/jvm/lib/server/libjvm.so in the target's memory: _DYNAMIC has no DT_SYMTAB"
        );
    }
}
