//! What a reading reports besides its counters: [`Detail`]s (for `-v`: the path taken, the
//! library, the symbol source, addresses, the stop) and [`Warning`]s (shown without `-v`). Each
//! is typed for embedders and prints as the one line `inspect` shows.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::locate::{LoadedModule, Note};
use crate::pid::Pid;
use crate::process::StopReport;

/// How the region's bytes were reached.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadPath {
    /// A live process's memory (`-F`).
    Live {
        /// The pid.
        pid: Pid,
        /// Its command name (`comm`, or the executable's file name on Windows).
        name: String,
    },
    /// A live JVM's shared PerfData: where it was found (the hsperfdata file with its owner and
    /// NSpid, or the Windows file mapping).
    Hsperfdata(String),
    /// A saved hsperfdata file.
    SavedFile(PathBuf),
    /// A core file, and the process it is of (pid and command, from `NT_PRPSINFO`) when known.
    Core {
        /// The core file.
        path: PathBuf,
        /// pid and command of the dead process.
        process: Option<(Pid, String)>,
    },
    /// A Windows minidump, and the process it is of when the dump says (pid from its
    /// `MiscInfoStream`, executable from its module list).
    Minidump {
        /// The dump file.
        path: PathBuf,
        /// The process's id, when the dump has it.
        pid: Option<u32>,
        /// The file name of its executable (`java.exe`), when the module list has one.
        executable: Option<String>,
    },
}

impl fmt::Display for ReadPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadPath::Live { pid, name } => {
                write!(f, "forced read of process {pid} ({name}) memory")
            }
            ReadPath::Hsperfdata(desc) => f.write_str(desc),
            ReadPath::SavedFile(path) => write!(f, "file {}", path.display()),
            ReadPath::Core { path, process } => {
                write!(f, "core file {} of ", path.display())?;
                match process {
                    Some((pid, command)) => write!(f, "process {pid} ({command})"),
                    None => f.write_str("an unknown process"),
                }
            }
            ReadPath::Minidump {
                path,
                pid,
                executable,
            } => {
                write!(f, "minidump {} of ", path.display())?;
                match (pid, executable) {
                    (Some(pid), Some(exe)) => write!(f, "process {pid} ({exe})"),
                    (Some(pid), None) => write!(f, "process {pid}"),
                    (None, Some(exe)) => write!(f, "a process of {exe}"),
                    (None, None) => f.write_str("an unknown process"),
                }
            }
        }
    }
}

/// One fact about how a reading was taken (`inspect -v` prints each as a line).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detail {
    /// How the bytes were reached.
    Path(ReadPath),
    /// The JVM's library in the target.
    Module(LoadedModule),
    /// Where `PerfMemory`'s addresses came from (a symbol table, the cache, `gHotSpotVMStructs`).
    Symbols(String),
    /// The run-time addresses of `PerfMemory::_start` and `PerfMemory::_capacity`.
    Variables {
        /// `&PerfMemory::_start`.
        start: u64,
        /// `&PerfMemory::_capacity`.
        capacity: u64,
    },
    /// Something the locator noticed that did not stop it.
    Note(Note),
    /// How long the target was held still, and how.
    Stopped(StopReport),
    /// What a core says of the dead process's machine, which decides how it is read (never
    /// this host's): its ELF `e_machine` and its page size (`AT_PAGESZ`).
    CoreMachine {
        /// The architecture (`x86_64`, `aarch64`).
        machine: String,
        /// The page size in bytes.
        page_size: u64,
    },
    /// Bytes a core lacked (left out by `coredump_filter`) were read from this file, whose
    /// build-id matches the core's copy of the object.
    CoreBytesFromFile {
        /// The file read.
        file: PathBuf,
        /// How many bytes it gave.
        bytes: u64,
    },
    /// What a minidump holds (`MINIDUMP_HEADER` and its stream directory, Microsoft's layout).
    MinidumpContents {
        /// `MINIDUMP_HEADER.Flags`: the `MINIDUMP_TYPE` it was written with.
        flags: u64,
        /// Its streams, by Microsoft's names (`ModuleListStream`, `Memory64ListStream`, ...).
        streams: Vec<String>,
        /// The memory list read (`Memory64ListStream` or `MemoryListStream`), its number of
        /// ranges and their total size in bytes.
        memory: Option<(String, usize, u64)>,
    },
    /// The region: `PerfMemory::_capacity` bytes at `PerfMemory::_start`.
    Region {
        /// Its address in the target.
        start: u64,
        /// Its size in bytes.
        capacity: u64,
    },
    /// A forced read was refused (ptrace permission) and the hsperfdata file was read instead;
    /// the refusal's cause and fix.
    LiveRefused(String),
    /// A fact of a thread dump (`inspect threads -v`): the VM model read, the walk's reads and
    /// time.
    Threads(String),
    /// A fact of a heap walk (`inspect histo -v`): the VM model read, the spaces, objects,
    /// reads and time.
    Heap(String),
    /// A fact of `inspect info -v`: the VM model read.
    Info(String),
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::Path(p) => write!(f, "path: {p}"),
            Detail::Threads(s) | Detail::Heap(s) | Detail::Info(s) => write!(f, "{s}"),
            Detail::Module(m) => write!(f, "{m}"),
            Detail::Symbols(s) => write!(f, "symbols: {s}"),
            Detail::Variables { start, capacity } => write!(
                f,
                "&PerfMemory::_start = {start:#x}, &PerfMemory::_capacity = {capacity:#x}"
            ),
            Detail::Note(n) => write!(f, "note: {n}"),
            Detail::Stopped(r) => write!(f, "{r}"),
            Detail::CoreMachine { machine, page_size } => {
                write!(f, "core of an {machine} process, {page_size}-byte pages")
            }
            Detail::CoreBytesFromFile { file, bytes } => write!(
                f,
                "not in the core: {bytes} bytes read from {} (its build-id matches the core's)",
                file.display()
            ),
            Detail::MinidumpContents {
                flags,
                streams,
                memory,
            } => {
                write!(
                    f,
                    "minidump type {} ({flags:#x}); streams: {}",
                    crate::read::dump_type_name(*flags),
                    streams.join(", ")
                )?;
                match memory {
                    Some((list, ranges, bytes)) => write!(
                        f,
                        "; memory: {list}, {ranges} ranges, {bytes} bytes ({} MiB)",
                        bytes >> 20
                    ),
                    None => f.write_str("; memory: none"),
                }
            }
            Detail::Region { start, capacity } => {
                write!(f, "region: {capacity} bytes at {start:#x}")
            }
            Detail::LiveRefused(hint) => write!(f, "forced read refused: {hint}"),
        }
    }
}

