//! `serve` on Linux: SIGTERM and SIGINT stop it (taken by one thread with `sigwait`); no service.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

use super::super::{ServeArgs, http};

/// The flags of a Windows service: none here.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServiceArgs {}

/// What stops a [`serve`](super::super::serve).
pub enum Stop {
    /// SIGTERM or SIGINT.
    Console,
}

/// The Windows service's install, uninstall and run: none here, so always `None`.
pub fn service_command(_args: &ServeArgs) -> Option<anyhow::Result<ExitCode>> {
    None
}

/// First thing in `serve`, before any other thread: the stop signals blocked (then a SIGTERM
/// that arrives early waits for [`stop_flag`] instead of killing the process half-started),
/// and two malloc arenas (each scan's worker threads would otherwise each get a glibc malloc
/// arena of their own, which keeps freed pages: two keep the exporter's memory flat and small).
pub fn prepare() -> anyhow::Result<()> {
    block_stop_signals().context("blocking SIGTERM/SIGINT")?;
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets an allocator parameter; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
    Ok(())
}

/// The flag that `stop` sets, after which the accept loop on `addr` is woken.
pub fn stop_flag(stop: Stop, addr: Option<SocketAddr>) -> anyhow::Result<Arc<AtomicBool>> {
    match stop {
        Stop::Console => watch_console(addr).context("catching the stop signals"),
    }
}

/// `accept`'s errors that pass (the connection or the moment, not the listener).
pub const TRANSIENT_ERRORS: &[i32] = &[
    libc::ECONNABORTED,
    libc::EINTR,
    libc::EMFILE,
    libc::ENFILE,
    libc::ENOBUFS,
    libc::ENOMEM,
    libc::EPROTO,
];

/// The signals that stop `serve`: SIGTERM and SIGINT (SIGHUP is taken and ignored).
fn stop_signals() -> SigSet {
    let mut signals = SigSet::empty();
    for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        signals.add(s);
    }
    signals
}

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread, and so in every thread it starts
/// later.
fn block_stop_signals() -> std::io::Result<()> {
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&stop_signals()), None)
        .map_err(std::io::Error::from)
}

/// A flag set on SIGTERM or SIGINT, after which the accept loop on `addr` is woken: the
/// requests in progress are answered, then serve returns. The signals are blocked in every
/// thread ([`block_stop_signals`]) and taken by one thread with `sigwait`, so no handler runs
/// inside a scrape.
fn watch_console(addr: Option<SocketAddr>) -> std::io::Result<Arc<AtomicBool>> {
    block_stop_signals()?;
    let signals = stop_signals();
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            // SIGHUP: nothing to reload; only SIGTERM and SIGINT stop.
            while let Ok(Signal::SIGHUP) = signals.wait() {}
            stop.store(true, Ordering::SeqCst);
            if let Some(addr) = addr {
                http::wake(addr);
            }
        });
    }
    Ok(stop)
}
