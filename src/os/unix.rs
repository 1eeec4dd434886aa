//! Unix: mimalloc for the static (musl) builds, symlinks for the multi-call names, SIGINT and
//! SIGTERM for the end of a recording, every live read left to the library.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;

/// The static (musl) builds allocate through mimalloc: with musl's own malloc, `list`, a scrape
/// of 20 JVMs and a sample's CPU were 1.2-3.6x slower than the glibc build's
/// (bench/bench_musl.py). Built without transparent huge pages, and set to return freed pages
/// at once (purge delay 0): otherwise the exporter's RSS after a scrape of 20 JVMs was 64 MiB
/// (glibc: 9), with this ~12 MiB.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// First thing in `main`: the allocator's defaults (musl builds: mimalloc's purge delay 0).
pub fn init_allocator() {
    #[cfg(target_env = "musl")]
    {
        // mimalloc.h (v3, the one libmimalloc-sys builds): `mi_option_purge_delay` is the 16th
        // entry of `mi_option_e`; the Rust bindings do not name it.
        const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
        // A default: $MIMALLOC_PURGE_DELAY still overrides it.
        // SAFETY: mi_option_set_default only stores the value; any thread may call it any time.
        unsafe { libmimalloc_sys::mi_option_set_default(MI_OPTION_PURGE_DELAY, 0) };
    }
}

/// Makes `link` a name of `exe` (a symlink).
pub fn link_tool(exe: &Path, link: &Path) -> anyhow::Result<()> {
    std::os::unix::fs::symlink(exe, link)
        .with_context(|| format!("linking {} to {}", link.display(), exe.display()))
}

/// Set when SIGINT or SIGTERM arrives, once [`catch_stop`] ran.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Catches SIGINT and SIGTERM (`SA_RESTART`) into a flag: a recording ends early and its file
/// is still written.
pub fn catch_stop() -> &'static AtomicBool {
    // SAFETY: a zeroed sigaction is a valid one (no flags, empty mask) before it is filled in;
    // the handler only stores to an atomic.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_stop as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        for s in [libc::SIGINT, libc::SIGTERM] {
            let _ = libc::sigaction(s, &action, std::ptr::null_mut());
        }
    }
    &STOP
}

/// Whether the live heap and flag reads (`histo`, `heap`, `heapdump`, `info` of a pid) are
/// asked of the library here: always on Unix (where the library has no live backend, it says
/// so itself).
///
/// # Errors
/// None.
pub fn live_heap_and_flags(_what: &'static str) -> Result<(), hsinspect::Error> {
    Ok(())
}
