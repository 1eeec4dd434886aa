//! Finding libjvm in a core file: its mappings from the `NT_FILE` note (the kernel's and gdb's
//! list of file-backed mappings with their file offsets), which gives the same [`Module`] the
//! live path builds from `/proc/<pid>/maps`; without the note, from the dynamic linker's list
//! (`r_debug`/`link_map` from the executable's `DT_DEBUG`), as the Serviceability Agent does
//! (`ps_core.c`, `hotspot-internals.md` §3.3). The files that can stand for it honour
//! `--sysroot` and `--exe`.

use std::path::{Path, PathBuf};

use crate::locate::elf::ElfFile;
use crate::locate::libjvm::LIBJVM;
use crate::locate::{Mapping, Module};
use crate::read::{CoreMemory, MemoryError, ReadMemory};
use crate::{Error, with_causes};

const DELETED: &str = " (deleted)";

/// An [`Error::Core`] about `core`.
pub(crate) fn core_error(core: &CoreMemory, reason: impl Into<String>) -> Error {
    Error::Core {
        path: core.path().to_owned(),
        reason: reason.into(),
    }
}

/// The path without the ` (deleted)` suffix maps give a replaced file, and whether it had one.
pub(crate) fn strip_deleted(p: &Path) -> (PathBuf, bool) {
    let s = p.to_string_lossy();
    match s.strip_suffix(DELETED) {
        Some(n) => (PathBuf::from(n), true),
        None => (p.to_owned(), false),
    }
}

fn is_libjvm(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == LIBJVM)
}

/// `<sysroot>/<path>` (the path made relative), or `path` itself without a sysroot.
fn under_sysroot(sysroot: Option<&Path>, path: &Path) -> PathBuf {
    match sysroot {
        Some(root) => root.join(path.strip_prefix("/").unwrap_or(path)),
        None => path.to_owned(),
    }
}

/// The `--exe` file: as given when it exists, else under the sysroot; symlinks resolved (so
/// `/usr/bin/java` leads to the JDK home).
fn resolve_exe(exe: &Path, sysroot: Option<&Path>) -> PathBuf {
    let p = if exe.exists() || sysroot.is_none() {
        exe.to_owned()
    } else {
        under_sysroot(sysroot, exe)
    };
    p.canonicalize().unwrap_or(p)
}

/// Files that may stand for the core's libjvm, best first: `--exe` when it names a libjvm;
/// the path the process mapped (under `--sysroot` when given); the same JDK-relative path under
/// the home of a `--exe` java launcher (`<home>/bin/java` → `<home>/lib/server/libjvm.so`).
/// [`crate::locate::locate_perf_memory`] takes the first whose build-id matches the core.
pub fn candidates(mapped: &Path, exe: Option<&Path>, sysroot: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let exe = exe.map(|e| {
        under_sysroot(sysroot, e)
            .canonicalize()
            .unwrap_or(e.to_owned())
    });
    if let Some(e) = exe.as_deref().filter(|e| is_libjvm(e)) {
        out.push(e.to_owned());
    }
    out.push(under_sysroot(sysroot, mapped));
    if let Some(home) = exe
        .as_deref()
        .filter(|e| !is_libjvm(e))
        .and_then(|e| e.parent()?.parent())
    {
        // The part of the mapped path below its JDK home: "lib/server/libjvm.so" (JDK 9+),
        // "jre/lib/amd64/server/libjvm.so" (JDK 8).
        for anc in mapped.ancestors().skip(1) {
            let Ok(tail) = mapped.strip_prefix(anc) else {
                continue;
            };
            if tail.starts_with("lib") || tail.starts_with("jre") {
                out.push(home.join(tail));
                break;
            }
        }
    }
    out.dedup();
    out
}

/// Builds libjvm's [`Module`] from the core's `NT_FILE` note.
///
/// # Errors
/// [`Error::Core`] when no libjvm is among the mapped files (not a HotSpot JVM's core).
pub fn libjvm_from_nt_file(
    core: &CoreMemory,
    exe: Option<&Path>,
    sysroot: Option<&Path>,
) -> Result<Module, Error> {
    let files = core.files().unwrap_or_default();
    let mut path: Option<PathBuf> = None;
    let mut mappings = Vec::new();
    for f in files {
        let (name, _deleted) = strip_deleted(&f.path);
        if !is_libjvm(&name) {
            continue;
        }
        match &path {
            None => path = Some(name),
            Some(first) if *first != name => continue, // a second libjvm: keep the first
            Some(_) => {}
        }
        mappings.push(Mapping {
            start: f.start,
            end: f.end,
            offset: f.offset,
        });
    }
    let Some(path) = path else {
        let who = match core.process() {
            Some(p) => format!("process {} ({})", p.pid, p.command),
            None => "the process".into(),
        };
        return Err(core_error(
            core,
            format!(
                "not the core of a HotSpot JVM: {who} had no {LIBJVM} among its {} mapped files (NT_FILE note)",
                files.len()
            ),
        ));
    };
    mappings.sort_by_key(|m| m.start);
    let candidates = candidates(&path, exe, sysroot);
    Ok(Module {
        path,
        mappings,
        candidates,
    })
}

/// `AT_ENTRY` in the auxiliary vector: the executable's entry point as loaded.
const AT_ENTRY: u64 = 9;
/// `DT_DEBUG`: the dynamic entry the dynamic linker points at its `struct r_debug`.
const DT_DEBUG: u64 = 21;
/// `PT_DYNAMIC`.
const PT_DYNAMIC: u32 = 2;
/// Longest `link_map` chain walked (a corrupt core must not loop forever).
const MAX_LINK_MAPS: usize = 10_000;

