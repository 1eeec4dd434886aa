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

    /// One `process_vm_readv(2)` for every range (up to `IOV_MAX`, 1,024). The kernel reads the
    /// ranges in order and stops at the first byte it cannot read: the ranges it read whole are
    /// done, each of the others is read again alone (so each gets its own result).
    fn read_each(&self, reads: &mut [(u64, &mut [u8])]) -> Vec<Result<(), MemoryError>> {
        const IOV_MAX: usize = 1024;
        if reads.len() < 2 || reads.len() > IOV_MAX {
            return reads
                .iter_mut()
                .map(|(addr, buf)| self.read_exact_at(*addr, buf))
                .collect();
        }
        let remote: Vec<RemoteIoVec> = reads
            .iter()
            .map(|(addr, buf)| RemoteIoVec {
                base: *addr as usize,
                len: buf.len(),
            })
            .collect();
        let got = {
            let mut local: Vec<IoSliceMut> = reads
                .iter_mut()
                .map(|(_, buf)| IoSliceMut::new(buf))
                .collect();
            process_vm_readv(NixPid::from_raw(self.pid), &mut local, &remote).unwrap_or(0)
        };
        let mut left = got;
        reads
            .iter_mut()
            .map(|(addr, buf)| {
                if left >= buf.len() {
                    left -= buf.len();
                    Ok(())
                } else {
                    left = 0;
                    self.read_exact_at(*addr, buf)
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's own memory: ranges read together, one that cannot be read answered
    /// alone, the others still read whole, before and after it.
    #[test]
    fn ranges_are_read_together_and_each_gets_its_own_result() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let base = data.as_ptr() as u64;
        let me = ProcessMemory::new(std::process::id() as Pid);
        let (mut a, mut b, mut c) = (vec![0u8; 100], vec![0u8; 8], vec![0u8; 9000]);
        let mut reads: Vec<(u64, &mut [u8])> = vec![
            (base + 10, &mut a),
            (8, &mut b), // the zero page: never mapped
            (base + 11_000, &mut c),
        ];
        let results = me.read_each(&mut reads);
        assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
        assert!(matches!(results[1], Err(MemoryError::Unmapped { .. })));
        assert_eq!(a, data[10..110]);
        assert_eq!(c, data[11_000..20_000]);
    }
}
