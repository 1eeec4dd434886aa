//! The Windows pipelines, with the Linux ones' signatures so [`super::Sampler`] and the binary
//! run unchanged:
//!
//! - forced (`-F`): `OpenProcess(PROCESS_VM_READ | PROCESS_QUERY_LIMITED_INFORMATION)`, `jvm.dll`'s
//!   base from the toolhelp module list, its PE headers and export directory read from the
//!   target's memory ([`crate::locate::pe`]), the `gHotSpotVMStructs` walk to `PerfMemory::_start`
//!   / `_capacity` ([`crate::locate::vmstructs`]), then with the JVM held by a debug attach
//!   (`DebugStop`) one `ReadProcessMemory` of the region; identity (creation time) checked after;
//! - shared (`<pid>`): the named file mapping `hsperfdata_<user>_<pid>` copied out of a read-only
//!   view, else the file `%TEMP%\hsperfdata_<user>\<pid>` (`perfMemory_windows.cpp`);
//! - file (`<path>`): [`super::read_file`], with the same file rules.

use std::cell::Cell;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{ForcedOptions, Reading, STARTUP_GRACE, read_region, ready, settled, still_starting};
use crate::Error;
use crate::locate::pe::{Exports, ImageHeaders};
use crate::locate::{PerfMemoryVars, vmstructs};
use crate::perfdata;
use crate::process::windows::{
    DebugStop, Process, candidate_users, exited_or_exiting, read_hsperf_file, read_mapping,
};

/// The attach's debug events (one per thread and DLL, then the breakpoint) take 30-80 ms for a
/// JVM under Wine; the stop bound for threads on Linux (`--stop-timeout`) is raised to this.
const MIN_ATTACH_BOUND: Duration = Duration::from_secs(2);

/// Reads the PerfData region out of a live process's memory (`inspect -F <pid>`): see the
/// module documentation for the steps.
///
/// # Errors
/// Every [`Error`] the steps can give; notably [`Error::PerfDataDisabled`] for `-XX:-UsePerfData`,
/// [`Error::PermissionDenied`] with the fix, [`Error::NotAJvm`] (no `jvm.dll`),
/// [`Error::Os`] for a 32-bit (WOW64) process or a failed attach, [`Error::PidReused`].
pub fn read_forced(pid: i32, opts: &ForcedOptions) -> Result<Reading, Error> {
    ForcedReader::open(pid, opts.clone())?.read(Vec::new())
}

/// An exiting process fails in odd ways (partial copies, a vanished module list).
fn exited_or(pid: i32, e: Error) -> Error {
    match e {
        Error::NoSuchProcess(_) | Error::ProcessExited(_) | Error::PidReused(_) => e,
        _ if exited_or_exiting(pid) => Error::ProcessExited(pid),
        e => e,
    }
}

/// A live process whose region has been located: [`ForcedReader::read`] re-reads only
/// `_start`, `_capacity` and the region.
pub(super) struct ForcedReader {
    process: Process,
    opts: ForcedOptions,
    vars: PerfMemoryVars,
    located_details: Vec<String>,
    /// `_start` and `_capacity` once a read found the region (they never change after).
    region_at: Cell<Option<(u64, u64)>>,
}

impl ForcedReader {
    pub(super) fn open(pid: i32, opts: ForcedOptions) -> Result<Self, Error> {
        Self::open_inner(pid, opts).map_err(|e| exited_or(pid, e))
    }

    fn open_inner(pid: i32, opts: ForcedOptions) -> Result<Self, Error> {
        let process = Process::open(pid)?;
        if process.is_wow64() {
            return Err(Error::Os {
                what: format!(
                    "process {pid} is a 32-bit process (WOW64): only 64-bit JVMs can be read; use that JDK's jcmd or jstat"
                ),
                source: std::io::Error::from(std::io::ErrorKind::Unsupported),
            });
        }
        let Some(module) = process.module("jvm.dll")? else {
            return Err(Error::NotAJvm {
                pid,
                comm: process.image_name(),
            });
        };
        let name = module.path.display().to_string();
        let headers = ImageHeaders::read(&process.mem, module.base, &name)?;
        let exports = Exports::read(&process.mem, &headers, &name)?;
        let vars = vmstructs::find_perf_memory(&process.mem, &|s| exports.address(s))?;
        let located_details = vec![
            format!(
                "path: forced read of process {pid} ({}) memory",
                process.image_name()
            ),
            format!(
                "jvm.dll: {name} at {:#x} ({} bytes, {} named exports)",
                module.base,
                module.size,
                exports.len()
            ),
            format!("symbols: gHotSpotVMStructs (exported by {name})"),
            format!(
                "&PerfMemory::_start = {:#x}, &PerfMemory::_capacity = {:#x}",
                vars.start, vars.capacity
            ),
        ];
        Ok(ForcedReader {
            process,
            opts,
            vars,
            located_details,
            region_at: Cell::new(None),
        })
    }

    /// One reading; `spare`: the counters of an earlier one, whose allocations the parse reuses.
    pub(super) fn read(&self, spare: Vec<perfdata::Counter>) -> Result<Reading, Error> {
        self.read_inner(spare)
            .map_err(|e| exited_or(self.process.pid, e))
    }

