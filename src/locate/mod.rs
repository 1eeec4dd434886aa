//! Locating the PerfData region: which libjvm the target runs, where it is loaded (load bias),
//! and where `PerfMemory::_start` and `PerfMemory::_capacity` live
//! (`src/hotspot/share/runtime/perfMemory.hpp`).
//!
//! Symbol sources, in order: a separate debug file found by build-id under `/usr/lib/debug`, the
//! library's own `.symtab`, a debug file named by `.gnu_debuglink`, and finally the exported
//! `gHotSpotVMStructs` table walked in the target's memory ([`vmstructs`]), which works on
//! stripped builds.

pub mod elf;
pub mod libjvm;
pub mod vmstructs;

use std::path::{Path, PathBuf};

use elf::{ElfFile, SymbolSource, hex};

use crate::Error;
use crate::read::ReadMemory;

/// Run-time addresses of `PerfMemory`'s static variables in the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfMemoryVars {
    /// `&PerfMemory::_start` (a `char*`: the region's address).
    pub start: u64,
    /// `&PerfMemory::_capacity` (a `size_t`: the region's size in bytes).
    pub capacity: u64,
    /// `&PerfMemory::_top` (a `char*`), when known.
    pub top: Option<u64>,
    /// `&PerfMemory::_initialized` (an `int`), when known.
    pub initialized: Option<u64>,
}

/// One mapping of a file in the target: `[start, end)` maps file bytes from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// File offset of `start`.
    pub offset: u64,
}

/// A shared object as the target has it loaded.
#[derive(Debug, Clone)]
pub struct Module {
    /// The path the target mapped (as `/proc/<pid>/maps` or the core's `NT_FILE` note names it).
    pub path: PathBuf,
    /// Its mappings, in address order.
    pub mappings: Vec<Mapping>,
    /// Files to open for it, best first (`/proc/<pid>/map_files/..`, `/proc/<pid>/root/..`,
    /// a sysroot path, the path itself).
    pub candidates: Vec<PathBuf>,
}

/// How the region's variables were found (reported by `-v`).
#[derive(Debug, Clone)]
pub struct Located {
    /// The addresses of the variables.
    pub vars: PerfMemoryVars,
    /// The file that was opened for the library.
    pub opened: PathBuf,
    /// Its load bias (run-time address minus link-time address).
    pub load_bias: u64,
    /// Where the symbols came from: a symbol table, or `gHotSpotVMStructs`.
    pub source: String,
    /// Things the user may want to know (a candidate skipped, a check not possible).
    pub notes: Vec<String>,
}

const PERF_MEMORY_SYMBOLS: [&str; 4] = [
    "_ZN10PerfMemory6_startE",
    "_ZN10PerfMemory9_capacityE",
    "_ZN10PerfMemory4_topE",
    "_ZN10PerfMemory12_initializedE",
];

const PAGE: u64 = 4096;

/// The load bias of `elf` given its mappings: a mapping at file offset `o` that holds the page of
/// a `PT_LOAD` segment at `o` sits at `bias + (p_vaddr & !page)`.
pub fn load_bias(elf: &ElfFile, mappings: &[Mapping]) -> Option<u64> {
    elf.loads().find_map(|seg| {
        let file_page = seg.p_offset & !(PAGE - 1);
        let m = mappings.iter().find(|m| m.offset == file_page)?;
        Some(m.start.wrapping_sub(seg.p_vaddr & !(PAGE - 1)))
    })
}

/// The build-id of the module as loaded in the target: the `PT_NOTE` of `elf` read from memory.
fn build_id_in_memory(elf: &ElfFile, bias: u64, mem: &dyn ReadMemory) -> Option<Vec<u8>> {
    let (vaddr, size) = elf.build_id_note_vaddr()?;
    let mut buf = vec![0u8; size.min(4096) as usize];
    mem.read_exact_at(bias.wrapping_add(vaddr), &mut buf).ok()?;
    elf::build_id_from_notes(&buf)
}

