//! [`ReadMemory`] over a live Windows process: `ReadProcessMemory` on a handle opened with
//! `PROCESS_VM_READ`. Never `WriteProcessMemory`.

use std::os::windows::io::{AsRawHandle, OwnedHandle};

use windows_sys::Win32::Foundation::{ERROR_ACCESS_DENIED, ERROR_PARTIAL_COPY, HANDLE};
use windows_sys::Win32::System::Diagnostics::Debug::ReadProcessMemory;
use windows_sys::Win32::System::SystemInformation::{GetSystemInfo, SYSTEM_INFO};
use windows_sys::Win32::System::Threading::{PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_VM_READ};

use crate::memory::{MemoryError, ReadMemory};

/// The address space of a live Windows process, read through its handle.
#[derive(Debug)]
pub struct ProcessMemory {
    handle: OwnedHandle,
}

/// The system's page size (`GetSystemInfo`'s `dwPageSize`; 4 KiB on x64).
pub fn page_size() -> u64 {
    // SAFETY: SYSTEM_INFO is plain data; GetSystemInfo fills it.
    let mut info: SYSTEM_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { GetSystemInfo(&mut info) };
    Some(u64::from(info.dwPageSize))
        .filter(|s| s.is_power_of_two())
        .unwrap_or(crate::memory::DEFAULT_PAGE_SIZE)
}

impl ProcessMemory {
    /// Opens `process`'s memory for reading (`PROCESS_VM_READ`). Identity stays with
    /// `process`: its `check_same` after a read tells whether these bytes were its.
    ///
    /// # Errors
    /// [`crate::error::Error::PermissionDenied`] with the fix, [`crate::error::Error::NoSuchProcess`],
    /// [`crate::error::Error::Os`].
    pub fn open(process: &crate::process::Process) -> Result<Self, crate::error::Error> {
        let handle = crate::process::os::open_handle(
            process.pid(),
            PROCESS_VM_READ | PROCESS_QUERY_LIMITED_INFORMATION,
        )?;
        Ok(ProcessMemory { handle })
    }

    /// The process handle, for other queries on the same process.
    pub fn raw_handle(&self) -> HANDLE {
        self.handle.as_raw_handle() as HANDLE
    }
}

impl ReadMemory for ProcessMemory {
    fn page_size(&self) -> u64 {
        page_size()
    }

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
