//! The pipelines: one function per kind of target runs `target → locate → read → parse`, and
//! [`Sampler`] repeats a read for `--interval` sampling, resolving symbols once.
//!
//! Written once for every OS: the live pipelines ([`read_live`], [`read_hsperfdata`]) use only the names
//! each stage's OS seam exports (`process::Process`, `process::stop`, `process::shared_bytes`,
//! `locate::locate_in_process`, `read::ProcessMemory`); files and cores ([`read_file`],
//! [`read_core`], [`read_minidump`]) need no OS at all.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod coredump;
mod cpu;
mod detail;
#[cfg(test)]
mod fixture;
mod heap;
mod hold;
mod hsperfdata;
mod info;
mod jvm;
mod live;
mod minidump;
mod threads;

pub use self::coredump::read_core;
pub use self::cpu::{SampleCost, ThreadSampler, os_thread_name};
pub use self::detail::{Detail, ReadPath, VirtualThreadsWalk, Warning};
pub use self::heap::{
    HeapDumpReport, HeapHistogram, HeapOptions, HeapSummary, heap_dump, heap_dump_core,
    heap_histogram, heap_histogram_core, heap_summary, heap_summary_core,
};
pub use self::hsperfdata::read_hsperfdata;
pub use self::info::{VmInfo, vm_info, vm_info_core};
use self::live::LiveReader;
pub use self::live::read_live;
pub use self::minidump::read_minidump;
pub use self::threads::{
    StatesSampler, ThreadDump, ThreadsOptions, dump_threads, dump_threads_core,
    dump_threads_minidump,
};
use crate::error::Error;
use crate::error::MemoryItem;
use crate::locate;
pub use crate::locate::cache::SymbolCacheUse;
use crate::memory::ReadMemory;
use crate::perfdata::{self, Snapshot};
use crate::process::Pid;
use crate::process::Process;

/// How long a live read's stop may take by default (`--stop-timeout`, every command that holds
/// a JVM: `-F`, `threads`, `histo`): seizing, interrupting and waiting for every thread, about
/// 28 µs a thread, with room for a 5,000-thread JVM on a loaded host.
pub const DEFAULT_STOP_TIMEOUT: Duration = Duration::from_millis(1000);

/// A parsed region and how it was obtained.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The live process read (as this host sees it); `None` for a saved file, a core or a
    /// minidump.
    pub pid: Option<Pid>,
    /// The counters.
    pub snapshot: Snapshot,
    /// The raw region bytes (for saving or re-parsing).
    pub bytes: Vec<u8>,
    /// Facts for `-v`: path taken, library, symbol source, addresses, stop time, region; each
    /// prints as one line.
    pub details: Vec<Detail>,
    /// Things the user should know even without `-v`; each prints as one line.
    pub warnings: Vec<Warning>,
    /// Set when a refused forced read fell back to the hsperfdata file: what was refused.
    pub fallback: Option<String>,
}

/// Options of a forced read of a live process.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// Stop the target's threads while reading (consistent snapshot). `false`: `--no-stop`.
    pub stop: bool,
    /// How long to wait for every thread to stop (`--stop-timeout`; Windows' debug attach gets
    /// at least 2 s).
    pub stop_timeout: Duration,
    /// How long to wait for a starting JVM to mark its region accessible (jvmstat waits too).
    pub wait_accessible: Duration,
    /// How to use the per-build symbol cache (`~/.cache/hsinspect/perfmemory-<build-id>`, or
    /// `$HSINSPECT_CACHE_DIR`), which spares later reads of the same libjvm build the symbol work.
    pub symbol_cache: SymbolCacheUse,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            stop: true,
            stop_timeout: DEFAULT_STOP_TIMEOUT,
            wait_accessible: Duration::from_secs(5),
            symbol_cache: SymbolCacheUse::ReadWrite,
        }
    }
}

/// The PerfData region as read from a target's memory: `PerfMemory::_start`,
/// `PerfMemory::_capacity` and the `capacity` bytes at `start` (`perfMemory.hpp`).
pub(crate) struct Region {
    /// `PerfMemory::_start`: the region's address (0 before `PerfMemory::initialize`, or never
    /// with `-XX:-UsePerfData`).
    pub start: u64,
    /// `PerfMemory::_capacity`, in bytes.
    pub capacity: u64,
    /// The region's bytes; `None` when `start` is NULL.
    pub bytes: Option<Vec<u8>>,
}

