//! The ground floor: a target's address space ([`ReadMemory`]) and little-endian fields of bytes
//! ([`LeBytes`]), every read bounds-checked.
//!
//! Everything above reads through these two: the ELF and PE decoders, the vmStructs walk, the
//! PerfData parser and the OS backends of `read` (a live process, an ELF core, a minidump). The
//! targets hsinspect reads (x86_64, aarch64; Linux LP64 and Windows LLP64) are little-endian
//! with 8-byte pointers, so a pointer is a `u64` here; PerfData's own byte order is the one
//! exception and is the parser's business.
//!
//! Nothing here trusts a length it is given: a read of more than its stated maximum is refused
//! ([`MemoryError::TooLong`]), a field past the end of a slice is `None`, never a panic.

/// The page size assumed where neither the target nor the OS says: 4 KiB (x86_64; aarch64
/// kernels may use 16 or 64 KiB, which a core's `AT_PAGESZ` or the running kernel tells).
pub const DEFAULT_PAGE_SIZE: u64 = 4096;

/// Why bytes could not be read from a target's address space.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// No mapping (or no bytes in the dump) covers part of the range.
    #[error("address {addr:#x} (+{len} bytes) is not mapped in the target")]
    Unmapped {
        /// Start of the failed range.
        addr: u64,
        /// Length of the failed range.
        len: usize,
    },
    /// The mapping exists but its bytes are not available (e.g. a core without file-backed data).
    #[error("address {addr:#x} (+{len} bytes) is mapped but its contents are not available: {why}")]
    NotDumped {
        /// Start of the failed range.
        addr: u64,
        /// Length of the failed range.
        len: usize,
        /// Why the bytes are missing.
        why: String,
    },
    /// The OS refused access to the process (ptrace permission).
    #[error("reading {len} bytes at {addr:#x}: permission denied")]
    PermissionDenied {
        /// Start of the failed range.
        addr: u64,
        /// Length of the failed range.
        len: usize,
    },
    /// The operating system refused the read.
    #[error("reading {len} bytes at {addr:#x}")]
    Os {
        /// Start of the failed range.
        addr: u64,
        /// Length of the failed range.
        len: usize,
        /// The OS error.
        source: std::io::Error,
    },
    /// A length read from the target is larger than the reader allows (a corrupt or hostile
    /// target); nothing was read.
    #[error("{len} bytes at {addr:#x} asked for, more than the {max} allowed")]
    TooLong {
        /// Start of the refused range.
        addr: u64,
        /// Length asked for.
        len: usize,
        /// The reader's bound.
        max: usize,
    },
}

/// Read-only access to a target's address space: a live process, a core, or a source of an
/// embedder's own (a remote agent, a snapshot); implement [`ReadMemory::read_exact_at`] and, when
/// the target's pages are not 4 KiB, [`ReadMemory::page_size`]. Implementations never write to
/// the target.
///
/// The typed reads (`read_u32`, `read_pointer`, ...) are little-endian, as every target
/// hsinspect reads is.
pub trait ReadMemory {
    /// The target's page size in bytes (a power of two): mappings and segments are aligned to
    /// it. Default [`DEFAULT_PAGE_SIZE`].
    fn page_size(&self) -> u64 {
        DEFAULT_PAGE_SIZE
    }

    /// Whether the byte at `addr` is memory the target had committed (G1's committed regions).
    /// By default: whether it can be read; a core says more (its segments' `PF_W`).
    fn committed(&self, addr: u64) -> bool {
        self.read_u8(addr).is_ok()
    }

    /// Fills `buf` with the bytes at `addr`, all of them or an error.
    ///
    /// # Errors
    /// [`MemoryError`] when any byte of the range cannot be read.
    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError>;

    /// Fills each `(addr, buf)` of `reads` as [`ReadMemory::read_exact_at`] would, in as few
    /// calls to the OS as it allows (Linux's `process_vm_readv(2)` takes many ranges at once:
    /// a sampled thread's `JavaThread` and stack in one call). One result per read, in order.
    /// By default, one read after another.
    fn read_each(&self, reads: &mut [(u64, &mut [u8])]) -> Vec<Result<(), MemoryError>> {
        reads
            .iter_mut()
            .map(|(addr, buf)| self.read_exact_at(*addr, buf))
            .collect()
    }

