//! The Linux side of the locate stage (see [`crate::locate`] for the seam): libjvm in a live
//! process, from its mappings in `/proc/<pid>/maps` and the files that can stand for it (which
//! still work when the library was deleted or replaced on disk after the JVM started, or when the
//! target lives in another mount namespace); then the ELF symbol sources.

use std::path::PathBuf;

use procfs::process::{MMapPath, Process as ProcfsProcess};

use super::cache::SymbolCache;
use super::cache::SymbolCacheUse;
use super::{JvmImage, Located, Mapping, Module, locate_perf_memory};
use crate::error::Error;
use crate::memory::MemoryError;
use crate::pid::Pid;
use crate::process::Process;
use crate::process::os::process_error;
use crate::process::{LIBJVM, strip_deleted};
use crate::read::ProcessMemory;

/// Where `PerfMemory`'s variables are in live process `process`: libjvm from its mappings, then
/// [`locate_perf_memory`] with the symbol cache as `cache` says.
///
/// # Errors
/// As [`find_in_process`] and [`locate_perf_memory`]; a refused memory read is
/// [`Error::PermissionDenied`] with the cause and fix.
pub fn locate_in_process(
    process: &Process,
    mem: &ProcessMemory,
    cache: SymbolCacheUse,
) -> Result<Located, Error> {
    let pid = process.pid();
    let module = find_in_process(pid)?;
    let cache = match cache {
        SymbolCacheUse::Off => None,
        SymbolCacheUse::ReadOnly => SymbolCache::from_env(false),
        SymbolCacheUse::ReadWrite => SymbolCache::from_env(true),
    };
    locate_perf_memory(&module, mem, cache.as_ref()).map_err(|e| match e {
        Error::Memory {
            what,
            source: MemoryError::PermissionDenied { .. },
        } => Error::PermissionDenied {
            what: format!("reading {what} from process {pid}"),
            hint: crate::process::permission_hint(pid),
        },
        e => e,
    })
}

/// The JVM loaded in live process `process`: libjvm from its mappings ([`find_in_process`]).
///
/// # Errors
/// As [`find_in_process`].
pub fn find_jvm(process: &Process) -> Result<JvmImage, Error> {
    find_in_process(process.pid()).map(JvmImage::Elf)
}

/// Finds libjvm among the mappings of process `pid`.
///
/// Candidates, best first: `/proc/<pid>/map_files/<range>` (the very inode mapped; needs
/// `CAP_SYS_ADMIN` or `CAP_CHECKPOINT_RESTORE`), `/proc/<pid>/root/<path>` (the target's mount
/// namespace), and `<path>` itself.
///
/// # Errors
/// [`Error::NoSuchProcess`], [`Error::PermissionDenied`] when maps cannot be read, and
/// [`Error::NotAJvm`] when no libjvm is mapped.
pub fn find_in_process(pid: Pid) -> Result<Module, Error> {
    let process = ProcfsProcess::new(pid).map_err(|e| process_error(pid, "open /proc/<pid>", e))?;
    let maps = process
        .maps()
        .map_err(|e| process_error(pid, "read /proc/<pid>/maps", e))?;
    let mut path: Option<PathBuf> = None;
    let mut mappings = Vec::new();
    for m in maps.iter() {
        let MMapPath::Path(p) = &m.pathname else {
            continue;
        };
        let name = strip_deleted(p);
        if name.file_name().is_none_or(|n| n != LIBJVM) {
            continue;
        }
        match &path {
            None => path = Some(name),
            Some(first) if *first != name => continue, // a second libjvm: keep the first
            Some(_) => {}
        }
        mappings.push(Mapping {
            start: m.address.0,
            end: m.address.1,
            offset: m.offset,
        });
    }
    let Some(path) = path else {
        if crate::process::exited_or_exiting(pid) {
            return Err(Error::ProcessExited(pid));
        }
        let comm = process.stat().map(|s| s.comm).unwrap_or_default();
        return Err(Error::NotAJvm { pid, comm });
    };
    let mut candidates = Vec::new();
    if let Some(first) = mappings.iter().min_by_key(|m| m.offset) {
        candidates.push(PathBuf::from(format!(
            "/proc/{pid}/map_files/{:x}-{:x}",
            first.start, first.end
        )));
    }
    // A deleted library's path may now hold another build: the build-id check rejects that.
    candidates.push(PathBuf::from(format!("/proc/{pid}/root{}", path.display())));
    candidates.push(path.clone());
    Ok(Module {
        path,
        mappings,
        candidates,
        root: None,
    })
}
