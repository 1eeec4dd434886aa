//! A loaded object's exported symbols read from its image in a target's memory, without its
//! file: the `PT_DYNAMIC` array gives `DT_SYMTAB` (`Elf64_Sym` records), `DT_STRTAB`/`DT_STRSZ`
//! (their names) and a hash table, `DT_GNU_HASH` (the GNU hash section as binutils writes it and
//! glibc's `dl-lookup.c` reads it) or else the System V `DT_HASH` (gABI, "Hash Table"), which
//! leads from a name to its symbol without a scan. A core holds these bytes when it holds the
//! object's read-only data (`coredump_filter` bit 2, which JDK 11 and later set).

use goblin::elf::dynamic::{DT_GNU_HASH, DT_HASH, DT_NULL, DT_STRSZ, DT_STRTAB, DT_SYMTAB};

use super::SIZEOF_DYN;
use crate::error::DynamicProblem;
use crate::memory::{LeBytes, MemoryError, ReadMemory};

/// Longest `_DYNAMIC` array read, in entries.
const MAX_DYNAMIC: u64 = 4096;
/// Largest bucket count or Bloom filter accepted (a corrupt header).
const MAX_CHAIN: u32 = 1 << 20;
/// Longest hash chain followed (a corrupt image must not loop; real chains are a few links).
const MAX_WALK: u32 = 1 << 16;
/// Size of an `Elf64_Sym`.
const SIZEOF_SYM: u64 = super::SIZEOF_SYM as u64;

/// The hash table of the object's dynamic symbols, at run-time addresses.
#[derive(Debug, Clone, Copy)]
enum Hash {
    /// `DT_GNU_HASH`: `nbuckets`, `symoffset`, then (after the Bloom filter) the buckets and
    /// the chain of hash values (low bit set on the last of a chain).
    Gnu {
        nbuckets: u32,
        symoffset: u32,
        buckets: u64,
        chains: u64,
    },
    /// `DT_HASH`: `nbucket` buckets, then `nchain` chain links, all symbol indexes.
    SysV {
        nbucket: u32,
        buckets: u64,
        chains: u64,
    },
}

/// The dynamic symbol table of an object loaded at `bias`, read through a [`ReadMemory`].
pub(crate) struct DynamicSymbols<'a> {
    mem: &'a dyn ReadMemory,
    symtab: u64,
    strtab: u64,
    strsz: u64,
    hash: Hash,
}

/// Why the symbols could not be read: what is wrong with the image, or the failed read.
#[derive(Debug)]
pub(crate) enum DynamicError {
    /// The image lacks an entry or holds implausible values.
    Malformed(DynamicProblem),
    /// A read failed (in a core: bytes the dumper left out).
    Memory(&'static str, MemoryError),
}

impl<'a> DynamicSymbols<'a> {
    /// Reads the `_DYNAMIC` array at `bias + dynamic_vaddr` (`memsz` bytes) and the hash
    /// table's header. `span` is the object's run-time address range: a `d_ptr` inside it was
    /// relocated in place by the dynamic linker (glibc does), any other is a link-time address.
    ///
    /// # Errors
    /// [`DynamicError`] when an entry is missing or a read fails.
    pub(crate) fn read(
        mem: &'a dyn ReadMemory,
        bias: u64,
        dynamic_vaddr: u64,
        memsz: u64,
        span: (u64, u64),
    ) -> Result<Self, DynamicError> {
        Self::read_with(mem, bias, dynamic_vaddr, memsz, span, true)
    }

