//! Targets: live processes (identity, liveness, stopping them briefly) and hsperfdata files.
//!
//! # The OS seam
//!
//! Everything OS-specific of this stage is in one module, [`os`], chosen once below: `linux/`
//! (procfs, pidfd, ptrace; `perfMemory_posix.cpp`'s file rules), `windows.rs` (process handles,
//! a debug attach; `perfMemory_windows.cpp`'s file mapping) or `unsupported.rs` (any other OS, or
//! the `live` feature off: no live process, portable file reads). Each exports the same names,
//! which the pipelines use and nothing else:
//!
//! | name | what it is |
//! |---|---|
//! | `Process` | a live process opened by pid: `open`, `pid`, `name`, `age`, `check_same` (the pid still names it: pid reuse, exit) |
//! | `exited_or_exiting(pid)` | whether a process is gone or on its way out (turns odd errors into [`crate::error::Error::ProcessExited`]) |
//! | `stop(&Process, timeout)` → `Stopped`; `Stopped::release()` → [`StopReport`] | hold every thread still for a consistent read, and let it go exactly as it was |
//! | `shared_bytes(&Process)` | the JVM's shared PerfData (hsperfdata file or mapping) and where it was found |
//! | `read_hsperfdata_file(path)` | a saved hsperfdata file, with the platform's file rules |
//! | `permission_hint(pid)` | what to do when the OS refuses access to a process |
//! | `not_a_jvm(pid)` | `Some(Error::NotAJvm)` when the process surely maps no JVM (so a missing hsperfdata file is not blamed on `-XX:+PerfDisableSharedMem`) |
//! | `user_name(uid)` | a uid's user name, where the OS has uids |
//! | `usage(pid)` | the process's [`ProcessUsage`] (CPU time, memory, handles), for `process_*` metrics |
//! | `task_stat(pid, tid)` (Linux, Windows) | one thread's [`TaskStat`] (state, CPU time, nice; Windows: `GetThreadTimes`, `GetThreadPriority`); `Stopped::task_stat(tid)` gives it as read when the thread was stopped |
//! | `TaskStates::new(pid)` → `state(tid)`, `run_time_ns(tid)` | threads' state letters and run times read again and again, as a sampler reads them (Linux: each `stat` and `schedstat` kept open, up to the open-file limit less 128; elsewhere `task_stat` afresh) |
//! | `holds_single_threads()`, `stop_threads(&Process, tids, timeout)` → `Stopped` (`not_stopped`) | hold only some threads (Linux: ptrace, each thread alone); `Unsupported` elsewhere |
//! | `list_tasks(pid)`, `thread_name(pid, tid)` | a process's threads and a thread's OS name (Linux: `/proc/<pid>/task`, `comm`; `Unsupported` and `None` elsewhere) |
//!
//! A new OS is one more module here (and one in `read/` and `locate/`).

use std::time::Duration;

pub use crate::pid::Pid;

#[cfg(all(feature = "live", target_os = "linux"))]
#[path = "linux/mod.rs"]
pub(crate) mod os;
#[cfg(all(feature = "live", windows))]
#[path = "windows.rs"]
pub(crate) mod os;
#[cfg(not(all(feature = "live", any(target_os = "linux", windows))))]
#[path = "unsupported.rs"]
pub(crate) mod os;

/// Whether a thread's [`TaskStat::nice`] is the `os_prio=` jcmd prints only when the JVM uses
/// the OS's priorities (Linux: `os::get_native_priority` gives 0 otherwise); Windows'
/// `GetThreadPriority` is printed always.
pub(crate) use os::OS_PRIORITY_IS_NICE;
/// Threads' state letters and run times read again and again (Linux: each file kept open).
#[cfg(all(feature = "live", target_os = "linux"))]
pub(crate) use os::TaskStates;

/// The state letters and run times of some threads of one process: where files are not kept
/// open (not Linux), each read is [`task_stat`]'s afresh.
#[cfg(not(all(feature = "live", target_os = "linux")))]
pub(crate) struct TaskStates {
    pid: Pid,
}

#[cfg(not(all(feature = "live", target_os = "linux")))]
impl TaskStates {
    /// For process `pid`.
    pub(crate) fn new(pid: Pid) -> Self {
        TaskStates { pid }
    }

    /// Thread `tid`'s state letter.
    pub(crate) fn state(&self, tid: Pid) -> Option<u8> {
        task_stat(self.pid, tid).map(|s| s.state)
    }

