//! Locating the PerfData region: which libjvm the target runs, where it is loaded (load bias),
//! and where `PerfMemory::_start` and `PerfMemory::_capacity` live
//! (`src/hotspot/share/runtime/perfMemory.hpp`).
//!
//! Symbol sources, in order: a separate debug file found by build-id under `/usr/lib/debug`, the
//! library's own `.symtab`, a debug file named by `.gnu_debuglink`, and finally the exported
//! `gHotSpotVMStructs` table walked in the target's memory ([`crate::vm::find_perf_memory`]), which works on
//! stripped builds. On Windows, `jvm.dll`'s export table ([`pe`]) gives the vmStructs symbols.
//!
//! # The OS seam
//!
//! Finding the JVM's library in a live process is the OS-specific part of this stage, in one
//! module chosen below, exporting `locate_in_process(&Process, &ProcessMemory, SymbolCacheUse)
//! -> Located`: `linux.rs` (libjvm.so in `/proc/<pid>/maps`, then the ELF symbol sources here),
//! `windows.rs` (jvm.dll in the toolhelp module list, its exports, the vmStructs walk),
//! `unsupported.rs`. Everything else here (ELF symbol sources, cores, PE exports read from any
//! memory, vmStructs) is portable.

pub mod cache;
pub mod core_libjvm;
pub mod pe;

#[cfg(all(feature = "live", target_os = "linux"))]
#[path = "linux.rs"]
pub(crate) mod os;
#[cfg(all(feature = "live", windows))]
#[path = "windows.rs"]
pub(crate) mod os;
#[cfg(not(all(feature = "live", any(target_os = "linux", windows))))]
#[path = "unsupported.rs"]
pub(crate) mod os;

pub(crate) use os::{find_jvm, locate_in_process};

/// The module name of HotSpot's library on Windows.
pub const JVM_DLL: &str = "jvm.dll";

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::elf::{self, ElfFile, SymbolSource, hex};
use cache::{CachedVars, SymbolCache};
use goblin::elf::program_header::{PT_LOAD, PT_NOTE, ProgramHeader};

use crate::error::{Error, LocateFailure, with_causes};
use crate::memory::ReadMemory;

pub use crate::vm::PerfMemoryVars;

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
    /// The directory the target's own files are under when they are not this machine's (a
    /// core's `--sysroot`): its separate debug files (`/usr/lib/debug/...`, `.gnu_debuglink`)
    /// are looked for there before this machine's.
    pub root: Option<PathBuf>,
}

/// How the region's variables were found (reported by `-v`).
#[derive(Debug, Clone)]
pub struct Located {
    /// The addresses of the variables.
    pub vars: PerfMemoryVars,
    /// The JVM's library as the target has it loaded.
    pub module: LoadedModule,
    /// Where the symbols came from: a symbol table, or `gHotSpotVMStructs`.
    pub source: String,
    /// Things the user may want to know (a candidate skipped, a check not possible).
    pub notes: Vec<Note>,
}

/// The JVM's library in a target, as `-v` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadedModule {
    /// `libjvm.so` (Linux, ELF).
    Libjvm {
        /// The path the target mapped.
        path: PathBuf,
        /// The file that was opened for it (`/proc/<pid>/map_files/..`, a sysroot path, ...).
        opened: PathBuf,
        /// Its load bias: run-time address minus link-time address.
        load_bias: u64,
    },
    /// `libjvm.so` of which no file could be opened: its exported symbols (`.dynsym`) were read
    /// from the target's memory (a core that holds libjvm's read-only data).
    LibjvmInMemory {
        /// The path the target mapped.
        path: PathBuf,
        /// Its load bias: run-time address minus link-time address.
        load_bias: u64,
    },
    /// `jvm.dll` (Windows, PE), read from the target's memory only.
    JvmDll {
        /// Its path as the loader recorded it.
        path: PathBuf,
        /// Base address (its headers).
        base: u64,
        /// Size of the image in memory, in bytes.
        size: u64,
        /// Named exports in its export directory.
        exports: usize,
    },
}

