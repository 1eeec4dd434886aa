//! Stopping every thread of a process for a moment, with `PTRACE_SEIZE` + `PTRACE_INTERRUPT`, and
//! letting it go exactly as it was.
//!
//! * Every thread in `/proc/<pid>/task` is seized and interrupted; the listing is repeated until
//!   it shows no new thread, so threads started meanwhile are caught too.
//! * Each stop is awaited with `waitpid(tid, __WALL | WNOHANG)` polling up to a bound; a thread
//!   that does not stop in time (uninterruptible sleep) is reported, never waited for forever.
//! * A thread that reported a signal-delivery-stop gets its signal back on `PTRACE_DETACH`, so the
//!   JVM loses no signal (it uses SIGSEGV for safepoint polls and implicit null checks).
//! * A process that was in group-stop (SIGSTOP) before stays stopped: the kernel puts a detached
//!   tracee back into group-stop while the stop is in effect.
//! * SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked while threads are held and unblocked after the
//!   last detach, so an interrupted `inspect` exits only once the target runs again; SIGTSTP,
//!   SIGTTIN and SIGTTOU too, so Ctrl-Z stops `inspect` only after the release (a stopped
//!   `inspect` would otherwise keep the JVM frozen until continued). If `inspect` is killed
//!   (SIGKILL), the kernel detaches every tracee itself. Only SIGSTOP of `inspect` itself, which
//!   cannot be blocked, can prolong a hold.
//!
//! `PTRACE_SEIZE` (not `PTRACE_ATTACH`) sends no SIGSTOP to the target, so nothing is left queued.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid as NixPid;

use crate::error::Error;
use crate::pid::Pid;
use crate::process::{StopMethod, StopReport, TaskStat};
use crate::registers::ThreadRegisters;

/// How many times `/proc/<pid>/task` is listed looking for threads started during the seize.
const MAX_ROUNDS: usize = 16;

/// A process whose threads are held in ptrace-stop. Dropping it (or [`Stopped::release`]) detaches
/// every thread.
#[derive(Debug)]
pub struct Stopped {
    threads: Vec<Held>,
    began: Instant,
    old_mask: Option<SigSet>,
    /// The process was in group-stop before (it stays stopped).
    already_stopped: bool,
    /// Threads that had not stopped when [`stop`] returned (the timeout passed).
    late: Vec<Pid>,
}

#[derive(Debug)]
struct Held {
    tid: Pid,
    /// Running (`R`) when seized: interrupted last and released first, so the threads doing
    /// work are held for the shortest time.
    running: bool,
    /// Its `/proc/<pid>/task/<tid>/stat` as read when it was seized (its CPU time at the stop,
    /// for a thread dump's `cpu=`).
    stat: Option<TaskStat>,
    stopped: bool,
    /// A signal the thread was about to receive when it stopped: given back on detach.
    reinject: Option<Signal>,
    /// When `PTRACE_INTERRUPT` was sent to it: its hold runs from here to its detach.
    interrupted_at: Option<Instant>,
}

pub(super) fn list_tasks(pid: Pid) -> Result<Vec<Pid>, Error> {
    let dir = format!("/proc/{pid}/task");
    let entries = std::fs::read_dir(&dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NoSuchProcess(pid),
        _ => Error::io(dir.as_ref(), e),
    })?;
    Ok(entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect())
}

/// Seizes and interrupts every thread of `pid` and waits for them to stop, all within `timeout`
/// from the call: threads not seized or not stopped by then are left running, and reported
/// ([`Stopped::not_stopped`], the report's `not_stopped`); `already_stopped`: the process was in
/// group-stop (reported, it stays stopped).
///
/// # Errors
/// [`Error::PermissionDenied`] (with the cause and fix) when ptrace is refused,
/// [`Error::AlreadyTraced`] when a debugger holds the process, [`Error::NoSuchProcess`] when it
/// is gone; any thread already held is released before the error is returned.
pub fn stop(pid: Pid, timeout: Duration, already_stopped: bool) -> Result<Stopped, Error> {
    stop_some(pid, None, timeout, already_stopped)
}

/// As [`stop`], holding only threads `tids` of `pid` (listed once: a thread started meanwhile
/// is not held); a thread of `tids` that has exited is left out. What a sampler uses to hold
/// only the threads that run.
///
/// # Errors
/// As [`stop`]; [`Error::NoSuchProcess`] when none of `tids` could be seized.
pub fn stop_threads(
    pid: Pid,
    tids: &[Pid],
    timeout: Duration,
    already_stopped: bool,
) -> Result<Stopped, Error> {
    stop_some(pid, Some(tids), timeout, already_stopped)
}

