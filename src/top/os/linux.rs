//! `top` on Linux: `/proc` for the pids and a process's figures, glibc's malloc settings,
//! signals and `poll(2)` for the terminal.

use std::collections::HashSet;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use hsinspect::Pid;
use procfs::FromRead;

use super::{Input, STOP};

/// A process's CPU time and RSS, sample after sample: its `/proc/<pid>/stat`, held open and
/// re-read with `pread` (one system call a sample; a reused pid is another file, so an exited
/// process's reads fail rather than lie).
pub struct Usage {
    stat: Option<std::fs::File>,
}

impl Usage {
    /// Opens `/proc/<pid>/stat` (a failure shows as figures unknown).
    pub fn open(pid: Pid) -> Usage {
        Usage {
            stat: std::fs::File::open(format!("/proc/{pid}/stat")).ok(),
        }
    }

    /// `utime + stime` in seconds and the RSS in bytes, from the process's `/proc/<pid>/stat`
    /// (`utime`, `stime` in clock ticks, `rss` in pages), read again from offset 0.
    pub fn sample(&self) -> (Option<f64>, Option<u64>) {
        let Some(file) = &self.stat else {
            return (None, None);
        };
        let mut buf = [0u8; 2048];
        let stat = match file.read_at(&mut buf, 0) {
            Ok(n) if n < buf.len() => procfs::process::Stat::from_read(&buf[..n]).ok(),
            _ => None,
        };
        match stat {
            Some(s) => (
                Some((s.utime + s.stime) as f64 / procfs::ticks_per_second() as f64),
                Some(s.rss * procfs::page_size()),
            ),
            None => (None, None),
        }
    }
}

/// The pids in `/proc` now (one `getdents` pass; nothing opened per process), and how to learn
/// a pid's thread count: `/proc/<pid>/stat`, `None` when it is gone.
pub fn pids() -> anyhow::Result<(HashSet<Pid>, impl Fn(Pid) -> Option<i64>)> {
    let pids = std::fs::read_dir("/proc")
        .context("listing /proc")?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    let threads = |pid: Pid| {
        let bytes = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        procfs::process::Stat::from_read(&bytes[..])
            .ok()
            .map(|s| s.num_threads)
    };
    Ok((pids, threads))
}

/// Two malloc arenas: each scan's worker threads would otherwise each get a glibc malloc arena
/// of their own, which keeps freed pages (as in `serve`). Call it before any other thread exists.
pub fn limit_malloc_arenas() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets an allocator parameter; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Gives the free pages back to the kernel (glibc), after a scan's peak.
pub fn trim_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free memory to the kernel; no pointer is involved.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A thread dump of `pid` as `inspect threads` prints it; the error's words when it cannot be
/// taken.
pub fn thread_dump_text(pid: Pid) -> String {
    match hsinspect::pipeline::dump_threads(pid, &hsinspect::pipeline::ThreadsOptions::default()) {
        Ok(d) => hsinspect::format::thread_dump::to_jcmd_text(&d.dump),
        Err(e) => format!(
            "inspect threads {pid}: {}",
            hsinspect::error::with_causes(&e)
        ),
    }
}

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// SIGTERM, SIGINT and SIGHUP set the flag of [`stop_requested`](super::stop_requested).
pub fn catch_stop_signals() -> anyhow::Result<()> {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    let action = SigAction::new(
        SigHandler::Handler(on_stop_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { sigaction(s, &action) }?;
    }
    Ok(())
}

/// Waits up to `wait` for input on stdin (the terminal crossterm reads) with one `poll(2)`.
pub fn wait_for_input(wait: Duration) -> Input {
    let mut p = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = wait.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd.
    let ready = unsafe { libc::poll(&mut p, 1, ms) };
    if ready > 0 && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        Input::Gone
    } else {
        Input::Ready
    }
}