/// Reads `_start`, `_capacity` and then the region.
///
/// # Errors
/// [`Error::Memory`] when a variable or the region cannot be read; [`Error::ImplausibleRegion`]
/// for a capacity no JVM would have.
pub(crate) fn read_region(
    vars: &locate::PerfMemoryVars,
    mem: &dyn ReadMemory,
    known: Option<(u64, u64)>,
) -> Result<Region, Error> {
    let (start, capacity) = match known {
        // A live VM never moves its region once `_start` is set: later samples skip two reads.
        Some(known) => known,
        None => (
            mem.read_u64(vars.start)
                .map_err(|e| Error::memory("PerfMemory::_start", e))?,
            mem.read_u64(vars.capacity)
                .map_err(|e| Error::memory("PerfMemory::_capacity", e))?,
        ),
    };
    if start == 0 {
        return Ok(Region {
            start,
            capacity,
            bytes: None,
        });
    }
    if capacity < perfdata::PROLOGUE_SIZE as u64 || capacity > perfdata::MAX_REGION {
        return Err(Error::ImplausibleRegion(format!(
            "PerfMemory::_capacity is {capacity} bytes (expected {} to {}); the symbols may not match this JVM",
            perfdata::PROLOGUE_SIZE,
            perfdata::MAX_REGION
        )));
    }
    let mut bytes = vec![0u8; capacity as usize];
    mem.read_exact_at(start, &mut bytes)
        .map_err(|e| Error::memory(MemoryItem::Region { start, capacity }, e))?;
    Ok(Region {
        start,
        capacity,
        bytes: Some(bytes),
    })
}

