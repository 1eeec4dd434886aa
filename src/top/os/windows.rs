//! `top` on Windows: a toolhelp snapshot for the pids, [`hsinspect::process_usage`] for a
//! process's figures, the console's control events and crossterm's poll for the terminal.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hsinspect::Pid;
use ratatui::crossterm::event;

use super::{Input, STOP};

/// A process's CPU time and working set, sample after sample.
pub struct Usage {
    pid: Pid,
}

impl Usage {
    /// For the process `pid` (nothing is held open).
    pub fn open(pid: Pid) -> Usage {
        Usage { pid }
    }

    /// The CPU time in seconds and the working set in bytes ([`hsinspect::process_usage`]).
    pub fn sample(&self) -> (Option<f64>, Option<u64>) {
        match hsinspect::process_usage(self.pid) {
            Ok(u) => (Some(u.cpu_seconds), Some(u.resident_bytes)),
            Err(_) => (None, None),
        }
    }
}

/// The pids of one toolhelp process snapshot, with their thread counts.
pub fn pids() -> anyhow::Result<(HashSet<Pid>, impl Fn(Pid) -> Option<i64>)> {
    let all: std::collections::HashMap<i32, i64> = hsinspect::discover::processes()?
        .into_iter()
        .map(|p| (p.pid, i64::from(p.threads)))
        .collect();
    let pids = all.keys().copied().collect();
    Ok((pids, move |pid| all.get(&pid).copied()))
}

/// Nothing to set on Windows.
pub fn limit_malloc_arenas() {}

/// Nothing to trim on Windows.
pub fn trim_heap() {}

/// A live thread dump is read on Linux: what `t` shows instead.
pub fn thread_dump_text(pid: Pid) -> String {
    format!("inspect threads {pid}: thread dumps of a live JVM are read on Linux")
}

/// The console's Ctrl-C, Ctrl-Break (in raw mode Ctrl-C is a key, `q`'s twin), close, logoff
/// and shutdown events set the flag of [`stop_requested`](super::stop_requested)
/// (`SetConsoleCtrlHandler`).
pub fn catch_stop_signals() -> anyhow::Result<()> {
    unsafe extern "system" fn on_ctrl(_kind: u32) -> windows_sys::core::BOOL {
        STOP.store(true, Ordering::SeqCst);
        1
    }
    // SAFETY: the handler only stores to an atomic.
    if unsafe { windows_sys::Win32::System::Console::SetConsoleCtrlHandler(Some(on_ctrl), 1) } == 0
    {
        return Err(std::io::Error::last_os_error().into());
    }
    Ok(())
}

/// crossterm's own poll of the console input (a console does not hang up as a terminal does; a
/// closed console is the close event of [`catch_stop_signals`]).
pub fn wait_for_input(wait: Duration) -> Input {
    let _ = event::poll(wait);
    Input::Ready
}
