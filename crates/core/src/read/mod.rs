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

mod core;
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

pub use core::{CoreMemory, machine_name};
pub use minidump::{
    DumpModule, MINIDUMP_SIGNATURE, MINIDUMP_WITH_FULL_MEMORY, MinidumpMemory, dump_type_name,
    is_minidump,
};
pub(crate) use os::ProcessMemory;

/// The page size assumed where neither the target nor the OS says: 4 KiB (x86_64; aarch64
/// kernels may use 16 or 64 KiB, which a core's `AT_PAGESZ` or the running kernel tells).
pub const DEFAULT_PAGE_SIZE: u64 = 4096;

/// Why bytes could not be read from a target's address space.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// No mapping (or no bytes in the dump) covers part of the range.
    #[error("address {addr:#x} (+{len} bytes) is not mapped in the target")]
    Unmapped {
        /// Start of the failed range.
        addr: u64,
        /// Length of the failed range.
        len: usize,
    },
    /// The mapping exists but its bytes are not available (e.g. a core without file-backed data).
    #[error("address {addr:#x} (+{len} bytes) is mapped but its contents are not available: {why}")]
    NotDumped {
        /// Start of the failed range.
        addr: u64,
        /// Length of the failed range.
        len: usize,
        /// Why the bytes are missing.
        why: String,
    },
    /// The OS refused access to the process (ptrace permission).
    #[error("reading {len} bytes at {addr:#x}: permission denied")]
    PermissionDenied {
        /// Start of the failed range.
        addr: u64,
        /// Length of the failed range.
        len: usize,
    },
    /// The operating system refused the read.
    #[error("reading {len} bytes at {addr:#x}")]
    Os {
        /// Start of the failed range.
        addr: u64,
        /// Length of the failed range.
        len: usize,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Read-only access to a target's address space: a live process, a core, or a source of an
/// embedder's own (a remote agent, a snapshot); implement [`ReadMemory::read_exact_at`] and, when
/// the target's pages are not 4 KiB, [`ReadMemory::page_size`]. Implementations never write to
/// the target.
pub trait ReadMemory {
    /// The target's page size in bytes (a power of two): mappings and segments are aligned to
    /// it. Default [`DEFAULT_PAGE_SIZE`].
    fn page_size(&self) -> u64 {
        DEFAULT_PAGE_SIZE
    }

    /// Fills `buf` with the bytes at `addr`, all of them or an error.
    ///
    /// # Errors
    /// [`MemoryError`] when any byte of the range cannot be read.
    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError>;

    /// Reads a little-endian `u64` (the targets we read are little-endian, LP64).
    ///
    /// # Errors
    /// As [`ReadMemory::read_exact_at`].
    fn read_u64(&self, addr: u64) -> Result<u64, MemoryError> {
        let mut b = [0u8; 8];
        self.read_exact_at(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Reads a NUL-terminated string of at most `max` bytes (without the NUL); `None` when no NUL
    /// is found within `max` bytes. Reads in small chunks so a string near the end of a mapping
    /// does not fail because of the bytes after it.
    ///
    /// # Errors
    /// As [`ReadMemory::read_exact_at`], for the first chunk.
    fn read_c_string(&self, addr: u64, max: usize) -> Result<Option<Vec<u8>>, MemoryError> {
        const CHUNK: usize = 64;
        let mut out = Vec::new();
        while out.len() < max {
            let mut chunk = [0u8; CHUNK];
            let want = CHUNK.min(max - out.len());
            let at = addr.wrapping_add(out.len() as u64);
            // Do not cross a page boundary in one read: the next page may be unmapped.
            let page = self.page_size().max(CHUNK as u64);
            let to_page_end = (page - (at % page)) as usize;
            let want = want.min(to_page_end);
            match self.read_exact_at(at, &mut chunk[..want]) {
                Ok(()) => {}
                Err(e) if out.is_empty() => return Err(e),
                Err(_) => return Ok(None),
            }
            if let Some(nul) = chunk[..want].iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..nul]);
                return Ok(Some(out));
            }
            out.extend_from_slice(&chunk[..want]);
        }
        Ok(None)
    }
}
