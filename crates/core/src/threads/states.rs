//! Java threads by state, read **without stopping the JVM** (issue 29 item 5: `serve
//! --thread-states`, `top`'s BLOCKED and WAITING columns): the thread list
//! ([`super::list::ThreadLayout::thread_addresses`]), each `JavaThread::_threadObj`, and
//! that `java.lang.Thread`'s `threadStatus` and `daemon` (in `Thread.FieldHolder` from JDK 19).
//! No frame is walked.
//!
//! The JVM runs while this reads it, so every read may be torn:
//! * the list is taken as a snapshot: its head (read through the raw reader, not the page
//!   cache), its entries, and its head again; a list replaced meanwhile (a thread started or
//!   ended: `ThreadsSMRSupport` publishes a new `ThreadsList` and may free the old one) is read
//!   again, at most [`MAX_LIST_TRIES`] times, then given up with an error;
//! * the threads are read, then a second snapshot of the list is taken: only the threads in both
//!   are counted (alive from before the reads to after them). A thread that ended or started
//!   during the read is left out, as it is of one of jcmd's two dumps around it; a busy JVM
//!   starting thousands of threads a second still gets its long-lived threads counted;
//! * each thread object must be of a class that extends `java.lang.Thread`, and its holder of
//!   class `Thread$FieldHolder`; a thread whose reads fail or whose objects are not those
//!   (an object a collector just moved, a thread being set up) is dropped and counted as such.
//!
//! The set counted is the one `jcmd Thread.print` prints a `java.lang.Thread.State:` line for:
//! every `JavaThread` with a `java.lang.Thread`, including the JVM's own Java threads that JMX
//! hides (compiler threads, `Service Thread`, ...). The state is `threadStatus` mapped as
//! `jdk.internal.misc.VM.toThreadState` maps it (`JVMTI_THREAD_STATE_*` bits,
//! `classfile/javaThreadStatus.hpp`), which is also what `ThreadMXBean` reports.

use std::collections::HashSet;

use super::list::ThreadLayout;
use crate::error::{Error, VmError};
use crate::memory::ReadMemory;
use crate::vm::VmModel;
use crate::vm::java::{JavaLayout, JavaReader, StatusFields};
use crate::vm::paged::Paged;

/// How many times a thread list replaced during its read is read again before giving up.
pub const MAX_LIST_TRIES: usize = 4;

/// `java.lang.Thread.State`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum ThreadState {
    /// Not started.
    New,
    /// Running or ready to run (in Java or in native code).
    Runnable,
    /// Waiting to enter a monitor.
    Blocked,
    /// `Object.wait()`, `LockSupport.park()`, `Thread.join()` without a timeout.
    Waiting,
    /// `Thread.sleep`, and the waits above with a timeout.
    TimedWaiting,
    /// Ended.
    Terminated,
}

impl ThreadState {
    /// Every state, in `Thread.State`'s order.
    pub const ALL: [ThreadState; 6] = [
        ThreadState::New,
        ThreadState::Runnable,
        ThreadState::Blocked,
        ThreadState::Waiting,
        ThreadState::TimedWaiting,
        ThreadState::Terminated,
    ];

    /// The state of a `threadStatus` value, by its JVMTI bits as
    /// `jdk.internal.misc.VM.toThreadState` tests them: RUNNABLE `0x4`, BLOCKED_ON_MONITOR_ENTER
    /// `0x400`, WAITING_INDEFINITELY `0x10`, WAITING_WITH_TIMEOUT `0x20`, TERMINATED `0x2`, and
    /// NEW when ALIVE (`0x1`) is clear; anything else alive is RUNNABLE.
    pub fn from_status(status: i32) -> ThreadState {
        if status & 0x4 != 0 {
            ThreadState::Runnable
        } else if status & 0x400 != 0 {
            ThreadState::Blocked
        } else if status & 0x10 != 0 {
            ThreadState::Waiting
        } else if status & 0x20 != 0 {
            ThreadState::TimedWaiting
        } else if status & 0x2 != 0 {
            ThreadState::Terminated
        } else if status & 0x1 == 0 {
            ThreadState::New
        } else {
            ThreadState::Runnable
        }
    }