/// Opens the module's file (the first candidate that opens and whose build-id matches the one in
/// the target's memory) and finds the addresses of `PerfMemory`'s variables.
///
/// # Errors
/// [`Error::BuildIdMismatch`] when every candidate that opened is a different build;
/// [`Error::Locate`] when no candidate opens or no symbol source has the variables; errors from
/// the vmStructs walk.
pub fn locate_perf_memory(module: &Module, mem: &dyn ReadMemory) -> Result<Located, Error> {
    let mut notes = Vec::new();
    let mut mismatch = None;
    let mut open_errors = Vec::new();
    for candidate in &module.candidates {
        let elf = match ElfFile::open(candidate) {
            Ok(elf) => elf,
            Err(e) => {
                open_errors.push(e.to_string());
                continue;
            }
        };
        let Some(bias) = load_bias(&elf, &module.mappings) else {
            open_errors.push(format!(
                "{}: no PT_LOAD segment matches the target's mappings",
                candidate.display()
            ));
            continue;
        };
        let file_id = elf.build_id();
        match (&file_id, build_id_in_memory(&elf, bias, mem)) {
            (Some(f), Some(m)) if *f != m => {
                mismatch = Some(Error::BuildIdMismatch { path: candidate.clone(), file_id: hex(f), memory_id: hex(&m) });
                continue;
            }
            (Some(_), Some(_)) => {}
            (None, _) => notes.push(format!("{} has no build-id: cannot check it is the mapped build", candidate.display())),
            (Some(_), None) => notes.push("the build-id note is not readable in the target: the file could not be checked against it".into()),
        }
        let (vars, source) = find_vars(
            &elf,
            &module.path,
            bias,
            mem,
            file_id.as_deref(),
            &mut notes,
        )?;
        return Ok(Located {
            vars,
            opened: candidate.clone(),
            load_bias: bias,
            source,
            notes,
        });
    }
    if let Some(e) = mismatch {
        return Err(e);
    }
    Err(Error::Locate {
        path: module.path.clone(),
        reason: format!("no usable copy of the library: {}", open_errors.join("; ")),
    })
}

fn find_vars(
    elf: &ElfFile,
    real_path: &Path,
    bias: u64,
    mem: &dyn ReadMemory,
    build_id: Option<&[u8]>,
    notes: &mut Vec<String>,
) -> Result<(PerfMemoryVars, String), Error> {
    let mut tried = Vec::new();
    let try_table = |file: &ElfFile, source: SymbolSource, tried: &mut Vec<String>| {
        let found = file.find_in_symtab(&PERF_MEMORY_SYMBOLS);
        let vars = match found[..] {
            [Some(start), Some(capacity), top, initialized] => Some(PerfMemoryVars {
                start: bias.wrapping_add(start.value),
                capacity: bias.wrapping_add(capacity.value),
                top: top.map(|s| bias.wrapping_add(s.value)),
                initialized: initialized.map(|s| bias.wrapping_add(s.value)),
            }),
            _ => None,
        };
        if vars.is_none() {
            tried.push(format!("{source}: no PerfMemory::_start/_capacity"));
        }
        vars.map(|v| (v, source.to_string()))
    };

    // 1. A separate debug file by build-id.
    if let Some(id) = build_id.filter(|id| id.len() >= 2) {
        let hexid = hex(id);
        let path = PathBuf::from(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &hexid[..2],
            &hexid[2..]
        ));
        if let Ok(debug) = ElfFile::open(&path) {
            if debug.build_id().as_deref() == Some(id) {
                if let Some(r) =
                    try_table(&debug, SymbolSource::DebugFile(path.clone()), &mut tried)
                {
                    return Ok(r);
                }
            } else {
                notes.push(format!("{}: build-id differs, ignored", path.display()));
            }
        }
    }
    // 2. The library's own .symtab.
    if elf.has_symtab() {
        if let Some(r) = try_table(elf, SymbolSource::Symtab(elf.path().to_owned()), &mut tried) {
            return Ok(r);
        }
    } else {
        tried.push(format!("{}: no .symtab (stripped)", elf.path().display()));
    }
    // 3. .gnu_debuglink, in the places gdb looks.
    if let Some((name, crc)) = elf.debuglink() {
        for path in debuglink_paths(real_path, &name) {
            let Ok(debug) = ElfFile::open(&path) else {
                continue;
            };
            if debug.crc32() != crc {
                notes.push(format!(
                    "{}: CRC differs from .gnu_debuglink, ignored",
                    path.display()
                ));
                continue;
            }
            if let Some(r) = try_table(&debug, SymbolSource::DebugFile(path.clone()), &mut tried) {
                return Ok(r);
            }
        }
    }
    // 4. gHotSpotVMStructs through the exported symbols.
    let exported = elf.find_in_dynsym(&vmstructs::SYMBOLS);
    let resolve = |name: &str| {
        vmstructs::SYMBOLS
            .iter()
            .position(|s| *s == name)
            .and_then(|i| exported[i])
            .map(|s| bias.wrapping_add(s.value))
    };
    match vmstructs::find_perf_memory(mem, &resolve) {
        Ok(vars) => Ok((
            vars,
            format!("gHotSpotVMStructs (exported by {})", elf.path().display()),
        )),
        Err(e) => {
            tried.push(e.to_string());
            Err(Error::Locate {
                path: elf.path().to_owned(),
                reason: tried.join("; "),
            })
        }
    }
}

/// Where gdb looks for a `.gnu_debuglink` file: beside the library, in `.debug/` beside it, and
/// under `/usr/lib/debug` + the library's directory.
fn debuglink_paths(lib: &Path, name: &str) -> Vec<PathBuf> {
    let dir = lib.parent().unwrap_or(Path::new("/"));
    let mut out = vec![dir.join(name), dir.join(".debug").join(name)];
    if let Ok(rel) = dir.strip_prefix("/") {
        out.push(Path::new("/usr/lib/debug").join(rel).join(name));
    }
    out.retain(|p| p.as_path() != lib);
    out
}
