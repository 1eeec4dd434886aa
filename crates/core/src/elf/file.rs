//! An ELF shared object on disk (libjvm.so, or its separate debug file): its program headers,
//! build-id and symbol tables, parsed with goblin from bytes read with `pread`.

use std::fs::File;
use std::path::{Path, PathBuf};

use goblin::elf::header::{EM_AARCH64, EM_X86_64, ET_DYN, ET_EXEC, Header};
use goblin::elf::program_header::{PT_LOAD, PT_NOTE, ProgramHeader};
use goblin::elf::section_header::{SHT_DYNSYM, SHT_NOTE, SHT_SYMTAB, SectionHeader};
use goblin::elf::sym::STT_OBJECT;

use super::{CTX, SIZEOF_EHDR, SIZEOF_PHDR, SIZEOF_SHDR, SIZEOF_SYM, build_id_from_notes};
use crate::error::Error;
use crate::memory::LeBytes;

/// An ELF file, 64-bit little-endian (x86_64 or aarch64), read with `pread`: headers when opened,
/// sections when asked for. It is not mapped: these files may belong to the target's user (a
/// container's JDK), and one truncated under a mapping would kill the inspector with SIGBUS,
/// where a short read is just an error.
#[derive(Debug)]
pub struct ElfFile {
    file: File,
    len: u64,
    header: Header,
    program_headers: Vec<ProgramHeader>,
    section_headers: Vec<SectionHeader>,
}

/// Which table a symbol came from (reported by `-v`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymbolSource {
    /// `.symtab` of the file itself.
    Symtab(PathBuf),
    /// `.symtab` of a separate debug file (found by build-id or `.gnu_debuglink`).
    DebugFile(PathBuf),
}

impl std::fmt::Display for SymbolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SymbolSource::Symtab(p) => write!(f, ".symtab of {}", p.display()),
            SymbolSource::DebugFile(p) => write!(f, ".symtab of debug file {}", p.display()),
        }
    }
}

/// A defined symbol: its link-time value (`st_value`, add the load bias for an address) and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol {
    /// `st_value`, the link-time virtual address.
    pub value: u64,
    /// `st_size` in bytes.
    pub size: u64,
}

fn malformed(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::Elf {
        path: path.to_owned(),
        reason: why.to_string(),
    }
}

