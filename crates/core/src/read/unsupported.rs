//! The read stage where no live backend exists: no live process's memory (see [`crate::read`]).

use crate::memory::{MemoryError, ReadMemory};

/// A live process's memory: never opened on this build.
#[derive(Debug)]
pub enum ProcessMemory {}

impl ProcessMemory {
    /// # Errors
    /// Never returns: no `Process` exists on this build.
    pub fn open(process: &crate::process::Process) -> Result<Self, crate::error::Error> {
        match *process {}
    }
}

impl ReadMemory for ProcessMemory {
    fn read_exact_at(&self, _addr: u64, _buf: &mut [u8]) -> Result<(), MemoryError> {
        match *self {}
    }
}
