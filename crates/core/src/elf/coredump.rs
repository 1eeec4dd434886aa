//! What an ELF core file (`ET_CORE`, from the kernel's `fs/binfmt_elf.c` or gdb's `gcore`) says
//! beyond its memory: the program header table and the `CORE` notes hsinspect uses: `NT_FILE`
//! (file-backed mappings), `NT_PRPSINFO` (the process), `NT_PRSTATUS` (each thread's id and
//! registers) and `NT_AUXV` (the auxiliary vector).

use std::path::PathBuf;

use goblin::elf::header::Header;
use goblin::elf::note::{NT_FILE, NT_PRPSINFO, NT_PRSTATUS};
use goblin::elf::program_header::ProgramHeader;

use super::{CTX, NT_AUXV, SIZEOF_PHDR, SIZEOF_SHDR};
use crate::memory::LeBytes;
use crate::pid::Pid;

/// `PN_XNUM`: `e_phnum` value meaning "the real count is in section header 0's `sh_info`".
const PN_XNUM: u16 = 0xffff;
/// The most threads (`NT_PRSTATUS` notes) kept from a core.
const MAX_THREADS: usize = 1 << 20;
/// Offset of `pr_pid` in the 64-bit `struct elf_prstatus` (after `pr_info` 12, `pr_cursig` 2 +
/// 2 padding, `pr_sigpend` 8, `pr_sighold` 8).
const PRSTATUS_PID: usize = 32;
/// Offset of `pr_reg` (after `pr_pid`, `pr_ppid`, `pr_pgrp`, `pr_sid` 4 each and four
/// `struct timeval`s of 16 bytes); `pr_fpvalid` (4 + 4 padding) follows the registers.
const PRSTATUS_REG: usize = 112;
/// Largest number of program headers accepted (a corrupt count must not allocate gigabytes).
const MAX_PHDRS: usize = 1 << 22;

/// One file-backed mapping from the `NT_FILE` note (`fs/binfmt_elf.c` `fill_files_note`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Offset in the file of `start`, in bytes (the note stores pages).
    pub offset: u64,
    /// The file's path as the kernel saw it (a ` (deleted)` suffix kept).
    pub path: PathBuf,
}

/// What `NT_PRPSINFO` (`struct elf_prpsinfo`, `include/linux/elfcore.h`) says of the process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreProcess {
    /// `pr_pid`.
    pub pid: Pid,
    /// `pr_uid`.
    pub uid: u32,
    /// `pr_fname`: the command name (up to 16 bytes).
    pub command: String,
}

/// The `CORE` notes of a core, as found in its `PT_NOTE` segments (the first of each kind wins).
#[derive(Debug, Default)]
pub(crate) struct CoreNotes {
    /// `NT_FILE`, when present (Linux 3.7+ kernels and gdb write it).
    pub files: Option<Vec<FileMapping>>,
    /// `NT_PRPSINFO`, when present.
    pub process: Option<CoreProcess>,
    /// `NT_AUXV` as `(a_type, a_val)` pairs, `AT_NULL` and what follows left out.
    pub auxv: Vec<(u64, u64)>,
    /// Each `NT_PRSTATUS` in order (the crashing thread first in a kernel core).
    pub threads: Vec<CoreThread>,
}

/// One thread of a core, from its `NT_PRSTATUS` note (`struct elf_prstatus`,
/// `include/uapi/linux/elfcore.h`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreThread {
    /// `pr_pid`: the thread's id (its `nid` in a thread dump).
    pub tid: Pid,
    /// `pr_reg`: the kernel's `user_regs_struct` for the core's machine, as 64-bit words
    /// (27 on x86_64, 34 on aarch64; decoded by [`crate::registers::ThreadRegisters`]).
    pub registers: Vec<u64>,
}

