//! The dynamic linker's list of loaded objects, read from a process image (a core, or any
//! [`ReadMemory`]): the executable's `_DYNAMIC` array has a `DT_DEBUG` entry that the dynamic
//! linker points at its `struct r_debug`, whose `r_map` heads a chain of `struct link_map`
//! (`<link.h>`; SA's `ps_core.c` walks the same chain).

use goblin::elf::dynamic::{DT_DEBUG, DT_NULL};

use super::SIZEOF_DYN;
use crate::memory::{MemoryError, ReadMemory};

/// `offsetof(struct r_debug, r_map)` on LP64 (`r_version` is an int, padded).
const R_MAP: u64 = 8;
/// `offsetof(struct link_map, l_name)` on LP64 (after `l_addr`).
const L_NAME: u64 = 8;
/// `offsetof(struct link_map, l_next)` on LP64 (after `l_addr`, `l_name`, `l_ld`).
const L_NEXT: u64 = 24;
/// Longest `_DYNAMIC` array read, in entries.
const MAX_DYNAMIC: u64 = 4096;
/// Longest `link_map` chain walked (a corrupt image must not loop forever).
const MAX_LINK_MAPS: usize = 10_000;
/// Longest object name read.
const MAX_NAME: usize = 4096;

/// The value of `DT_DEBUG` in the `_DYNAMIC` array at `dynamic` (`memsz` bytes): the address of
/// the dynamic linker's `struct r_debug`; `None` when the array has no such entry, or it is 0
/// (not yet set by the dynamic linker).
///
/// # Errors
/// The failed read of an entry.
pub(crate) fn r_debug(
    mem: &dyn ReadMemory,
    dynamic: u64,
    memsz: u64,
) -> Result<Option<u64>, MemoryError> {
    let entries = (memsz / SIZEOF_DYN as u64).min(MAX_DYNAMIC);
    for i in 0..entries {
        let at = dynamic.wrapping_add(i * SIZEOF_DYN as u64);
        match mem.read_u64(at)? {
            DT_NULL => break,
            DT_DEBUG => return Ok(Some(mem.read_u64(at + 8)?).filter(|&v| v != 0)),
            _ => {}
        }
    }
    Ok(None)
}

/// One loaded object on the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkMap {
    /// `l_addr`: the object's load bias.
    pub l_addr: u64,
    /// `l_name`: its path as the dynamic linker opened it; `None` when NULL or unreadable (the
    /// executable's own entry has an empty name).
    pub name: Option<Vec<u8>>,
}

/// Iterates the chain that starts at `r_debug.r_map`; ends after [`MAX_LINK_MAPS`] entries or at
/// the first entry that cannot be read (yielded as the error).
pub(crate) struct LinkMaps<'a> {
    mem: &'a dyn ReadMemory,
    next: u64,
    seen: usize,
}

impl<'a> LinkMaps<'a> {
    /// The list whose `struct r_debug` is at `r_debug`.
    ///
    /// # Errors
    /// The failed read of `r_debug.r_map`.
    pub(crate) fn new(mem: &'a dyn ReadMemory, r_debug: u64) -> Result<Self, MemoryError> {
        Ok(LinkMaps {
            mem,
            next: mem.read_u64(r_debug.wrapping_add(R_MAP))?,
            seen: 0,
        })
    }

    /// How many entries were read so far.
    pub(crate) fn seen(&self) -> usize {
        self.seen
    }

    fn entry(&self, lm: u64) -> Result<(LinkMap, u64), MemoryError> {
        let l_addr = self.mem.read_u64(lm)?;
        let l_name = self.mem.read_u64(lm + L_NAME)?;
        let next = self.mem.read_u64(lm + L_NEXT)?;
        let name = match l_name {
            0 => None,
            at => self.mem.read_c_string(at, MAX_NAME).ok().flatten(),
        };
        Ok((LinkMap { l_addr, name }, next))
    }
}

impl Iterator for LinkMaps<'_> {
    type Item = Result<LinkMap, MemoryError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next == 0 || self.seen >= MAX_LINK_MAPS {
            return None;
        }
        self.seen += 1;
        match self.entry(self.next) {
            Ok((entry, next)) => {
                self.next = next;
                Some(Ok(entry))
            }
            Err(e) => {
                self.next = 0;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory made of `(address, bytes)` pieces.
    struct Pieces(Vec<(u64, Vec<u8>)>);

    impl ReadMemory for Pieces {
        fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
            let len = buf.len();
            let (base, bytes) = self
                .0
                .iter()
                .find(|(a, b)| addr >= *a && addr + len as u64 <= a + b.len() as u64)
                .ok_or(MemoryError::Unmapped { addr, len })?;
            let at = (addr - base) as usize;
            buf.copy_from_slice(&bytes[at..at + len]);
            Ok(())
        }
    }

    fn words(ws: &[u64]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn walks_dt_debug_to_every_object() {
        let mem = Pieces(vec![
            // _DYNAMIC: DT_NEEDED, DT_DEBUG -> 0x2000, DT_NULL.
            (0x1000, words(&[1, 5, DT_DEBUG, 0x2000, DT_NULL, 0])),
            // r_debug: r_version, r_map -> 0x3000.
            (0x2000, words(&[1, 0x3000])),
            // link_map: the executable (empty name), then libjvm, then the end.
            (0x3000, words(&[0, 0x4000, 0, 0x3100, 0])),
            (0x3100, words(&[0x7f00_0000, 0x4010, 0, 0, 0])),
            // Names: the executable's empty one at 0x4000, libjvm's at 0x4010.
            (0x4000, {
                let mut names = vec![0u8; 16];
                names.extend(b"/jdk/lib/server/libjvm.so");
                names.resize(256, 0);
                names
            }),
        ]);
        let r_debug = r_debug(&mem, 0x1000, 6 * 8).unwrap().unwrap();
        assert_eq!(r_debug, 0x2000);
        let mut maps = LinkMaps::new(&mem, r_debug).unwrap();
        let all: Vec<LinkMap> = maps.by_ref().map(Result::unwrap).collect();
        assert_eq!(maps.seen(), 2);
        assert_eq!(all[0].name.as_deref(), Some(&b""[..]));
        assert_eq!(all[1].l_addr, 0x7f00_0000);
        assert_eq!(
            all[1].name.as_deref(),
            Some(&b"/jdk/lib/server/libjvm.so"[..])
        );
    }

    #[test]
    fn a_cycle_or_a_hole_ends_the_walk() {
        let mem = Pieces(vec![
            (0x1000, words(&[DT_DEBUG, 0x2000])),
            (0x2000, words(&[1, 0x3000])),
            (0x3000, words(&[0, 0, 0, 0x3000])), // l_next points at itself
        ]);
        assert_eq!(r_debug(&mem, 0x1000, 64).unwrap(), Some(0x2000));
        // No DT_DEBUG and no DT_NULL before the array runs into unmapped memory: an error.
        let unterminated = Pieces(vec![(0x1000, words(&[1, 5]))]);
        assert!(r_debug(&unterminated, 0x1000, 64).is_err());
        assert_eq!(r_debug(&unterminated, 0x1000, 16).unwrap(), None);
        let maps = LinkMaps::new(&mem, 0x2000).unwrap();
        assert_eq!(maps.count(), MAX_LINK_MAPS);
        let holed = Pieces(vec![(0x2000, words(&[1, 0x9000]))]);
        let mut maps = LinkMaps::new(&holed, 0x2000).unwrap();
        assert!(matches!(
            maps.next(),
            Some(Err(MemoryError::Unmapped { .. }))
        ));
        assert!(maps.next().is_none());
    }
}