/// How long a release waits for a thread interrupted but not yet stopped, before leaving it to
/// [`release_late`].
const LATE_STOP_WAIT: Duration = Duration::from_secs(1);

/// Threads seized and interrupted by an earlier stop of this process that had not stopped when
/// it was released: each stops when it next runs, and is detached by [`release_late`].
fn late_threads() -> std::sync::MutexGuard<'static, Vec<Pid>> {
    static LATE: std::sync::Mutex<Vec<Pid>> = std::sync::Mutex::new(Vec::new());
    LATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Detaches every late thread that has reached its stop since (giving back a signal it
/// stopped for), forgets those that exited or are no longer traced by this process, and keeps
/// the rest for the next call.
fn release_late() {
    let mut late = late_threads();
    late.retain(|&tid| {
        let t = NixPid::from_raw(tid);
        match waitpid(t, Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => true,
            Ok(WaitStatus::Stopped(_, sig)) => {
                let _ = ptrace::detach(t, Some(sig));
                false
            }
            Ok(WaitStatus::PtraceEvent(..)) => {
                let _ = ptrace::detach(t, None);
                false
            }
            _ => false,
        }
    });
}

fn stop_some(
    pid: Pid,
    only: Option<&[Pid]>,
    timeout: Duration,
    already_stopped: bool,
) -> Result<Stopped, Error> {
    release_late();
    // The whole stop (seizing, interrupting, waiting) ends by then: the seizes of a JVM with
    // thousands of threads take milliseconds of their own (about 28 µs a thread).
    let deadline = Instant::now() + timeout;
    let mut block = SigSet::empty();
    for s in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGTSTP,
        Signal::SIGTTIN,
        Signal::SIGTTOU,
    ] {
        block.add(s);
    }
    let mut old = SigSet::empty();
    let old_mask = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&block), Some(&mut old))
        .ok()
        .map(|_| old);
    let mut held = Stopped {
        already_stopped,
        threads: Vec::new(),
        began: Instant::now(),
        old_mask,
        late: Vec::new(),
    };

    // Threads already seized (a set: a JVM can have thousands, listed again every round).
    let mut seized = HashSet::new();
    // Threads the deadline came before: never seized, so running through the read.
    let mut unreached = Vec::new();
    for _ in 0..MAX_ROUNDS {
        // Seize first (it stops nothing), then interrupt the new threads back to back: a thread
        // is held from its interrupt to its detach, so the seizes stay out of every hold.
        let first_new = held.threads.len();
        let tasks = match only {
            Some(tids) => tids.to_vec(),
            None => list_tasks(pid)?,
        };
        for tid in tasks {
            if !seized.insert(tid) {
                continue;
            }
            // Past the deadline, only the first thread (so a zero timeout still reads something
            // held, as "read anyway" promises for the rest).
            if !held.threads.is_empty() && Instant::now() >= deadline {
                unreached.push(tid);
                continue;
            }
            match ptrace::seize(NixPid::from_raw(tid), ptrace::Options::empty()) {
                Ok(()) => {}
                Err(Errno::ESRCH) => continue, // the thread exited meanwhile
                Err(Errno::EPERM) => {
                    return Err(refused(pid, tid, seized.len() > 1));
                }
                Err(e) => {
                    return Err(Error::Ptrace {
                        op: "PTRACE_SEIZE",
                        tid,
                        source: std::io::Error::from(e),
                    });
                }
            }
            // A whole-process stop keeps each thread's `stat` (a dump's `cpu=`) and interrupts
            // the threads that run last.
            let (running, stat) = match only {
                None => {
                    let stat = super::task_stat(pid, tid);
                    (stat.is_some_and(|s| s.state == b'R'), stat)
                }
                // Only threads that run are held alone (a sampler's running threads, a dump's
                // threads that ran): taken as running without a read of their own.
                Some(_) => (true, None),
            };
            held.threads.push(Held {
                tid,
                running,
                stat,
                stopped: false,
                reinject: None,
                interrupted_at: None,
            });
        }
        if held.threads.is_empty() {
            return Err(Error::NoSuchProcess(pid));
        }
        held.threads[first_new..].sort_by_key(|h| h.running);
        if first_new == 0 {
            held.began = Instant::now(); // the hold starts with the first interrupt
        }
        for h in &mut held.threads[first_new..] {
            h.interrupted_at = Some(Instant::now());
            match ptrace::interrupt(NixPid::from_raw(h.tid)) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => {
                    return Err(Error::Ptrace {
                        op: "PTRACE_INTERRUPT",
                        tid: h.tid,
                        source: std::io::Error::from(e),
                    });
                }
            }
        }
        let new = held.threads.len() - first_new;
        held.wait_for_stops(deadline.saturating_duration_since(Instant::now()));
        if new == 0 || Instant::now() >= deadline {
            break;
        }
    }
    held.late = held.not_stopped();
    held.late.extend(unreached);
    Ok(held)
}

