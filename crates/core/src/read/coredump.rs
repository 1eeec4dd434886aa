//! [`CoreMemory`]: the address space of a dead (or `gcore`d) process, read from its ELF core file.
//!
//! A Linux core (`ET_CORE`, written by the kernel's `fs/binfmt_elf.c` or by gdb's `gcore`) holds:
//! * `PT_LOAD` program headers, one per memory mapping: `p_vaddr`/`p_memsz` is the mapping,
//!   `p_offset`/`p_filesz` the bytes the dumper wrote. `p_filesz` is smaller than `p_memsz` (often
//!   0) for mappings `/proc/<pid>/coredump_filter` told it to leave out — by default file-backed
//!   mappings, among them the `MAP_SHARED` hsperfdata mapping that holds the PerfData region.
//! * `PT_NOTE` segments with `NT_PRSTATUS` (threads), `NT_PRPSINFO` (pid, uid, command),
//!   `NT_AUXV` (auxiliary vector) and `NT_FILE` (the file-backed mappings and their paths).
//!
//! The file is mapped (memmap2), never read whole: opening costs the program headers and notes,
//! and each read is a binary search over the segments sorted by address plus a copy, so the time
//! does not grow with the size of the core. (SA's `ps_core.c` reads cores the same way, with
//! `pread`, and also fails a read no segment covers.)

use std::fs::File;
use std::path::{Path, PathBuf};

use goblin::elf::header::{EM_AARCH64, EM_X86_64, ET_CORE, ET_DYN, ET_EXEC, ET_REL, Header};
use goblin::elf::program_header::{PT_LOAD, PT_NOTE, ProgramHeader};
use memmap2::Mmap;

use crate::elf::coredump::{CoreNotes, CoreProcess, CoreThread, FileMapping};
use crate::elf::{self, HeaderProblem};
use crate::error::Error;
use crate::memory::{MemoryError, ReadMemory};
use crate::pid::Pid;
use crate::registers::ThreadRegisters;

/// One `PT_LOAD` segment of the core: a mapping of the process and the bytes dumped of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// First address of the mapping (`p_vaddr`).
    pub vaddr: u64,
    /// Size of the mapping in bytes (`p_memsz`).
    pub memsz: u64,
    /// File offset of the dumped bytes (`p_offset`).
    pub offset: u64,
    /// How many bytes of the mapping were dumped (`p_filesz`), from `vaddr` on.
    pub filesz: u64,
    /// Whether the process could write it (`PF_W` in `p_flags`). A `PROT_NONE` reservation
    /// (an uncommitted part of the Java heap) may still be dumped, as zeros: gdb's `gcore`
    /// even marks it `PF_R`.
    pub writable: bool,
}

/// A mapped ELF core file; implements [`ReadMemory`] over the process's dumped address space.
#[derive(Debug)]
pub struct CoreMemory {
    path: PathBuf,
    map: Mmap,
    machine: u16,
    segments: Vec<Segment>,
    files: Option<Vec<FileMapping>>,
    process: Option<CoreProcess>,
    auxv: Vec<(u64, u64)>,
    threads: Vec<CoreThread>,
    needed_len: u64,
    /// Files that stand for mapped objects whose bytes the core lacks ([`CoreMemory::back_with`]).
    backing: Vec<Backing>,
    /// Mapped objects that could not be backed, and why (for the error of a missing byte).
    unbacked: Vec<(PathBuf, String)>,
}

/// A file whose identity with a mapped object of the core was checked, read for the bytes the
/// dumper left out of that object's mappings.
#[derive(Debug)]
struct Backing {
    /// The path the process mapped (as `NT_FILE` names it, without ` (deleted)`).
    mapped: PathBuf,
    /// The file read instead.
    opened: PathBuf,
    file: File,
    len: u64,
    /// Bytes read from it so far (a counter: the memory may be read from several threads).
    used: std::sync::atomic::AtomicU64,
}

