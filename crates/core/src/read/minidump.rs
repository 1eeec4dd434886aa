//! [`MinidumpMemory`]: the address space of a Windows process as a minidump holds it
//! (`hs_err_pid<pid>.mdmp`, `procdump`, Task Manager's "Create dump file", `MiniDumpWriteDump`).
//!
//! The format is Microsoft's (`minidumpapiset.h`: `MINIDUMP_HEADER`, whose `Flags` are the
//! `MINIDUMP_TYPE` the writer used, then a directory of streams); the `minidump` crate
//! (rust-minidump) parses it. What hsinspect takes from a dump:
//! * `ModuleListStream` (`MINIDUMP_MODULE`): each loaded image's base address, size and path;
//!   `jvm.dll`'s headers and export table are then read from the dump's memory, as from a live
//!   process's;
//! * the memory: `Memory64ListStream` (`MINIDUMP_MEMORY64_LIST`, written for
//!   `MiniDumpWithFullMemory`: every committed readable range, the PerfData region and the whole
//!   `jvm.dll` image among them) or, in dumps without full memory, `MemoryListStream`
//!   (`MINIDUMP_MEMORY_LIST`: thread stacks and a few small ranges, never the region);
//! * `SystemInfoStream` (the processor architecture: only x86-64 dumps are read) and
//!   `MiscInfoStream` (the process id);
//! * `ThreadListStream` (`MINIDUMP_THREAD`): each thread's id and its `CONTEXT` (the x64
//!   `CONTEXT` of `winnt.h`, as `GetThreadContext` gave it when the dump was written), for the
//!   thread dump's walk of a thread that was running Java code ([`MinidumpMemory::thread_registers`]).
//!
//! The file is mapped (memmap2), never read whole: the crate parses the stream directory and
//! lists once at open, the file offset of each memory range is kept, and a read is a binary
//! search over the ranges sorted by address plus a copy.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use minidump::format::MINIDUMP_STREAM_TYPE;
use minidump::system_info::Cpu;
use minidump::{
    Minidump, MinidumpMemory64List, MinidumpMemoryList, MinidumpMiscInfo, MinidumpModuleList,
    MinidumpRawContext, MinidumpSystemInfo, MinidumpThreadList, Module,
};
use num_traits::FromPrimitive;

use crate::error::Error;
use crate::memory::{MemoryError, ReadMemory};
use crate::pid::Pid;
use crate::registers::ThreadRegisters;

/// The most threads whose registers are kept (a JVM with more is read, the rest without
/// registers: their walk needs none unless they were running Java code).
pub const MAX_DUMP_THREADS: usize = 1 << 16;

/// The first four bytes of every minidump (`MINIDUMP_SIGNATURE`, `'PMDM'` read as a
/// little-endian `u32`).
pub const MINIDUMP_SIGNATURE: [u8; 4] = *b"MDMP";

/// `MiniDumpWithFullMemory` in `MINIDUMP_HEADER.Flags` (Microsoft's `MINIDUMP_TYPE`).
pub const MINIDUMP_WITH_FULL_MEMORY: u64 = 0x2;

