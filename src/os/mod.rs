//! The CLI's OS seam for what is neither `serve`'s nor `top`'s (those have their own,
//! `serve/os/` and `top/os/`): the allocator of the static (musl) builds, and how the multi-call
//! names are made (a symlink on Unix, a copy elsewhere). Each OS file has the same names.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(not(unix))]
mod windows;
#[cfg(not(unix))]
pub use windows::*;