    fn read_inner(&self, mut spare: Vec<perfdata::Counter>) -> Result<Reading, Error> {
        let (pid, opts) = (self.process.pid, &self.opts);
        let mut details = self.located_details.clone();
        let began = Instant::now();
        let mut torn_reads_left: u32 = if opts.stop { 0 } else { 3 };
        loop {
            let stop = if opts.stop {
                Some(DebugStop::attach(
                    &self.process,
                    opts.stop_bound.max(MIN_ATTACH_BOUND),
                )?)
            } else {
                None
            };
            let result = read_region(&self.vars, &self.process.mem, self.region_at.get());
            let report = stop.map(DebugStop::release);
            let (start, capacity, bytes) = result.map(|r| (r.start, r.capacity, r.bytes))?;
            self.process.check_same()?;
            if bytes.is_some() {
                self.region_at.set(Some((start, capacity)));
            }
            let age = || self.process.age();
            let parse = |b: &[u8]| perfdata::parse_reusing(b, std::mem::take(&mut spare));
            let Some((bytes, snapshot)) =
                settled(bytes, pid, &age, parse, began, opts, &mut torn_reads_left)?
            else {
                continue;
            };
            if let Some(r) = report {
                details.push(format!(
                    "stopped by a debug attach for {:.3} ms ({} debug events, {:.3} ms to the attach breakpoint)",
                    r.stopped_for.as_secs_f64() * 1e3,
                    r.events,
                    r.to_stop.as_secs_f64() * 1e3
                ));
            }
            details.push(format!("region: {capacity} bytes at {start:#x}"));
            return Ok(Reading {
                snapshot,
                bytes,
                details,
                warnings: Vec::new(),
                fallback: None,
            });
        }
    }
}

/// A live process a sampler keeps checking: the pid still names it (its handle, creation time).
pub(super) struct Watched(Process);

impl Watched {
    pub(super) fn watch(pid: i32) -> Result<Self, Error> {
        Process::open_query(pid).map(Watched)
    }

    pub(super) fn check(&self) -> Result<(), Error> {
        self.0.check_same()
    }
}

/// Reads JVM `pid`'s shared PerfData (`inspect <pid>`), waiting up to 5 s for a starting JVM.
///
/// # Errors
/// As [`read_shared_wait`].
pub fn read_shared(pid: i32) -> Result<Reading, Error> {
    read_shared_wait(pid, ForcedOptions::default().wait_accessible)
}

/// Reads JVM `pid`'s shared PerfData (`inspect <pid>`): the named file mapping
/// `hsperfdata_<user>_<pid>`, else its backing file `%TEMP%\hsperfdata_<user>\<pid>`, for each
/// user whose hsperfdata directory has that file (then `%USERNAME%`). A JVM younger than 2 s may
/// not have created them yet, and one may not have marked its region accessible (waited for up
/// to `wait`).
///
/// # Errors
/// [`Error::NoHsperfFile`] (which says to use `-F`: e.g. `-XX:+PerfDisableSharedMem`),
/// [`Error::HsperfFile`], [`Error::PerfData`], [`Error::NotAccessible`], [`Error::ProcessExited`].
pub fn read_shared_wait(pid: i32, wait: Duration) -> Result<Reading, Error> {
    read_shared_inner(pid, wait).map_err(|e| match e {
        Error::NoHsperfFile { .. } | Error::HsperfFile { .. } if exited_or_exiting(pid) => {
            Error::ProcessExited(pid)
        }
        e => e,
    })
}

fn read_shared_inner(pid: i32, wait: Duration) -> Result<Reading, Error> {
    let process = Process::open_query(pid)?;
    let began = Instant::now();
    loop {
        let (source, bytes) = match shared_bytes(pid) {
            Err(Error::NoHsperfFile { .. }) if process.age() < STARTUP_GRACE => {
                still_starting(pid, began, wait)?;
                continue;
            }
            r => r?,
        };
        let age = || process.age();
        let Some(snapshot) = ready(perfdata::parse(&bytes), &bytes, pid, &age, began, wait)? else {
            continue;
        };
        process.check_same()?;
        return Ok(Reading {
            snapshot,
            bytes,
            details: vec![format!("path: shared {source}")],
            warnings: Vec::new(),
            fallback: None,
        });
    }
}

/// The region's bytes from the first mapping, else the first file, of the candidate users.
fn shared_bytes(pid: i32) -> Result<(String, Vec<u8>), Error> {
    let (users, tried) = candidate_users(pid);
    for user in &users {
        if let Some((name, bytes)) = read_mapping(user, pid)? {
            return Ok((format!("file mapping {name}"), bytes));
        }
    }
    for path in &tried {
        if path.exists() {
            let bytes = read_hsperf_file(path)?;
            return Ok((format!("file {}", path.display()), bytes));
        }
    }
    Err(Error::NoHsperfFile { pid, tried })
}

/// Core files are ELF cores of Linux processes: this Windows build does not read them.
///
/// # Errors
/// Always [`Error::Core`], saying to read the core on Linux.
pub fn read_core(
    core: &Path,
    _exe: Option<&Path>,
    _sysroot: Option<&Path>,
) -> Result<Reading, Error> {
    Err(Error::Core {
        path: core.to_owned(),
        reason: "reading ELF core files is supported by the Linux build only; run `inspect --core` on Linux".into(),
    })
}