    /// Reads a `u8`.
    ///
    /// # Errors
    /// As [`ReadMemory::read_exact_at`].
    fn read_u8(&self, addr: u64) -> Result<u8, MemoryError> {
        let mut b = [0u8; 1];
        self.read_exact_at(addr, &mut b)?;
        Ok(b[0])
    }

    /// Reads a little-endian `u16`.
    ///
    /// # Errors
    /// As [`ReadMemory::read_exact_at`].
    fn read_u16(&self, addr: u64) -> Result<u16, MemoryError> {
        let mut b = [0u8; 2];
        self.read_exact_at(addr, &mut b)?;
        Ok(u16::from_le_bytes(b))
    }

    /// Reads a little-endian `u32`.
    ///
    /// # Errors
    /// As [`ReadMemory::read_exact_at`].
    fn read_u32(&self, addr: u64) -> Result<u32, MemoryError> {
        let mut b = [0u8; 4];
        self.read_exact_at(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Reads a little-endian `i32` (a C `int`, e.g. a HotSpot length or state field).
    ///
    /// # Errors
    /// As [`ReadMemory::read_exact_at`].
    fn read_i32(&self, addr: u64) -> Result<i32, MemoryError> {
        self.read_u32(addr).map(|v| v as i32)
    }

    /// Reads a little-endian `u64`.
    ///
    /// # Errors
    /// As [`ReadMemory::read_exact_at`].
    fn read_u64(&self, addr: u64) -> Result<u64, MemoryError> {
        let mut b = [0u8; 8];
        self.read_exact_at(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Reads a pointer of the target (8 bytes, little-endian: the targets are 64-bit).
    ///
    /// # Errors
    /// As [`ReadMemory::read_exact_at`].
    fn read_pointer(&self, addr: u64) -> Result<u64, MemoryError> {
        self.read_u64(addr)
    }

    /// Reads `len` bytes into a new vector, refusing before any read when `len > max`.
    ///
    /// # Errors
    /// [`MemoryError::TooLong`] when `len > max`; otherwise as [`ReadMemory::read_exact_at`].
    fn read_vec(&self, addr: u64, len: usize, max: usize) -> Result<Vec<u8>, MemoryError> {
        if len > max {
            return Err(MemoryError::TooLong { addr, len, max });
        }
        let mut v = vec![0u8; len];
        self.read_exact_at(addr, &mut v)?;
        Ok(v)
    }

    /// Reads `count` little-endian `u32`s (an array of the target), at most `max` of them.
    ///
    /// # Errors
    /// [`MemoryError::TooLong`] when `count > max`; otherwise as [`ReadMemory::read_exact_at`].
    fn read_u32s(&self, addr: u64, count: usize, max: usize) -> Result<Vec<u32>, MemoryError> {
        if count > max {
            return Err(MemoryError::TooLong {
                addr,
                len: count.saturating_mul(4),
                max: max.saturating_mul(4),
            });
        }
        let bytes = self.read_vec(addr, count * 4, max.saturating_mul(4))?;
        Ok(LeBytes::new(&bytes).u32s().collect())
    }

    /// Reads `count` pointers (little-endian `u64`s), at most `max` of them.
    ///
    /// # Errors
    /// [`MemoryError::TooLong`] when `count > max`; otherwise as [`ReadMemory::read_exact_at`].
    fn read_pointers(&self, addr: u64, count: usize, max: usize) -> Result<Vec<u64>, MemoryError> {
        if count > max {
            return Err(MemoryError::TooLong {
                addr,
                len: count.saturating_mul(8),
                max: max.saturating_mul(8),
            });
        }
        let bytes = self.read_vec(addr, count * 8, max.saturating_mul(8))?;
        Ok(LeBytes::new(&bytes).u64s().collect())
    }

    /// Reads a NUL-terminated string of at most `max` bytes (without the NUL); `None` when no NUL
    /// is found within `max` bytes. Reads in small chunks so a string near the end of a mapping
    /// does not fail because of the bytes after it.
    ///
    /// # Errors
    /// As [`ReadMemory::read_exact_at`], for the first chunk.
    fn read_c_string(&self, addr: u64, max: usize) -> Result<Option<Vec<u8>>, MemoryError> {
        const CHUNK: usize = 64;
        let mut out = Vec::new();
        while out.len() < max {
            let mut chunk = [0u8; CHUNK];
            let want = CHUNK.min(max - out.len());
            let at = addr.wrapping_add(out.len() as u64);
            // Do not cross a page boundary in one read: the next page may be unmapped.
            let page = self.page_size().max(CHUNK as u64);
            let to_page_end = (page - (at % page)) as usize;
            let want = want.min(to_page_end);
            match self.read_exact_at(at, &mut chunk[..want]) {
                Ok(()) => {}
                Err(e) if out.is_empty() => return Err(e),
                Err(_) => return Ok(None),
            }
            if let Some(nul) = chunk[..want].iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..nul]);
                return Ok(Some(out));
            }
            out.extend_from_slice(&chunk[..want]);
        }
        Ok(None)
    }
}

/// Little-endian fields of a byte slice (a header, a table row, a note), every offset checked:
/// a field that does not fit in the slice is `None`, never a panic.
#[derive(Debug, Clone, Copy)]
pub struct LeBytes<'a> {
    bytes: &'a [u8],
}