/// The names of Microsoft's `MINIDUMP_TYPE` flags (`minidumpapiset.h`), by bit.
const MINIDUMP_TYPE_NAMES: [(u64, &str); 24] = [
    (0x1, "MiniDumpWithDataSegs"),
    (0x2, "MiniDumpWithFullMemory"),
    (0x4, "MiniDumpWithHandleData"),
    (0x8, "MiniDumpFilterMemory"),
    (0x10, "MiniDumpScanMemory"),
    (0x20, "MiniDumpWithUnloadedModules"),
    (0x40, "MiniDumpWithIndirectlyReferencedMemory"),
    (0x80, "MiniDumpFilterModulePaths"),
    (0x100, "MiniDumpWithProcessThreadData"),
    (0x200, "MiniDumpWithPrivateReadWriteMemory"),
    (0x400, "MiniDumpWithoutOptionalData"),
    (0x800, "MiniDumpWithFullMemoryInfo"),
    (0x1000, "MiniDumpWithThreadInfo"),
    (0x2000, "MiniDumpWithCodeSegs"),
    (0x4000, "MiniDumpWithoutAuxiliaryState"),
    (0x8000, "MiniDumpWithFullAuxiliaryState"),
    (0x10000, "MiniDumpWithPrivateWriteCopyMemory"),
    (0x20000, "MiniDumpIgnoreInaccessibleMemory"),
    (0x40000, "MiniDumpWithTokenInformation"),
    (0x80000, "MiniDumpWithModuleHeaders"),
    (0x100000, "MiniDumpFilterTriage"),
    (0x200000, "MiniDumpWithAvxXStateContext"),
    (0x400000, "MiniDumpWithIptTrace"),
    (0x800000, "MiniDumpScanInaccessiblePartialPages"),
];

/// The `MINIDUMP_TYPE` flags `flags` names, joined with `|` (`MiniDumpNormal` for none; unknown
/// bits in hex).
pub fn dump_type_name(flags: u64) -> String {
    if flags == 0 {
        return "MiniDumpNormal".into();
    }
    let mut names: Vec<String> = MINIDUMP_TYPE_NAMES
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, name)| (*name).to_string())
        .collect();
    let known = MINIDUMP_TYPE_NAMES
        .iter()
        .fold(0, |acc, (bit, _)| acc | bit);
    if flags & !known != 0 {
        names.push(format!("{:#x}", flags & !known));
    }
    names.join("|")
}

/// Whether the file at `path` is a regular file that starts with the minidump signature `MDMP`
/// (anything else, a FIFO or a device included, is not opened).
///
/// # Errors
/// [`Error::Io`] when it cannot be examined, opened or read.
pub fn is_minidump(path: &Path) -> Result<bool, Error> {
    if !std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .is_file()
    {
        return Ok(false);
    }
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < magic.len() {
        match file.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    Ok(got == magic.len() && magic == MINIDUMP_SIGNATURE)
}

/// One range of the dumped process's memory, and where its bytes are in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    /// First address (`StartOfMemoryRange`).
    base: u64,
    /// Length in bytes (`DataSize`).
    size: u64,
    /// File offset of its bytes.
    offset: u64,
}

/// An image loaded in the dumped process (a `MINIDUMP_MODULE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpModule {
    /// Its path as the loader recorded it (`C:\...\bin\server\jvm.dll`).
    pub path: PathBuf,
    /// Base address (`BaseOfImage`): its headers start there.
    pub base: u64,
    /// Size of the image in memory, in bytes (`SizeOfImage`).
    pub size: u64,
}

impl DumpModule {
    /// The file name after the last `\` or `/` of its path.
    pub fn file_name(&self) -> String {
        let p = self.path.to_string_lossy();
        p.rsplit(['\\', '/']).next().unwrap_or_default().to_string()
    }
}

/// A mapped Windows minidump; implements [`ReadMemory`] over the dumped process's memory.
#[derive(Debug)]
pub struct MinidumpMemory {
    path: PathBuf,
    map: Mmap,
    flags: u64,
    streams: Vec<String>,
    ranges: Vec<Range>,
    from_memory64: bool,
    memory_problem: Option<String>,
    modules: Vec<DumpModule>,
    process_id: Option<u32>,
    /// `(thread id, registers)` of the `ThreadListStream`, sorted by id; at most
    /// [`MAX_DUMP_THREADS`].
    threads: Vec<(u32, Option<ThreadRegisters>)>,
}

impl MinidumpMemory {
    /// Opens and maps the minidump at `path`, and reads its stream directory, module list and
    /// memory list (`Memory64ListStream`, else `MemoryListStream`).
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened or mapped; [`Error::Core`] when it is not a
    /// minidump (no `MDMP` signature), its header or stream directory is cut off, it is of a
    /// process that is not x86-64 (`SystemInfoStream`), or it has no readable module list.
    pub fn open(path: &Path) -> Result<Self, Error> {
        Self::from_map(path, super::coredump::map_dump(path)?)
    }