impl std::fmt::Display for LoadedModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadedModule::Libjvm {
                path,
                opened,
                load_bias,
            } => write!(
                f,
                "libjvm: {} opened as {}, load bias {load_bias:#x}",
                path.display(),
                opened.display()
            ),
            LoadedModule::LibjvmInMemory { path, load_bias } => write!(
                f,
                "libjvm: {} (no copy opened: its exported symbols read from the target's memory), load bias {load_bias:#x}",
                path.display()
            ),
            LoadedModule::JvmDll {
                path,
                base,
                size,
                exports,
            } => write!(
                f,
                "jvm.dll: {} at {base:#x} ({size} bytes, {exports} named exports)",
                path.display()
            ),
        }
    }
}

/// Something the locator noticed on the way that did not stop it: the live path shows these
/// with `-v`, the core path as warnings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// The library file has no build-id, so it could not be checked against the target's.
    NoBuildId(PathBuf),
    /// The file has a build-id but its note is not readable in the target.
    BuildIdNotInTarget,
    /// A debug file under `/usr/lib/debug/.build-id` is of another build; it was ignored.
    DebugFileBuildIdDiffers(PathBuf),
    /// A `.gnu_debuglink` file's CRC differs from the one the library records; it was ignored.
    DebuglinkCrcDiffers(PathBuf),
    /// The symbol cache entry could not be written (the read itself is unaffected).
    CacheNotWritten(String),
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Note::NoBuildId(p) => write!(
                f,
                "{} has no build-id: cannot check it is the mapped build",
                p.display()
            ),
            Note::BuildIdNotInTarget => f.write_str(
                "the build-id note is not readable in the target: the file could not be checked against it",
            ),
            Note::DebugFileBuildIdDiffers(p) => {
                write!(f, "{}: build-id differs, ignored", p.display())
            }
            Note::DebuglinkCrcDiffers(p) => write!(
                f,
                "{}: CRC differs from .gnu_debuglink, ignored",
                p.display()
            ),
            Note::CacheNotWritten(e) => write!(f, "symbol cache not written: {e}"),
        }
    }
}

const PERF_MEMORY_SYMBOLS: [&str; 4] = [
    "_ZN10PerfMemory6_startE",
    "_ZN10PerfMemory9_capacityE",
    "_ZN10PerfMemory4_topE",
    "_ZN10PerfMemory12_initializedE",
];

/// The load bias of an image with these program headers given its mappings and the target's
/// page size `page` (a power of two): a mapping at file offset `o` that holds the page of a
/// `PT_LOAD` segment at `o` sits at `bias + (p_vaddr & !(page - 1))`.
pub fn load_bias(
    program_headers: &[ProgramHeader],
    mappings: &[Mapping],
    page: u64,
) -> Option<u64> {
    let mask = !(page.max(1) - 1);
    program_headers
        .iter()
        .filter(|p| p.p_type == PT_LOAD)
        .find_map(|seg| {
            let file_page = seg.p_offset & mask;
            let m = mappings.iter().find(|m| m.offset == file_page)?;
            Some(m.start.wrapping_sub(seg.p_vaddr & mask))
        })
}

/// A module as its own bytes in the target describe it: the ELF header page (dumped in cores by
/// default, always present in a live process) gives the program headers, hence the load bias and
/// the build-id note, without opening any file.
#[derive(Debug, Clone)]
pub struct LoadedImage {
    /// Load bias.
    pub bias: u64,
    /// The build-id from the `PT_NOTE` in memory.
    pub build_id: Option<Vec<u8>>,
    /// The `PT_DYNAMIC` segment: link-time address and size in bytes.
    pub dynamic: Option<(u64, u64)>,
    /// The run-time address range its `PT_LOAD` segments span.
    pub span: (u64, u64),
}

