//! `serve` on Windows: the console's control events stop it (Ctrl-C, Ctrl-Break, the close,
//! logoff, shutdown), or, run as the service `hsinspect`, the service control manager's stop
//! ([`service`]).

mod service;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::Context;
use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;

use super::super::{ServeArgs, http};

/// The Windows service's flags of `inspect serve`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServiceArgs {
    /// Windows: install `inspect serve` with the other options given here as the Windows
    /// service `hsinspect` (LocalSystem, started at boot: every JVM of every user and service is
    /// read), then exit. Needs an elevated prompt; start it with `sc.exe start hsinspect`.
    #[arg(long, conflicts_with = "uninstall_service")]
    pub install_service: bool,

    /// Windows: stop and remove the Windows service `hsinspect`, then exit.
    #[arg(long, conflicts_with_all = ["listen", "web_config_file", "pids", "users", "main", "no_cache"])]
    pub uninstall_service: bool,

    /// Windows: run under the service control manager (what the installed service runs).
    #[arg(long, hide = true)]
    pub service: bool,
}

/// What stops a [`serve`](super::super::serve).
pub enum Stop {
    /// Ctrl-C, Ctrl-Break, the console's close or logoff.
    Console,
    /// The service's stop control; the flag is set by the service's control handler, which then
    /// wakes the accept loop at the address sent back here.
    Service {
        /// Set when the service is asked to stop.
        flag: Arc<AtomicBool>,
        /// Where the listening address goes once bound.
        addr: std::sync::mpsc::Sender<SocketAddr>,
    },
}

/// The Windows service's install, uninstall and run (under the service control manager), when
/// asked for; `None` for a plain `serve`.
pub fn service_command(args: &ServeArgs) -> Option<anyhow::Result<ExitCode>> {
    if args.service.install_service {
        return Some(service::install());
    }
    if args.service.uninstall_service {
        return Some(service::uninstall());
    }
    if args.service.service {
        return Some(service::run(args));
    }
    None
}

/// First thing in `serve`: nothing to set on Windows.
pub fn prepare() -> anyhow::Result<()> {
    Ok(())
}

/// The flag that `stop` sets, after which the accept loop on `addr` is woken.
pub fn stop_flag(stop: Stop, addr: Option<SocketAddr>) -> anyhow::Result<Arc<AtomicBool>> {
    match stop {
        Stop::Console => watch_console(addr).context("catching the stop signals"),
        Stop::Service { flag, addr: tx } => {
            if let Some(addr) = addr {
                let _ = tx.send(addr);
            }
            Ok(flag)
        }
    }
}

/// Winsock's codes for the conditions that pass (the connection or the moment, not the
/// listener).
pub const TRANSIENT_ERRORS: &[i32] = {
    use windows_sys::Win32::Networking::WinSock::{
        WSAECONNABORTED, WSAECONNRESET, WSAEINTR, WSAEMFILE, WSAENOBUFS,
    };
    &[
        WSAECONNABORTED,
        WSAECONNRESET,
        WSAEINTR,
        WSAEMFILE,
        WSAENOBUFS,
    ]
};

/// What the console control handler stops: the flag, and the address to wake.
static CONSOLE_STOP: OnceLock<(Arc<AtomicBool>, Option<SocketAddr>)> = OnceLock::new();

/// A flag set on Ctrl-C, Ctrl-Break, the console's close, logoff or shutdown
/// (`SetConsoleCtrlHandler`; the handler runs on a thread of its own, sets the flag and wakes
/// the accept loop on `addr`).
fn watch_console(addr: Option<SocketAddr>) -> std::io::Result<Arc<AtomicBool>> {
    unsafe extern "system" fn on_ctrl(_kind: u32) -> windows_sys::core::BOOL {
        if let Some((flag, addr)) = CONSOLE_STOP.get() {
            flag.store(true, Ordering::SeqCst);
            if let Some(addr) = addr {
                http::wake(*addr);
            }
        }
        1
    }
    let stop = Arc::new(AtomicBool::new(false));
    let _ = CONSOLE_STOP.set((Arc::clone(&stop), addr));
    // SAFETY: a handler that only touches a static set above and a socket.
    if unsafe { SetConsoleCtrlHandler(Some(on_ctrl), 1) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(stop)
}
