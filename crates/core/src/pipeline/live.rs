//! The forced pipeline (`inspect -F <pid>`), written once over the OS seams: open the process,
//! its memory, locate the region (no stop), then per reading: stop, read `_start`, `_capacity`
//! and the region, release, check the pid still names the same process, parse.

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::{Detail, LiveOptions, ReadPath, Reading, read_region, record_stop, settled};
use crate::error::Error;
use crate::locate;
use crate::memory::MemoryError;
use crate::perfdata;
use crate::process::Pid;
use crate::process::{self, Process};
use crate::read::ProcessMemory;
use crate::vm::PerfMemoryVars;

/// Reads the PerfData region out of a live process's memory (`inspect -F <pid>`).
///
/// Everything that needs no stop (the module list, the library's headers and symbols, the
/// vmStructs walk) happens first; then, with the process held (unless `opts.stop` is false:
/// ptrace on Linux, a debug attach on Windows), `_start` and `_capacity` are read and the region
/// is copied in one read; then the process is released and checked again, so a reused pid is
/// caught.
///
/// # Errors
/// Every [`Error`] the steps can give; notably [`Error::PerfDataDisabled`] for `-XX:-UsePerfData`,
/// [`Error::PermissionDenied`] with the cause and fix, [`Error::NotAJvm`], [`Error::PidReused`],
/// [`Error::Unsupported`] on an OS without a live backend.
pub fn read_live(pid: Pid, opts: &LiveOptions) -> Result<Reading, Error> {
    LiveReader::open(pid, opts.clone())?.read(opts, Vec::new())
}

/// Says what happened when a step on a live process fails: an exiting process fails in odd ways
/// (EPERM from ptrace, short reads, a vanished module list).
fn exited_or(pid: Pid, e: Error) -> Error {
    match e {
        Error::NoSuchProcess(_) | Error::ProcessExited(_) | Error::PidReused(_) => e,
        _ if process::exited_or_exiting(pid) => Error::ProcessExited(pid),
        e => e,
    }
}

