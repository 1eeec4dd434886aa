//! The locate stage where no live backend exists (see [`crate::locate`]).

use super::cache::SymbolCacheUse;
use super::{JvmImage, Located};
use crate::error::Error;
use crate::process::Process;
use crate::read::ProcessMemory;

/// # Errors
/// Never returns: no `Process` exists on this build.
pub fn locate_in_process(
    process: &Process,
    _mem: &ProcessMemory,
    _cache: SymbolCacheUse,
) -> Result<Located, Error> {
    match *process {}
}

/// # Errors
/// Never returns: no `Process` exists on this build.
pub fn find_jvm(process: &Process) -> Result<JvmImage, Error> {
    match *process {}
}