impl ElfFile {
    /// Opens `path` read-only and parses its headers.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened or read; [`Error::Elf`] when it is not a
    /// 64-bit little-endian x86_64/aarch64 ELF executable or shared object, or its headers lie
    /// outside the file.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Self::from_file(path, file)
    }

    /// Like [`ElfFile::open`] for an already open file; `path` is for messages.
    ///
    /// # Errors
    /// As [`ElfFile::open`].
    pub fn from_file(path: &Path, file: File) -> Result<Self, Error> {
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        if !meta.is_file() {
            return Err(malformed(path, "not a regular file"));
        }
        let len = meta.len();
        let read = |off: u64, n: u64, what: &str| {
            read_range(&file, len, off, n)
                .ok_or_else(|| malformed(path, format!("{what} lie outside the file")))
        };
        let ident = read(0, SIZEOF_EHDR as u64, "ELF header")?;
        let header = super::parse_header(&ident).map_err(|e| malformed(path, e))?;
        if header.e_type != ET_DYN && header.e_type != ET_EXEC {
            return Err(malformed(
                path,
                format!(
                    "ELF type {} is not a shared object or executable",
                    header.e_type
                ),
            ));
        }
        if header.e_machine != EM_X86_64 && header.e_machine != EM_AARCH64 {
            return Err(malformed(
                path,
                format!("machine {} is not x86_64 or aarch64", header.e_machine),
            ));
        }
        let phdrs = read(
            header.e_phoff,
            header.e_phnum as u64 * SIZEOF_PHDR as u64,
            "program headers",
        )?;
        let program_headers = ProgramHeader::parse(&phdrs, 0, header.e_phnum as usize, CTX)
            .map_err(|e| malformed(path, format!("program headers: {e}")))?;
        // No section headers, or more than 0xff00 (extended numbering, never seen in a libjvm):
        // symbol lookup then falls back to the target's gHotSpotVMStructs.
        let section_headers = if header.e_shoff == 0 || header.e_shnum == 0 {
            Vec::new()
        } else {
            let shdrs = read(
                header.e_shoff,
                header.e_shnum as u64 * SIZEOF_SHDR as u64,
                "section headers",
            )?;
            SectionHeader::parse_from(&shdrs, 0, header.e_shnum as usize, CTX)
                .map_err(|e| malformed(path, format!("section headers: {e}")))?
        };
        Ok(ElfFile {
            file,
            len,
            header,
            program_headers,
            section_headers,
        })
    }

    /// The program headers.
    pub fn program_headers(&self) -> &[ProgramHeader] {
        &self.program_headers
    }

    /// The ELF type (`ET_DYN` or `ET_EXEC`).
    pub fn elf_type(&self) -> u16 {
        self.header.e_type
    }

    /// The ELF machine (`EM_X86_64` or `EM_AARCH64`).
    pub fn machine(&self) -> u16 {
        self.header.e_machine
    }

    /// The entry point (`e_entry`, a link-time address).
    pub fn entry(&self) -> u64 {
        self.header.e_entry
    }

    /// The `PT_LOAD` segments.
    pub fn loads(&self) -> impl Iterator<Item = &ProgramHeader> {
        self.program_headers.iter().filter(|p| p.p_type == PT_LOAD)
    }

    /// The build-id from the file's notes (a `PT_NOTE` segment, else an `SHT_NOTE` section).
    pub fn build_id(&self) -> Option<Vec<u8>> {
        let ranges = self
            .program_headers
            .iter()
            .filter(|p| p.p_type == PT_NOTE)
            .map(|p| (p.p_offset, p.p_filesz))
            .chain(
                self.section_headers
                    .iter()
                    .filter(|s| s.sh_type == SHT_NOTE)
                    .map(|s| (s.sh_offset, s.sh_size)),
            );
        for (off, size) in ranges {
            let Some(bytes) = self.read(off, size.min(MAX_NOTES)) else {
                continue;
            };
            if let Some(id) = build_id_from_notes(&bytes) {
                return Some(id);
            }
        }
        None
    }

    /// The `PT_NOTE` segment that holds the build-id: its `p_vaddr` and `p_filesz`, so the same
    /// note can be read from the target's memory and compared.
    pub fn build_id_note_vaddr(&self) -> Option<(u64, u64)> {
        self.program_headers
            .iter()
            .filter(|p| p.p_type == PT_NOTE)
            .find(|p| {
                self.read(p.p_offset, p.p_filesz.min(MAX_NOTES))
                    .and_then(|b| build_id_from_notes(&b))
                    .is_some()
            })
            .map(|p| (p.p_vaddr, p.p_filesz))
    }

    /// `.gnu_debuglink`: the debug file's name and the CRC32 of its contents.
    pub fn debuglink(&self) -> Option<(String, u32)> {
        let shstr = self.section_headers.get(self.header.e_shstrndx as usize)?;
        let shstrtab = self.read(shstr.sh_offset, shstr.sh_size)?;
        let sec = self
            .section_headers
            .iter()
            .find(|s| c_str_at(&shstrtab, s.sh_name as u32) == Some(b".gnu_debuglink"))?;
        let bytes = self.read(sec.sh_offset, sec.sh_size.min(4096))?;
        let nul = bytes.iter().position(|&b| b == 0)?;
        let name = std::str::from_utf8(&bytes[..nul]).ok()?.to_owned();
        let crc_at = (nul + 1).next_multiple_of(4);
        let crc = LeBytes::new(&bytes).u32_at(crc_at)?;
        Some((name, crc))
    }

    /// The whole file's CRC32 (for checking a `.gnu_debuglink` target); `None` when the file
    /// cannot be read to its end.
    pub fn crc32(&self) -> Option<u32> {
        let mut hasher = crc32fast::Hasher::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut at = 0u64;
        while at < self.len {
            let n = (self.len - at).min(buf.len() as u64) as usize;
            super::read_exact_at(&self.file, &mut buf[..n], at).ok()?;
            hasher.update(&buf[..n]);
            at += n as u64;
        }
        Some(hasher.finalize())
    }

    /// `n` bytes at file offset `off`, when the file (as it is now) holds them.
    fn read(&self, off: u64, n: u64) -> Option<Vec<u8>> {
        read_range(&self.file, self.len, off, n)
    }

    /// Whether the file has a `.symtab` with entries (a debug file or an unstripped library).
    pub fn has_symtab(&self) -> bool {
        self.section_headers
            .iter()
            .any(|s| s.sh_type == SHT_SYMTAB && s.sh_size > 0)
    }

    /// Looks up each name in `wanted` in one pass over `.symtab` (`SHT_SYMTAB`) or `.dynsym`
    /// (`SHT_DYNSYM`), as `table` says. Only defined data objects (`STT_OBJECT`) are considered,
    /// which is all the locator ever looks up; a name defined twice keeps its first definition.
    ///
    /// One linear pass is used instead of building a hash table of all ~60 000 libjvm symbols
    /// first: the locator needs four names once per run, and hashing every name would cost more
    /// than the whole forced read (see ARCHITECTURE.md).
    pub fn find_objects(&self, table: u32, wanted: &[&str]) -> Vec<Option<Symbol>> {
        let mut found = vec![None; wanted.len()];
        let Some(sec) = self
            .section_headers
            .iter()
            .find(|s| s.sh_type == table && s.sh_entsize == SIZEOF_SYM as u64)
        else {
            return found;
        };
        let Some(strsec) = self.section_headers.get(sec.sh_link as usize) else {
            return found;
        };
        let Some(strtab) = self.read(strsec.sh_offset, strsec.sh_size) else {
            return found;
        };
        let Some(entries) = self.read(sec.sh_offset, sec.sh_size) else {
            return found;
        };
        let mut left = wanted.len();
        // Elf64_Sym: st_name u32 @0, st_info u8 @4, st_other u8 @5, st_shndx u16 @6,
        // st_value u64 @8, st_size u64 @16. Read in place: goblin's per-entry parse costs more
        // than the rest of a forced read for libjvm's 60 000 symbols.
        for e in entries.chunks_exact(SIZEOF_SYM) {
            let e = LeBytes::new(e);
            let le32 = |i: usize| e.u32_at(i).unwrap_or(0);
            let le64 = |i: usize| e.u64_at(i).unwrap_or(0);
            let e = e.bytes();
            if e[4] & 0xf != STT_OBJECT || (e[6] == 0 && e[7] == 0) {
                continue;
            }
            let Some(rest) = strtab.get(le32(0) as usize..) else {
                continue;
            };
            for (i, w) in wanted.iter().enumerate() {
                let w = w.as_bytes();
                if found[i].is_none()
                    && rest.len() > w.len()
                    && rest[w.len()] == 0
                    && rest.starts_with(w)
                {
                    found[i] = Some(Symbol {
                        value: le64(8),
                        size: le64(16),
                    });
                    left -= 1;
                }
            }
            if left == 0 {
                break;
            }
        }
        found
    }

    /// `find_objects` over `.symtab`.
    pub fn find_in_symtab(&self, wanted: &[&str]) -> Vec<Option<Symbol>> {
        self.find_objects(SHT_SYMTAB, wanted)
    }

    /// `find_objects` over `.dynsym`.
    pub fn find_in_dynsym(&self, wanted: &[&str]) -> Vec<Option<Symbol>> {
        self.find_objects(SHT_DYNSYM, wanted)
    }

    /// The file bytes backing link-time address range `[vaddr, vaddr+len)`, when a `PT_LOAD`
    /// segment holds them in the file (used to read constant data without touching the target).
    pub fn bytes_at_vaddr(&self, vaddr: u64, len: u64) -> Option<Vec<u8>> {
        let end = vaddr.checked_add(len)?;
        let seg = self
            .loads()
            .find(|p| vaddr >= p.p_vaddr && end <= p.p_vaddr.saturating_add(p.p_filesz))?;
        self.read(seg.p_offset + (vaddr - seg.p_vaddr), len)
    }
}