    fn from_map(path: &Path, map: Mmap) -> Result<Self, Error> {
        let bad = |reason: String| Error::core(path, reason);
        if map.len() < 4 || map[..4] != MINIDUMP_SIGNATURE {
            return Err(bad("not a minidump (no MDMP signature)".into()));
        }
        let dump = Minidump::read(&map[..]).map_err(|e| {
            bad(format!(
                "not a readable minidump: {e} (a minidump's header and stream directory are its first bytes; a cut-off or damaged copy?)"
            ))
        })?;
        let flags = dump.header.flags;
        let streams = dump
            .all_streams()
            .filter(|d| d.stream_type != MINIDUMP_STREAM_TYPE::UnusedStream as u32)
            .map(|d| stream_name(d.stream_type))
            .collect();
        if let Ok(info) = dump.get_stream::<MinidumpSystemInfo>()
            && info.cpu != Cpu::X86_64
        {
            return Err(bad(format!(
                "a minidump of a {:?} process: hsinspect reads dumps of 64-bit x86-64 JVMs",
                info.cpu
            )));
        }
        let modules = dump
            .get_stream::<MinidumpModuleList>()
            .map_err(|e| {
                bad(format!(
                    "its module list (ModuleListStream) cannot be read: {e}"
                ))
            })?
            .iter()
            .map(|m| DumpModule {
                path: PathBuf::from(m.code_file().into_owned()),
                base: m.base_address(),
                size: m.size(),
            })
            .collect();
        let misc = dump.get_stream::<MinidumpMiscInfo>().ok();
        let process_id = misc.as_ref().and_then(|m| m.raw.process_id().copied());
        let threads = threads(&dump, misc.as_ref());
        let base = map.as_ptr() as usize;
        // The crate's slices point into `map`: their distance from its start is the file offset.
        let offset_of = |bytes: &[u8]| -> Option<u64> {
            let off = (bytes.as_ptr() as usize).checked_sub(base)?;
            (off.checked_add(bytes.len())? <= map.len()).then_some(off as u64)
        };
        let mut memory_problem = None;
        let (mut ranges, from_memory64): (Vec<Range>, bool) = match dump
            .get_stream::<MinidumpMemory64List>()
        {
            Ok(list) => (
                list.iter()
                    .filter_map(|r| {
                        Some(Range {
                            base: r.base_address,
                            size: r.bytes.len() as u64,
                            offset: offset_of(r.bytes)?,
                        })
                    })
                    .collect(),
                true,
            ),
            Err(minidump::Error::StreamNotFound) => {
                let ranges = match dump.get_stream::<MinidumpMemoryList>() {
                    Ok(list) => list
                        .iter()
                        .filter_map(|r| {
                            Some(Range {
                                base: r.base_address,
                                size: r.bytes.len() as u64,
                                offset: offset_of(r.bytes)?,
                            })
                        })
                        .collect(),
                    Err(minidump::Error::StreamNotFound) => Vec::new(),
                    Err(e) => {
                        memory_problem = Some(format!(
                            "its MemoryListStream cannot be read ({e}): the file ({} bytes) may be a cut-off copy",
                            map.len()
                        ));
                        Vec::new()
                    }
                };
                (ranges, false)
            }
            Err(e) => {
                memory_problem = Some(format!(
                    "its Memory64ListStream (the process's memory) cannot be read ({e}): the file ({} bytes) may be a cut-off copy; copy the whole dump",
                    map.len()
                ));
                (Vec::new(), true)
            }
        };
        ranges.retain(|r| r.size > 0);
        ranges.sort_by_key(|r| r.base);
        Ok(MinidumpMemory {
            path: path.to_owned(),
            map,
            flags,
            streams,
            ranges,
            from_memory64,
            memory_problem,
            modules,
            process_id,
            threads,
        })
    }

