//! The Windows side of the locate stage (see [`crate::locate`] for the seam): `jvm.dll` in a live
//! process's toolhelp module list; its PE headers and export directory read from the target's
//! memory ([`super::pe`]); the `gHotSpotVMStructs` walk to `PerfMemory::_start` / `_capacity`
//! ([`super::vmstructs`]). No file is opened: a `jvm.dll` replaced on disk does not matter.

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::PathBuf;
use std::time::Duration;

use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_BAD_LENGTH, ERROR_PARTIAL_COPY, HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, MODULEENTRY32W, Module32FirstW, Module32NextW, TH32CS_SNAPMODULE,
};

use super::cache::SymbolCacheUse;
use super::{JVM_DLL, JvmImage, Located};
use crate::error::Error;
use crate::process::Process;
use crate::process::os::{from_wide, last_error, os_code, permission_hint};
use crate::read::ProcessMemory;

/// Where `PerfMemory`'s variables are in live process `process`: `jvm.dll`'s base from the
/// module list, its exports, the vmStructs walk (the symbol cache is not used: the walk reads
/// only the target's memory).
///
/// # Errors
/// [`Error::Os`] for a 32-bit (WOW64) process; [`Error::NotAJvm`] when no `jvm.dll` is loaded;
/// [`Error::Pe`] and the vmStructs walk's errors; [`Error::PermissionDenied`].
pub fn locate_in_process(
    process: &Process,
    mem: &ProcessMemory,
    _cache: SymbolCacheUse,
) -> Result<Located, Error> {
    let module = jvm_dll(process, "jcmd or jstat")?;
    super::pe::locate_jvm_dll(mem, &module.path, module.base, u64::from(module.size))
}

/// `jvm.dll` in `process`'s toolhelp module list ([`find_module`]); a 32-bit (WOW64) process is
/// refused, the message naming `tools` (`"jcmd"`) of that JDK to use instead.
///
/// # Errors
/// [`Error::Os`] for a WOW64 process; [`Error::NotAJvm`] when no `jvm.dll` is loaded; those
/// of [`find_module`].
fn jvm_dll(process: &Process, tools: &str) -> Result<ModuleInfo, Error> {
    let pid = process.pid();
    if process.is_wow64() {
        return Err(Error::Os {
            what: format!(
                "process {pid} is a 32-bit process (WOW64): only 64-bit JVMs can be read; use that JDK's {tools}"
            ),
            source: std::io::Error::from(std::io::ErrorKind::Unsupported),
        });
    }
    find_module(process, JVM_DLL)?.ok_or_else(|| Error::NotAJvm {
        pid,
        comm: process.image_name(),
    })
}

/// A module loaded in a process, from its toolhelp module list.
#[derive(Debug, Clone)]
pub struct ModuleInfo {
    /// Base address (where its headers are mapped).
    pub base: u64,
    /// Size of the image in memory.
    pub size: u32,
    /// Its path as the loader recorded it.
    pub path: PathBuf,
}

/// The JVM loaded in live process `process`: `jvm.dll` from its toolhelp module list
/// ([`find_module`]).
///
/// # Errors
/// As [`jvm_dll`].
pub fn find_jvm(process: &Process) -> Result<JvmImage, Error> {
    let module = jvm_dll(process, "jcmd")?;
    Ok(JvmImage::Pe {
        base: module.base,
        path: module.path,
    })
}

/// The module loaded in `process` whose file name is `name` (case-insensitive), from a toolhelp module
/// snapshot.
///
/// # Errors
/// [`Error::PermissionDenied`], [`Error::ProcessExited`], [`Error::Os`].
pub(crate) fn find_module(process: &Process, name: &str) -> Result<Option<ModuleInfo>, Error> {
    let pid = process.pid();
    let mut tries = 0;
    let snapshot = loop {
        tries += 1;
        // SAFETY: plain call; checked below.
        let h = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPMODULE, pid as u32) };
        if h != INVALID_HANDLE_VALUE {
            // SAFETY: a valid handle that we own.
            break unsafe { OwnedHandle::from_raw_handle(h as _) };
        }
        let e = last_error();
        match os_code(&e) {
            // The module list changed during the snapshot (documented), or the process is
            // still loading: try again, a few times.
            ERROR_BAD_LENGTH | ERROR_PARTIAL_COPY if process.running() && tries < 20 => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            _ if !process.running() => return Err(Error::ProcessExited(pid)),
            ERROR_ACCESS_DENIED => {
                return Err(Error::PermissionDenied {
                    what: format!("listing the modules of process {pid}"),
                    hint: permission_hint(pid),
                });
            }
            _ => {
                return Err(Error::Os {
                    what: format!("CreateToolhelp32Snapshot(TH32CS_SNAPMODULE, {pid})"),
                    source: e,
                });
            }
        }
    };
    let h = snapshot.as_raw_handle() as HANDLE;
    let mut entry = MODULEENTRY32W {
        dwSize: std::mem::size_of::<MODULEENTRY32W>() as u32,
        ..Default::default()
    };
    // SAFETY: `entry` is initialized with its size, as the API requires.
    let mut more = unsafe { Module32FirstW(h, &mut entry) } != 0;
    while more {
        let module = from_wide(&entry.szModule);
        if module.to_string_lossy().eq_ignore_ascii_case(name) {
            return Ok(Some(ModuleInfo {
                base: entry.modBaseAddr as u64,
                size: entry.modBaseSize,
                path: PathBuf::from(from_wide(&entry.szExePath)),
            }));
        }
        // SAFETY: as above.
        more = unsafe { Module32NextW(h, &mut entry) } != 0;
    }
    Ok(None)
}