impl LoadedImage {
    /// Reads the image's headers through `mem`; `None` when the first page is not readable or
    /// is not a 64-bit little-endian ELF header.
    pub fn read(module: &Module, mem: &dyn ReadMemory) -> Option<Self> {
        let first = module.mappings.iter().find(|m| m.offset == 0)?;
        let page_size = mem.page_size();
        // The ELF header and program headers are in the first 4 KiB of any page size.
        let mut page = vec![0u8; page_size.min(4096) as usize];
        mem.read_exact_at(first.start, &mut page).ok()?;
        let header = elf::parse_header(&page).ok()?;
        let end =
            (header.e_phoff as usize).checked_add(header.e_phnum as usize * elf::SIZEOF_PHDR)?;
        if end > page.len() {
            return None;
        }
        let phdrs = ProgramHeader::parse(
            &page,
            header.e_phoff as usize,
            header.e_phnum as usize,
            elf::CTX,
        )
        .ok()?;
        let bias = load_bias(&phdrs, &module.mappings, page_size)?;
        let build_id = phdrs.iter().filter(|p| p.p_type == PT_NOTE).find_map(|p| {
            let mut buf = vec![0u8; p.p_filesz.min(4096) as usize];
            mem.read_exact_at(bias.wrapping_add(p.p_vaddr), &mut buf)
                .ok()?;
            elf::build_id_from_notes(&buf)
        });
        let dynamic = phdrs
            .iter()
            .find(|p| p.p_type == goblin::elf::program_header::PT_DYNAMIC)
            .map(|p| (p.p_vaddr, p.p_memsz));
        let loads = || phdrs.iter().filter(|p| p.p_type == PT_LOAD);
        let span = (
            bias.wrapping_add(loads().map(|p| p.p_vaddr).min()?),
            bias.wrapping_add(loads().map(|p| p.p_vaddr.saturating_add(p.p_memsz)).max()?),
        );
        Some(LoadedImage {
            bias,
            build_id,
            dynamic,
            span,
        })
    }
}

/// Finds the addresses of `PerfMemory`'s variables in the target: from `cache` when it knows the
/// build-id found in the target's memory; else by opening the module's file (the first candidate
/// that opens and whose build-id matches the one in the target's memory) and searching its symbol
/// sources, then storing the answer in `cache`.
///
/// # Errors
/// [`Error::BuildIdMismatch`] when every candidate that opened is a different build;
/// [`Error::Locate`] when no candidate opens or no symbol source has the variables; errors from
/// the vmStructs walk.
pub fn locate_perf_memory(
    module: &Module,
    mem: &dyn ReadMemory,
    cache: Option<&SymbolCache>,
) -> Result<Located, Error> {
    let mut notes = Vec::new();
    let image = LoadedImage::read(module, mem);
    let memory_id = image.as_ref().and_then(|i| i.build_id.clone());
    if let (Some(image), Some(cache), Some(id)) = (&image, cache, &memory_id)
        && let Some(hit) = cache.get(id)
    {
        return Ok(Located {
            vars: hit.vars.shifted(image.bias),
            module: LoadedModule::Libjvm {
                path: module.path.clone(),
                opened: module.path.clone(),
                load_bias: image.bias,
            },
            source: format!(
                "symbol cache for build-id {} (first found in {})",
                hex(id),
                hit.source
            ),
            notes,
        });
    }
    let mut mismatch = None;
    let mut open_errors = Vec::new();
    for candidate in &module.candidates {
        let elf = match ElfFile::open(candidate) {
            Ok(elf) => elf,
            Err(e) => {
                open_errors.push(with_causes(&e));
                continue;
            }
        };
        let Some(bias) = load_bias(elf.program_headers(), &module.mappings, mem.page_size()) else {
            open_errors.push(format!(
                "{}: no PT_LOAD segment matches the target's mappings",
                candidate.display()
            ));
            continue;
        };
        let file_id = elf.build_id();
        let in_memory = memory_id
            .clone()
            .or_else(|| build_id_at_note(&elf, bias, mem));
        match (&file_id, in_memory) {
            (Some(f), Some(m)) if *f != m => {
                mismatch = Some(Error::BuildIdMismatch {
                    path: candidate.clone(),
                    file_id: hex(f),
                    memory_id: hex(&m),
                });
                continue;
            }
            (Some(_), Some(_)) => {}
            (None, _) => notes.push(Note::NoBuildId(candidate.clone())),
            (Some(_), None) => notes.push(Note::BuildIdNotInTarget),
        }
        let lookup = Lookup {
            elf: &elf,
            opened: candidate,
            root: module.root.as_deref(),
            real_path: &module.path,
            bias,
            mem,
            build_id: file_id.as_deref(),
        };
        let (vars, source) = find_vars(&lookup, &mut notes)?;
        if let (Some(cache), Some(id)) = (cache, &file_id) {
            let entry = CachedVars {
                vars: vars.shifted(bias.wrapping_neg()),
                source: source.clone(),
            };
            if let Err(e) = cache.put(id, &entry) {
                notes.push(Note::CacheNotWritten(e.to_string()));
            }
        }
        return Ok(Located {
            vars,
            module: LoadedModule::Libjvm {
                path: module.path.clone(),
                opened: candidate.clone(),
                load_bias: bias,
            },
            source,
            notes,
        });
    }
    if let Some(e) = mismatch {
        return Err(e);
    }
    Err(Error::Locate {
        path: module.path.clone(),
        reason: LocateFailure::NoUsableCopy(open_errors),
    })
}