impl CoreNotes {
    /// Takes in the notes of one `PT_NOTE` segment's bytes.
    pub(crate) fn read(&mut self, bytes: &[u8]) {
        for note in super::notes(bytes).filter(|n| n.name == "CORE") {
            let desc = note.desc;
            match note.n_type {
                NT_FILE if self.files.is_none() => self.files = parse_nt_file(desc),
                NT_PRPSINFO if self.process.is_none() => self.process = parse_prpsinfo(desc),
                NT_AUXV if self.auxv.is_empty() => self.auxv = parse_auxv(desc),
                NT_PRSTATUS if self.threads.len() < MAX_THREADS => {
                    self.threads.extend(parse_prstatus(desc));
                }
                _ => {}
            }
        }
    }
}

/// Parses `NT_AUXV`: `Elf64_auxv_t` pairs (`a_type`, `a_val`) up to `AT_NULL`.
fn parse_auxv(desc: &[u8]) -> Vec<(u64, u64)> {
    let words: Vec<u64> = LeBytes::new(desc).u64s().collect();
    words
        .chunks_exact(2)
        .map(|pair| (pair[0], pair[1]))
        .take_while(|&(k, _)| k != 0)
        .collect()
}

/// The core's program header table: `e_phnum` entries at `e_phoff`, or with `PN_XNUM` the count
/// in section header 0's `sh_info` (a process with more than 65534 mappings).
///
/// # Errors
/// Why the table cannot be read (corrupt or truncated core), as a sentence for [`Error::Core`].
///
/// [`Error::Core`]: crate::error::Error::Core
pub(crate) fn program_headers(map: &[u8], header: &Header) -> Result<Vec<ProgramHeader>, String> {
    let mut count = header.e_phnum as usize;
    if header.e_phnum == PN_XNUM {
        // More than 65534 mappings: the count is in section header 0's sh_info (at +44, u32).
        let sh0 = usize::try_from(header.e_shoff)
            .ok()
            .and_then(|o| map.get(o..o.checked_add(SIZEOF_SHDR)?));
        let Some(sh0) = sh0 else {
            return Err(
                "e_phnum is PN_XNUM but section header 0 is missing: truncated or corrupt core"
                    .into(),
            );
        };
        count = LeBytes::new(sh0).u32_at(44).unwrap_or(0) as usize;
    }
    if count == 0 || count > MAX_PHDRS {
        return Err(format!(
            "implausible program header count {count}: corrupt core"
        ));
    }
    if header.e_phentsize as usize != SIZEOF_PHDR {
        return Err(format!(
            "program header size {} (expected {SIZEOF_PHDR}): corrupt core",
            header.e_phentsize
        ));
    }
    let table = usize::try_from(header.e_phoff)
        .ok()
        .and_then(|at| map.get(at..at.checked_add(count * SIZEOF_PHDR)?))
        .ok_or_else(|| {
            format!(
                "the core is truncated: its {count} program headers at offset {:#x} end beyond the file's {} bytes",
                header.e_phoff,
                map.len()
            )
        })?;
    ProgramHeader::parse(table, 0, count, CTX).map_err(|e| format!("program headers: {e}"))
}

/// Parses `NT_FILE`: `count`, `page_size`, then `count` × (`start`, `end`, `file_ofs` in pages),
/// then `count` NUL-terminated paths (`fs/binfmt_elf.c` `fill_files_note`).
pub(crate) fn parse_nt_file(desc: &[u8]) -> Option<Vec<FileMapping>> {
    let word = |i: usize| LeBytes::new(desc).u64_at(i);
    let count = usize::try_from(word(0)?).ok()?;
    let page = word(8)?;
    let names_at = count.checked_mul(24)?.checked_add(16)?;
    if names_at > desc.len() {
        return None;
    }
    let mut names = desc[names_at..].split(|&b| b == 0);
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let at = 16 + i * 24;
        let name = names.next()?;
        out.push(FileMapping {
            start: word(at)?,
            end: word(at + 8)?,
            offset: word(at + 16)?.checked_mul(page)?,
            path: super::path_from_bytes(name),
        });
    }
    Some(out)
}

/// Parses a 64-bit `struct elf_prstatus`: `pr_pid` and the `pr_reg` words, which end 8 bytes
/// before the descriptor does (`pr_fpvalid` and its padding).
pub(crate) fn parse_prstatus(desc: &[u8]) -> Option<CoreThread> {
    let tid = LeBytes::new(desc).u32_at(PRSTATUS_PID)? as Pid;
    let regs = desc.get(PRSTATUS_REG..desc.len().checked_sub(8)?)?;
    Some(CoreThread {
        tid,
        registers: LeBytes::new(regs).u64s().collect(),
    })
}