impl<'a> LeBytes<'a> {
    /// Wraps `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// The wrapped bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// `len` bytes at `off`, `None` when they are not all in the slice.
    pub fn slice(&self, off: usize, len: usize) -> Option<&'a [u8]> {
        self.bytes.get(off..off.checked_add(len)?)
    }

    /// `N` bytes at `off` as an array.
    pub fn array<const N: usize>(&self, off: usize) -> Option<[u8; N]> {
        self.slice(off, N)?.try_into().ok()
    }

    /// The `u8` at `off`.
    pub fn u8_at(&self, off: usize) -> Option<u8> {
        self.bytes.get(off).copied()
    }

    /// The little-endian `u16` at `off`.
    pub fn u16_at(&self, off: usize) -> Option<u16> {
        self.array(off).map(u16::from_le_bytes)
    }

    /// The little-endian `u32` at `off`.
    pub fn u32_at(&self, off: usize) -> Option<u32> {
        self.array(off).map(u32::from_le_bytes)
    }

    /// The little-endian `i32` at `off`.
    pub fn i32_at(&self, off: usize) -> Option<i32> {
        self.array(off).map(i32::from_le_bytes)
    }

    /// The little-endian `u64` at `off`.
    pub fn u64_at(&self, off: usize) -> Option<u64> {
        self.array(off).map(u64::from_le_bytes)
    }

    /// The little-endian `i64` at `off`.
    pub fn i64_at(&self, off: usize) -> Option<i64> {
        self.array(off).map(i64::from_le_bytes)
    }

    /// The bytes from `off` up to (not including) the first NUL; `None` when `off` is past the
    /// end or no NUL follows it.
    pub fn c_str_at(&self, off: usize) -> Option<&'a [u8]> {
        let rest = self.bytes.get(off..)?;
        let nul = rest.iter().position(|&b| b == 0)?;
        Some(&rest[..nul])
    }

    /// The slice as consecutive little-endian `u16`s (a trailing odd byte is ignored).
    pub fn u16s(&self) -> impl Iterator<Item = u16> + 'a {
        self.bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
    }

    /// The slice as consecutive little-endian `u32`s (trailing bytes short of 4 are ignored).
    pub fn u32s(&self) -> impl Iterator<Item = u32> + 'a {
        self.bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
    }

    /// The slice as consecutive little-endian `u64`s (trailing bytes short of 8 are ignored).
    pub fn u64s(&self) -> impl Iterator<Item = u64> + 'a {
        self.bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
    }
}