/// Finds `PerfMemory`'s variables when no file of the module can be opened: the exported
/// symbols the vmStructs walk needs are read from the module's own `_DYNAMIC` and hash table in
/// the target's memory ([`elf::dynamic`]), which a core holds with libjvm's read-only data
/// (`coredump_filter` bit 2).
///
/// # Errors
/// [`Error::ImageSymbols`] when the module's ELF headers or `_DYNAMIC` are not usable;
/// [`Error::Vm`] when a symbol is not exported or the walk fails; [`Error::Memory`] when a read
/// fails (bytes a core lacks).
pub fn locate_in_memory(module: &Module, mem: &dyn ReadMemory) -> Result<Located, Error> {
    let (load_bias, symbols) = exported_in_memory(module, mem, &crate::vm::tables::STRUCT_SYMBOLS)?;
    let resolve = |name: &str| symbols.get(name).copied();
    let vars = crate::vm::find_perf_memory(mem, &resolve)?;
    Ok(Located {
        vars,
        module: LoadedModule::LibjvmInMemory {
            path: module.path.clone(),
            load_bias,
        },
        source: format!(
            "gHotSpotVMStructs (exported by {}; its .dynsym read from the target's memory)",
            module.path.display()
        ),
        notes: Vec::new(),
    })
}

/// A loaded libjvm or `jvm.dll`, as the target's seam or file found it: what
/// [`exported_symbols`] reads its exports from.
#[derive(Debug, Clone)]
pub(crate) enum JvmImage {
    /// An ELF libjvm (a live Linux process, an ELF core): its mappings and files.
    Elf(Module),
    /// A PE `jvm.dll` (a live Windows process, a minidump): its base address in the target and
    /// the path the loader recorded.
    Pe {
        /// Where its headers start (`BaseOfImage`, the toolhelp module's `modBaseAddr`).
        base: u64,
        /// Its path as the loader recorded it.
        path: PathBuf,
    },
}

/// A loaded JVM image's exported symbols: the ELF ones asked for, or a PE export table whole.
pub(crate) enum Exported<'n> {
    /// The asked-for names found in libjvm's `_DYNAMIC` symbol table, at their run-time
    /// addresses.
    Elf(HashMap<&'n str, u64>),
    /// `jvm.dll`'s export directory (`locate/pe.rs`).
    Pe(pe::Exports),
}

impl Exported<'_> {
    /// The run-time address of exported symbol `name`, if exported (for ELF: if asked for).
    pub(crate) fn address(&self, name: &str) -> Option<u64> {
        match self {
            Exported::Elf(found) => found.get(name).copied(),
            Exported::Pe(exports) => exports.address(name),
        }
    }
}