/// Turns a refused memory read into [`Error::PermissionDenied`] with the cause and fix.
fn permission(pid: Pid, e: Error) -> Error {
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

/// Stops `process` for a read (within `stop_timeout`); while another process traces it (another
/// `inspect` holding it for its own read, which lasts milliseconds, or a debugger), tries again
/// until `wait` has passed since `began`, then gives [`Error::AlreadyTraced`] with the time
/// waited. Two readers that collide both let go and try again after a pause of their own length
/// (from the pid and the clock), so they do not collide again in step. Every command that stops
/// a live JVM stops it through here.
pub(super) fn stop_when_free(
    process: &Process,
    stop_timeout: Duration,
    wait: Duration,
    began: Instant,
) -> Result<process::Stopped, Error> {
    retry_when_free(wait, began, || process::stop(process, stop_timeout))
}

/// As [`stop_when_free`], holding only threads `tids` (`process::stop_threads`; Linux).
///
/// # Errors
/// As [`stop_when_free`]; [`Error::Unsupported`] where the OS does not hold single threads.
pub(super) fn stop_threads_when_free(
    process: &Process,
    tids: &[crate::pid::Pid],
    stop_timeout: Duration,
    wait: Duration,
) -> Result<process::Stopped, Error> {
    retry_when_free(wait, Instant::now(), || {
        process::stop_threads(process, tids, stop_timeout)
    })
}

/// Runs `stop` until it is not refused by another tracer's hold ([`Error::AlreadyTraced`]), for
/// at most `wait` from `began`, sleeping 0.5–4.5 ms (jittered) between tries.
fn retry_when_free(
    wait: Duration,
    began: Instant,
    mut stop: impl FnMut() -> Result<process::Stopped, Error>,
) -> Result<process::Stopped, Error> {
    let mut round: u64 = 0;
    loop {
        match stop() {
            Err(Error::AlreadyTraced {
                pid,
                tracer,
                command,
                ..
            }) => {
                if began.elapsed() >= wait {
                    return Err(Error::AlreadyTraced {
                        pid,
                        tracer,
                        command,
                        waited_ms: began.elapsed().as_millis() as u64,
                    });
                }
                round += 1;
                let nanos = Instant::now().duration_since(began).subsec_nanos() as u64;
                let jitter = (u64::from(std::process::id()) * 7919 + nanos + round * 104729) % 4000;
                std::thread::sleep(Duration::from_micros(500 + jitter));
            }
            r => return r,
        }
    }
}

/// A live process whose region has been located: [`LiveReader::read`] re-reads only
/// `_start`, `_capacity` and the region, so repeated samples skip the module and symbol work.
pub(super) struct LiveReader {
    process: Process,
    mem: ProcessMemory,
    vars: PerfMemoryVars,
    /// `-v` lines about how the region was found (path, library, symbol source, addresses).
    located_details: Vec<Detail>,
    /// `_start` and `_capacity` once a read found the region (they never change after).
    region_at: Cell<Option<(u64, u64)>>,
}

impl LiveReader {
    pub(super) fn open(pid: Pid, opts: LiveOptions) -> Result<Self, Error> {
        Self::open_inner(pid, opts).map_err(|e| exited_or(pid, e))
    }

    fn open_inner(pid: Pid, opts: LiveOptions) -> Result<Self, Error> {
        let process = Process::open(pid)?;
        let mem = ProcessMemory::open(&process)?;
        let located = locate::locate_in_process(&process, &mem, opts.symbol_cache)
            .map_err(|e| permission(pid, e))?;
        let mut located_details = vec![
            Detail::Path(ReadPath::Live {
                pid,
                name: process.name().to_string(),
            }),
            Detail::Module(located.module),
            Detail::Symbols(located.source),
            Detail::Variables {
                start: located.vars.start,
                capacity: located.vars.capacity,
            },
        ];
        located_details.extend(located.notes.into_iter().map(Detail::Note));
        Ok(LiveReader {
            process,
            mem,
            vars: located.vars,
            located_details,
            region_at: Cell::new(None),
        })
    }

    /// One reading with `opts` (its stop and wait; the symbol cache was used by `open`);
    /// `spare`: the counters of an earlier one, whose allocations the parse reuses.
    pub(super) fn read(
        &self,
        opts: &LiveOptions,
        spare: Vec<perfdata::Counter>,
    ) -> Result<Reading, Error> {
        let pid = self.process.pid();
        self.read_inner(opts, spare).map_err(|e| {
            // A later sample of a reused pid fails in odd ways (the old addresses): say why.
            match self.process.check_same() {
                Err(Error::PidReused(p)) => Error::PidReused(p),
                _ => exited_or(pid, e),
            }
        })
    }

    fn read_inner(
        &self,
        opts: &LiveOptions,
        mut spare: Vec<perfdata::Counter>,
    ) -> Result<Reading, Error> {
        let pid = self.process.pid();
        let mut details = self.located_details.clone();
        let began = Instant::now();
        // A read without stopping may catch the VM mid-write: try again a few times before calling
        // the bytes malformed.
        let mut torn_reads_left: u32 = if opts.stop { 0 } else { 3 };
        loop {
            let known = self.region_at.get();
            let stopped = if opts.stop {
                Some(stop_when_free(
                    &self.process,
                    opts.stop_timeout,
                    opts.wait_accessible,
                    began,
                )?)
            } else {
                None
            };
            let region = read_region(&self.vars, &self.mem, known);
            let report = stopped.map(|s| s.release());
            let region = region.map_err(|e| permission(pid, e))?;
            let (start, capacity, bytes) = (region.start, region.capacity, region.bytes);
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
            let mut warnings = Vec::new();
            if let Some(r) = report {
                record_stop(r, opts.stop_timeout, &mut details, &mut warnings);
            }
            details.push(Detail::Region { start, capacity });
            return Ok(Reading {
                pid: Some(pid),
                snapshot,
                bytes,
                details,
                warnings,
                fallback: None,
            });
        }
    }
}
