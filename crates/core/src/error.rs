//! The library's error type. Every variant's message says what happened and, where there is one,
//! what the user can do about it. A message never repeats its cause: a variant that wraps another
//! error returns it from [`std::error::Error::source`], so print the chain (anyhow's `{:#}`, or
//! [`with_causes`]) to see both.

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
    /// The vmStructs table could not be walked.
    #[error("gHotSpotVMStructs: {0}")]
    VmStructs(String),
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