/// A name for an ELF `e_machine` value, for messages.
pub fn machine_name(machine: u16) -> String {
    use goblin::elf::header::*;
    let name = match machine {
        EM_X86_64 => "x86_64",
        EM_AARCH64 => "aarch64",
        EM_386 => "i386",
        EM_ARM => "arm",
        EM_PPC64 => "ppc64",
        EM_PPC => "ppc",
        EM_S390 => "s390x",
        EM_RISCV => "riscv",
        EM_LOONGARCH => "loongarch",
        EM_SPARCV9 => "sparcv9",
        EM_MIPS => "mips",
        _ => return format!("machine {machine}"),
    };
    name.to_string()
}

/// Maps a dump (an ELF core or a Windows minidump) read-only, refusing what is not a regular
/// file (a FIFO or device given as `--core` would otherwise hang or mislead the read).
///
/// # Errors
/// [`Error::Io`] when it cannot be opened or mapped; [`Error::Core`] when it is not a regular
/// file.
pub(super) fn map_dump(path: &Path) -> Result<Mmap, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::core(path, "not a regular file"));
    }
    // SAFETY: a read-only shared mapping (memmap2's `Mmap::map` is MAP_SHARED with PROT_READ;
    // nothing is ever written through it); every access to it is bounds-checked against the
    // mapping's length. A dump shrunk while we read it would raise SIGBUS: cores and minidumps
    // are not rewritten in place by their writers, so this is accepted. (libjvm and hsperfdata
    // files, which their owners may change, are read with pread instead.)
    unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))
}

impl CoreMemory {
    /// Opens and maps the core at `path` and reads its program headers and notes.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened or mapped; [`Error::Core`] when it is not an
    /// ELF core (`ET_CORE`), is not a 64-bit little-endian x86_64/aarch64 core, or is truncated
    /// before its program headers or notes end.
    pub fn open(path: &Path) -> Result<Self, Error> {
        Self::from_map(path, map_dump(path)?)
    }

    fn from_map(path: &Path, map: Mmap) -> Result<Self, Error> {
        let header = core_header(&map).map_err(|reason| Error::core(path, reason))?;
        let phdrs = elf::coredump::program_headers(&map, &header)
            .map_err(|reason| Error::core(path, reason))?;
        let segments = load_segments(&phdrs);
        let notes = core_notes(&map, &phdrs).map_err(|reason| Error::core(path, reason))?;
        let needed_len = segments
            .iter()
            .filter(|s| s.filesz > 0)
            .map(|s| s.offset.saturating_add(s.filesz))
            .max()
            .unwrap_or(0)
            .max(
                // The section header table (gdb writes one after the notes; unused here).
                header
                    .e_shoff
                    .saturating_add(u64::from(header.e_shnum) * u64::from(header.e_shentsize)),
            );
        Ok(CoreMemory {
            path: path.to_owned(),
            map,
            machine: header.e_machine,
            segments,
            files: notes.files,
            process: notes.process,
            auxv: notes.auxv,
            threads: notes.threads,
            needed_len,
            backing: Vec::new(),
            unbacked: Vec::new(),
        })
    }

    /// Reads the bytes the core lacks of every mapping of `mapped` (a path as `NT_FILE` names
    /// it) from `opened`, a file the caller has checked to be the very object the process mapped
    /// (its build-id equals the one in the core): read-only file-backed mappings (a library's
    /// code and read-only data) are left out of cores unless bit 2 of `coredump_filter` is set,
    /// and their bytes are the file's. Never used for writable or shared data.
    ///
    /// # Errors
    /// [`Error::Io`] when `opened` cannot be opened.
    pub fn back_with(&mut self, mapped: &Path, opened: &Path) -> Result<(), Error> {
        let file = File::open(opened).map_err(|e| Error::io(opened, e))?;
        let len = file.metadata().map_err(|e| Error::io(opened, e))?.len();
        self.backing.push(Backing {
            mapped: mapped.to_owned(),
            opened: opened.to_owned(),
            file,
            len,
            used: std::sync::atomic::AtomicU64::new(0),
        });
        Ok(())
    }

    /// Records why `mapped` could not be backed by a file: the error of a byte the core lacks
    /// there names the file and the fix.
    pub fn note_unbacked(&mut self, mapped: &Path, why: String) {
        self.unbacked.push((mapped.to_owned(), why));
    }

