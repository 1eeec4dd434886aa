//! `serve`'s OS seam: what stops it (SIGTERM and SIGINT on Linux; the console's control events
//! or the service control manager on Windows), the Windows service's flags and commands, the
//! allocator's setting for the scan threads, and which `accept` errors are transient. Each OS
//! file has the same names; `serve/mod.rs` and `http.rs` use only these.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