    /// The registers of thread `tid` (a Windows thread id: HotSpot's `OSThread::_thread_id`) as
    /// its `CONTEXT` in the `ThreadListStream` holds them; `None` when the dump lists no such
    /// thread or its context lacks the control and integer registers.
    pub fn thread_registers(&self, tid: Pid) -> Option<ThreadRegisters> {
        let tid = u32::try_from(tid).ok()?;
        let i = self
            .threads
            .binary_search_by_key(&tid, |(id, _)| *id)
            .ok()?;
        self.threads[i].1
    }

    /// The dump file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `MINIDUMP_HEADER.Flags`: the `MINIDUMP_TYPE` the writer was asked for ([`dump_type_name`]).
    pub fn flags(&self) -> u64 {
        self.flags
    }

    /// Whether the dump holds the process's full memory: written `MiniDumpWithFullMemory`, or
    /// with a `Memory64ListStream` (the list only full-memory dumps have).
    pub fn full_memory(&self) -> bool {
        self.flags & MINIDUMP_WITH_FULL_MEMORY != 0 || self.from_memory64
    }

    /// The names of the streams in the dump, in directory order (`ThreadListStream`, ...;
    /// unknown types by number).
    pub fn streams(&self) -> &[String] {
        &self.streams
    }

    /// Why the memory list could not be read, when it could not (a cut-off file).
    pub fn memory_problem(&self) -> Option<&str> {
        self.memory_problem.as_deref()
    }

    /// The memory list read: `(stream name, ranges, bytes)`; `None` when the dump has none.
    pub fn memory_list(&self) -> Option<(&'static str, usize, u64)> {
        if self.ranges.is_empty() && self.memory_problem.is_none() && !self.from_memory64 {
            return None;
        }
        let name = if self.from_memory64 {
            "Memory64ListStream"
        } else {
            "MemoryListStream"
        };
        Some((
            name,
            self.ranges.len(),
            self.ranges.iter().map(|r| r.size).sum(),
        ))
    }

    /// The loaded images (`ModuleListStream`), in the dump's order (the executable first).
    pub fn modules(&self) -> &[DumpModule] {
        &self.modules
    }

    /// The module whose file name is `name` (case-insensitive, as Windows compares them).
    pub fn module(&self, name: &str) -> Option<&DumpModule> {
        self.modules
            .iter()
            .find(|m| m.file_name().eq_ignore_ascii_case(name))
    }

    /// The dumped process's id (`MiscInfoStream`), when the dump has it.
    pub fn process_id(&self) -> Option<u32> {
        self.process_id
    }

    /// The file name of the process's executable (the first module), when known.
    pub fn executable(&self) -> Option<String> {
        self.modules.first().map(DumpModule::file_name)
    }

    fn range_at(&self, addr: u64) -> Option<&Range> {
        let i = self.ranges.partition_point(|r| r.base <= addr);
        let r = self.ranges.get(i.checked_sub(1)?)?;
        (addr - r.base < r.size).then_some(r)
    }

    fn missing(&self, addr: u64, len: usize, at: u64) -> MemoryError {
        if let Some(problem) = &self.memory_problem {
            return MemoryError::NotDumped {
                addr,
                len,
                why: problem.clone(),
            };
        }
        if self.full_memory() {
            // A full-memory dump holds every committed readable page: the address was not one.
            return MemoryError::Unmapped { addr, len };
        }
        MemoryError::NotDumped {
            addr,
            len,
            why: format!(
                "the dump holds no bytes at {at:#x}: it was written without full memory ({}), so it has only thread stacks and a few small ranges",
                dump_type_name(self.flags)
            ),
        }
    }
}