    /// `Thread.State.name()`: `TIMED_WAITING` (client_java's `state` label).
    pub fn name(self) -> &'static str {
        match self {
            ThreadState::New => "NEW",
            ThreadState::Runnable => "RUNNABLE",
            ThreadState::Blocked => "BLOCKED",
            ThreadState::Waiting => "WAITING",
            ThreadState::TimedWaiting => "TIMED_WAITING",
            ThreadState::Terminated => "TERMINATED",
        }
    }

    /// Micrometer's tag value (`JvmThreadMetrics.getStateTagValue`: lower case, `_` made `-`):
    /// `timed-waiting`.
    pub fn micrometer(self) -> &'static str {
        match self {
            ThreadState::New => "new",
            ThreadState::Runnable => "runnable",
            ThreadState::Blocked => "blocked",
            ThreadState::Waiting => "waiting",
            ThreadState::TimedWaiting => "timed-waiting",
            ThreadState::Terminated => "terminated",
        }
    }

    /// OpenTelemetry's `jvm.thread.state` value (`model/jvm/registry.yaml`): `timed_waiting`.
    pub fn otel(self) -> &'static str {
        match self {
            ThreadState::New => "new",
            ThreadState::Runnable => "runnable",
            ThreadState::Blocked => "blocked",
            ThreadState::Waiting => "waiting",
            ThreadState::TimedWaiting => "timed_waiting",
            ThreadState::Terminated => "terminated",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// How many Java threads are in each state, daemon and not, as one no-stop read found them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ThreadStates {
    /// `[state][daemon as usize]`, states in [`ThreadState::ALL`]'s order.
    counts: [[u32; 2]; 6],
    /// Threads of the list that could not be read (torn reads: exiting, not yet started, or
    /// objects a collector was moving); not in any count.
    pub dropped: u32,
}

impl ThreadStates {
    /// Threads in `state` that are daemons (`daemon`) or not.
    pub fn count(&self, state: ThreadState, daemon: bool) -> u32 {
        self.counts[state.index()][usize::from(daemon)]
    }

    /// Threads in `state`, daemon or not.
    pub fn in_state(&self, state: ThreadState) -> u32 {
        self.count(state, false) + self.count(state, true)
    }

    /// Every thread counted.
    pub fn total(&self) -> u32 {
        ThreadState::ALL.iter().map(|s| self.in_state(*s)).sum()
    }

    fn add(&mut self, state: ThreadState, daemon: bool) {
        self.counts[state.index()][usize::from(daemon)] += 1;
    }
}

/// What a reader keeps of one JVM between reads, in place of its whole model: the thread list's
/// layout, the object layout, where the state fields are (found from the first thread read),
/// and the classes known to extend `java.lang.Thread` (at most [`MAX_KNOWN_CLASSES`]).
#[derive(Debug, Clone)]
pub struct StatesLayout {
    threads: ThreadLayout,
    java: JavaLayout,
    fields: Option<StatusFields>,
    thread_classes: HashSet<u64>,
}

/// The most `Klass*` remembered as extending `java.lang.Thread`.
pub const MAX_KNOWN_CLASSES: usize = 4096;

impl StatesLayout {
    /// Resolves the thread list's and the objects' entries from `vm`.
    ///
    /// # Errors
    /// [`Error::Vm`] naming a missing entry.
    pub fn new(vm: &VmModel) -> Result<Self, Error> {
        Ok(StatesLayout {
            threads: ThreadLayout::new(vm)?,
            java: JavaLayout::new(vm)?,
            fields: None,
            thread_classes: HashSet::new(),
        })
    }
}