/// Finds libjvm without `NT_FILE`, as SA's `ps_core.c` does: the executable's `PT_DYNAMIC`
/// (relocated by `AT_ENTRY - e_entry` for a PIE), its `DT_DEBUG` entry read from the core, the
/// `struct r_debug` it points at (`r_map` at +8), and the `link_map` chain
/// (`l_addr` +0, `l_name` +8, `l_ld` +16, `l_next` +24; `<link.h>`). libjvm's mappings are then
/// its `PT_LOAD` segments at `l_addr`, read from the library file (the core has no offsets).
///
/// # Errors
/// [`Error::Core`] when `exe` is missing or not the core's executable, or the chain is not in the
/// core, or no libjvm is on it; errors opening the library.
pub fn libjvm_from_link_map(
    core: &CoreMemory,
    exe: Option<&Path>,
    sysroot: Option<&Path>,
) -> Result<Module, Error> {
    let Some(exe) = exe else {
        return Err(core_error(
            core,
            "the core has no NT_FILE note (the list of mapped files), so libjvm cannot be found from it alone: pass --exe <the java launcher the JVM ran> so its dynamic linker's library list can be walked",
        ));
    };
    let exe_file = ElfFile::open(&resolve_exe(exe, sysroot))?;
    if is_libjvm(exe) {
        // --exe names libjvm itself: its load address must come from the link_map walk anyway,
        // which needs the executable. Without NT_FILE, ask for the launcher.
        return Err(core_error(
            core,
            "the core has no NT_FILE note: pass --exe <the java launcher> (not libjvm.so) so the dynamic linker's library list can be walked",
        ));
    }
    let walk_err = |why: String| {
        core_error(
            core,
            format!(
                "the core has no NT_FILE note, and walking the dynamic linker's library list from {} failed: {why}",
                exe.display()
            ),
        )
    };
    let entry = core
        .auxv_value(AT_ENTRY)
        .ok_or_else(|| walk_err("the core has no AT_ENTRY in its auxiliary vector".into()))?;
    let bias = if exe_file.elf_type() == goblin::elf::header::ET_DYN {
        entry.wrapping_sub(exe_file.entry())
    } else {
        0
    };
    let dynamic = exe_file
        .program_headers()
        .iter()
        .find(|p| p.p_type == PT_DYNAMIC)
        .ok_or_else(|| walk_err("the executable has no PT_DYNAMIC (static?)".into()))?;
    let mem = |what: &str, e: MemoryError| walk_err(format!("reading {what}: {}", with_causes(&e)));
    let mut r_debug = 0;
    let dyn_addr = bias.wrapping_add(dynamic.p_vaddr);
    for i in 0..(dynamic.p_memsz / 16).min(4096) {
        let tag = core.read_u64(dyn_addr + i * 16).map_err(|e| {
            mem(
                &format!(
                    "_DYNAMIC (is {} the executable the process ran?)",
                    exe.display()
                ),
                e,
            )
        })?;
        if tag == 0 {
            break;
        }
        if tag == DT_DEBUG {
            r_debug = core
                .read_u64(dyn_addr + i * 16 + 8)
                .map_err(|e| mem("DT_DEBUG", e))?;
            break;
        }
    }
    if r_debug == 0 {
        return Err(walk_err(format!(
            "no DT_DEBUG value in _DYNAMIC at {dyn_addr:#x}: is {} the executable the process ran?",
            exe.display()
        )));
    }
    let mut lm = core
        .read_u64(r_debug + 8)
        .map_err(|e| mem("r_debug.r_map", e))?;
    let mut seen = 0;
    while lm != 0 && seen < MAX_LINK_MAPS {
        seen += 1;
        let l_addr = core.read_u64(lm).map_err(|e| mem("link_map", e))?;
        let l_name = core.read_u64(lm + 8).map_err(|e| mem("link_map", e))?;
        let next = core.read_u64(lm + 24).map_err(|e| mem("link_map", e))?;
        let name = if l_name == 0 {
            None
        } else {
            core.read_c_string(l_name, 4096).ok().flatten()
        };
        if let Some(name) = name {
            let path = PathBuf::from(std::ffi::OsString::from(
                String::from_utf8_lossy(&name).into_owned(),
            ));
            if is_libjvm(&path) {
                let candidates = candidates(&path, Some(exe), sysroot);
                let lib = candidates
                    .iter()
                    .find_map(|c| ElfFile::open(c).ok())
                    .ok_or_else(|| {
                        walk_err(format!(
                            "libjvm {} is on the list, but none of {:?} opens: pass --sysroot",
                            path.display(),
                            candidates
                        ))
                    })?;
                let mappings = lib
                    .loads()
                    .map(|p| {
                        let page = p.p_vaddr & !0xfff;
                        Mapping {
                            start: l_addr.wrapping_add(page),
                            end: l_addr
                                .wrapping_add((p.p_vaddr + p.p_memsz).next_multiple_of(4096)),
                            offset: p.p_offset & !0xfff,
                        }
                    })
                    .collect();
                return Ok(Module {
                    path,
                    mappings,
                    candidates,
                });
            }
        }
        lm = next;
    }
    Err(core_error(
        core,
        format!(
            "not the core of a HotSpot JVM: no {LIBJVM} among the {seen} libraries on the dynamic linker's list"
        ),
    ))
}
