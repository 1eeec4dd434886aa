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
    /// The VM model read from the target's vmStructs tables (`inspect threads -v`, `histo -v`,
    /// `info -v`, ...): the VM's release and JDK, the size of each table, the object layout.
    VmModel {
        /// `Abstract_VM_Version::_s_vm_release` (`21.0.8+9-LTS`), when readable.
        release: Option<String>,
        /// The JDK feature release (`Abstract_VM_Version::_vm_major_version`, HotSpot Express
        /// numbers mapped to 7 and 8).
        major: u32,
        /// How long reading the model took.
        took: Duration,
        /// Rows of `gHotSpotVMStructs` (fields).
        fields: usize,
        /// Rows of `gHotSpotVMTypes`.
        types: usize,
        /// Rows of `gHotSpotVMIntConstants`.
        int_constants: usize,
        /// Rows of `gHotSpotVMLongConstants`.
        long_constants: usize,
        /// The layout flags and compressed-pointer parameters (`UseCompressedOops`,
        /// `ObjectAlignmentInBytes`, the narrow oop and klass base and shift, the collector), as
        /// printed for `-v`.
        layout: String,
    },
    /// A thread dump's walk (`inspect threads -v`): what it found, how long it took, how many
    /// reads of the target's memory it made.
    ThreadWalk {
        /// Platform threads walked.
        threads: usize,
        /// Their frames, in all.
        frames: usize,
        /// The unmounted virtual threads read (`--virtual-threads`), when they were.
        virtual_threads: Option<VirtualThreadsWalk>,
        /// How long the walk took.
        took: Duration,
        /// Reads of the target's memory (each a system call or a page of a file).
        reads: u64,
    },
    /// A live thread dump held only the threads that ran between two reads of their CPU times
    /// (`inspect threads --hold running`).
    HeldRunning {
        /// Threads held for the second walk.
        held: usize,
        /// Threads in the dump.
        threads: usize,
    },
    /// Holding only the running threads was given up for this dump, and every thread held:
    /// why.
    HeldAll(&'static str),
    /// A fact of a heap walk (`inspect histo -v`, `inspect heapdump -v`): the spaces, objects,
    /// reads and time.
    Heap(String),
}

/// The unmounted virtual threads of a [`Detail::ThreadWalk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VirtualThreadsWalk {
    /// Virtual threads read.
    pub threads: usize,
    /// Their frames, in all.
    pub frames: usize,
    /// Distinct frames among them (a frame many threads share is kept once).
    pub distinct_frames: usize,
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::Path(p) => write!(f, "path: {p}"),
            Detail::Heap(s) => write!(f, "{s}"),
            Detail::VmModel {
                release,
                major,
                took,
                fields,
                types,
                int_constants,
                long_constants,
                layout,
            } => write!(
                f,
                "VM model: {} (JDK {major}) read in {:.1} ms: vmStructs {fields} fields, {types} types, {int_constants} int and {long_constants} long constants; {layout}",
                release.as_deref().unwrap_or("?"),
                took.as_secs_f64() * 1e3,
            ),
            Detail::ThreadWalk {
                threads,
                frames,
                virtual_threads,
                took,
                reads,
            } => {
                write!(f, "walk: {threads} threads, {frames} frames")?;
                if let Some(v) = virtual_threads {
                    write!(
                        f,
                        " and {} unmounted virtual threads ({} frames, {} distinct)",
                        v.threads, v.frames, v.distinct_frames
                    )?;
                }
                write!(
                    f,
                    " in {:.2} ms, {reads} reads of the target's memory",
                    took.as_secs_f64() * 1e3
                )
            }
            Detail::HeldRunning { held, threads } => write!(
                f,
                "held only the threads that ran: {held} of {threads} threads"
            ),
            Detail::HeldAll(why) => write!(f, "held every thread: {why}"),
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
    /// The heap summary's Metaspace lines were left out: JDK 11 to 24 keep those figures
    /// outside vmStructs (read through libjvm's `.symtab`), and JDK 8 to 10's are not read.
    MetaspaceNotRead {
        /// The JDK feature release.
        jdk: u32,
    },
    /// Lines of `jcmd GC.heap_info` the heap summary leaves out, because what they print is
    /// not exported by vmStructs (Shenandoah's `Status:`, its GC state bits, and `Collection
    /// set:`, the addresses of its collection-set map; JDK 25 ZGC's `Cache`, its mapped cache).
    SummaryLinesLeftOut {
        /// jcmd's headings of the lines left out.
        lines: Vec<&'static str>,
    },
    /// The heap was read inside a stop-the-world collection (`CollectedHeap::_is_gc_active`,
    /// `_is_stw_gc_active` from JDK 21): objects may have been half moved, so counts may be off
    /// and some objects unreadable.
    InsideCollection {
        /// How long a live read waited for the collection to end (`None`: a core, or a read
        /// without a stop).
        waited: Option<Duration>,
    },
    /// `--locks`: the heap walk for the ownable synchronizers failed or stopped early in some
    /// spaces, so the `Locked ownable synchronizers` sections may miss some.
    SynchronizersIncomplete {
        /// Why (the error with its causes, or the spaces not walked to their tops).
        why: String,
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
            Warning::SynchronizersIncomplete { why } => write!(
                f,
                "the heap walk for the ownable synchronizers is incomplete, a thread's \"Locked ownable synchronizers\" may miss some: {why}"
            ),
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
            Warning::SummaryLinesLeftOut { lines } => write!(
                f,
                "jcmd's {} line{} left out: not exported by the VM's vmStructs",
                lines
                    .iter()
                    .map(|l| format!("\"{l}\""))
                    .collect::<Vec<_>>()
                    .join(" and "),
                if lines.len() == 1 { " is" } else { "s are" }
            ),
            Warning::MetaspaceNotRead { jdk } => write!(
                f,
                "the Metaspace lines are left out: {}",
                if (11..25).contains(jdk) {
                    "JDK 11 to 24 keep them outside vmStructs, read through libjvm's .symtab, which this libjvm lacks or which does not match it"
                } else {
                    "JDK 8 to 10's Metaspace is not read"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_model_and_thread_walk_print_their_v_lines() {
        let model = Detail::VmModel {
            release: Some("21.0.8+9-LTS".into()),
            major: 21,
            took: Duration::from_micros(12_345),
            fields: 2000,
            types: 900,
            int_constants: 600,
            long_constants: 100,
            layout: "Layout { compressed_oops: true }".into(),
        };
        assert_eq!(
            model.to_string(),
            "VM model: 21.0.8+9-LTS (JDK 21) read in 12.3 ms: vmStructs 2000 fields, 900 types, 600 int and 100 long constants; Layout { compressed_oops: true }"
        );
        let walk = |virtual_threads| Detail::ThreadWalk {
            threads: 12,
            frames: 150,
            virtual_threads,
            took: Duration::from_micros(4_567),
            reads: 321,
        };
        assert_eq!(
            walk(None).to_string(),
            "walk: 12 threads, 150 frames in 4.57 ms, 321 reads of the target's memory"
        );
        assert_eq!(
            walk(Some(VirtualThreadsWalk {
                threads: 3,
                frames: 30,
                distinct_frames: 10
            }))
            .to_string(),
            "walk: 12 threads, 150 frames and 3 unmounted virtual threads (30 frames, 10 distinct) in 4.57 ms, 321 reads of the target's memory"
        );
        assert_eq!(
            Detail::HeldRunning {
                held: 2,
                threads: 12
            }
            .to_string(),
            "held only the threads that ran: 2 of 12 threads"
        );
    }
}
