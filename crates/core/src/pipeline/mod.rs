//! The pipelines: one function per kind of target runs `target → locate → read → parse`, and
//! [`Sampler`] repeats a read for `--interval` sampling, resolving symbols once.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
use procfs::Current;

use crate::locate;
use crate::{Error, MemoryItem};

#[cfg(target_os = "linux")]
mod core;

#[cfg(target_os = "linux")]
pub use self::core::read_core;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use self::windows::{ForcedReader, Watched};
#[cfg(windows)]
pub use self::windows::{read_core, read_forced, read_shared, read_shared_wait};
use crate::perfdata::{self, Snapshot};
#[cfg(target_os = "linux")]
use crate::process::{self, ProcessInfo};
use crate::read::ReadMemory;
#[cfg(target_os = "linux")]
use crate::read::{self, MemoryError};

/// Largest `PerfMemory::_capacity` accepted from a target (HotSpot's default is 32 KiB).
pub const MAX_REGION: u64 = 64 << 20;

/// A parsed region and how it was obtained.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The counters.
    pub snapshot: Snapshot,
    /// The raw region bytes (for saving or re-parsing).
    pub bytes: Vec<u8>,
    /// Facts for `-v`: path taken, symbol source, addresses, stop time.
    pub details: Vec<String>,
    /// Things the user should know even without `-v`.
    pub warnings: Vec<String>,
    /// Set when a refused forced read fell back to the hsperfdata file: what was refused.
    pub fallback: Option<String>,
}

/// Options of a forced read of a live process.
#[derive(Debug, Clone)]
pub struct ForcedOptions {
    /// Stop the target's threads while reading (consistent snapshot). `false`: `--no-stop`.
    pub stop: bool,
    /// How long to wait for all threads to reach ptrace-stop.
    pub stop_bound: Duration,
    /// How long to wait for a starting JVM to mark its region accessible (jvmstat waits too).
    pub wait_accessible: Duration,
    /// How to use the per-build symbol cache (`~/.cache/hsinspect/perfmemory-<build-id>`, or
    /// `$HSINSPECT_CACHE_DIR`), which spares later reads of the same libjvm build the symbol work.
    pub symbol_cache: SymbolCacheUse,
}

/// How a forced read uses the per-build symbol cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolCacheUse {
    /// Neither read nor write it (`--no-cache`).
    Off,
    /// Read it; what this process finds is kept in memory only, never written (`inspect list`
    /// and `serve`, which write nothing).
    ReadOnly,
    /// Read it, and write what was found (`inspect -F`, `inspect stat -F`).
    ReadWrite,
}

impl Default for ForcedOptions {
    fn default() -> Self {
        ForcedOptions {
            stop: true,
            stop_bound: Duration::from_millis(100),
            wait_accessible: Duration::from_secs(5),
            symbol_cache: SymbolCacheUse::ReadWrite,
        }
    }
}

#[cfg(target_os = "linux")]
/// Reads the PerfData region out of a live process's memory (`inspect -F <pid>`).
///
/// Everything that needs no stop (maps, the ELF, symbols, the vmStructs walk) happens first;
/// then, with the threads held (unless `opts.stop` is false), `_start` and `_capacity` are read
/// and the region is copied in one `process_vm_readv`; then the threads are released and the
/// start time is checked again, so a reused pid is caught.
///
/// # Errors
/// Every [`Error`] the steps can give; notably [`Error::PerfDataDisabled`] for `-XX:-UsePerfData`,
/// [`Error::PermissionDenied`] with the cause and fix, [`Error::NotAJvm`], [`Error::PidReused`].
pub fn read_forced(pid: i32, opts: &ForcedOptions) -> Result<Reading, Error> {
    ForcedReader::open(pid, opts.clone())?.read(Vec::new())
}

#[cfg(target_os = "linux")]
/// Says what happened when a step on a live process fails: an exiting process fails in odd ways
/// (EPERM from ptrace, short reads).
fn exited_or(pid: i32, e: Error) -> Error {
    match e {
        Error::NoSuchProcess(_) | Error::ProcessExited(_) | Error::PidReused(_) => e,
        _ if process::exited_or_exiting(pid) => Error::ProcessExited(pid),
        e => e,
    }
}

