//! One thread of a dump as the stages fill it in: what the VM keeps of it ([`super::list`]),
//! its Java identity (`vm::java`), frames ([`super::frames`]) and lock state
//! ([`super::locks`]); and the links of a Java-level deadlock. Plain data, so that the stages
//! that read it and [`super::dump`], which prints it, depend on it and not on each other.

use super::frames::{Frame, LockLine};
use super::list::VmThread;
use crate::registers::ThreadRegisters;
use crate::vm::java::JavaIdentity;

/// One thread of a dump.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DumpThread {
    /// What the VM keeps of it.
    pub vm: VmThread,
    /// Its `java.lang.Thread` fields, when readable.
    pub java: Option<JavaIdentity>,
    /// Its Java frames, innermost first.
    pub frames: Vec<Frame>,
    /// Why its frames or identity are incomplete, if they are.
    pub notes: Vec<String>,
    /// The virtual thread mounted on it (it is a carrier), with that thread's frames; `frames`
    /// then holds the carrier's own, below `Continuation.enterSpecial`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub virtual_thread: Option<MountedVirtualThread>,
    /// The registers its walk started from when it was running Java code (no anchor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registers: Option<ThreadRegisters>,
    /// CPU time of the OS thread in milliseconds (`/proc/<pid>/task/<tid>/stat`, live only).
    pub cpu_ms: Option<f64>,
    /// Its nice value (`os_prio`, from the same file).
    pub os_prio: Option<i64>,
    /// Its monitors and park blocker ([`super::locks`]).
    pub locks: ThreadLocks,
}

/// A virtual thread mounted on a carrier thread (JDK 21+): its frames sit on the carrier's
/// stack above the `jdk.internal.vm.Continuation.enterSpecial` frame (`JavaThread::
/// carrier_last_frame` starts the carrier's own frames at that frame's sender).
#[derive(Debug, Clone, serde::Serialize)]
pub struct MountedVirtualThread {
    /// Its `Thread.tid` (jcmd's `Carrying virtual thread #N`).
    pub tid: i64,
    /// Its frames, innermost first, down to `Continuation.enter`.
    pub frames: Vec<Frame>,
}

/// The lock state of one thread, read from its `JavaThread` and `java.lang.Thread`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ThreadLocks {
    /// `JavaThread::_current_pending_monitor` (an `ObjectMonitor*`, 0: none).
    pub pending_monitor: u64,
    /// Its `_object`.
    pub pending_object: u64,
    /// `JavaThread::_current_pending_monitor_is_from_java` (false: a JNI `MonitorEnter`).
    pub pending_from_java: bool,
    /// `JavaThread::_current_waiting_monitor`.
    pub waiting_monitor: u64,
    /// Its `_object`.
    pub waiting_object: u64,
    /// `Thread.parkBlocker` (0: none).
    pub park_blocker: u64,
    /// The objects of `JavaThread::_lock_stack` (lightweight locking, JDK 21+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lock_stack: Vec<u64>,
    /// The ownable synchronizers this thread is known to own (see the module doc).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub owned_synchronizers: Vec<LockLine>,
}

/// What a thread of a deadlock cycle waits for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Waits {
    /// An `ObjectMonitor` (its address), its object and the object's class.
    Monitor {
        /// The `ObjectMonitor*`.
        monitor: u64,
        /// Its object.
        object: u64,
        /// The object's class.
        class: Option<String>,
    },
    /// An `AbstractOwnableSynchronizer` and its class.
    Synchronizer {
        /// The synchronizer.
        object: u64,
        /// Its class.
        class: Option<String>,
    },
}

/// One thread of a deadlock cycle: its index in the dump's threads, what it waits for, and the
/// index of the thread holding that (`None`: not found, jcmd's `UNKNOWN_owner_addr`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeadlockLink {
    /// The waiting thread.
    pub thread: usize,
    /// What it waits for.
    pub waits: Waits,
    /// Who holds it.
    pub held_by: Option<usize>,
    /// The raw `ObjectMonitor::_owner` when the holder was not found.
    pub owner_raw: u64,
}