/// How long a JVM whose PerfData went away is given to finish exiting (see [`exiting_or`]).
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The error of a sample of a JVM that earlier samples read, whose hsperfdata file is now gone,
/// empty or inaccessible (`e`): HotSpot deletes the file in `perfMemory_exit`, some time before
/// the process exits (longer on a loaded machine). Waits up to [`EXIT_GRACE`] for the process to
/// exit and then says it exited; otherwise `e` stands.
fn exiting_or(pid: Pid, e: Error) -> Error {
    let until = Instant::now() + EXIT_GRACE;
    loop {
        if crate::process::exited_or_exiting(pid) {
            return Error::ProcessExited(pid);
        }
        if Instant::now() >= until {
            return e;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How old a process may be and still be starting up: until then a missing region or file is
/// waited for (as jvmstat waits), after it the answer is final.
const STARTUP_GRACE: Duration = Duration::from_secs(2);

/// Sleeps before another try while `wait` has not passed since `began`; then says the JVM is
/// still starting.
fn still_starting(pid: Pid, began: Instant, wait: Duration) -> Result<(), Error> {
    if began.elapsed() < wait {
        std::thread::sleep(Duration::from_millis(20));
        return Ok(());
    }
    Err(Error::NotAccessible {
        pid,
        waited_ms: began.elapsed().as_millis() as u64,
    })
}

/// The parsed region once the VM has finished setting it up; `None` (after a short sleep) while
/// it has not and `wait` has not passed since `began`. A starting VM's region is zeroed, then
/// filled, then marked accessible: one not yet marked may not even parse (only waited for while
/// the process is younger than [`STARTUP_GRACE`], `age`; after that, the parse error is the answer).
fn ready(
    parsed: Result<perfdata::Snapshot, perfdata::ParseError>,
    bytes: &[u8],
    pid: Pid,
    age: &dyn Fn() -> Duration,
    began: Instant,
    wait: Duration,
) -> Result<Option<perfdata::Snapshot>, Error> {
    let snapshot = match parsed {
        Err(_) if !perfdata::marked_accessible(bytes) && age() < STARTUP_GRACE => None,
        parsed => Some(parsed?),
    };
    match snapshot {
        Some(s) if s.prologue.accessible => Ok(Some(s)),
        _ => {
            still_starting(pid, began, wait)?;
            Ok(None)
        }
    }
}

/// One forced read's outcome: the region's bytes and `parse` of them once they are final, or
/// `None` to read again. `bytes` is `None` when `_start` is NULL: before `PerfMemory::initialize`,
/// or never (`-XX:-UsePerfData`); a JVM younger than [`STARTUP_GRACE`] (`age`) may still be on
/// its way there and is waited for (within the caller's bound), an older one never will; a caller
/// that will not wait (`wait_accessible` zero: `inspect list`) is told it may still be starting.
/// A read without stopping may catch the VM mid-write: a parse error is retried while
/// `torn_reads_left` lasts.
fn settled(
    bytes: Option<Vec<u8>>,
    pid: Pid,
    age: &dyn Fn() -> Duration,
    parse: impl FnOnce(&[u8]) -> Result<perfdata::Snapshot, perfdata::ParseError>,
    began: Instant,
    opts: &LiveOptions,
    torn_reads_left: &mut u32,
) -> Result<Option<(Vec<u8>, perfdata::Snapshot)>, Error> {
    let Some(bytes) = bytes else {
        if age() < STARTUP_GRACE {
            if opts.wait_accessible.is_zero() {
                return Err(Error::NotAccessible { pid, waited_ms: 0 });
            }
            if began.elapsed() < opts.wait_accessible.max(Duration::from_millis(500)) {
                std::thread::sleep(Duration::from_millis(20));
                return Ok(None);
            }
        }
        return Err(Error::PerfDataDisabled(pid));
    };
    let parsed = parse(&bytes);
    if parsed.is_err() && *torn_reads_left > 0 {
        *torn_reads_left -= 1;
        return Ok(None);
    }
    let snapshot = ready(parsed, &bytes, pid, age, began, opts.wait_accessible)?;
    Ok(snapshot.map(|s| (bytes, s)))
}

/// Records a stop's report: the `-v` line, and a warning when threads were read running
/// because they did not stop within `timeout`.
pub(crate) fn record_stop(
    report: crate::process::StopReport,
    timeout: Duration,
    details: &mut Vec<Detail>,
    warnings: &mut Vec<Warning>,
) {
    if !report.not_stopped.is_empty() {
        warnings.push(Warning::ThreadsNotStopped {
            tids: report.not_stopped.clone(),
            timeout,
        });
    }
    details.push(Detail::Stopped(report));
}

/// Reads a saved hsperfdata file (`inspect <path>`), with the hsperfdata file rules of the
/// platform (Linux: `process/linux/hsperfdata_file.rs`; Windows: no reparse point, a regular disk
/// file with one link, a sane size; elsewhere: a regular file of a region's size). Works on every
/// OS.
///
/// # Errors
/// As [`read_hsperfdata`], without the pid lookup.
pub fn read_file(path: &Path) -> Result<Reading, Error> {
    let bytes = crate::process::read_hsperfdata_file(path)?;
    let snapshot = perfdata::parse(&bytes)?;
    Ok(Reading {
        pid: None,
        snapshot,
        bytes,
        details: vec![Detail::Path(ReadPath::SavedFile(path.to_owned()))],
        warnings: Vec::new(),
        fallback: None,
    })
}

/// Where readings come from: one of the four kinds of target, with its options.
#[derive(Debug, Clone)]
pub enum Target {
    /// A live process's memory (`-F <pid>`). When ptrace is refused (EPERM) and the hsperfdata
    /// file is readable, the [`Sampler`] reads the file instead and says so in
    /// [`Reading::warnings`].
    Live {
        /// The JVM's pid (as this host sees it).
        pid: Pid,
        /// Stop, wait and cache options.
        opts: LiveOptions,
    },
    /// A live process's hsperfdata file (`<pid>`).
    Hsperfdata {
        /// The JVM's pid (as this host sees it).
        pid: Pid,
        /// How long to wait for a starting JVM.
        wait: Duration,
    },
    /// A saved hsperfdata file (`<path>`).
    SavedFile(PathBuf),
    /// An ELF core file (`--core <core> [--exe <path>] [--sysroot <dir>]`), or a Windows
    /// minidump (`--core <dump>`; a file that starts with `MDMP`: [`read_minidump`]).
    Core {
        /// The core file or minidump.
        core: PathBuf,
        /// The java launcher or libjvm.so the JVM ran, when not at its recorded path.
        exe: Option<PathBuf>,
        /// A directory holding the dead process's files under their original paths.
        sysroot: Option<PathBuf>,
    },
}

impl Target {
    /// The live process this source reads, if any.
    pub fn pid(&self) -> Option<Pid> {
        match self {
            Target::Live { pid, .. } | Target::Hsperfdata { pid, .. } => Some(*pid),
            Target::SavedFile(_) | Target::Core { .. } => None,
        }
    }

    /// Whether every sample reads the same bytes (a file or a core: one sample is all there is).
    pub fn is_static(&self) -> bool {
        self.pid().is_none()
    }
}

/// Takes repeated [`Reading`]s of one [`Target`]: the first [`Sampler::sample`] does the whole
/// pipeline; for a forced source later ones re-read only the region (symbols are resolved once),
/// and every sample of a live source checks the pid still names the same process
/// ([`Error::PidReused`], [`Error::ProcessExited`] when it does not).
pub struct Sampler {
    source: Target,
    forced: Option<LiveReader>,
    /// Set once a refused forced read fell back to the hsperfdata file.
    fell_back: Option<String>,
    /// Counters of a reading given back with [`Sampler::recycle`].
    spare: Vec<perfdata::Counter>,
    /// The process the first sample of a shared source read: later samples must find the same
    /// one (a forced source's reader checks this itself).
    first: Option<Process>,
}

impl Sampler {
    /// A sampler of `source`; nothing is read until [`Sampler::sample`].
    pub fn new(source: Target) -> Self {
        Sampler {
            source,
            forced: None,
            fell_back: None,
            spare: Vec::new(),
            first: None,
        }
    }

    /// Gives back a reading this sampler returned, once its caller is done with it: the next
    /// forced sample reuses its allocations (counter names, string values), which makes a
    /// sample of a forced source cheaper. Optional.
    pub fn recycle(&mut self, reading: Reading) {
        self.spare = reading.snapshot.counters;
    }

    /// What this sampler reads.
    pub fn source(&self) -> &Target {
        &self.source
    }

    /// One reading.
    ///
    /// # Errors
    /// As [`read_live`], [`read_hsperfdata`], [`read_file`] or [`read_core`] for the source.
    pub fn sample(&mut self) -> Result<Reading, Error> {
        self.sample_limited(None)
    }

    /// One reading that waits no later than `deadline`, for interactive front ends that must
    /// redraw on time: every wait of the read (for a starting JVM's region or file, for threads
    /// to stop) is cut to the time left, so a JVM that is still starting gives
    /// [`Error::NotAccessible`] at the deadline instead of after [`LiveOptions::wait_accessible`].
    /// Work that does not wait (opening the library, one read of the region) is not interrupted:
    /// the call may overrun the deadline by that, milliseconds. A deadline already passed still
    /// gets one attempt with no waiting.
    ///
    /// # Errors
    /// As [`Sampler::sample`].
    pub fn sample_until(&mut self, deadline: Instant) -> Result<Reading, Error> {
        self.sample_limited(Some(deadline))
    }

    fn sample_limited(&mut self, deadline: Option<Instant>) -> Result<Reading, Error> {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let cut = |d: Duration| left.map_or(d, |l| d.min(l));
        match &self.source {
            Target::Live { pid, opts } => {
                let pid = *pid;
                let mut opts = opts.clone();
                opts.wait_accessible = cut(opts.wait_accessible);
                // As `--stop-timeout 0`: threads not stopped by then are read anyway, with a
                // warning.
                opts.stop_timeout = cut(opts.stop_timeout);
                if let Some(hint) = &self.fell_back {
                    let mut r = read_hsperfdata(pid, opts.wait_accessible)?;
                    r.details.insert(0, Detail::LiveRefused(hint.clone()));
                    return Ok(r);
                }
                let opened = match &self.forced {
                    Some(reader) => reader.read(&opts, std::mem::take(&mut self.spare)),
                    None => LiveReader::open(pid, opts.clone()).and_then(|reader| {
                        let r = reader.read(&opts, Vec::new());
                        self.forced = Some(reader);
                        r
                    }),
                };
                match opened {
                    Err(Error::PermissionDenied { what, hint }) => {
                        match read_hsperfdata(pid, opts.wait_accessible) {
                            Ok(mut r) => {
                                r.details.insert(0, Detail::LiveRefused(hint.clone()));
                                r.fallback = Some(format!(
                                    "{what}: permission denied; read the hsperfdata file instead"
                                ));
                                self.fell_back = Some(hint);
                                Ok(r)
                            }
                            Err(_) => Err(Error::PermissionDenied { what, hint }),
                        }
                    }
                    other => other,
                }
            }
            Target::Hsperfdata { pid, wait } => {
                let (pid, wait) = (*pid, cut(*wait));
                let read_before = self.first.is_some();
                if !read_before {
                    self.first = Some(Process::open(pid)?);
                }
                let reading = match read_hsperfdata(pid, wait) {
                    Ok(r) => r,
                    Err(
                        e @ (Error::NotAccessible { .. }
                        | Error::NoHsperfdataFile { .. }
                        | Error::HsperfdataFile { .. }
                        | Error::HsperfdataFileNotSized { .. }),
                    ) if read_before => return Err(exiting_or(pid, e)),
                    Err(e) => return Err(e),
                };
                // The file read belongs to the first sample's process only if that process still
                // holds the pid after the read.
                self.first.as_ref().expect("set above").check_same()?;
                Ok(reading)
            }
            Target::SavedFile(path) => read_file(path),
            Target::Core { core, exe, sysroot } => {
                read_core(core, exe.as_deref(), sysroot.as_deref())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_live_sources_have_a_pid() {
        let forced = Target::Live {
            pid: 7,
            opts: LiveOptions::default(),
        };
        assert_eq!(forced.pid(), Some(7));
        assert!(!forced.is_static());
        assert!(Target::SavedFile("f".into()).is_static());
        assert_eq!(
            Target::Core {
                core: "c".into(),
                exe: None,
                sysroot: None
            }
            .pid(),
            None
        );
    }
}