/// Parses the 64-bit `struct elf_prpsinfo`: pid at 24, uid at 16, `pr_fname[16]` at 40.
pub(crate) fn parse_prpsinfo(desc: &[u8]) -> Option<CoreProcess> {
    let u32_at = |i: usize| LeBytes::new(desc).u32_at(i);
    let fname = desc.get(40..56)?;
    let end = fname.iter().position(|&b| b == 0).unwrap_or(fname.len());
    Some(CoreProcess {
        pid: u32_at(24)? as crate::pid::Pid,
        uid: u32_at(16)?,
        command: String::from_utf8_lossy(&fname[..end]).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::note;

    fn words(ws: &[u64]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn nt_file_gives_byte_offsets_and_paths() {
        let mut desc = words(&[2, 4096, 0x1000, 0x3000, 0, 0x5000, 0x6000, 3]);
        desc.extend(b"/a b\0/lib/libjvm.so (deleted)\0");
        let files = parse_nt_file(&desc).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(
            (files[1].start, files[1].end, files[1].offset),
            (0x5000, 0x6000, 3 * 4096)
        );
        assert_eq!(files[0].path, PathBuf::from("/a b"));
        assert_eq!(files[1].path, PathBuf::from("/lib/libjvm.so (deleted)"));
        // A count larger than the descriptor holds, and a missing path: no list.
        assert_eq!(parse_nt_file(&words(&[u64::MAX, 4096])), None);
        assert_eq!(parse_nt_file(&desc[..desc.len() - 26]), None);
    }

    #[test]
    fn prpsinfo_and_auxv_are_read_from_core_notes_only() {
        let mut ps = vec![0u8; 136];
        ps[16..20].copy_from_slice(&1000u32.to_le_bytes());
        ps[24..28].copy_from_slice(&4242u32.to_le_bytes());
        ps[40..56].copy_from_slice(b"a-sixteen-byte-n");
        let auxv = words(&[9, 0x401000, 3, 0x400040, 0, 0, 7, 7]);
        let mut bytes = note(b"LINUX\0", NT_PRPSINFO, &[0xff; 136]);
        bytes.extend(note(b"CORE\0", NT_PRPSINFO, &ps));
        bytes.extend(note(b"CORE\0", NT_AUXV, &auxv));
        let mut notes = CoreNotes::default();
        notes.read(&bytes);
        let p = notes.process.unwrap();
        assert_eq!(
            (p.pid, p.uid, p.command.as_str()),
            (4242, 1000, "a-sixteen-byte-n")
        );
        assert_eq!(notes.auxv, vec![(9, 0x401000), (3, 0x400040)]);
        assert!(notes.files.is_none());
    }

    #[test]
    fn prstatus_gives_each_thread_and_its_registers() {
        // x86_64: 336 bytes, pr_pid at 32, 27 register words at 112, pr_fpvalid at 328.
        let mut st = vec![0u8; 336];
        st[32..36].copy_from_slice(&777u32.to_le_bytes());
        for i in 0..27u64 {
            let at = 112 + 8 * i as usize;
            st[at..at + 8].copy_from_slice(&(100 + i).to_le_bytes());
        }
        let mut bytes = note(b"CORE\0", NT_PRSTATUS, &st);
        st[32..36].copy_from_slice(&778u32.to_le_bytes());
        bytes.extend(note(b"CORE\0", NT_PRSTATUS, &st));
        bytes.extend(note(b"CORE\0", NT_PRSTATUS, &st[..100])); // too short: left out
        let mut notes = CoreNotes::default();
        notes.read(&bytes);
        assert_eq!(notes.threads.len(), 2);
        assert_eq!(notes.threads[1].tid, 778);
        assert_eq!(notes.threads[0].registers.len(), 27);
        assert_eq!(notes.threads[0].registers[16], 116);
    }
}