/// The exported symbols of `image` read from the target's memory `mem`, whatever the target's
/// OS: an ELF libjvm's `_DYNAMIC` and hash table ([`exported_in_memory`], the symbols `names`),
/// or a PE `jvm.dll`'s DOS/NT headers and export directory ([`pe::ImageHeaders`],
/// [`pe::Exports`]). The file on disk is never opened.
///
/// # Errors
/// Those of [`exported_in_memory`], [`pe::ImageHeaders::read`] and [`pe::Exports::read`].
pub(crate) fn exported_symbols<'n>(
    image: &JvmImage,
    mem: &dyn ReadMemory,
    names: &[&'n str],
) -> Result<Exported<'n>, Error> {
    match image {
        JvmImage::Elf(module) => Ok(Exported::Elf(exported_in_memory(module, mem, names)?.1)),
        JvmImage::Pe { base, path } => {
            let name = path.display().to_string();
            let headers = pe::ImageHeaders::read(mem, *base, &name)?;
            Ok(Exported::Pe(pe::Exports::read(mem, &headers, &name)?))
        }
    }
}

/// The load bias of `module` and the run-time addresses of those of `names` it exports, read
/// from its own ELF headers, `_DYNAMIC` and hash table in the target's memory ([`elf::dynamic`]):
/// no file is opened, so this works on stripped builds, in containers and on cores that hold
/// the module's read-only data. A name it does not export is absent from the map.
///
/// # Errors
/// [`Error::ImageSymbols`] when the headers or `_DYNAMIC` are not usable; [`Error::Memory`]
/// when a read fails.
pub(crate) fn exported_in_memory<'n>(
    module: &Module,
    mem: &dyn ReadMemory,
    names: &[&'n str],
) -> Result<(u64, HashMap<&'n str, u64>), Error> {
    use crate::error::DynamicProblem;
    use elf::dynamic::{DynamicError, DynamicSymbols};
    let malformed = |problem| Error::ImageSymbols {
        path: module.path.clone(),
        problem,
    };
    let image = LoadedImage::read(module, mem)
        .ok_or_else(|| malformed(DynamicProblem::HeadersUnreadable))?;
    let (vaddr, memsz) = image
        .dynamic
        .ok_or_else(|| malformed(DynamicProblem::NoDynamicSegment))?;
    let to_error = |e: DynamicError| match e {
        DynamicError::Malformed(problem) => malformed(problem),
        DynamicError::Memory(what, e) => Error::memory(what.to_string(), e),
    };
    let syms = DynamicSymbols::read(mem, image.bias, vaddr, memsz, image.span).map_err(to_error)?;
    let mut out = HashMap::new();
    for &name in names {
        if let Some(v) = syms.lookup(name).map_err(to_error)? {
            out.insert(name, image.bias.wrapping_add(v));
        }
    }
    Ok((image.bias, out))
}

/// The build-id read from the target at the address of the file's build-id note.
fn build_id_at_note(elf: &ElfFile, bias: u64, mem: &dyn ReadMemory) -> Option<Vec<u8>> {
    let (vaddr, size) = elf.build_id_note_vaddr()?;
    let mut buf = vec![0u8; size.min(4096) as usize];
    mem.read_exact_at(bias.wrapping_add(vaddr), &mut buf).ok()?;
    elf::build_id_from_notes(&buf)
}

/// What the symbol sources look at: the opened library, where it is loaded, and the target.
struct Lookup<'a> {
    elf: &'a ElfFile,
    /// The file `elf` was opened from.
    opened: &'a Path,
    /// Where the target's own files are, when not on this machine ([`Module::root`]).
    root: Option<&'a Path>,
    /// The library's path in the target (for messages and `.gnu_debuglink` directories).
    real_path: &'a Path,
    bias: u64,
    mem: &'a dyn ReadMemory,
    build_id: Option<&'a [u8]>,
}

/// A symbol source: the variables and a description of where they came from, or `None` after
/// saying why not in `tried` (and anything worth knowing in `notes`).
type SymbolLookup =
    fn(&Lookup, &mut Vec<String>, &mut Vec<Note>) -> Option<(PerfMemoryVars, String)>;

