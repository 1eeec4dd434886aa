//! `top`'s OS seam: a process's CPU time and RSS, the host's pids with their thread counts, the
//! allocator's setting and trim, a live thread dump where there is one, and the terminal (the
//! stop signals or console events, and the wait for input). Each OS file has the same names;
//! the shared files of `top/` use only these.

use std::sync::atomic::{AtomicBool, Ordering};

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

/// Set by SIGTERM, SIGINT or SIGHUP (Windows: the console's control events), once
/// `catch_stop_signals` ran.
static STOP: AtomicBool = AtomicBool::new(false);

/// Whether a stop signal (or console event) came.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// What the terminal has for us within a wait.
pub enum Input {
    /// Bytes to read (or the wait passed): crossterm may be asked for an event.
    Ready,
    /// The terminal hung up (an SSH connection dropped, a tmux session killed, the terminal
    /// emulator closed), with or without a SIGHUP reaching us: nothing can be shown and nobody
    /// can quit, so the view ends. (crossterm's own poll would spin on the end-of-file a hung-up
    /// terminal reads as, and never return.) A Windows console does not hang up.
    #[cfg_attr(
        windows,
        allow(dead_code, reason = "a Windows console does not hang up")
    )]
    Gone,
}