    /// As [`TaskStates::state`].
    pub(crate) fn state_once(&self, tid: Pid) -> Option<u8> {
        self.state(tid)
    }

    /// Not read here: `None` (the caller lists the threads instead).
    pub(crate) fn thread_count(&self, _tid: Pid) -> Option<u64> {
        None
    }

    /// Thread `tid`'s CPU time in nanoseconds.
    pub(crate) fn run_time_ns(&self, tid: Pid) -> Option<u64> {
        task_stat(self.pid, tid).map(|s| (s.cpu_ms * 1e6) as u64)
    }

    /// Nothing is kept open.
    pub(crate) fn keep_only(&self, _tids: &[Pid]) {}
}

/// A first look at threads, to tell later which of them did not run since (Linux: each
/// thread's `schedstat` kept open).
#[cfg(all(feature = "live", target_os = "linux"))]
pub(crate) use os::RunWatch;

/// A first look at threads, to tell later which did not run since: where no run count is
/// known (not Linux), none is ever quiet.
#[cfg(not(all(feature = "live", target_os = "linux")))]
pub(crate) struct RunWatch {
    pid: Pid,
    first: std::collections::HashMap<Pid, TaskStat>,
}

#[cfg(not(all(feature = "live", target_os = "linux")))]
impl RunWatch {
    /// Looks at threads `tids` of process `pid` now ([`task_stat`]).
    pub(crate) fn start(pid: Pid, tids: &[Pid]) -> RunWatch {
        let first = tids
            .iter()
            .filter_map(|&tid| Some((tid, task_stat(pid, tid)?)))
            .collect();
        RunWatch { pid, first }
    }

    /// Thread `tid` at the first look.
    pub(crate) fn first(&self, tid: Pid) -> Option<TaskStat> {
        self.first.get(&tid).copied()
    }

    /// Thread `tid` now ([`task_stat`] again).
    pub(crate) fn again(&self, tid: Pid) -> Option<TaskStat> {
        self.first.get(&tid)?;
        task_stat(self.pid, tid)
    }

    /// Whether thread `tid` provably did not run since the first look
    /// ([`TaskStat::quiet_until`]).
    pub(crate) fn quiet(&self, tid: Pid) -> bool {
        match (self.first(tid), self.again(tid)) {
            (Some(b), Some(a)) => b.quiet_until(&a),
            _ => false,
        }
    }
}

/// The host's ids of a process's threads by the ids its own pid namespace gives them (Linux
/// `NSpid`; empty on Windows and in the reader's own namespace).
pub(crate) use os::namespace_tids;
/// A thread's `/proc/<pid>/task/<tid>/stat` (Linux), its `GetThreadTimes` and
/// `GetThreadPriority` (Windows): the thread-dump pipeline's `cpu=` and `os_prio=`.
pub(crate) use os::task_stat;
/// Holds only some threads of a process (ptrace; Linux): what samplers use, so that a thread
/// that does not run is never held. `holds_single_threads` says first whether this OS can
/// (elsewhere both give [`crate::error::Error::Unsupported`]).
pub(crate) use os::{holds_single_threads, stop_threads};
/// The threads of a process (`/proc/<pid>/task`) and a thread's OS name (`comm`); Linux
/// (elsewhere [`crate::error::Error::Unsupported`] and `None`).
pub(crate) use os::{list_tasks, thread_name};

pub(crate) use os::{
    Process, Stopped, exited_or_exiting, not_a_jvm, permission_hint, read_hsperfdata_file,
    shared_bytes, stop, user_name,
};

/// The file name of HotSpot's library on Linux, as a process maps it.
pub const LIBJVM: &str = "libjvm.so";

/// The path without the ` (deleted)` suffix `/proc/<pid>/maps` and `NT_FILE` give a file that was
/// deleted or replaced after it was mapped.
pub(crate) fn strip_deleted(p: &std::path::Path) -> std::path::PathBuf {
    let s = p.to_string_lossy();
    match s.strip_suffix(" (deleted)") {
        Some(n) => std::path::PathBuf::from(n),
        None => p.to_owned(),
    }
}