/// The symbol sources, best first: a debug file by build-id, the library's own `.symtab`, a
/// `.gnu_debuglink` file, and `gHotSpotVMStructs` (works on stripped builds).
const SYMBOL_SOURCES: [SymbolLookup; 4] = [
    |l, tried, notes| l.build_id_debug_file(tried, notes),
    |l, tried, _| l.own_symtab(tried),
    |l, tried, notes| l.debuglink_file(tried, notes),
    |l, tried, _| l.vmstructs(tried),
];

/// The run-time addresses of `names` in the `.symtab` of the first of `module`'s files that
/// matches its mappings (a libjvm that keeps its local symbols: most JDK builds do); a name
/// the file lacks is left out, and no usable file gives an empty map. For what vmStructs does
/// not export (Metaspace's counters).
pub fn symtab_addresses(
    module: &Module,
    mem: &dyn ReadMemory,
    names: &[&str],
) -> HashMap<String, u64> {
    for candidate in &module.candidates {
        let Ok(elf) = ElfFile::open(candidate) else {
            continue;
        };
        let Some(bias) = load_bias(elf.program_headers(), &module.mappings, mem.page_size()) else {
            continue;
        };
        return names
            .iter()
            .zip(elf.find_in_symtab(names))
            .filter_map(|(n, s)| Some((n.to_string(), bias.wrapping_add(s?.value))))
            .collect();
    }
    std::collections::HashMap::new()
}

fn find_vars(lookup: &Lookup, notes: &mut Vec<Note>) -> Result<(PerfMemoryVars, String), Error> {
    let mut tried = Vec::new();
    SYMBOL_SOURCES
        .iter()
        .find_map(|source| source(lookup, &mut tried, notes))
        .ok_or_else(|| Error::Locate {
            path: lookup.real_path.to_owned(),
            reason: LocateFailure::NoSymbols(tried),
        })
}

