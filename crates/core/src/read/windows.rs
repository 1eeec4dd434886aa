//! [`ReadMemory`] over a live Windows process: `ReadProcessMemory` on a handle opened with
//! `PROCESS_VM_READ` ([`crate::process::windows::Process::open`]). Never `WriteProcessMemory`.

use std::os::windows::io::{AsRawHandle, OwnedHandle};

use windows_sys::Win32::Foundation::{ERROR_ACCESS_DENIED, ERROR_PARTIAL_COPY, HANDLE};
use windows_sys::Win32::System::Diagnostics::Debug::ReadProcessMemory;

use super::{MemoryError, ReadMemory};

/// The address space of a live Windows process, read through its handle.
#[derive(Debug)]
pub struct ProcessMemory {
    handle: OwnedHandle,
}

impl ProcessMemory {
    /// Reads through `handle`, which must have `PROCESS_VM_READ` access (it is closed on drop).
    pub fn new(handle: OwnedHandle) -> Self {
        ProcessMemory { handle }
    }

    /// The process handle, for other queries on the same process.
    pub fn raw_handle(&self) -> HANDLE {
        self.handle.as_raw_handle() as HANDLE
    }
}

impl ReadMemory for ProcessMemory {
    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        let len = buf.len();
        let mut done = 0usize;
        // SAFETY: the buffer is ours and `len` bytes long; the handle is open.
        let ok = unsafe {
            ReadProcessMemory(
                self.raw_handle(),
                addr as usize as *const _,
                buf.as_mut_ptr().cast(),
                len,
                &mut done,
            )
        };
        if ok != 0 && done == len {
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        Err(match err.raw_os_error().map(|c| c as u32) {
            _ if ok != 0 => MemoryError::Unmapped { addr, len },
            Some(ERROR_PARTIAL_COPY) => MemoryError::Unmapped { addr, len },
            Some(ERROR_ACCESS_DENIED) => MemoryError::PermissionDenied { addr, len },
            _ => MemoryError::Os {
                addr,
                len,
                source: err,
            },
        })
    }
}
