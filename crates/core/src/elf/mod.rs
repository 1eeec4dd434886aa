//! ELF, as far as hsinspect needs it: one place for the structures the live path (libjvm on disk
//! and its headers in the target's memory), the core path (the core's headers and notes, the
//! dynamic linker's `link_map` list) and the offline checks all read.
//!
//! Layouts come from the System V gABI and `<elf.h>`; goblin supplies the parsers for headers,
//! program and section headers and notes, and the named constants. Only 64-bit little-endian
//! objects (x86_64, aarch64) are read: the JVMs hsinspect targets.
//!
//! * [`file`]: an ELF file on disk ([`ElfFile`]): program headers, build-id, symbol tables,
//!   `.gnu_debuglink`.
//! * [`core`]: what a core file's notes say (`NT_FILE`, `NT_PRPSINFO`, `NT_AUXV`) and its program
//!   header table (with `PN_XNUM`).
//! * [`link_map`]: the dynamic linker's list of loaded objects, walked in any [`ReadMemory`].
//! * [`dynamic`]: a loaded object's exported symbols, from its `_DYNAMIC` and hash table in any
//!   [`ReadMemory`] (no file needed).
//!
//! [`ReadMemory`]: crate::memory::ReadMemory

pub(crate) mod coredump;
pub(crate) mod dynamic;
pub(crate) mod file;
pub(crate) mod link_map;

use goblin::container::{Container, Ctx, Endian};
use goblin::elf::header::{EI_CLASS, EI_DATA, ELFCLASS64, ELFDATA2LSB, ELFMAG, Header, SELFMAG};
use goblin::elf::note::{NT_GNU_BUILD_ID, Note, NoteDataIterator};

pub(crate) use file::{ElfFile, SymbolSource};

/// `NT_AUXV`, the auxiliary vector note (`<elf.h>`).
pub(crate) const NT_AUXV: u32 = 6;
/// `AT_PAGESZ`: the auxiliary vector entry with the process's page size (`<elf.h>`).
pub(crate) const AT_PAGESZ: u64 = 6;
/// `AT_ENTRY`: the auxiliary vector entry with the executable's entry point (`<elf.h>`).
pub(crate) const AT_ENTRY: u64 = 9;

/// How this OS names a path stored as bytes, and reads a file at an offset: the `sys` seam's.
pub(crate) use crate::sys::{path_from_bytes, read_exact_at};

/// Size of an `Elf64_Ehdr`.
pub(crate) const SIZEOF_EHDR: usize = goblin::elf::header::header64::SIZEOF_EHDR;
/// Size of an `Elf64_Phdr`.
pub(crate) const SIZEOF_PHDR: usize = goblin::elf::program_header::program_header64::SIZEOF_PHDR;
/// Size of an `Elf64_Shdr`.
pub(crate) const SIZEOF_SHDR: usize = goblin::elf::section_header::section_header64::SIZEOF_SHDR;
/// Size of an `Elf64_Sym`.
pub(crate) const SIZEOF_SYM: usize = goblin::elf::sym::sym64::SIZEOF_SYM;
/// Size of an `Elf64_Dyn`.
pub(crate) const SIZEOF_DYN: usize = goblin::elf::dynamic::dyn64::SIZEOF_DYN;
/// goblin's parsing context for 64-bit little-endian objects.
pub(crate) const CTX: Ctx = Ctx {
    container: Container::Big,
    le: Endian::Little,
};

/// Why bytes are not the ELF header of an object hsinspect reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderProblem {
    /// Fewer bytes than an `Elf64_Ehdr` (but the magic is there).
    TooShort,
    /// No `\x7fELF` magic.
    NotElf,
    /// `EI_CLASS` is not `ELFCLASS64`.
    Not64Bit,
    /// `EI_DATA` is not `ELFDATA2LSB`.
    BigEndian,
}

impl std::fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HeaderProblem::TooShort => "too short for an ELF header",
            HeaderProblem::NotElf => "not an ELF file",
            HeaderProblem::Not64Bit | HeaderProblem::BigEndian => "not a 64-bit little-endian ELF",
        })
    }
}