/// A copy of one range of a target's memory, read once and then read from without the target:
/// a stack, a table, a blob read in one system call and decoded field by field. Reads outside
/// the range are [`MemoryError::Unmapped`].
#[derive(Debug, Clone)]
pub struct MemoryCopy {
    base: u64,
    bytes: Vec<u8>,
    page_size: u64,
}

impl MemoryCopy {
    /// Reads `len` bytes at `base` of `mem` (at most `max`).
    ///
    /// # Errors
    /// As [`ReadMemory::read_vec`].
    pub fn read(
        mem: &dyn ReadMemory,
        base: u64,
        len: usize,
        max: usize,
    ) -> Result<Self, MemoryError> {
        Ok(Self {
            base,
            bytes: mem.read_vec(base, len, max)?,
            page_size: mem.page_size(),
        })
    }

    /// Wraps bytes that were at `base` in a target whose pages are `page_size` bytes.
    pub fn new(base: u64, bytes: Vec<u8>, page_size: u64) -> Self {
        Self {
            base,
            bytes,
            page_size,
        }
    }

    /// The address of the first byte.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The copied bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The copied bytes, taken back (a buffer for the next copy).
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Whether `[addr, addr + len)` lies inside the copy.
    pub fn contains(&self, addr: u64, len: usize) -> bool {
        addr.checked_sub(self.base).is_some_and(|off| {
            off.checked_add(len as u64)
                .is_some_and(|end| end <= self.bytes.len() as u64)
        })
    }
}

impl ReadMemory for MemoryCopy {
    fn page_size(&self) -> u64 {
        self.page_size
    }

    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        if !self.contains(addr, buf.len()) {
            return Err(MemoryError::Unmapped {
                addr,
                len: buf.len(),
            });
        }
        let off = (addr - self.base) as usize;
        buf.copy_from_slice(&self.bytes[off..off + buf.len()]);
        Ok(())
    }
}

/// A hasher for keys that are addresses in the target (`Klass*`, `Method*`, pages, pcs): one
/// multiply, high bits folded down. Walks look such keys up per object or per frame, where
/// SipHash's cost shows.
#[derive(Debug, Default, Clone, Copy)]
pub struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        let h = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

/// A map keyed by an address in the target ([`AddressHasher`]).
pub type AddressMap<V> =
    std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<AddressHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn le_bytes_fields_and_bounds() {
        let b = [1u8, 0, 0, 0, 2, 0, 0, 0, b'h', b'i', 0];
        let le = LeBytes::new(&b);
        assert_eq!(le.u32_at(0), Some(1));
        assert_eq!(le.u64_at(0), Some(0x2_0000_0001));
        assert_eq!(le.u16_at(4), Some(2));
        assert_eq!(le.u32_at(8), None, "past the end");
        assert_eq!(le.u32_at(usize::MAX), None, "overflowing offset");
        assert_eq!(le.c_str_at(8), Some(&b"hi"[..]));
        assert_eq!(le.c_str_at(11), None);
        assert_eq!(le.u32s().collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn copy_reads_inside_and_refuses_outside() {
        let copy = MemoryCopy::new(0x1000, (0u8..32).collect(), 4096);
        assert_eq!(
            copy.read_u32(0x1004).unwrap(),
            u32::from_le_bytes([4, 5, 6, 7])
        );
        assert!(copy.read_u64(0x101c).is_err(), "straddles the end");
        assert!(copy.read_u8(0xfff).is_err(), "before the start");
        assert!(copy.read_u8(u64::MAX).is_err());
        assert_eq!(copy.read_pointers(0x1000, 2, 4).unwrap().len(), 2);
        assert!(matches!(
            copy.read_pointers(0x1000, 5, 4),
            Err(MemoryError::TooLong { .. })
        ));
        assert!(matches!(
            copy.read_vec(0x1000, 100, 64),
            Err(MemoryError::TooLong { .. })
        ));
    }
}