    /// The files read for bytes the core lacks, and how many bytes each gave: `(file, bytes)`.
    pub fn backed_reads(&self) -> Vec<(PathBuf, u64)> {
        self.backing
            .iter()
            .map(|b| (b, b.used.load(std::sync::atomic::Ordering::Relaxed)))
            .filter(|&(_, used)| used > 0)
            .map(|(b, used)| (b.opened.clone(), used))
            .collect()
    }

    /// Copies into `out` bytes at `at` from the backing file of the `NT_FILE` mapping covering
    /// `at`, at most up to that mapping's end; how many were copied (0 when none applies).
    fn read_backing(&self, at: u64, out: &mut [u8]) -> usize {
        let Some(f) = self.file_at(at) else {
            return 0;
        };
        let mapped = crate::process::strip_deleted(&f.path);
        let Some(b) = self.backing.iter().find(|b| b.mapped == mapped) else {
            return 0;
        };
        let Some(off) = f.offset.checked_add(at - f.start) else {
            return 0;
        };
        let n = (out.len() as u64)
            .min(f.end - at)
            .min(b.len.saturating_sub(off)) as usize;
        if n == 0 || crate::elf::read_exact_at(&b.file, &mut out[..n], off).is_err() {
            return 0;
        }
        b.used
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        n
    }

    /// Why the bytes of a mapping of `mapped` were not taken from its file, when that was tried.
    fn unbacked_why(&self, at: u64) -> String {
        let Some(f) = self.file_at(at) else {
            return String::new();
        };
        let mapped = crate::process::strip_deleted(&f.path);
        match self.unbacked.iter().find(|(p, _)| *p == mapped) {
            Some((_, why)) => format!("; {why}"),
            None => String::new(),
        }
    }

    /// The core file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The ELF machine (`EM_X86_64` or `EM_AARCH64`).
    pub fn machine(&self) -> u16 {
        self.machine
    }

    /// The file-backed mappings from `NT_FILE`; `None` when the core has no such note (cores
    /// written before Linux 3.7, and some other dumpers).
    pub fn files(&self) -> Option<&[FileMapping]> {
        self.files.as_deref()
    }

    /// The process the core is of (`NT_PRPSINFO`), when the note is there.
    pub fn process(&self) -> Option<&CoreProcess> {
        self.process.as_ref()
    }

    /// The registers of thread `tid` as its `NT_PRSTATUS` note recorded them (for the walk of
    /// a thread that was running Java code); `None` when the core has no such thread or its
    /// register set is not one of the core's machine.
    pub fn thread_registers(&self, tid: Pid) -> Option<ThreadRegisters> {
        let t = self.threads.iter().find(|t| t.tid == tid)?;
        ThreadRegisters::from_user_regs(self.machine, &t.registers)
    }

    /// The value of auxiliary vector entry `key` (`AT_ENTRY` 9, `AT_PHDR` 3, ...).
    pub fn auxv_value(&self, key: u64) -> Option<u64> {
        self.auxv.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// When the file is shorter than its segments need: `(actual, needed)` lengths in bytes.
    pub fn truncated(&self) -> Option<(u64, u64)> {
        let len = self.map.len() as u64;
        (len < self.needed_len).then_some((len, self.needed_len))
    }

    /// Whether the core's segment for `addr` says the bytes were dumped but the file ends before
    /// them (a truncated copy), as opposed to bytes the dumper left out.
    pub fn cut_off_at(&self, addr: u64) -> bool {
        self.segment_at(addr).is_some_and(|s| {
            let into = addr - s.vaddr;
            into < s.filesz && s.offset.saturating_add(into) >= self.map.len() as u64
        })
    }

    /// The `NT_FILE` mapping covering `addr`, if any.
    pub fn file_at(&self, addr: u64) -> Option<&FileMapping> {
        self.files
            .as_deref()?
            .iter()
            .find(|f| f.start <= addr && addr < f.end)
    }

    /// The segment covering `addr`, if any.
    pub fn segment_at(&self, addr: u64) -> Option<&Segment> {
        let i = self.segments.partition_point(|s| s.vaddr <= addr);
        let s = self.segments.get(i.checked_sub(1)?)?;
        (addr - s.vaddr < s.memsz).then_some(s)
    }

    fn not_dumped(&self, addr: u64, len: usize, at: u64, seg: &Segment) -> MemoryError {
        let what = match self.file_at(at) {
            Some(f) => format!("a mapping of {}", f.path.display()),
            None => "an anonymous mapping".to_string(),
        };
        MemoryError::NotDumped {
            addr,
            len,
            why: format!(
                "{at:#x} lies in {what} ({:#x}-{:#x}) of which the core holds only the first {} of {} bytes (the dumper left the rest out, as /proc/<pid>/coredump_filter told it){}",
                seg.vaddr,
                seg.vaddr + seg.memsz,
                seg.filesz,
                seg.memsz,
                self.unbacked_why(at)
            ),
        }
    }
}

impl ReadMemory for CoreMemory {
    /// Committed heap memory is writable: a `PROT_NONE` reservation is not committed, whatever
    /// bytes and flags the core gives it.
    fn committed(&self, addr: u64) -> bool {
        self.segment_at(addr).is_some_and(|s| s.writable) && self.read_u8(addr).is_ok()
    }