/// The `Elf64_Ehdr` at the start of `bytes`, when it is one of a 64-bit little-endian object.
///
/// # Errors
/// The [`HeaderProblem`], for the caller to word for its kind of file.
pub(crate) fn parse_header(bytes: &[u8]) -> Result<Header, HeaderProblem> {
    if bytes.len() < SELFMAG || bytes[..SELFMAG] != ELFMAG[..] {
        return Err(HeaderProblem::NotElf);
    }
    if bytes.len() < SIZEOF_EHDR {
        return Err(HeaderProblem::TooShort);
    }
    if bytes[EI_CLASS] != ELFCLASS64 {
        return Err(HeaderProblem::Not64Bit);
    }
    if bytes[EI_DATA] != ELFDATA2LSB {
        return Err(HeaderProblem::BigEndian);
    }
    goblin::elf::Elf::parse_header(bytes).map_err(|_| HeaderProblem::TooShort)
}

/// The notes in a `PT_NOTE` segment's or `SHT_NOTE` section's bytes (`Elf64_Nhdr` records with
/// 4-byte aligned name and descriptor), with goblin's parser; iteration ends at the first
/// malformed record.
pub(crate) fn notes(bytes: &[u8]) -> impl Iterator<Item = Note<'_>> {
    NoteDataIterator {
        data: bytes,
        size: bytes.len(),
        offset: 0,
        ctx: (4, CTX),
    }
    .map_while(Result::ok)
}

/// The descriptor of the `NT_GNU_BUILD_ID` note (name `GNU`) among `bytes`' notes.
pub(crate) fn build_id_from_notes(bytes: &[u8]) -> Option<Vec<u8>> {
    notes(bytes)
        .find(|n| n.n_type == NT_GNU_BUILD_ID && n.name == "GNU")
        .map(|n| n.desc.to_vec())
}

/// Lower-case hex of a build-id.
pub(crate) fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// An `Elf64_Nhdr` record with its name and descriptor padded to 4 bytes (for unit tests that
/// build notes and cores).
#[cfg(test)]
pub(crate) fn note(name: &[u8], ntype: u32, desc: &[u8]) -> Vec<u8> {
    let mut n = Vec::new();
    n.extend((name.len() as u32).to_le_bytes());
    n.extend((desc.len() as u32).to_le_bytes());
    n.extend(ntype.to_le_bytes());
    n.extend(name);
    n.resize(n.len().next_multiple_of(4), 0);
    n.extend(desc);
    n.resize(n.len().next_multiple_of(4), 0);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_is_found_after_other_notes_and_only_under_gnu() {
        let id = [0xde, 0xad, 0xbe, 0xef, 0x01];
        let mut bytes = note(b"GNU\0", 1, &[0; 16]); // NT_GNU_ABI_TAG
        bytes.extend(note(b"XYZ\0", NT_GNU_BUILD_ID, &[9; 8]));
        bytes.extend(note(b"GNU\0", NT_GNU_BUILD_ID, &id));
        assert_eq!(build_id_from_notes(&bytes), Some(id.to_vec()));
        assert_eq!(build_id_from_notes(&bytes[..bytes.len() - 4]), None);
        assert_eq!(build_id_from_notes(&note(b"GNU\0", 1, &id)), None);
        assert_eq!(build_id_from_notes(&[]), None);
    }

    #[test]
    fn a_note_claiming_more_than_there_is_ends_the_walk() {
        let mut bytes = note(b"GNU\0", NT_GNU_BUILD_ID, &[1, 2, 3, 4]);
        bytes[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(notes(&bytes).count(), 0);
    }

    #[test]
    fn headers_of_other_classes_and_orders_are_named() {
        let mut h = vec![0u8; SIZEOF_EHDR];
        assert_eq!(parse_header(&h).unwrap_err(), HeaderProblem::NotElf);
        h[..4].copy_from_slice(ELFMAG);
        h[EI_CLASS] = 1;
        assert_eq!(parse_header(&h).unwrap_err(), HeaderProblem::Not64Bit);
        h[EI_CLASS] = ELFCLASS64;
        h[EI_DATA] = 2;
        assert_eq!(parse_header(&h).unwrap_err(), HeaderProblem::BigEndian);
        h[EI_DATA] = ELFDATA2LSB;
        h[6] = 1; // EV_CURRENT
        assert!(parse_header(&h).is_ok());
        assert_eq!(parse_header(&h[..20]).unwrap_err(), HeaderProblem::TooShort);
    }
}