/// Longest note area read when looking for a build-id.
const MAX_NOTES: u64 = 64 << 10;
/// Longest section read (libjvm's `.strtab` is about 3 MiB; a debug file's can be larger).
const MAX_SECTION: u64 = 256 << 20;

/// `n` bytes at `off` of a file of `len` bytes, or `None` when the range lies outside it, is
/// implausibly large, or the file has shrunk since (short read).
fn read_range(file: &File, len: u64, off: u64, n: u64) -> Option<Vec<u8>> {
    if n > MAX_SECTION || off.checked_add(n)? > len {
        return None;
    }
    let mut buf = vec![0u8; n as usize];
    super::read_exact_at(file, &mut buf, off).ok()?;
    Some(buf)
}

fn c_str_at(table: &[u8], at: u32) -> Option<&[u8]> {
    let rest = table.get(at as usize..)?;
    let nul = rest.iter().position(|&b| b == 0)?;
    Some(&rest[..nul])
}

// The tests read this test binary as an ELF file and run objcopy: Linux only (on Windows the
// binary is a PE).
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A data object of this test binary, looked up by name in its own `.symtab`.
    #[unsafe(no_mangle)]
    #[used]
    static HSINSPECT_ELF_PROBE: [u64; 3] = [1, 2, 3];

    fn this_exe() -> ElfFile {
        ElfFile::open(&std::env::current_exe().unwrap()).unwrap()
    }

    #[test]
    fn finds_data_objects_by_name_in_one_pass() {
        let exe = this_exe();
        assert!(exe.has_symtab(), "test binaries keep their .symtab");
        let found = exe.find_in_symtab(&["HSINSPECT_ELF_PROBE", "no_such_symbol_anywhere", "main"]);
        let probe = found[0].expect("the probe is a defined STT_OBJECT");
        assert_eq!(probe.size, 24);
        assert_eq!(found[1], None);
        assert_eq!(found[2], None, "main is a function, not a data object");
        // The file's bytes at the symbol's link-time address are the static's initial value.
        let bytes = exe.bytes_at_vaddr(probe.value, 24).unwrap();
        let want: Vec<u8> = [1u64, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(bytes, want);
    }

    #[test]
    fn build_id_matches_goblins_reading() {
        let path = std::env::current_exe().unwrap();
        let raw = std::fs::read(&path).unwrap();
        let elf = goblin::elf::Elf::parse(&raw).unwrap();
        let theirs = elf.iter_note_headers(&raw).and_then(|mut notes| {
            notes.find_map(|n| {
                let n = n.ok()?;
                (n.n_type == goblin::elf::note::NT_GNU_BUILD_ID).then(|| n.desc.to_vec())
            })
        });
        assert_eq!(this_exe().build_id(), theirs);
        let (vaddr, size) = this_exe()
            .build_id_note_vaddr()
            .expect("linked with --build-id");
        assert!(size >= 16 && vaddr > 0);
    }

    #[test]
    fn debuglink_names_the_file_and_its_crc() {
        let dir = tempfile::tempdir().unwrap();
        let debug = dir.path().join("probe.debug");
        std::fs::write(&debug, b"any bytes stand for a debug file here").unwrap();
        let linked = dir.path().join("linked");
        let status = std::process::Command::new("objcopy")
            .arg(format!("--add-gnu-debuglink={}", debug.display()))
            .arg(std::env::current_exe().unwrap())
            .arg(&linked)
            .status()
            .expect("objcopy (binutils) is needed: apt-get install binutils, or scripts/setup-test-deps.sh");
        assert!(status.success());
        let (name, crc) = ElfFile::open(&linked).unwrap().debuglink().unwrap();
        assert_eq!(name, "probe.debug");
        assert_eq!(crc, crc32fast::hash(&std::fs::read(&debug).unwrap()));
        let debug_elf_crc = ElfFile::open(&linked).unwrap().crc32().unwrap();
        assert_eq!(
            debug_elf_crc,
            crc32fast::hash(&std::fs::read(&linked).unwrap())
        );
        assert_eq!(this_exe().debuglink(), None);
    }

    #[test]
    fn files_that_are_not_64_bit_objects_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("text");
        std::fs::write(&text, "#!/bin/sh\n".repeat(10)).unwrap();
        let err = ElfFile::open(&text).unwrap_err().to_string();
        assert!(err.contains("not an ELF file"), "{err}");
        let mut exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        exe[goblin::elf::header::EI_CLASS] = goblin::elf::header::ELFCLASS32;
        std::fs::write(&text, &exe).unwrap();
        let err = ElfFile::open(&text).unwrap_err().to_string();
        assert!(err.contains("64-bit little-endian"), "{err}");
        assert!(ElfFile::open(dir.path()).is_err(), "a directory");
    }
}