    /// The dead process's page size: `AT_PAGESZ` from the core's `NT_AUXV` (aarch64 kernels
    /// run with 4, 16 or 64 KiB pages), else 4 KiB.
    fn page_size(&self) -> u64 {
        self.auxv_value(crate::elf::AT_PAGESZ)
            .filter(|s| s.is_power_of_two() && (1024..=1 << 20).contains(s))
            .unwrap_or(crate::memory::DEFAULT_PAGE_SIZE)
    }

    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        let len = buf.len();
        let mut done = 0usize;
        while done < len {
            let Some(at) = addr.checked_add(done as u64) else {
                return Err(MemoryError::Unmapped { addr, len });
            };
            let Some(seg) = self.segment_at(at) else {
                let n = self.read_backing(at, &mut buf[done..]);
                if n > 0 {
                    done += n;
                    continue;
                }
                return Err(match self.file_at(at) {
                    Some(f) => MemoryError::NotDumped {
                        addr,
                        len,
                        why: format!(
                            "{at:#x} lies in a mapping of {} that the core does not hold{}",
                            f.path.display(),
                            self.unbacked_why(at)
                        ),
                    },
                    None => MemoryError::Unmapped { addr, len },
                });
            };
            let into = at - seg.vaddr;
            let n = ((len - done) as u64).min(seg.memsz - into);
            if into + n > seg.filesz {
                // The part the core holds first, then the rest from the file, if backed.
                let held = seg.filesz.saturating_sub(into).min(n) as usize;
                if held == 0 {
                    let from_file = self.read_backing(at, &mut buf[done..done + n as usize]);
                    if from_file > 0 {
                        done += from_file;
                        continue;
                    }
                    return Err(self.not_dumped(addr, len, at, seg));
                }
                let n = held as u64;
                let Some(bytes) = seg
                    .offset
                    .checked_add(into)
                    .and_then(|off| slice(&self.map, off, n))
                else {
                    return Err(self.not_dumped(addr, len, at, seg));
                };
                buf[done..done + held].copy_from_slice(bytes);
                done += held;
                continue;
            }
            let Some(bytes) = seg
                .offset
                .checked_add(into)
                .and_then(|off| slice(&self.map, off, n))
            else {
                return Err(MemoryError::NotDumped {
                    addr,
                    len,
                    why: format!(
                        "the core file is truncated: the bytes of {at:#x} would be at file offset {:#x}, beyond its {} bytes",
                        seg.offset.saturating_add(into),
                        self.map.len()
                    ),
                });
            };
            buf[done..done + n as usize].copy_from_slice(bytes);
            done += n as usize;
        }
        Ok(())
    }
}

