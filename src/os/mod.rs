//! The CLI's OS seam for what is neither `serve`'s nor `top`'s (those have their own,
//! `serve/os/` and `top/os/`): which commands exist on this OS, the allocator of the static (musl)
//! builds, how the multi-call names are made (a symlink on Unix, a copy elsewhere), how Ctrl-C
//! ends a recording, and which live reads this OS refuses before the library is asked. Each OS
//! file has the same names; the shared files use only these.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(not(unix))]
mod windows;
#[cfg(not(unix))]
pub use windows::*;

// `list`, `serve` and `top` find JVMs where the library can (Linux and Windows, with the `live`
// feature and the optional dependencies it brings): there the commands themselves; elsewhere
// `elsewhere.rs`, which says what works instead. `main.rs` takes them from here.
#[cfg(not(all(any(target_os = "linux", windows), feature = "live")))]
mod elsewhere;
#[cfg(all(any(target_os = "linux", windows), feature = "live"))]
#[path = "../list.rs"]
pub mod list;
#[cfg(all(any(target_os = "linux", windows), feature = "live"))]
#[path = "../serve/mod.rs"]
pub mod serve;
#[cfg(all(any(target_os = "linux", windows), feature = "live"))]
#[path = "../top/mod.rs"]
pub mod top;
#[cfg(not(all(any(target_os = "linux", windows), feature = "live")))]
pub use elsewhere::{list, serve, top};