    /// [`DynamicSymbols::read`], taking `DT_GNU_HASH` only when `use_gnu` (tests read both).
    fn read_with(
        mem: &'a dyn ReadMemory,
        bias: u64,
        dynamic_vaddr: u64,
        memsz: u64,
        span: (u64, u64),
        use_gnu: bool,
    ) -> Result<Self, DynamicError> {
        let at_run_time = |v: u64| {
            if v >= span.0 && v < span.1 {
                v
            } else {
                bias.wrapping_add(v)
            }
        };
        let dynamic = bias.wrapping_add(dynamic_vaddr);
        let (mut symtab, mut strtab, mut strsz, mut gnu, mut sysv) = (None, None, None, None, None);
        for i in 0..(memsz / SIZEOF_DYN as u64).min(MAX_DYNAMIC) {
            let at = dynamic.wrapping_add(i * SIZEOF_DYN as u64);
            let tag = mem
                .read_u64(at)
                .map_err(|e| DynamicError::Memory("_DYNAMIC", e))?;
            let val = mem
                .read_u64(at.wrapping_add(8))
                .map_err(|e| DynamicError::Memory("_DYNAMIC", e))?;
            match tag {
                DT_NULL => break,
                DT_SYMTAB => symtab = Some(at_run_time(val)),
                DT_STRTAB => strtab = Some(at_run_time(val)),
                DT_STRSZ => strsz = Some(val),
                DT_GNU_HASH => gnu = Some(at_run_time(val)),
                DT_HASH => sysv = Some(at_run_time(val)),
                _ => {}
            }
        }
        let missing = |tag: &'static str| DynamicError::Malformed(DynamicProblem::MissingTag(tag));
        let symtab = symtab.ok_or_else(|| missing("DT_SYMTAB"))?;
        let strtab = strtab.ok_or_else(|| missing("DT_STRTAB"))?;
        let strsz = strsz.ok_or_else(|| missing("DT_STRSZ"))?;
        let words = |at: u64, n: usize| -> Result<Vec<u32>, DynamicError> {
            mem.read_u32s(at, n, n)
                .map_err(|e| DynamicError::Memory("the symbol hash table", e))
        };
        let hash = if let Some(at) = gnu.filter(|_| use_gnu) {
            let h = words(at, 4)?;
            let (nbuckets, symoffset, bloom_size) = (h[0], h[1], h[2]);
            if nbuckets == 0 || nbuckets > MAX_CHAIN || bloom_size > MAX_CHAIN {
                return Err(DynamicError::Malformed(DynamicProblem::ImplausibleHash {
                    table: "DT_GNU_HASH",
                    header: h,
                }));
            }
            let buckets = at.wrapping_add(16 + 8 * u64::from(bloom_size));
            Hash::Gnu {
                nbuckets,
                symoffset,
                buckets,
                chains: buckets.wrapping_add(4 * u64::from(nbuckets)),
            }
        } else if let Some(at) = sysv {
            let h = words(at, 2)?;
            if h[0] == 0 || h[0] > MAX_CHAIN {
                return Err(DynamicError::Malformed(DynamicProblem::ImplausibleHash {
                    table: "DT_HASH",
                    header: h,
                }));
            }
            Hash::SysV {
                nbucket: h[0],
                buckets: at.wrapping_add(8),
                chains: at.wrapping_add(8 + 4 * u64::from(h[0])),
            }
        } else {
            return Err(missing("DT_GNU_HASH or DT_HASH"));
        };
        Ok(DynamicSymbols {
            mem,
            symtab,
            strtab,
            strsz,
            hash,
        })
    }

    fn u32_at(&self, at: u64) -> Result<u32, DynamicError> {
        self.mem
            .read_u32(at)
            .map_err(|e| DynamicError::Memory("the symbol hash table", e))
    }

    /// `st_value` of symbol `index` when it is defined (`st_shndx` not `SHN_UNDEF`) and named
    /// `name`.
    fn symbol_if_named(&self, index: u32, name: &str) -> Result<Option<u64>, DynamicError> {
        let mut sym = [0u8; SIZEOF_SYM as usize];
        self.mem
            .read_exact_at(
                self.symtab.wrapping_add(u64::from(index) * SIZEOF_SYM),
                &mut sym,
            )
            .map_err(|e| DynamicError::Memory("the dynamic symbol table", e))?;
        let sym = LeBytes::new(&sym);
        let st_name = u64::from(sym.u32_at(0).unwrap_or(0));
        let shndx = sym.u16_at(6).unwrap_or(0);
        if shndx == 0 || st_name >= self.strsz {
            return Ok(None);
        }
        let mut have = vec![0u8; name.len() + 1];
        if st_name.saturating_add(have.len() as u64) > self.strsz {
            return Ok(None);
        }
        self.mem
            .read_exact_at(self.strtab.wrapping_add(st_name), &mut have)
            .map_err(|e| DynamicError::Memory("the dynamic string table", e))?;
        let named = have[..name.len()] == *name.as_bytes() && have[name.len()] == 0;
        Ok(named.then(|| sym.u64_at(8)).flatten())
    }