/// The core's ELF header, when it is a 64-bit little-endian x86_64/aarch64 `ET_CORE`.
fn core_header(map: &[u8]) -> Result<Header, String> {
    let header = elf::parse_header(map).map_err(|problem| match problem {
        HeaderProblem::NotElf => "not an ELF file, so not a core file".to_string(),
        HeaderProblem::TooShort => format!(
            "only {} bytes: too short for an ELF header (truncated core?)",
            map.len()
        ),
        HeaderProblem::Not64Bit => {
            "a 32-bit ELF file: hsinspect reads cores of 64-bit JVMs only".to_string()
        }
        HeaderProblem::BigEndian => {
            "a big-endian ELF file: hsinspect reads little-endian (x86_64, aarch64) cores only"
                .to_string()
        }
    })?;
    if header.e_type != ET_CORE {
        let kind = match header.e_type {
            ET_EXEC => "an executable",
            ET_DYN => "a shared object or PIE executable",
            ET_REL => "a relocatable object",
            _ => "an ELF file of unknown type",
        };
        return Err(format!(
            "{kind} (ELF type {}), not a core file (ET_CORE); a JVM's core is made by the kernel when it crashes or by `gcore <pid>`",
            header.e_type
        ));
    }
    if header.e_machine != EM_X86_64 && header.e_machine != EM_AARCH64 {
        return Err(format!(
            "a core of a {} process: hsinspect reads x86_64 and aarch64 cores",
            machine_name(header.e_machine)
        ));
    }
    Ok(header)
}

/// The `PT_LOAD` segments that map memory, sorted by address.
fn load_segments(phdrs: &[ProgramHeader]) -> Vec<Segment> {
    let mut segments: Vec<Segment> = phdrs
        .iter()
        .filter(|p| p.p_type == PT_LOAD && p.p_memsz > 0)
        .map(|p| Segment {
            vaddr: p.p_vaddr,
            memsz: p.p_memsz,
            offset: p.p_offset,
            filesz: p.p_filesz.min(p.p_memsz),
            writable: p.p_flags & goblin::elf::program_header::PF_W != 0,
        })
        .collect();
    segments.sort_by_key(|s| s.vaddr);
    segments
}

/// The notes of every `PT_NOTE` segment; a core without one, or whose notes lie beyond the end
/// of the file, is refused.
fn core_notes(map: &[u8], phdrs: &[ProgramHeader]) -> Result<CoreNotes, String> {
    let mut notes = CoreNotes::default();
    let mut any = false;
    for p in phdrs.iter().filter(|p| p.p_type == PT_NOTE) {
        any = true;
        let (off, size) = (p.p_offset, p.p_filesz);
        let bytes = slice(map, off, size).ok_or_else(|| {
            format!(
                "the core is truncated: its notes (file offset {off:#x}, {size} bytes) end beyond the file's {} bytes (gdb writes them last); copy the whole core",
                map.len()
            )
        })?;
        notes.read(bytes);
    }
    if !any {
        return Err(
            "the core has no PT_NOTE segment (no threads, no mapped-file list): corrupt core"
                .into(),
        );
    }
    Ok(notes)
}

