//! How a live read holds a JVM (`held`: every thread stopped as `-F` stops them, released on
//! every path, the process checked to be the same one after), and how a read of its heap stays
//! out of stop-the-world collections (`held_outside_collections`, and for a core or minidump
//! `core_inside_collection`): shared by the thread-dump and heap pipelines.

use std::time::{Duration, Instant};

use super::jvm::Jvm;
use super::{Detail, Warning};
use crate::error::Error;
use crate::memory::ReadMemory;

/// How a live read holds the JVM: whether to stop it at all (`false`: `--no-stop`), how long
/// the stop may take (`--stop-timeout`), and how long to wait for another tracer's hold to end
/// (`--wait`).
#[derive(Debug, Clone, Copy)]
pub(super) struct StopOptions {
    pub stop: bool,
    pub timeout: Duration,
    pub wait: Duration,
}

/// Runs `read` with every thread of `process` held (as `-F` holds them, waiting for another
/// reader's hold to end: `live::stop_when_free`; with `stop.stop` false, running), then
/// releases them and checks the process is the same one: what `read` returned and the stop's
/// report. The stop is released on every path.
///
/// # Errors
/// Those of `process::stop`; [`Error::AlreadyTraced`] after `stop.wait`;
/// [`Error::ProcessExited`], [`Error::PidReused`].
pub(super) fn held<R>(
    process: &crate::process::Process,
    stop: &StopOptions,
    read: impl FnOnce(Option<&crate::process::Stopped>) -> R,
) -> Result<(R, Option<crate::process::StopReport>), Error> {
    let stopped = if stop.stop {
        Some(super::live::stop_when_free(
            process,
            stop.timeout,
            stop.wait,
            Instant::now(),
        )?)
    } else {
        None
    };
    let out = read(stopped.as_ref());
    let report = stopped.map(|s| s.release());
    process.check_same()?;
    // A process killed during the read may still look alive (its threads held by us cannot be
    // reaped until released): what was read of it is not a reading of a running JVM.
    if crate::process::exited_or_exiting(process.pid()) {
        return Err(Error::ProcessExited(process.pid()));
    }
    Ok((out, report))
}

/// How long a live read waits for a stop-the-world collection to end before it reads the heap
/// anyway (with [`Warning::InsideCollection`]): a JVM thrashing in full collections spends
/// most of its time inside one, and lets its threads run between them.
pub const COLLECTION_WAIT: Duration = Duration::from_secs(10);

/// How a hold waited out the stop-the-world collections ([`held_outside_collections`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct CollectionWait {
    /// The hold was taken inside a collection all the same (after [`COLLECTION_WAIT`], or
    /// without a stop).
    inside: bool,
    /// From the first look to the hold that was kept.
    waited: Duration,
    /// Holds taken (a hold inside a collection is released and taken again).
    stops: u32,
    /// Looks with the JVM running.
    polls: u32,
}

impl CollectionWait {
    /// Says what the wait did (`-v`) and warns of a read inside a collection.
    pub(super) fn record(
        &self,
        stop: bool,
        details: &mut Vec<Detail>,
        warnings: &mut Vec<Warning>,
    ) {
        if self.stops > 1 || self.polls > 0 || self.inside {
            details.push(Detail::Heap(format!(
                "stop-the-world collections waited out: {} ms, {} looks with the JVM running, {} stops",
                self.waited.as_millis(),
                self.polls,
                self.stops
            )));
        }
        if self.inside {
            warnings.push(Warning::InsideCollection {
                waited: stop.then_some(self.waited),
            });
        }
    }
}

/// Runs `read` with the threads of live `jvm` held as `stop` says ([`held`]), but never
/// inside a stop-the-world collection, whose objects are half moved: waits, with the JVM
/// running, for the collection's flag (`CollectedHeap::_is_gc_active`) to clear, stops, and
/// looks again under the hold; a collection begun in between is released and waited out the
/// same way, up to [`COLLECTION_WAIT`], after which `read` runs inside it.
///
/// # Errors
/// As [`held`].
pub(super) fn held_outside_collections<R>(
    jvm: &Jvm,
    stop: &StopOptions,
    read: impl FnOnce(Option<&crate::process::Stopped>) -> R,
) -> Result<(R, Option<crate::process::StopReport>, CollectionWait), Error> {
    let Some(process) = jvm.process() else {
        unreachable!("held_outside_collections is given a live JVM");
    };
    let flag = crate::heap::spaces::stw_collection_flag(&jvm.vm, jvm.memory());
    let active = |mem: &dyn ReadMemory| {
        flag.is_some_and(|f| crate::heap::spaces::stw_collection_active(mem, f).unwrap_or(false))
    };
    let began = Instant::now();
    let mut read = Some(read);
    let (mut stops, mut polls) = (0u32, 0u32);
    loop {
        while stop.stop && active(jvm.memory()) && began.elapsed() < COLLECTION_WAIT {
            polls += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
        stops += 1;
        let (out, report) = held(process, stop, |stopped| {
            let inside = active(jvm.memory());
            if inside && stopped.is_some() && began.elapsed() < COLLECTION_WAIT {
                return None;
            }
            let read = read.take().expect("read once");
            Some((read(stopped), inside, began.elapsed()))
        })?;
        if let Some((out, inside, waited)) = out {
            let wait = CollectionWait {
                inside,
                waited,
                stops,
                polls,
            };
            return Ok((out, report, wait));
        }
    }
}

/// Whether the process of a core (or a minidump) was inside a stop-the-world collection when
/// it was made (its heap may hold objects half moved).
pub(super) fn core_inside_collection(jvm: &Jvm) -> bool {
    let flag = crate::heap::spaces::stw_collection_flag(&jvm.vm, jvm.memory());
    flag.is_some_and(|f| {
        crate::heap::spaces::stw_collection_active(jvm.memory(), f).unwrap_or(false)
    })
}

/// A core's warnings, and one more when the process was inside a stop-the-world collection
/// when the core was made (its heap may hold objects half moved).
pub(super) fn core_warnings(jvm: Jvm) -> Vec<Warning> {
    let inside = core_inside_collection(&jvm);
    let mut warnings = jvm.warnings;
    if inside {
        warnings.push(Warning::InsideCollection { waited: None });
    }
    warnings
}