/// The error of a `PTRACE_SEIZE` of thread `tid` refused with `EPERM`: another tracer's hold
/// when the thread has one, or had one (`seized_others`: this stop already seized other threads
/// of the process, so the permission was there; or this reader has `CAP_SYS_PTRACE`, which no
/// ownership or Yama rule refuses), else a permission error with its hint.
fn refused(pid: Pid, tid: Pid, seized_others: bool) -> Error {
    // The refused thread's own tracer: a debugger may trace one thread only (`strace -p <tid>`).
    let tracer = super::ProcessInfo::read(tid)
        .map(|info| info.tracer)
        .unwrap_or(0);
    if tracer != 0 && tracer != std::process::id() as Pid {
        return Error::AlreadyTraced {
            pid,
            tracer,
            command: command_of(tracer),
            waited_ms: 0,
        };
    }
    // A tracer that attached and let go between the seize and the look (another reader's hold of
    // a few milliseconds): the race was lost, not the permission.
    if seized_others || has_cap_sys_ptrace() {
        return Error::AlreadyTraced {
            pid,
            tracer: 0,
            command: String::new(),
            waited_ms: 0,
        };
    }
    Error::PermissionDenied {
        what: format!("ptrace(PTRACE_SEIZE) of thread {tid} of process {pid}"),
        hint: super::permission_hint(pid),
    }
}

/// Whether this process has `CAP_SYS_PTRACE` in its effective set (`CapEff` of
/// `/proc/self/status`, bit 19) and Yama lets that capability attach (`ptrace_scope` 3 refuses
/// every attach, `security/yama/yama_lsm.c`).
fn has_cap_sys_ptrace() -> bool {
    let no_attach = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .is_ok_and(|s| s.trim() == "3");
    !no_attach
        && procfs::process::Process::myself()
            .and_then(|p| p.status())
            .is_ok_and(|s| s.capeff & (1 << 19) != 0)
}

/// Process `pid`'s command line (`/proc/<pid>/cmdline`, arguments joined by spaces, at most 200
/// characters), else its `comm`, else `?`.
fn command_of(pid: Pid) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let text = if args.is_empty() {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim().to_string())
            .unwrap_or_default()
    } else {
        args.join(" ")
    };
    match text.char_indices().nth(200) {
        _ if text.is_empty() => "?".to_string(),
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text,
    }
}

#[cfg(target_arch = "x86_64")]
fn thread_registers(tid: NixPid) -> Option<ThreadRegisters> {
    let r = ptrace::getregs(tid).ok()?;
    Some(ThreadRegisters {
        pc: r.rip,
        sp: r.rsp,
        fp: r.rbp,
        bcp: r.r13,
        lr: None,
    })
}