/// Counts the Java threads of a running JVM by state, reading `mem` without a stop (see the
/// module's notes on torn reads). `layout` is this JVM's ([`StatesLayout::new`]), kept between
/// calls.
///
/// # Errors
/// [`Error::Memory`] or [`Error::Vm`] when the thread list cannot be read, or kept
/// changing over [`MAX_LIST_TRIES`] reads; [`Error::Vm`] when no thread's
/// `java.lang.Thread` fields can be resolved.
pub fn count_states(
    mem: &dyn ReadMemory,
    layout: &mut StatesLayout,
) -> Result<ThreadStates, Error> {
    let before = snapshot(layout, mem)?;
    let paged = Paged::new(mem);
    let java = JavaReader::with_layout(layout.java, &paged);
    let read: Vec<(u64, Result<Option<Observed>, Error>)> = before
        .iter()
        .map(|&address| (address, one(&java, &paged, layout, address)))
        .collect();
    let after: HashSet<u64> = snapshot(layout, mem)?.into_iter().collect();
    let mut states = ThreadStates::default();
    for (address, r) in read {
        if !after.contains(&address) {
            continue; // ended during the read
        }
        match r {
            Ok(Some((state, daemon))) => states.add(state, daemon),
            Ok(None) => {}
            Err(_) => states.dropped += 1,
        }
    }
    if states.total() == 0 && states.dropped > 0 {
        return Err(VmError::NoThreadObject {
            threads: u64::from(states.dropped),
        }
        .into());
    }
    Ok(states)
}

/// The `JavaThread*`s of the published thread list, read between two reads of its head that
/// agree (so the entries are those of one list while it was published).
fn snapshot(layout: &StatesLayout, mem: &dyn ReadMemory) -> Result<Vec<u64>, Error> {
    for _ in 0..MAX_LIST_TRIES {
        let head = layout.threads.list_head(mem)?;
        let read = layout.threads.thread_addresses(mem);
        if layout.threads.list_head(mem)? == head {
            return Ok(read?.1);
        }
    }
    Err(VmError::ThreadListChanging {
        tries: MAX_LIST_TRIES as u32,
    }
    .into())
}

/// A thread's state and whether it is a daemon.
type Observed = (ThreadState, bool);

/// One thread's state and daemon flag; `None` for a thread with no `java.lang.Thread` yet
/// (jcmd prints no state for it either).
fn one(
    java: &JavaReader<'_>,
    mem: &dyn ReadMemory,
    layout: &mut StatesLayout,
    address: u64,
) -> Result<Option<Observed>, Error> {
    let oop = layout.threads.thread_obj(mem, address)?;
    if oop == 0 {
        return Ok(None);
    }
    let fields = match layout.fields {
        Some(f) => f,
        None => {
            let f = java.status_fields(oop)?;
            layout.thread_classes.insert(f.thread_class);
            layout.fields = Some(f);
            f
        }
    };
    let klass = java.klass_at(oop)?;
    if !layout.thread_classes.contains(&klass) {
        if !java.extends(klass, fields.thread_class)? {
            return Err(VmError::NotAThread { thread: address }.into());
        }
        if layout.thread_classes.len() < MAX_KNOWN_CLASSES {
            layout.thread_classes.insert(klass);
        }
    }
    let (status, daemon) = java.status(oop, &fields)?;
    Ok(Some((ThreadState::from_status(status), daemon)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_values_map_as_the_jdk_maps_them() {
        // javaThreadStatus.hpp's values.
        let cases = [
            (0, ThreadState::New),
            (0x5, ThreadState::Runnable),
            (0xE1, ThreadState::TimedWaiting),
            (0x191, ThreadState::Waiting),
            (0x1A1, ThreadState::TimedWaiting),
            (0x291, ThreadState::Waiting),
            (0x2A1, ThreadState::TimedWaiting),
            (0x401, ThreadState::Blocked),
            (0x2, ThreadState::Terminated),
        ];
        for (status, state) in cases {
            assert_eq!(ThreadState::from_status(status), state, "{status:#x}");
        }
    }

    #[test]
    fn counts_add_up() {
        let mut s = ThreadStates::default();
        s.add(ThreadState::Runnable, true);
        s.add(ThreadState::Runnable, false);
        s.add(ThreadState::TimedWaiting, true);
        assert_eq!(s.in_state(ThreadState::Runnable), 2);
        assert_eq!(s.count(ThreadState::TimedWaiting, true), 1);
        assert_eq!(s.total(), 3);
        assert_eq!(ThreadState::TimedWaiting.micrometer(), "timed-waiting");
        assert_eq!(ThreadState::TimedWaiting.otel(), "timed_waiting");
    }
}
