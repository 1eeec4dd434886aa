//! [`ProcessMemory`]: a live Linux process's memory through `process_vm_readv(2)`, falling back
//! to `pread(2)` on `/proc/<pid>/mem` where the syscall is unavailable (e.g. blocked by seccomp).

use std::fs::File;
use std::io::IoSliceMut;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

use nix::errno::Errno;
use nix::sys::uio::{RemoteIoVec, process_vm_readv};
use nix::unistd::Pid as NixPid;

use crate::memory::{MemoryError, ReadMemory};
use crate::pid::Pid;

/// Reads a live process's memory. Needs ptrace-read permission on the target (same user without
/// `kernel.yama.ptrace_scope` restrictions, or `CAP_SYS_PTRACE`). Opens nothing for writing.
#[derive(Debug)]
pub struct ProcessMemory {
    pid: Pid,
    mem: OnceLock<Option<File>>,
}

/// The running kernel's page size (`sysconf(_SC_PAGESIZE)`): a live process's pages.
pub fn page_size() -> u64 {
    // SAFETY: sysconf takes a name and returns a value or -1.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size)
        .ok()
        .filter(|s| s.is_power_of_two())
        .unwrap_or(crate::memory::DEFAULT_PAGE_SIZE)
}

impl ProcessMemory {
    /// A reader for `process`.
    ///
    /// # Errors
    /// None on Linux (permission is checked by each read); the signature is the seam's.
    pub fn open(process: &crate::process::Process) -> Result<Self, crate::error::Error> {
        Ok(ProcessMemory::new(process.pid()))
    }

    /// A reader for process `pid` (the pid as this inspector sees it).
    pub fn new(pid: Pid) -> Self {
        ProcessMemory {
            pid,
            mem: OnceLock::new(),
        }
    }

    fn read_proc_mem(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        let file = self
            .mem
            .get_or_init(|| File::open(format!("/proc/{}/mem", self.pid)).ok())
            .as_ref()
            .ok_or(MemoryError::PermissionDenied {
                addr,
                len: buf.len(),
            })?;
        file.read_exact_at(buf, addr)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EIO) | Some(libc::EFAULT) => MemoryError::Unmapped {
                    addr,
                    len: buf.len(),
                },
                _ if e.kind() == std::io::ErrorKind::UnexpectedEof => MemoryError::Unmapped {
                    addr,
                    len: buf.len(),
                },
                _ => MemoryError::Os {
                    addr,
                    len: buf.len(),
                    source: e,
                },
            })
    }
}

impl ReadMemory for ProcessMemory {
    fn page_size(&self) -> u64 {
        page_size()
    }

    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        let mut done = 0usize;
        while done < buf.len() {
            let start = addr.wrapping_add(done as u64);
            let len = buf.len() - done;
            let remote = [RemoteIoVec {
                base: start as usize,
                len,
            }];
            let mut local = [IoSliceMut::new(&mut buf[done..])];
            match process_vm_readv(NixPid::from_raw(self.pid), &mut local, &remote) {
                Ok(0) => return Err(MemoryError::Unmapped { addr: start, len }),
                Ok(n) => done += n,
                Err(Errno::EFAULT) => return Err(MemoryError::Unmapped { addr: start, len }),
                Err(Errno::EINTR) => continue,
                Err(Errno::ENOSYS) | Err(Errno::EPERM) if done == 0 => {
                    return self.read_proc_mem(addr, buf);
                }
                Err(e) => {
                    return Err(MemoryError::Os {
                        addr: start,
                        len,
                        source: std::io::Error::from(e),
                    });
                }
            }
        }
        Ok(())
    }
}
