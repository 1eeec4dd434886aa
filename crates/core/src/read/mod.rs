//! Reading bytes of a target's address space.
//!
//! [`ReadMemory`] is the one interface behind which a live process, a core file, and any memory
//! source an embedder brings sit. The vmStructs walker and the region reader use only this
//! trait, so they do not know which kind of target they read.
//!
//! # The OS seam
//!
//! A live process's memory is the one OS-specific part of this stage, in one module chosen
//! below, exporting `ProcessMemory` (`open(&process::Process)`, [`ReadMemory`], whose
//! `page_size` is the running kernel's): `linux.rs` (`process_vm_readv`, `/proc/<pid>/mem`),
//! `windows.rs` (`ReadProcessMemory`), `unsupported.rs` (no live process). [`CoreMemory`] (an ELF
//! core) and [`MinidumpMemory`] (a Windows minidump) are portable: a dump is read the same on
//! every OS.

mod coredump;
mod minidump;
#[cfg(all(feature = "live", target_os = "linux"))]
#[path = "linux.rs"]
pub(crate) mod os;
#[cfg(all(feature = "live", windows))]
#[path = "windows.rs"]
pub(crate) mod os;
#[cfg(not(all(feature = "live", any(target_os = "linux", windows))))]
#[path = "unsupported.rs"]
pub(crate) mod os;

pub use coredump::{CoreMemory, machine_name};
pub use minidump::{DumpModule, MinidumpMemory, dump_type_name, is_minidump};
pub(crate) use os::ProcessMemory;