/// What the OS says a process uses: the values behind the `process_*` metrics of Prometheus
/// client_java (`ProcessMetrics`: `process_cpu_seconds_total`, `process_start_time_seconds`,
/// `process_open_fds`, `process_max_fds`, `process_virtual_memory_bytes`,
/// `process_resident_memory_bytes`) and Micrometer (`ProcessorMetrics`, `FileDescriptorMetrics`,
/// `UptimeMetrics`).
///
/// Linux: `/proc/<pid>/stat` (`utime + stime`, `starttime` with the boot time of `/proc/stat`,
/// `vsize`, `rss` pages, `num_threads`), `/proc/<pid>/fd` and `/proc/<pid>/limits`
/// (`Max open files`, soft limit), all through procfs. Windows: the process's times, memory
/// counters and handle count.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ProcessUsage {
    /// User plus system CPU time, in seconds.
    pub cpu_seconds: f64,
    /// When the process started, in seconds since the Unix epoch.
    pub start_time_seconds: f64,
    /// Resident set size, in bytes.
    pub resident_bytes: u64,
    /// Virtual memory size, in bytes.
    pub virtual_bytes: u64,
    /// Open file descriptors (`None` where the OS has none, or they cannot be counted: another
    /// user's `/proc/<pid>/fd` needs `CAP_SYS_PTRACE`).
    pub open_fds: Option<u64>,
    /// The soft limit on open file descriptors (`None` when unlimited or unknown).
    pub max_fds: Option<u64>,
    /// Threads in the process, as the OS counts them (Java and native threads alike).
    pub threads: u64,
}

/// What `/proc/<pid>/task/<tid>/stat` says of one thread (`fs/proc/array.c` `do_task_stat`):
/// the fields a thread dump prints (`os_prio=`, `cpu=`) and the stop uses (its state).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskStat {
    /// The state letter (field 3: `R`, `S`, `D`, `T`, `t`, ...).
    pub state: u8,
    /// User plus system CPU time (fields 14 and 15), in milliseconds.
    pub cpu_ms: f64,
    /// The nice value (field 19; jcmd's `os_prio=` on Linux).
    pub nice: i64,
    /// How many times the scheduler put the thread on a CPU (`schedstat`'s third field,
    /// `sched_info.pcount`); `None` where it is not known (no `CONFIG_SCHED_INFO`, Windows).
    /// Equal counts in two reads with the thread not running (`state` other than `R`) at the
    /// first and no more CPU time mean it did not run between them.
    pub run_count: Option<u64>,
}

impl TaskStat {
    /// Whether the thread provably did not run between `self` (read first) and `later`: not
    /// running or runnable at the first read (`R`), and neither its CPU time nor its run count
    /// moved. `false` when the run count is not known.
    pub fn quiet_until(&self, later: &TaskStat) -> bool {
        self.state != b'R'
            && later.state != b'R'
            && self.run_count.is_some()
            && self.run_count == later.run_count
            && self.cpu_ms == later.cpu_ms
    }
}

impl TaskStat {
    /// Parses a `stat` line, given `tick_ms` milliseconds per clock tick: the fields are counted
    /// from the last `)`, which ends `comm` (a command name may hold `)` and spaces). `None` for
    /// a line cut before the nice value.
    pub fn parse(line: &[u8], tick_ms: f64) -> Option<TaskStat> {
        let close = line.iter().rposition(|&b| b == b')')?;
        let rest = std::str::from_utf8(&line[close + 1..]).ok()?;
        // After comm: state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
        // utime(14) stime(15) cutime cstime priority(18) nice(19).
        let mut f = rest.split_ascii_whitespace();
        let state = *f.next()?.as_bytes().first()?;
        let mut f = f.skip(10);
        let utime: u64 = f.next()?.parse().ok()?;
        let stime: u64 = f.next()?.parse().ok()?;
        let nice: i64 = f.nth(3)?.parse().ok()?;
        Some(TaskStat {
            state,
            cpu_ms: (utime + stime) as f64 * tick_ms,
            nice,
            run_count: None,
        })
    }
}

/// The `num_threads` field (the 20th) of a `/proc/<pid>/task/<tid>/stat` line
/// (`fs/proc/array.c` `do_task_stat`: the thread group's count, whichever thread's file).
#[cfg_attr(not(all(feature = "live", target_os = "linux")), allow(dead_code))]
pub(crate) fn num_threads(line: &[u8]) -> Option<u64> {
    let close = line.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&line[close + 1..]).ok()?;
    // After comm: state(3) ... nice(19) num_threads(20).
    rest.split_ascii_whitespace().nth(17)?.parse().ok()
}