fn slice(bytes: &[u8], off: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(off).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    bytes.get(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::note;
    use goblin::elf::note::{NT_FILE, NT_PRPSINFO};

    fn put(buf: &mut Vec<u8>, at: usize, bytes: &[u8]) {
        if buf.len() < at + bytes.len() {
            buf.resize(at + bytes.len(), 0);
        }
        buf[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// A hand-made x86_64 core: `(vaddr, memsz, filesz)` loads, an NT_FILE entry for
    /// `/tmp/f` at 0x20000, an NT_PRPSINFO for pid 4242; the file cut to `cut` bytes.
    fn synthetic(loads: &[(u64, u64, u64)], cut: Option<usize>) -> (tempfile::TempDir, PathBuf) {
        synthetic_of(EM_X86_64, None, loads, cut)
    }

    /// [`synthetic`] for a process of `machine`, with an `NT_AUXV` note giving `AT_PAGESZ`.
    fn synthetic_of(
        machine: u16,
        page_size: Option<u64>,
        loads: &[(u64, u64, u64)],
        cut: Option<usize>,
    ) -> (tempfile::TempDir, PathBuf) {
        let phnum = loads.len() + 1;
        let mut notes = Vec::new();
        let mut file = Vec::new();
        for v in [1u64, 4096, 0x20000, 0x21000, 0] {
            file.extend(v.to_le_bytes());
        }
        file.extend(b"/tmp/f\0");
        notes.extend(note(b"CORE\0", NT_FILE, &file));
        let mut ps = vec![0u8; 136];
        ps[24..28].copy_from_slice(&4242u32.to_le_bytes());
        ps[40..44].copy_from_slice(b"java");
        notes.extend(note(b"CORE\0", NT_PRPSINFO, &ps));
        if let Some(page) = page_size {
            let auxv: Vec<u8> = [crate::elf::AT_PAGESZ, page, 0, 0]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            notes.extend(note(b"CORE\0", crate::elf::NT_AUXV, &auxv));
        }
        let mut b = Vec::new();
        put(&mut b, 0, b"\x7fELF\x02\x01\x01");
        put(&mut b, 16, &4u16.to_le_bytes());
        put(&mut b, 18, &machine.to_le_bytes());
        put(&mut b, 20, &1u32.to_le_bytes());
        put(&mut b, 32, &64u64.to_le_bytes());
        put(&mut b, 52, &64u16.to_le_bytes());
        put(&mut b, 54, &56u16.to_le_bytes());
        put(&mut b, 56, &(phnum as u16).to_le_bytes());
        let mut data_at = 64 + 56 * phnum;
        let phdr =
            |b: &mut Vec<u8>, i: usize, t: u32, off: u64, vaddr: u64, filesz: u64, memsz: u64| {
                let at = 64 + 56 * i;
                put(b, at, &t.to_le_bytes());
                put(b, at + 4, &6u32.to_le_bytes());
                put(b, at + 8, &off.to_le_bytes());
                put(b, at + 16, &vaddr.to_le_bytes());
                put(b, at + 32, &filesz.to_le_bytes());
                put(b, at + 40, &memsz.to_le_bytes());
            };
        phdr(&mut b, 0, PT_NOTE, data_at as u64, 0, notes.len() as u64, 0);
        put(&mut b, data_at, &notes);
        data_at += notes.len();
        for (i, &(vaddr, memsz, filesz)) in loads.iter().enumerate() {
            phdr(&mut b, i + 1, PT_LOAD, data_at as u64, vaddr, filesz, memsz);
            // Each byte holds the low 8 bits of its address.
            let bytes: Vec<u8> = (0..filesz).map(|k| (vaddr + k) as u8).collect();
            put(&mut b, data_at, &bytes);
            data_at += filesz as usize;
        }
        if let Some(cut) = cut {
            b.truncate(cut);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("core");
        std::fs::write(&path, &b).unwrap();
        (dir, path)
    }

    const LOADS: [(u64, u64, u64); 4] = [
        (0x10000, 0x1000, 0x1000),
        (0x11000, 0x1000, 0x800),
        (0x20000, 0x1000, 0),
        (0x30000, 0x1000, 0x1000),
    ];

    #[test]
    fn reads_across_segments_and_names_what_is_missing() {
        let (_dir, path) = synthetic(&LOADS, None);
        let core = CoreMemory::open(&path).unwrap();
        assert_eq!(core.process().unwrap().pid, 4242);
        assert_eq!(core.process().unwrap().command, "java");
        assert_eq!(core.files().unwrap()[0].path, Path::new("/tmp/f"));
        assert!(core.truncated().is_none());
        let mut buf = [0u8; 16];
        core.read_exact_at(0x10ff8, &mut buf).unwrap();
        let want: Vec<u8> = (0x10ff8u64..0x11008).map(|a| a as u8).collect();
        assert_eq!(buf.as_slice(), want.as_slice());
        match core.read_exact_at(0x117f8, &mut buf) {
            Err(MemoryError::NotDumped { why, .. }) => assert!(why.contains("anonymous"), "{why}"),
            other => panic!("{other:?}"),
        }
        match core.read_exact_at(0x20010, &mut buf) {
            Err(MemoryError::NotDumped { why, .. }) => assert!(why.contains("/tmp/f"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            core.read_exact_at(0x40000, &mut buf),
            Err(MemoryError::Unmapped { .. })
        ));
        assert!(matches!(
            core.read_exact_at(u64::MAX - 4, &mut buf),
            Err(MemoryError::Unmapped { .. })
        ));
    }

    /// The core's machine and page size are its own: an aarch64 core with 64 KiB pages reads
    /// the same on any host, and a core without `AT_PAGESZ` gets 4 KiB.
    #[test]
    fn machine_and_page_size_come_from_the_core() {
        for (machine, page, want) in [
            (EM_AARCH64, Some(65536), 65536),
            (EM_AARCH64, Some(16384), 16384),
            (EM_X86_64, Some(4096), 4096),
            (EM_AARCH64, None, 4096),
            (EM_AARCH64, Some(12345), 4096), // not a power of two: ignored
        ] {
            let (_dir, path) = synthetic_of(machine, page, &LOADS, None);
            let core = CoreMemory::open(&path).unwrap();
            assert_eq!(core.machine(), machine);
            assert_eq!(core.page_size(), want, "{} {page:?}", machine_name(machine));
            let mut buf = [0u8; 4];
            core.read_exact_at(0x30010, &mut buf).unwrap();
            assert_eq!(buf, [0x10, 0x11, 0x12, 0x13]);
        }
        let (_dir, path) = synthetic_of(goblin::elf::header::EM_RISCV, None, &LOADS, None);
        let err = CoreMemory::open(&path).unwrap_err().to_string();
        assert!(err.contains("riscv") && err.contains("aarch64"), "{err}");
    }

    #[test]
    fn a_truncated_copy_fails_the_reads_past_its_end() {
        let (_dir, path) = synthetic(&LOADS, None);
        let full = std::fs::metadata(&path).unwrap().len() as usize;
        let (_dir, path) = synthetic(&LOADS, Some(full - 0x800));
        let core = CoreMemory::open(&path).unwrap();
        assert_eq!(core.truncated(), Some(((full - 0x800) as u64, full as u64)));
        let mut buf = [0u8; 8];
        core.read_exact_at(0x30000, &mut buf).unwrap();
        assert!(core.cut_off_at(0x30900));
        assert!(!core.cut_off_at(0x11900));
        match core.read_exact_at(0x30900, &mut buf) {
            Err(MemoryError::NotDumped { why, .. }) => assert!(why.contains("truncated"), "{why}"),
            other => panic!("{other:?}"),
        }
        // Cut inside the notes: the open fails.
        let (_dir, path) = synthetic(&LOADS, Some(64 + 56 * 5 + 10));
        let err = CoreMemory::open(&path).unwrap_err().to_string();
        assert!(err.contains("truncated"), "{err}");
    }

    #[test]
    fn more_than_65534_program_headers_use_section_header_0() {
        // PN_XNUM: e_phnum = 0xffff, the real count in section header 0's sh_info.
        let (_dir, path) = synthetic(&LOADS, None);
        let mut b = std::fs::read(&path).unwrap();
        let shoff = b.len() as u64;
        let mut sh0 = [0u8; 64];
        sh0[44..48].copy_from_slice(&5u32.to_le_bytes());
        b.extend(sh0);
        b[40..48].copy_from_slice(&shoff.to_le_bytes());
        b[56..58].copy_from_slice(&0xffffu16.to_le_bytes());
        std::fs::write(&path, &b).unwrap();
        let core = CoreMemory::open(&path).unwrap();
        assert_eq!(core.segments.len(), 4);
        let mut buf = [0u8; 4];
        core.read_exact_at(0x30010, &mut buf).unwrap();
        assert_eq!(buf, [0x10, 0x11, 0x12, 0x13]);
    }

    proptest::proptest! {
        #[test]
        fn no_read_panics(addr in 0x0fff0u64..0x31010, len in 0usize..0x2000, cut in 0usize..9000) {
            let (_dir, path) = synthetic(&LOADS, Some(cut));
            if let Ok(core) = CoreMemory::open(&path) {
                let mut buf = vec![0u8; len];
                if core.read_exact_at(addr, &mut buf).is_ok() {
                    for (k, b) in buf.iter().enumerate() {
                        proptest::prop_assert_eq!(*b, (addr + k as u64) as u8);
                    }
                }
            }
        }
    }
}
