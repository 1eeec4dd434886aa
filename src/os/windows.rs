//! Windows: the system allocator, copies for the multi-call names, the console's control events
//! for the end of a recording, and the live reads not done on Windows.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;

/// First thing in `main`: nothing to set here.
pub fn init_allocator() {}

/// Makes `link` a name of `exe`: a copy, `link.exe`.
pub fn link_tool(exe: &Path, link: &Path) -> anyhow::Result<()> {
    std::fs::copy(exe, link.with_extension("exe"))
        .map(|_| ())
        .with_context(|| format!("copying {} to {}", exe.display(), link.display()))
}

/// Set on Ctrl-C, Ctrl-Break or the console's close, once [`catch_stop`] ran.
static STOP: AtomicBool = AtomicBool::new(false);

/// Catches the console's control events (`SetConsoleCtrlHandler`) into a flag: a recording ends
/// early and its file is still written.
pub fn catch_stop() -> &'static AtomicBool {
    unsafe extern "system" fn on_ctrl(_kind: u32) -> windows_sys::core::BOOL {
        STOP.store(true, Ordering::SeqCst);
        1
    }
    // SAFETY: a handler that only stores to an atomic.
    let _ = unsafe { windows_sys::Win32::System::Console::SetConsoleCtrlHandler(Some(on_ctrl), 1) };
    &STOP
}

/// Whether the live heap and flag reads (`histo`, `heap`, `heapdump`, `info` of a pid) are
/// asked of the library here: not on Windows, where they are not tested against a live JVM
/// (threads and counters are).
///
/// # Errors
/// Always [`hsinspect::Error::Unsupported`], naming `what`.
pub fn live_heap_and_flags(what: &'static str) -> Result<(), hsinspect::Error> {
    Err(hsinspect::Error::Unsupported {
        what,
        os: std::env::consts::OS,
    })
}