/// What the OS says process `pid` uses now.
///
/// # Errors
/// [`crate::error::Error::NoSuchProcess`] when it has exited, [`crate::error::Error::PermissionDenied`] when
/// the OS hides it, [`crate::error::Error::Unsupported`] on an OS without a live backend.
pub fn usage(pid: Pid) -> Result<ProcessUsage, crate::error::Error> {
    os::usage(pid)
}

/// How a stop held the target, for `-v` (`--stop-timeout` bounds it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopMethod {
    /// Linux: every thread seized and interrupted with ptrace (`PTRACE_SEIZE`,
    /// `PTRACE_INTERRUPT`), then detached.
    Ptrace {
        /// Threads held.
        threads: usize,
        /// The process was in group-stop (SIGSTOP) before, and stays stopped.
        already_stopped: bool,
        /// The longest any one thread was held: from its `PTRACE_INTERRUPT` to its detach.
        longest_hold: Duration,
        /// The longest a thread that was running (`R`) when seized was held: running threads
        /// are interrupted last and released first, so this is what a thread doing work sees.
        /// `None` when no thread was running.
        longest_running_hold: Option<Duration>,
    },
    /// Windows: a debug attach (`DebugActiveProcess`) whose breakpoint event suspends every
    /// thread until it is continued.
    DebugAttach {
        /// Debug events drained before the attach breakpoint (process, threads, DLLs).
        events: usize,
        /// From the attach to the attach breakpoint (the JVM is held from then on).
        to_stop: Duration,
    },
}

/// What a stop of a live process cost: how, for how long, and which threads it could not stop.
///
/// Two measures: [`StopReport::stopped_for`] is the whole stop, from the first thread held to
/// the last one released (what `-v` prints first); a thread is held for less, from its own
/// interrupt to its own release ([`StopMethod::Ptrace`]'s `longest_hold`, and
/// `longest_running_hold` for the threads that were doing work).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopReport {
    /// How the threads were held.
    pub method: StopMethod,
    /// From the first thread held to the last one released.
    pub stopped_for: Duration,
    /// Thread ids that had not stopped when the timeout passed (read anyway).
    pub not_stopped: Vec<Pid>,
}

impl std::fmt::Display for StopReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.stopped_for.as_secs_f64() * 1e3;
        match &self.method {
            StopMethod::Ptrace {
                threads,
                already_stopped,
                longest_hold,
                longest_running_hold,
            } => {
                write!(
                    f,
                    "stopped {threads} threads for {ms:.3} ms{}: each thread held at most {:.3} ms",
                    if *already_stopped {
                        " (the process was already stopped and stays stopped)"
                    } else {
                        ""
                    },
                    longest_hold.as_secs_f64() * 1e3
                )?;
                match longest_running_hold {
                    Some(r) => write!(
                        f,
                        ", a running thread at most {:.3} ms",
                        r.as_secs_f64() * 1e3
                    ),
                    None => f.write_str(", no thread was running"),
                }
            }
            StopMethod::DebugAttach { events, to_stop } => write!(
                f,
                "stopped by a debug attach for {ms:.3} ms ({events} debug events, {:.3} ms to the attach breakpoint)",
                to_stop.as_secs_f64() * 1e3
            ),
        }
    }
}

#[cfg(test)]
mod task_stat_tests {
    use super::TaskStat;

    #[test]
    fn fields_count_from_the_last_parenthesis() {
        let line = b"4242 (C2 (x) Thr) S 1 2 3 0 -1 4194368 10 0 0 0 150 50 0 0 20 -5 1 0 9";
        let s = TaskStat::parse(line, 10.0).unwrap();
        assert_eq!((s.state, s.cpu_ms, s.nice), (b'S', 2000.0, -5));
        // Cut before the nice value: nothing, never a guess.
        assert_eq!(TaskStat::parse(&line[..60], 10.0), None);
        assert_eq!(TaskStat::parse(b"", 10.0), None);
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::strip_deleted;

    #[test]
    fn strip_deleted_removes_only_the_suffix() {
        assert_eq!(
            strip_deleted(Path::new("/j/lib/server/libjvm.so (deleted)")),
            PathBuf::from("/j/lib/server/libjvm.so")
        );
        assert_eq!(
            strip_deleted(Path::new("/j/a (deleted)/libjvm.so")),
            PathBuf::from("/j/a (deleted)/libjvm.so")
        );
    }
}