/// Something the user should know about a reading even without `-v`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// Threads that did not stop within `--stop-timeout` (uninterruptible sleep): the read went
    /// ahead, values may be mid-update.
    ThreadsNotStopped {
        /// Their thread ids.
        tids: Vec<Pid>,
        /// The timeout.
        timeout: Duration,
    },
    /// The core file is shorter than its program headers say.
    CoreTruncated {
        /// Its size in bytes.
        actual: u64,
        /// The size its headers need.
        needed: u64,
    },
    /// The core's region is not marked accessible: the JVM was still starting.
    CoreNotAccessible,
    /// The library opened could not be compared with the one in the core.
    LibraryNotCompared {
        /// The library file.
        path: PathBuf,
        /// Why (the read error, with its causes).
        why: String,
    },
    /// Something the locator noticed.
    Note(Note),
    /// The heap summary's Metaspace lines were left out: JDK 16 to 24 keep those figures
    /// outside vmStructs (read through libjvm's `.symtab`), and JDK 8 to 15 are not read.
    MetaspaceNotRead {
        /// The JDK feature release.
        jdk: u32,
    },
    /// The heap was read inside a stop-the-world collection (`CollectedHeap::_is_gc_active`,
    /// `_is_stw_gc_active` from JDK 21): objects may have been half moved, so counts may be off
    /// and some objects unreadable.
    InsideCollection {
        /// How long a live read waited for the collection to end (`None`: a core, or a read
        /// without a stop).
        waited: Option<Duration>,
    },
    /// The system properties could not be read from the heap.
    SystemPropertiesNotRead {
        /// Why (the error, with its causes).
        why: String,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::SystemPropertiesNotRead { why } => {
                write!(f, "the system properties could not be read: {why}")
            }
            Warning::InsideCollection { waited } => write!(
                f,
                "the JVM was inside a stop-the-world garbage collection {}: objects may be half moved, so counts may be off and some objects unreadable",
                match waited {
                    Some(w) => format!(
                        "at each stop for {} ms (it thrashes in collections?)",
                        w.as_millis()
                    ),
                    None => "when read".to_string(),
                }
            ),
            Warning::MetaspaceNotRead { jdk } => write!(
                f,
                "the Metaspace lines are left out: {}",
                if (16..25).contains(jdk) {
                    "JDK 16 to 24 keep them outside vmStructs, read through libjvm's .symtab, which this libjvm lacks or which does not match it"
                } else {
                    "JDK 8 to 15's Metaspace is not read yet"
                }
            ),
            Warning::ThreadsNotStopped { tids, timeout } => {
                let shown: Vec<i32> = tids.iter().copied().take(10).collect();
                let more = tids.len().saturating_sub(shown.len());
                write!(
                    f,
                    "{} thread{} {shown:?}{} did not stop within {} ms (--stop-timeout; uninterruptible, or too many to stop in time: raise it, or read with --no-stop): read anyway, values may be mid-update",
                    tids.len(),
                    if tids.len() == 1 { "" } else { "s" },
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    },
                    timeout.as_millis()
                )
            }
            Warning::CoreTruncated { actual, needed } => write!(
                f,
                "the core is truncated ({actual} of {needed} bytes): some memory is missing from it"
            ),
            Warning::CoreNotAccessible => f.write_str(
                "the region is not marked accessible (the JVM was still starting when the core was made): counters may be incomplete",
            ),
            Warning::LibraryNotCompared { path, why } => write!(
                f,
                "could not compare {} with the library in the core ({why}): if counters look wrong, check it is the JVM's own libjvm",
                path.display()
            ),
            Warning::Note(n) => write!(f, "{n}"),
        }
    }
}