    /// The link-time value (`st_value`) of the defined symbol `name`, `None` when the object
    /// does not export it.
    ///
    /// # Errors
    /// [`DynamicError`] when a read fails.
    pub(crate) fn lookup(&self, name: &str) -> Result<Option<u64>, DynamicError> {
        match self.hash {
            Hash::Gnu {
                nbuckets,
                symoffset,
                buckets,
                chains,
            } => {
                let h = gnu_hash(name);
                let first = self.u32_at(buckets.wrapping_add(4 * u64::from(h % nbuckets)))?;
                if first < symoffset {
                    return Ok(None);
                }
                for index in (first..=u32::MAX).take(MAX_WALK as usize) {
                    let link =
                        self.u32_at(chains.wrapping_add(4 * u64::from(index - symoffset)))?;
                    if link | 1 == h | 1
                        && let Some(v) = self.symbol_if_named(index, name)?
                    {
                        return Ok(Some(v));
                    }
                    if link & 1 == 1 {
                        return Ok(None);
                    }
                }
                Ok(None)
            }
            Hash::SysV {
                nbucket,
                buckets,
                chains,
            } => {
                let mut index =
                    self.u32_at(buckets.wrapping_add(4 * u64::from(sysv_hash(name) % nbucket)))?;
                for _ in 0..MAX_WALK {
                    if index == 0 {
                        return Ok(None);
                    }
                    if let Some(v) = self.symbol_if_named(index, name)? {
                        return Ok(Some(v));
                    }
                    index = self.u32_at(chains.wrapping_add(4 * u64::from(index)))?;
                }
                Ok(None)
            }
        }
    }
}

/// The GNU hash of a symbol name (`h = h * 33 + c`, from 5381).
fn gnu_hash(name: &str) -> u32 {
    name.bytes().fold(5381u32, |h, c| {
        h.wrapping_mul(33).wrapping_add(u32::from(c))
    })
}

/// The System V ELF hash of a symbol name (gABI).
fn sysv_hash(name: &str) -> u32 {
    let mut h = 0u32;
    for c in name.bytes() {
        h = (h << 4).wrapping_add(u32::from(c));
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

#[cfg(all(test, feature = "live", target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;
    use crate::elf::ElfFile;
    use goblin::elf::program_header::PT_DYNAMIC;

    /// This test process's own memory through `/proc/self/mem` (the OS backends of `read` sit
    /// above this module).
    struct OwnMemory(std::fs::File);

    impl ReadMemory for OwnMemory {
        fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
            use std::os::unix::fs::FileExt;
            self.0
                .read_exact_at(buf, addr)
                .map_err(|_| MemoryError::Unmapped {
                    addr,
                    len: buf.len(),
                })
        }
    }

    #[test]
    fn hashes_are_the_published_ones() {
        // Values from the GNU hash and System V hash definitions.
        assert_eq!(gnu_hash(""), 0x0000_1505);
        assert_eq!(gnu_hash("printf"), 0x156b_2bb8);
        assert_eq!(sysv_hash("printf"), 0x0779_05a6);
    }

    /// The libc this test process runs: symbols found through its in-memory `_DYNAMIC` and
    /// hash table are at the addresses the dynamic linker gave this process.
    #[test]
    fn finds_libc_symbols_in_this_processs_memory() {
        let maps = procfs::process::Process::myself().unwrap().maps().unwrap();
        let (path, start) = maps
            .iter()
            .find_map(|m| match &m.pathname {
                procfs::process::MMapPath::Path(p)
                    if m.offset == 0
                        && p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with("libc.so")) =>
                {
                    Some((p.clone(), m.address.0))
                }
                _ => None,
            })
            .expect("libc is mapped");
        let elf = ElfFile::open(&path).unwrap();
        let first = elf.loads().next().unwrap();
        let bias = start - (first.p_vaddr & !0xfff);
        let lo = elf.loads().map(|p| p.p_vaddr).min().unwrap();
        let hi = elf.loads().map(|p| p.p_vaddr + p.p_memsz).max().unwrap();
        let dynamic = elf
            .program_headers()
            .iter()
            .find(|p| p.p_type == PT_DYNAMIC)
            .unwrap();
        let mem = OwnMemory(std::fs::File::open("/proc/self/mem").unwrap());
        // glibc's libc.so.6 has both tables (DT_GNU_HASH and DT_HASH): each is read.
        for use_gnu in [true, false] {
            let syms = DynamicSymbols::read_with(
                &mem,
                bias,
                dynamic.p_vaddr,
                dynamic.p_memsz,
                (bias + lo, bias + hi),
                use_gnu,
            )
            .unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(
                matches!(syms.hash, Hash::Gnu { .. }),
                use_gnu,
                "{path:?} lacks a hash table"
            );
            let getpid = syms.lookup("getpid").unwrap().expect("libc exports getpid");
            assert_eq!(bias + getpid, libc::getpid as *const () as u64);
            let errno = syms.lookup("__errno_location").unwrap().unwrap();
            assert_eq!(bias + errno, libc::__errno_location as *const () as u64);
            assert_eq!(syms.lookup("no_such_symbol_hsinspect").unwrap(), None);
            assert_eq!(syms.lookup("").unwrap(), None);
        }
    }
}