#[cfg(target_os = "linux")]
/// A live process whose region has been located: [`ForcedReader::read`] re-reads only
/// `_start`, `_capacity` and the region, so repeated samples skip the maps, ELF and symbol work.
struct ForcedReader {
    info: ProcessInfo,
    opts: ForcedOptions,
    mem: read::ProcessMemory,
    vars: locate::PerfMemoryVars,
    /// `-v` lines about how the region was found (path, symbol source, addresses).
    located_details: Vec<String>,
    /// Tells each sample cheaply that `info` still names the process.
    liveness: process::Liveness,
    /// `_start` and `_capacity` once a read found the region (they never change after).
    region_at: std::cell::Cell<Option<(u64, u64)>>,
}

#[cfg(target_os = "linux")]
impl ForcedReader {
    fn open(pid: i32, opts: ForcedOptions) -> Result<Self, Error> {
        Self::open_inner(pid, opts).map_err(|e| exited_or(pid, e))
    }

    fn open_inner(pid: i32, opts: ForcedOptions) -> Result<Self, Error> {
        let info = ProcessInfo::read(pid)?;
        let module = locate::libjvm::find_in_process(pid)?;
        let mem = read::ProcessMemory::new(pid);
        let cache = match opts.symbol_cache {
            SymbolCacheUse::Off => None,
            SymbolCacheUse::ReadOnly => locate::cache::SymbolCache::from_env(false),
            SymbolCacheUse::ReadWrite => locate::cache::SymbolCache::from_env(true),
        };
        let located = locate::locate_perf_memory(&module, &mem, cache.as_ref())
            .map_err(|e| permission(pid, e))?;
        let mut located_details = vec![format!(
            "path: forced read of process {pid} ({}) memory",
            info.comm
        )];
        located_details.extend(located.details(&module));
        located_details.extend(located.notes.iter().map(|n| format!("note: {n}")));
        let liveness = process::Liveness::watch(&info)?;
        Ok(ForcedReader {
            liveness,
            region_at: std::cell::Cell::new(None),
            info,
            opts,
            mem,
            vars: located.vars,
            located_details,
        })
    }

    /// One reading; `spare`: the counters of an earlier one, whose allocations the parse reuses.
    fn read(&self, spare: Vec<perfdata::Counter>) -> Result<Reading, Error> {
        let pid = self.info.pid;
        self.read_inner(spare).map_err(|e| {
            // A later sample of a reused pid fails in odd ways (the old addresses): say why.
            match process::check_same_process(&self.info) {
                Err(Error::PidReused(p)) => Error::PidReused(p),
                _ => exited_or(pid, e),
            }
        })
    }