/// Each thread of the dump's `ThreadListStream` with its x64 registers, sorted by thread id (at
/// most [`MAX_DUMP_THREADS`]; none without a thread list or a `SystemInfoStream`, which the
/// crate needs to know the context's layout).
fn threads(
    dump: &Minidump<'_, &[u8]>,
    misc: Option<&MinidumpMiscInfo>,
) -> Vec<(u32, Option<ThreadRegisters>)> {
    let (Ok(list), Ok(system)) = (
        dump.get_stream::<MinidumpThreadList>(),
        dump.get_stream::<MinidumpSystemInfo>(),
    ) else {
        return Vec::new();
    };
    let mut threads: Vec<(u32, Option<ThreadRegisters>)> = list
        .threads
        .iter()
        .take(MAX_DUMP_THREADS)
        .map(|t| {
            let registers = t.context(&system, misc).and_then(|c| match &c.raw {
                MinidumpRawContext::Amd64(ctx) => ThreadRegisters::from_amd64_context(ctx),
                _ => None,
            });
            (t.raw.thread_id, registers)
        })
        .collect();
    threads.sort_by_key(|(id, _)| *id);
    threads.dedup_by_key(|(id, _)| *id);
    threads
}

impl ReadMemory for MinidumpMemory {
    /// 4 KiB: the page size of x86-64 Windows, the only kind of dump read.
    fn page_size(&self) -> u64 {
        crate::memory::DEFAULT_PAGE_SIZE
    }

    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        let len = buf.len();
        let mut done = 0usize;
        while done < len {
            let Some(at) = addr.checked_add(done as u64) else {
                return Err(MemoryError::Unmapped { addr, len });
            };
            let Some(r) = self.range_at(at) else {
                return Err(self.missing(addr, len, at));
            };
            let into = at - r.base;
            let n = ((len - done) as u64).min(r.size - into) as usize;
            let start =
                usize::try_from(r.offset + into).map_err(|_| self.missing(addr, len, at))?;
            let Some(bytes) = self.map.get(start..start + n) else {
                return Err(self.missing(addr, len, at));
            };
            buf[done..done + n].copy_from_slice(bytes);
            done += n;
        }
        Ok(())
    }
}