#[cfg(test)]
mod hostile {
    use super::*;

    /// `len` bytes at `base`, nothing else.
    struct Bytes {
        base: u64,
        bytes: Vec<u8>,
    }

    impl ReadMemory for Bytes {
        fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
            let len = buf.len();
            let at = addr
                .checked_sub(self.base)
                .and_then(|a| usize::try_from(a).ok())
                .filter(|a| a.checked_add(len).is_some_and(|e| e <= self.bytes.len()))
                .ok_or(MemoryError::Unmapped { addr, len })?;
            buf.copy_from_slice(&self.bytes[at..at + len]);
            Ok(())
        }
    }

    /// A `_DYNAMIC` array of `entries` at 0x10_0000, with room after it.
    fn dynamic(entries: &[(u64, u64)]) -> Bytes {
        let mut bytes = Vec::new();
        for (tag, v) in entries {
            bytes.extend(tag.to_le_bytes());
            bytes.extend(v.to_le_bytes());
        }
        bytes.resize(4096, 0);
        Bytes {
            base: 0x10_0000,
            bytes,
        }
    }

    fn problem(mem: &Bytes) -> DynamicProblem {
        let span = (mem.base, mem.base + 4096);
        match DynamicSymbols::read(mem, mem.base, 0, 4096, span) {
            Err(DynamicError::Malformed(p)) => p,
            Err(DynamicError::Memory(what, e)) => panic!("a read failed: {what}: {e}"),
            Ok(_) => panic!("read"),
        }
    }

    #[test]
    fn a_missing_tag_is_named() {
        let mem = dynamic(&[(DT_STRTAB, 0x10_0800), (DT_STRSZ, 16), (DT_NULL, 0)]);
        assert_eq!(problem(&mem), DynamicProblem::MissingTag("DT_SYMTAB"));
        let mem = dynamic(&[
            (DT_SYMTAB, 0x10_0400),
            (DT_STRTAB, 0x10_0800),
            (DT_STRSZ, 16),
            (DT_NULL, 0),
        ]);
        assert_eq!(
            problem(&mem).to_string(),
            "_DYNAMIC has no DT_GNU_HASH or DT_HASH"
        );
    }

    #[test]
    fn an_empty_hash_table_is_implausible() {
        // DT_HASH at 0x10_0c00 holds zeros: nbucket 0.
        let mem = dynamic(&[
            (DT_SYMTAB, 0x10_0400),
            (DT_STRTAB, 0x10_0800),
            (DT_STRSZ, 16),
            (DT_HASH, 0x10_0c00),
            (DT_NULL, 0),
        ]);
        assert_eq!(
            problem(&mem),
            DynamicProblem::ImplausibleHash {
                table: "DT_HASH",
                header: vec![0, 0],
            }
        );
    }

    proptest::proptest! {
        /// A corrupt image (any `_DYNAMIC` values, any table bytes) gives errors or `None`,
        /// never a panic or an endless walk.
        #[test]
        fn corrupt_tables_never_panic(
            table in proptest::collection::vec(proptest::num::u8::ANY, 64..2048),
            values in proptest::collection::vec(proptest::num::u64::ANY, 4),
            gnu in proptest::bool::ANY,
            name in "[a-zA-Z_]{0,24}",
        ) {
            let base = 0x10_0000u64;
            // _DYNAMIC at base: DT_SYMTAB, DT_STRTAB, DT_STRSZ, a hash table, DT_NULL; the
            // values point into the random table after it, or anywhere.
            let mut bytes = Vec::new();
            let hash_tag = if gnu { DT_GNU_HASH } else { DT_HASH };
            let near = |v: u64| if v.is_multiple_of(2) { base + 80 + v % 2048 } else { v };
            for (tag, v) in [
                (DT_SYMTAB, near(values[0])),
                (DT_STRTAB, near(values[1])),
                (DT_STRSZ, values[2] % 4096),
                (hash_tag, near(values[3])),
                (DT_NULL, 0),
            ] {
                bytes.extend(tag.to_le_bytes());
                bytes.extend(v.to_le_bytes());
            }
            bytes.extend(&table);
            let mem = Bytes { base, bytes };
            let span = (base, base + 4096);
            if let Ok(syms) = DynamicSymbols::read(&mem, base, 0, 80, span) {
                let _ = syms.lookup(&name);
            }
        }
    }
}