impl Lookup<'_> {
    /// `PerfMemory`'s variables in `file`'s `.symtab`.
    fn in_symtab(
        &self,
        file: &ElfFile,
        source: SymbolSource,
        tried: &mut Vec<String>,
    ) -> Option<(PerfMemoryVars, String)> {
        let found = file.find_in_symtab(&PERF_MEMORY_SYMBOLS);
        let bias = self.bias;
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
    }

    /// 1. A separate debug file by build-id under `/usr/lib/debug/.build-id`.
    fn build_id_debug_file(
        &self,
        tried: &mut Vec<String>,
        notes: &mut Vec<Note>,
    ) -> Option<(PerfMemoryVars, String)> {
        let id = self.build_id.filter(|id| id.len() >= 2)?;
        let hexid = hex(id);
        let path = PathBuf::from(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &hexid[..2],
            &hexid[2..]
        ));
        // The target's machine first (a sysroot), then this one: the build-id decides.
        self.root
            .map(|root| root.join(path.strip_prefix("/").unwrap_or(&path)))
            .into_iter()
            .chain([path.clone()])
            .find_map(|path| {
                let debug = ElfFile::open(&path).ok()?;
                if debug.build_id().as_deref() != Some(id) {
                    notes.push(Note::DebugFileBuildIdDiffers(path));
                    return None;
                }
                self.in_symtab(&debug, SymbolSource::DebugFile(path.clone()), tried)
            })
    }

    /// 2. The library's own `.symtab`.
    fn own_symtab(&self, tried: &mut Vec<String>) -> Option<(PerfMemoryVars, String)> {
        if !self.elf.has_symtab() {
            tried.push(format!(
                "{}: no .symtab (stripped)",
                self.real_path.display()
            ));
            return None;
        }
        self.in_symtab(
            self.elf,
            SymbolSource::Symtab(self.real_path.to_owned()),
            tried,
        )
    }

    /// 3. The file `.gnu_debuglink` names, in the places gdb looks, when its CRC matches.
    fn debuglink_file(
        &self,
        tried: &mut Vec<String>,
        notes: &mut Vec<Note>,
    ) -> Option<(PerfMemoryVars, String)> {
        let (name, crc) = self.elf.debuglink()?;
        // Beside the file opened (a copy, a sysroot's), under the sysroot, then on this machine;
        // the CRC decides.
        let mut paths = debuglink_paths(self.opened, &name);
        if let Some(root) = self.root {
            paths.extend(
                debuglink_paths(self.real_path, &name)
                    .iter()
                    .map(|p| root.join(p.strip_prefix("/").unwrap_or(p))),
            );
        }
        paths.extend(debuglink_paths(self.real_path, &name));
        let mut seen = std::collections::HashSet::new();
        paths.retain(|p| seen.insert(p.clone()));
        paths.into_iter().find_map(|path| {
            let debug = ElfFile::open(&path).ok()?;
            if debug.crc32() != Some(crc) {
                notes.push(Note::DebuglinkCrcDiffers(path));
                return None;
            }
            self.in_symtab(&debug, SymbolSource::DebugFile(path.clone()), tried)
        })
    }

    /// 4. `gHotSpotVMStructs`, through the symbols the library exports (`.dynsym`).
    fn vmstructs(&self, tried: &mut Vec<String>) -> Option<(PerfMemoryVars, String)> {
        let exported = self.elf.find_in_dynsym(&crate::vm::tables::STRUCT_SYMBOLS);
        let resolve = |name: &str| {
            crate::vm::tables::STRUCT_SYMBOLS
                .iter()
                .position(|s| *s == name)
                .and_then(|i| exported[i])
                .map(|s| self.bias.wrapping_add(s.value))
        };
        match crate::vm::find_perf_memory(self.mem, &resolve) {
            Ok(vars) => Some((
                vars,
                format!(
                    "gHotSpotVMStructs (exported by {})",
                    self.real_path.display()
                ),
            )),
            Err(e) => {
                tried.push(with_causes(&e));
                None
            }
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

#[cfg(all(test, feature = "live", target_os = "linux"))]
mod tests {
    use super::*;
    use crate::read::ProcessMemory;

    #[unsafe(no_mangle)]
    #[used]
    static HSINSPECT_BIAS_PROBE: u64 = 0x5eed;

    /// This test process's own mappings of its executable, as `/proc/self/maps` lists them.
    fn own_module() -> Module {
        let exe = std::fs::canonicalize("/proc/self/exe").unwrap();
        let maps = procfs::process::Process::myself().unwrap().maps().unwrap();
        let mappings = maps
            .iter()
            .filter(|m| matches!(&m.pathname, procfs::process::MMapPath::Path(p) if *p == exe))
            .map(|m| Mapping {
                start: m.address.0,
                end: m.address.1,
                offset: m.offset,
            })
            .collect();
        Module {
            path: exe.clone(),
            mappings,
            candidates: vec![exe],
            root: None,
        }
    }

    #[test]
    fn load_bias_puts_a_symbol_at_its_run_time_address() {
        let module = own_module();
        let elf = ElfFile::open(&module.path).unwrap();
        let bias = load_bias(elf.program_headers(), &module.mappings, 4096).unwrap();
        let sym = elf.find_in_symtab(&["HSINSPECT_BIAS_PROBE"])[0].unwrap();
        assert_eq!(
            bias.wrapping_add(sym.value),
            &raw const HSINSPECT_BIAS_PROBE as u64
        );
        // The same bias and build-id from the headers in memory, without the file.
        let image = LoadedImage::read(
            &module,
            &ProcessMemory::new(std::process::id() as crate::pid::Pid),
        )
        .unwrap();
        assert_eq!(image.bias, bias);
        assert_eq!(image.build_id, elf.build_id());
        // No mapping at a PT_LOAD's file page: no bias.
        assert_eq!(load_bias(elf.program_headers(), &[], 4096), None);
    }

    #[test]
    fn debuglink_paths_are_where_gdb_looks() {
        assert_eq!(
            debuglink_paths(Path::new("/opt/jdk/lib/server/libjvm.so"), "libjvm.debug"),
            vec![
                PathBuf::from("/opt/jdk/lib/server/libjvm.debug"),
                PathBuf::from("/opt/jdk/lib/server/.debug/libjvm.debug"),
                PathBuf::from("/usr/lib/debug/opt/jdk/lib/server/libjvm.debug"),
            ]
        );
        // A debuglink naming the library itself is not a candidate.
        assert!(
            !debuglink_paths(Path::new("/l/libjvm.so"), "libjvm.so")
                .contains(&PathBuf::from("/l/libjvm.so"))
        );
    }
}

#[cfg(test)]
mod page_size_tests {
    use goblin::elf::program_header::{PF_R, PF_X};

    use super::*;

    fn load(offset: u64, vaddr: u64, size: u64) -> ProgramHeader {
        ProgramHeader {
            p_type: PT_LOAD,
            p_flags: PF_R | PF_X,
            p_offset: offset,
            p_vaddr: vaddr,
            p_paddr: vaddr,
            p_filesz: size,
            p_memsz: size,
            p_align: 0x10000,
        }
    }

    /// A library linked for 64 KiB pages (`-z max-page-size=0x10000`, as aarch64 distributions
    /// link): its second segment's file page and address page depend on the page size.
    #[test]
    fn load_bias_uses_the_targets_page_size() {
        let bias = 0x7f00_0000_0000u64;
        // Second segment at file offset 0x1_2345, vaddr 0x11_2345: its page starts at
        // 0x1_0000 / 0x11_0000 with 64 KiB pages, 0x1_0000 / 0x11_0000 with 16 KiB pages
        // (0x12345 & !0x3fff = 0x10000) and 0x1_2000 / 0x11_2000 with 4 KiB pages.
        let phdrs = [load(0x1_2345, 0x11_2345, 0x1000)];
        for (page, file_page, addr_page) in [
            (4096u64, 0x1_2000u64, 0x11_2000u64),
            (16384, 0x1_0000, 0x11_0000),
            (65536, 0x1_0000, 0x11_0000),
        ] {
            let mappings = [Mapping {
                start: bias + addr_page,
                end: bias + addr_page + page,
                offset: file_page,
            }];
            assert_eq!(
                load_bias(&phdrs, &mappings, page),
                Some(bias),
                "page size {page}"
            );
        }
        // A mapping laid out for 4 KiB pages is not found with 64 KiB ones (no wrong bias).
        let four_k = [Mapping {
            start: bias + 0x11_2000,
            end: bias + 0x11_3000,
            offset: 0x1_2000,
        }];
        assert_eq!(load_bias(&phdrs, &four_k, 65536), None);
    }

    /// Memory that holds bytes only below `end`, with pages of `page` bytes.
    struct Ends {
        page: u64,
        end: u64,
        byte: u8,
    }

    impl ReadMemory for Ends {
        fn page_size(&self) -> u64 {
            self.page
        }
        fn read_exact_at(
            &self,
            addr: u64,
            buf: &mut [u8],
        ) -> Result<(), crate::memory::MemoryError> {
            if addr + buf.len() as u64 > self.end {
                return Err(crate::memory::MemoryError::Unmapped {
                    addr,
                    len: buf.len(),
                });
            }
            buf.fill(self.byte);
            Ok(())
        }
    }

    /// A string that runs up to the end of the last mapped page is read up to there, whatever
    /// the page size, and never by a read that crosses into the unmapped page.
    #[test]
    fn c_strings_stop_at_the_targets_page_boundary() {
        for page in [4096u64, 16384, 65536] {
            let end = 3 * page;
            let mem = Ends {
                page,
                end,
                byte: b'a',
            };
            // No NUL before the unmapped page: no string, no error once something was read.
            assert_eq!(mem.read_c_string(end - 100, 1000).unwrap(), None);
            // Starting on an unmapped page is an error.
            assert!(mem.read_c_string(end, 10).is_err());
            let zero = Ends { page, end, byte: 0 };
            assert_eq!(zero.read_c_string(end - 1, 10).unwrap(), Some(Vec::new()));
        }
    }
}