/// A stream type's name as Microsoft's `MINIDUMP_STREAM_TYPE` spells it (`ModuleListStream`), or
/// its number.
fn stream_name(stream_type: u32) -> String {
    match MINIDUMP_STREAM_TYPE::from_u32(stream_type) {
        Some(t) => format!("{t:?}"),
        None => format!("stream {stream_type:#x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minidump header (`MINIDUMP_HEADER`, 32 bytes) with `streams` directory entries
    /// (`MINIDUMP_DIRECTORY`: type, size, RVA) right after it, then `data`.
    fn dump(flags: u64, streams: &[(u32, u32, u32)], data: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(MINIDUMP_SIGNATURE);
        b.extend(0xa793u32.to_le_bytes()); // MINIDUMP_VERSION
        b.extend((streams.len() as u32).to_le_bytes());
        b.extend(32u32.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend(flags.to_le_bytes());
        for (t, size, rva) in streams {
            b.extend(t.to_le_bytes());
            b.extend(size.to_le_bytes());
            b.extend(rva.to_le_bytes());
        }
        b.extend(data);
        b
    }

    /// The dump opened from a file in a temporary directory (kept while the dump is mapped: on
    /// Windows a mapped file cannot be deleted).
    fn open(bytes: &[u8]) -> Result<(tempfile::TempDir, MinidumpMemory), Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.mdmp");
        std::fs::write(&path, bytes).unwrap();
        MinidumpMemory::open(&path).map(|m| (dir, m))
    }

    /// A dump with an empty module list and a Memory64List of two ranges whose bytes are the
    /// low 8 bits of their addresses.
    fn with_memory64() -> Vec<u8> {
        let ranges = [(0x10000u64, 0x100u64), (0x10100, 0x80)];
        let dir_end = 32 + 12 * 2;
        let modules_at = dir_end as u32;
        let list_at = modules_at + 4;
        let list_len = 16 + 16 * ranges.len() as u32;
        let data_at = u64::from(list_at + list_len);
        let mut data = Vec::new();
        data.extend(0u32.to_le_bytes()); // NumberOfModules
        data.extend((ranges.len() as u64).to_le_bytes());
        data.extend(data_at.to_le_bytes()); // BaseRva
        for (base, size) in ranges {
            data.extend(base.to_le_bytes());
            data.extend(size.to_le_bytes());
        }
        for (base, size) in ranges {
            data.extend((base..base + size).map(|a| a as u8));
        }
        dump(0x2, &[(4, 4, modules_at), (9, list_len, list_at)], &data)
    }

    /// A dump with an empty module list, an x86-64 `SystemInfoStream` and a `ThreadListStream`
    /// of `threads`: `(thread id, ContextFlags, rip)`, each with an x64 `CONTEXT` (1232 bytes,
    /// `winnt.h`) whose rsp, rbp and r13 are rip + 1, 2, 3.
    fn with_threads(threads: &[(u32, u32, u64)]) -> Vec<u8> {
        const CONTEXT_SIZE: usize = 1232;
        let dir_end = 32 + 12 * 3;
        let modules_at = dir_end as u32;
        let system_at = modules_at + 4;
        let list_at = system_at + 56;
        let list_len = 4 + 48 * threads.len() as u32;
        let contexts_at = list_at + list_len;
        let mut data = Vec::new();
        data.extend(0u32.to_le_bytes()); // NumberOfModules
        let mut system = vec![0u8; 56];
        system[..2].copy_from_slice(&9u16.to_le_bytes()); // PROCESSOR_ARCHITECTURE_AMD64
        data.extend(system);
        data.extend((threads.len() as u32).to_le_bytes());
        for (i, (id, _, _)) in threads.iter().enumerate() {
            data.extend(id.to_le_bytes());
            data.extend([0u8; 12 + 8 + 16]); // suspend count, priorities, TEB, no stack
            data.extend((CONTEXT_SIZE as u32).to_le_bytes());
            data.extend((contexts_at + (i * CONTEXT_SIZE) as u32).to_le_bytes());
        }
        for (_, flags, rip) in threads {
            let mut ctx = vec![0u8; CONTEXT_SIZE];
            ctx[48..52].copy_from_slice(&flags.to_le_bytes());
            for (at, v) in [(248, *rip), (152, rip + 1), (160, rip + 2), (224, rip + 3)] {
                ctx[at..at + 8].copy_from_slice(&v.to_le_bytes());
            }
            data.extend(ctx);
        }
        dump(
            0x2,
            &[
                (4, 4, modules_at),
                (7, 56, system_at),
                (3, list_len, list_at),
            ],
            &data,
        )
    }

    #[test]
    fn thread_registers_come_from_each_threads_context() {
        let (_dir, mem) = open(&with_threads(&[
            (9, 0x0010_000b, 0x9000),
            (7, 0x0010_0003, 0x7000),
            (5, 0x0010_0001, 0x5000), // CONTEXT_CONTROL only: no rbp, no r13
        ]))
        .unwrap();
        let r = mem.thread_registers(7).unwrap();
        assert_eq!(
            (r.pc, r.sp, r.fp, r.bcp, r.lr),
            (0x7000, 0x7001, 0x7002, 0x7003, None)
        );
        assert_eq!(mem.thread_registers(9).unwrap().pc, 0x9000);
        assert_eq!(mem.thread_registers(5), None);
        assert_eq!(mem.thread_registers(8), None);
        assert_eq!(mem.thread_registers(-7), None);
        // Without a thread list: no registers, and the dump still opens.
        let (_dir, mem) = open(&with_memory64()).unwrap();
        assert_eq!(mem.thread_registers(7), None);
    }

    proptest::proptest! {
        #[test]
        fn a_cut_or_damaged_thread_list_never_panics(cut in 0usize..4000, at in 0usize..4000, byte: u8) {
            let mut b = with_threads(&[(7, 0x0010_0003, 0x7000), (8, 0x0010_0003, 0x8000)]);
            if at < b.len() {
                b[at] = byte;
            }
            b.truncate(cut.min(b.len()));
            if let Ok((_dir, mem)) = open(&b) {
                for tid in [7, 8, 0, -1] {
                    let _ = mem.thread_registers(tid);
                }
            }
        }
    }

    #[test]
    fn reads_across_ranges_and_knows_the_dump_type() {
        let (_dir, mem) = open(&with_memory64()).unwrap();
        assert!(mem.full_memory());
        assert_eq!(mem.streams(), ["ModuleListStream", "Memory64ListStream"]);
        assert_eq!(mem.memory_list(), Some(("Memory64ListStream", 2, 0x180)));
        let mut buf = [0u8; 16];
        mem.read_exact_at(0x100f8, &mut buf).unwrap();
        let want: Vec<u8> = (0x100f8u64..0x10108).map(|a| a as u8).collect();
        assert_eq!(buf.as_slice(), want.as_slice());
        // Past the last range of a full-memory dump: not mapped in the process.
        assert!(matches!(
            mem.read_exact_at(0x10178, &mut buf),
            Err(MemoryError::Unmapped { .. })
        ));
        assert!(matches!(
            mem.read_exact_at(u64::MAX - 4, &mut buf),
            Err(MemoryError::Unmapped { .. })
        ));
    }

    #[test]
    fn a_cut_off_memory_list_is_said_to_be_one() {
        let mut b = with_memory64();
        b.truncate(b.len() - 0x40);
        let (_dir, mem) = open(&b).unwrap();
        let mut buf = [0u8; 4];
        match mem.read_exact_at(0x10000, &mut buf) {
            Err(MemoryError::NotDumped { why, .. }) => {
                assert!(why.contains("cut-off copy"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_memory_list_reads_nothing_and_says_why() {
        let (_dir, mem) = open(&dump(0, &[(4, 4, 44)], &0u32.to_le_bytes())).unwrap();
        assert!(!mem.full_memory());
        assert_eq!(mem.memory_list(), None);
        let mut buf = [0u8; 4];
        match mem.read_exact_at(0x10000, &mut buf) {
            Err(MemoryError::NotDumped { why, .. }) => {
                assert!(
                    why.contains("without full memory (MiniDumpNormal)"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        for (bytes, says) in [
            (b"\x7fELF\x02\x01\x01\0".to_vec(), "no MDMP signature"),
            (b"MD".to_vec(), "no MDMP signature"),
            (b"MDMP\x93\xa7\0\0".to_vec(), "not a readable minidump"),
            // The directory says a stream is there, the file ends before it.
            (dump(0, &[(4, 4, 4000)], &[]), "module list"),
            // No module list at all.
            (dump(0, &[], &[]), "module list"),
        ] {
            let err = open(&bytes).unwrap_err().to_string();
            assert!(err.contains(says), "{err}");
        }
    }

    #[test]
    fn dump_types_are_named_as_microsoft_names_them() {
        assert_eq!(dump_type_name(0), "MiniDumpNormal");
        assert_eq!(
            dump_type_name(0x1826),
            "MiniDumpWithFullMemory|MiniDumpWithHandleData|MiniDumpWithUnloadedModules|MiniDumpWithFullMemoryInfo|MiniDumpWithThreadInfo"
        );
        assert_eq!(
            dump_type_name(0x1_0000_0002),
            "MiniDumpWithFullMemory|0x100000000"
        );
    }

    proptest::proptest! {
        #[test]
        fn no_read_or_open_panics(addr in 0x0fff0u64..0x10200, len in 0usize..0x300, cut in 0usize..400) {
            let mut b = with_memory64();
            b.truncate(cut.min(b.len()));
            if let Ok((_dir, mem)) = open(&b) {
                let mut buf = vec![0u8; len];
                if mem.read_exact_at(addr, &mut buf).is_ok() {
                    for (k, v) in buf.iter().enumerate() {
                        proptest::prop_assert_eq!(*v, (addr + k as u64) as u8);
                    }
                }
            }
        }
    }
}