#[cfg(target_arch = "aarch64")]
fn thread_registers(tid: NixPid) -> Option<ThreadRegisters> {
    let r = ptrace::getregset::<ptrace::regset::NT_PRSTATUS>(tid).ok()?;
    Some(ThreadRegisters {
        pc: r.pc,
        sp: r.sp,
        fp: r.regs[29],
        bcp: r.regs[22],
        lr: Some(r.regs[30]),
    })
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn thread_registers(_tid: NixPid) -> Option<ThreadRegisters> {
    None
}

impl Stopped {
    /// Polls every thread not yet stopped until all are, or `timeout` passes.
    fn wait_for_stops(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut spins = 0u32;
        loop {
            let mut pending = false;
            for h in self.threads.iter_mut().filter(|h| !h.stopped) {
                let flags = WaitPidFlag::__WALL | WaitPidFlag::WNOHANG;
                match waitpid(NixPid::from_raw(h.tid), Some(flags)) {
                    Ok(WaitStatus::PtraceEvent(..)) => h.stopped = true,
                    // Under PTRACE_SEIZE a plain stop is always a signal-delivery-stop (the
                    // interrupt and group-stops come as PTRACE_EVENT_STOP): the signal, SIGSTOP
                    // included, goes back to the thread on detach.
                    Ok(WaitStatus::Stopped(_, sig)) => {
                        h.stopped = true;
                        h.reinject = Some(sig);
                    }
                    Ok(WaitStatus::StillAlive) => pending = true,
                    Ok(_) | Err(_) => h.stopped = true, // exited or no longer ours: nothing to hold
                }
            }
            if !pending || Instant::now() >= deadline {
                return;
            }
            spins += 1;
            if spins > 64 {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// The registers of held thread `tid` (`PTRACE_GETREGS`, or `PTRACE_GETREGSET` with
    /// `NT_PRSTATUS` on aarch64); `None` when it is not one of the threads held in ptrace-stop
    /// or the kernel refuses. Read while the thread is held, so they are where it stopped.
    pub fn registers(&self, tid: Pid) -> Option<ThreadRegisters> {
        if !self.threads.iter().any(|h| h.tid == tid && h.stopped) {
            return None;
        }
        thread_registers(NixPid::from_raw(tid))
    }

    /// Thread `tid`'s `stat` as read when it was seized (before its interrupt): its CPU time and
    /// nice value at the stop. `None` for a thread not held or not readable, and after a stop of
    /// some threads only ([`stop_threads`], which reads nothing of them).
    pub fn task_stat(&self, tid: Pid) -> Option<TaskStat> {
        self.threads.iter().find(|h| h.tid == tid)?.stat
    }

    /// Threads that did not reach ptrace-stop within the timeout.
    pub fn not_stopped(&self) -> Vec<Pid> {
        self.threads
            .iter()
            .filter(|h| !h.stopped)
            .map(|h| h.tid)
            .collect()
    }

    /// Detaches every thread and unblocks the signals blocked by [`stop`].
    pub fn release(mut self) -> StopReport {
        self.detach_all()
    }

    fn detach_all(&mut self) -> StopReport {
        let threads = self.threads.len();
        let mut not_stopped = std::mem::take(&mut self.late);
        // A thread seized but never interrupted (a stop given up part way, e.g. another tracer
        // holds one of its threads) cannot reach a stop by itself, and PTRACE_DETACH needs one:
        // interrupt it now, so it is released here and not left traced until inspect exits (a
        // retry of the stop would then find it traced by inspect itself).
        for h in self.threads.iter().filter(|h| h.interrupted_at.is_none()) {
            let _ = ptrace::interrupt(NixPid::from_raw(h.tid));
        }
        // A thread that was not stopped cannot be detached (ESRCH): give it a last short chance
        // to reach its stop before the others are let go.
        if self.threads.iter().any(|h| !h.stopped) {
            self.wait_for_stops(Duration::from_millis(20));
        }
        // Running threads first, the last interrupted first; then the others in the order they
        // were interrupted, so each is held about as long as the next.
        let (mut first, rest): (Vec<Held>, Vec<Held>) =
            self.threads.drain(..).partition(|h| h.running);
        first.reverse();
        let (mut longest, mut longest_running) = (Duration::ZERO, None::<Duration>);
        for h in first.into_iter().chain(rest) {
            let r = ptrace::detach(NixPid::from_raw(h.tid), h.reinject);
            if let Some(at) = h.interrupted_at {
                let held = at.elapsed();
                longest = longest.max(held);
                if h.running {
                    longest_running = Some(longest_running.unwrap_or_default().max(held));
                }
            }
            if r.is_err() && !h.stopped {
                if !not_stopped.contains(&h.tid) {
                    not_stopped.push(h.tid);
                }
                late_threads().push(h.tid);
            }
        }
        // Its interrupt is still pending: a late thread stops as soon as it runs, and would stay
        // stopped for as long as inspect lives (a `serve`, a sampling loop). The others already
        // let go, wait for it a while; one that still has not stopped (uninterruptible) is
        // released by the next stop or release of this process, or by the kernel when inspect
        // exits.
        let deadline = Instant::now() + LATE_STOP_WAIT;
        loop {
            release_late();
            if late_threads().is_empty() || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let report = StopReport {
            method: StopMethod::Ptrace {
                threads,
                already_stopped: self.already_stopped,
                longest_hold: longest,
                longest_running_hold: longest_running,
            },
            not_stopped,
            stopped_for: self.began.elapsed(),
        };
        if let Some(mask) = self.old_mask.take() {
            let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&mask), None);
        }
        report
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        if !self.threads.is_empty() || self.old_mask.is_some() {
            self.detach_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_reads_as_running() {
        let pid = std::process::id() as Pid;
        let tid = nix::unistd::gettid().as_raw();
        let s = super::super::task_stat(pid, tid).expect("our own stat");
        assert_eq!(s.state, b'R', "the test thread itself is running");
        assert!(
            super::super::task_stat(pid, i32::MAX).is_none(),
            "no such thread"
        );
    }
}