    fn read_inner(&self, mut spare: Vec<perfdata::Counter>) -> Result<Reading, Error> {
        let (pid, info, opts) = (self.info.pid, &self.info, &self.opts);
        let mut details = self.located_details.clone();
        let began = Instant::now();
        // A read without stopping may catch the VM mid-write: try again a few times before calling
        // the bytes malformed.
        let mut torn_reads_left: u32 = if opts.stop { 0 } else { 3 };
        loop {
            let known = self.region_at.get();
            let (region, report) = read_region_once(pid, &self.vars, &self.mem, opts, known)?;
            let (start, capacity, bytes) = (region.start, region.capacity, region.bytes);
            self.liveness.check(info)?;
            if bytes.is_some() {
                self.region_at.set(Some((start, capacity)));
            }
            let age = || process_age(info);
            let parse = |b: &[u8]| perfdata::parse_reusing(b, std::mem::take(&mut spare));
            let Some((bytes, snapshot)) =
                settled(bytes, pid, &age, parse, began, opts, &mut torn_reads_left)?
            else {
                continue;
            };
            let mut warnings = Vec::new();
            if let Some(r) = &report {
                details.push(format!(
                    "stopped {} threads for {:.3} ms{}",
                    r.threads,
                    r.stopped_for.as_secs_f64() * 1e3,
                    if info.is_stopped() {
                        " (the process was already stopped and stays stopped)"
                    } else {
                        ""
                    }
                ));
                if !r.not_stopped.is_empty() {
                    warnings.push(format!(
                        "threads {:?} did not stop within {} ms (uninterruptible?): read anyway, values may be mid-update",
                        r.not_stopped,
                        opts.stop_bound.as_millis()
                    ));
                }
            }
            details.push(format!("region: {capacity} bytes at {start:#x}"));
            return Ok(Reading {
                snapshot,
                bytes,
                details,
                warnings,
                fallback: None,
            });
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

#[cfg(target_os = "linux")]
/// Reads the region with the threads held (unless `opts.stop` is false); also returns what the
/// stop did.
fn read_region_once(
    pid: i32,
    vars: &locate::PerfMemoryVars,
    mem: &read::ProcessMemory,
    opts: &ForcedOptions,
    known: Option<(u64, u64)>,
) -> Result<(Region, Option<process::ptrace::FreezeReport>), Error> {
    let frozen = if opts.stop {
        Some(process::ptrace::freeze(pid, opts.stop_bound)?)
    } else {
        None
    };
    let result = read_region(vars, mem, known);
    let report = frozen.map(|f| f.thaw());
    Ok((result.map_err(|e| permission(pid, e))?, report))
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
    if capacity < perfdata::PROLOGUE_SIZE as u64 || capacity > MAX_REGION {
        return Err(Error::ImplausibleRegion(format!(
            "PerfMemory::_capacity is {capacity} bytes (expected {} to {MAX_REGION}); the symbols may not match this JVM",
            perfdata::PROLOGUE_SIZE
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

#[cfg(target_os = "linux")]
fn process_age(info: &ProcessInfo) -> Duration {
    let ticks = procfs::ticks_per_second().max(1);
    let uptime = procfs::Uptime::current()
        .map(|u| u.uptime_duration())
        .unwrap_or_default();
    uptime.saturating_sub(Duration::from_millis(info.start_time * 1000 / ticks))
}

#[cfg(target_os = "linux")]
/// Turns a refused memory read into a [`Error::PermissionDenied`] with the cause and fix.
fn permission(pid: i32, e: Error) -> Error {
    match e {
        Error::Memory {
            what,
            source: MemoryError::PermissionDenied { .. },
        } => Error::PermissionDenied {
            what: format!("reading {what} from process {pid}"),
            hint: process::permission_hint(pid),
        },
        e => e,
    }
}

/// How old a process may be and still be starting up: until then a missing region or file is
/// waited for (as jvmstat waits), after it the answer is final.
const STARTUP_GRACE: Duration = Duration::from_secs(2);

#[cfg(target_os = "linux")]
/// Reads the JVM's hsperfdata file by pid (`inspect <pid>`), waiting up to 5 s for a starting
/// JVM (see [`read_shared_wait`]).
///
/// # Errors
/// As [`read_shared_wait`].
pub fn read_shared(pid: i32) -> Result<Reading, Error> {
    read_shared_wait(pid, ForcedOptions::default().wait_accessible)
}

#[cfg(target_os = "linux")]
/// Reads the JVM's hsperfdata file by pid (`inspect <pid>`). A JVM that is still starting may
/// not have created its file yet (waited for while the process is younger than 2 s) or not yet
/// marked it accessible (waited for up to `wait`, as jvmstat's `PerfDataBuffer` does).
///
/// # Errors
/// [`Error::NoHsperfFile`] (which says to use `-F`), [`Error::HsperfFile`] for a file that breaks
/// a safety rule, [`Error::PerfData`] when its contents are malformed, [`Error::NotAccessible`]
/// when the file stayed inaccessible for all of `wait`, [`Error::ProcessExited`].
pub fn read_shared_wait(pid: i32, wait: Duration) -> Result<Reading, Error> {
    read_shared_inner(pid, wait).map_err(|e| match e {
        // The JVM deletes its file as it exits: "no file" then means "exited".
        Error::NoHsperfFile { .. } | Error::HsperfFile { .. }
            if process::exited_or_exiting(pid) =>
        {
            Error::ProcessExited(pid)
        }
        e => e,
    })
}

/// Sleeps before another try while `wait` has not passed since `began`; then says the JVM is
/// still starting.
fn still_starting(pid: i32, began: Instant, wait: Duration) -> Result<(), Error> {
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
    pid: i32,
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
    pid: i32,
    age: &dyn Fn() -> Duration,
    parse: impl FnOnce(&[u8]) -> Result<perfdata::Snapshot, perfdata::ParseError>,
    began: Instant,
    opts: &ForcedOptions,
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

#[cfg(target_os = "linux")]
fn read_shared_inner(pid: i32, wait: Duration) -> Result<Reading, Error> {
    let info = ProcessInfo::read(pid)?;
    let began = Instant::now();
    let (path, bytes, snapshot) = loop {
        let (path, bytes) = match process::hsperf_file::read_for_process(&info) {
            Err(Error::NoHsperfFile { .. }) if process_age(&info) < STARTUP_GRACE => {
                // Too young to conclude there will be no file.
                still_starting(pid, began, wait)?;
                continue;
            }
            r => r?,
        };
        let age = || process_age(&info);
        let Some(snapshot) = ready(perfdata::parse(&bytes), &bytes, pid, &age, began, wait)? else {
            continue;
        };
        break (path, bytes, snapshot);
    };
    let warnings = Vec::new();
    Ok(Reading {
        snapshot,
        bytes,
        details: vec![format!(
            "path: shared file {} (uid {}, NSpid {})",
            path.display(),
            info.euid,
            info.nspid
        )],
        warnings,
        fallback: None,
    })
}

/// Reads a saved hsperfdata file (`inspect <path>`), with the hsperfdata file rules of the
/// platform (Linux: `process/hsperf_file.rs`; Windows: no reparse point, a regular disk file with
/// one link, a sane size).
///
/// # Errors
/// As [`read_shared`], without the pid lookup.
pub fn read_file(path: &Path) -> Result<Reading, Error> {
    #[cfg(target_os = "linux")]
    let bytes = process::hsperf_file::read_path(path)?;
    #[cfg(windows)]
    let bytes = crate::process::windows::read_hsperf_file(path)?;
    let snapshot = perfdata::parse(&bytes)?;
    Ok(Reading {
        snapshot,
        bytes,
        details: vec![format!("path: file {}", path.display())],
        warnings: Vec::new(),
        fallback: None,
    })
}

/// A target named on the command line: a pid, or a path to an hsperfdata file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A process id.
    Pid(i32),
    /// A file.
    File(PathBuf),
}

impl TargetSpec {
    /// An integer: a pid (0 and negative ones too, so they are refused as pids rather than
    /// looked for as files; a file named `-5` is `./-5`); anything else: a path.
    pub fn parse(s: &str) -> Self {
        match s.parse::<i32>() {
            Ok(pid) if !s.starts_with('+') => TargetSpec::Pid(pid),
            _ => TargetSpec::File(PathBuf::from(s)),
        }
    }
}

/// Where readings come from: one of the four kinds of target, with its options.
#[derive(Debug, Clone)]
pub enum Source {
    /// A live process's memory (`-F <pid>`). When ptrace is refused (EPERM) and the hsperfdata
    /// file is readable, the [`Sampler`] reads the file instead and says so in
    /// [`Reading::warnings`].
    Forced {
        /// The JVM's pid (as this host sees it).
        pid: i32,
        /// Stop, wait and cache options.
        opts: ForcedOptions,
    },
    /// A live process's hsperfdata file (`<pid>`).
    Shared {
        /// The JVM's pid (as this host sees it).
        pid: i32,
        /// How long to wait for a starting JVM.
        wait: Duration,
    },
    /// A saved hsperfdata file (`<path>`).
    File(PathBuf),
    /// An ELF core file (`--core <core> [--exe <path>] [--sysroot <dir>]`).
    Core {
        /// The core file.
        core: PathBuf,
        /// The java launcher or libjvm.so the JVM ran, when not at its recorded path.
        exe: Option<PathBuf>,
        /// A directory holding the dead process's files under their original paths.
        sysroot: Option<PathBuf>,
    },
}

impl Source {
    /// The live process this source reads, if any.
    pub fn pid(&self) -> Option<i32> {
        match self {
            Source::Forced { pid, .. } | Source::Shared { pid, .. } => Some(*pid),
            Source::File(_) | Source::Core { .. } => None,
        }
    }

    /// Whether every sample reads the same bytes (a file or a core: one sample is all there is).
    pub fn is_static(&self) -> bool {
        self.pid().is_none()
    }
}

/// Takes repeated [`Reading`]s of one [`Source`]: the first [`Sampler::sample`] does the whole
/// pipeline; for a forced source later ones re-read only the region (symbols are resolved once),
/// and every sample of a live source checks the pid still names the same process
/// ([`Error::PidReused`], [`Error::ProcessExited`] when it does not).
pub struct Sampler {
    source: Source,
    forced: Option<ForcedReader>,
    /// Set once a refused forced read fell back to the hsperfdata file.
    fell_back: Option<String>,
    /// Counters of a reading given back with [`Sampler::recycle`].
    spare: Vec<perfdata::Counter>,
    /// The process the first sample of a shared source read: later samples must find the same
    /// one (a forced source's reader checks this itself).
    first: Option<Watched>,
}

/// A live process a sampler keeps checking: the pid still names it, cheaply.
#[cfg(target_os = "linux")]
struct Watched(ProcessInfo, process::Liveness);

#[cfg(target_os = "linux")]
impl Watched {
    fn watch(pid: i32) -> Result<Self, Error> {
        let info = ProcessInfo::read(pid)?;
        let liveness = process::Liveness::watch(&info)?;
        Ok(Watched(info, liveness))
    }

    fn check(&self) -> Result<(), Error> {
        self.1.check(&self.0)
    }
}

impl Sampler {
    /// A sampler of `source`; nothing is read until [`Sampler::sample`].
    pub fn new(source: Source) -> Self {
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
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// One reading.
    ///
    /// # Errors
    /// As [`read_forced`], [`read_shared_wait`], [`read_file`] or [`read_core`] for the source.
    pub fn sample(&mut self) -> Result<Reading, Error> {
        match &self.source {
            Source::Forced { pid, opts } => {
                let (pid, opts) = (*pid, opts.clone());
                if let Some(hint) = &self.fell_back {
                    let mut r = read_shared_wait(pid, opts.wait_accessible)?;
                    r.details.insert(0, format!("forced read refused: {hint}"));
                    return Ok(r);
                }
                let opened = match &self.forced {
                    Some(reader) => reader.read(std::mem::take(&mut self.spare)),
                    None => ForcedReader::open(pid, opts.clone()).and_then(|reader| {
                        let r = reader.read(Vec::new());
                        self.forced = Some(reader);
                        r
                    }),
                };
                match opened {
                    Err(Error::PermissionDenied { what, hint }) => {
                        match read_shared_wait(pid, opts.wait_accessible) {
                            Ok(mut r) => {
                                r.details.insert(0, format!("forced read refused: {hint}"));
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
            Source::Shared { pid, wait } => {
                let (pid, wait) = (*pid, *wait);
                if self.first.is_none() {
                    self.first = Some(Watched::watch(pid)?);
                }
                let reading = read_shared_wait(pid, wait)?;
                // The file read belongs to the first sample's process only if that process still
                // holds the pid after the read.
                self.first.as_ref().expect("set above").check()?;
                Ok(reading)
            }
            Source::File(path) => read_file(path),
            Source::Core { core, exe, sysroot } => {
                read_core(core, exe.as_deref(), sysroot.as_deref())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_pids_and_everything_else_is_a_path() {
        assert_eq!(TargetSpec::parse("4242"), TargetSpec::Pid(4242));
        // Refused later as pids, never looked for as files.
        assert_eq!(TargetSpec::parse("0"), TargetSpec::Pid(0));
        assert_eq!(TargetSpec::parse("-5"), TargetSpec::Pid(-5));
        for path in [
            "+5",
            "./4242",
            "4242.hsperf",
            "/tmp/hsperfdata_u/4242",
            "99999999999",
        ] {
            assert_eq!(
                TargetSpec::parse(path),
                TargetSpec::File(PathBuf::from(path))
            );
        }
    }

    #[test]
    fn only_live_sources_have_a_pid() {
        let forced = Source::Forced {
            pid: 7,
            opts: ForcedOptions::default(),
        };
        assert_eq!(forced.pid(), Some(7));
        assert!(!forced.is_static());
        assert!(Source::File("f".into()).is_static());
        assert_eq!(
            Source::Core {
                core: "c".into(),
                exe: None,
                sysroot: None
            }
            .pid(),
            None
        );
    }
}
