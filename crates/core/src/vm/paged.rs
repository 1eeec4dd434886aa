//! A page cache over a [`ReadMemory`]: the VM model and the thread walk make many small reads
//! (vmStructs names, `Method`/`ConstMethod`/`Symbol` fields, stack slots) that cluster on few
//! pages, so each page is read once, whole, and later reads are copies. Only valid while the
//! target does not change: a stopped process or a core.
//!
//! What belongs to one thread (its `JavaThread`, the used part of its stack) is read apart from
//! the cache ([`Paged::focus`]): each range in one read, dropped once the thread is done, so a
//! dump of a thousand threads neither reads them page by page nor keeps them.

use std::cell::RefCell;

use crate::memory::{AddressMap, MemoryCopy, MemoryError, ReadMemory};

/// At most this many pages are kept (4 MiB with 4 KiB pages); past it the cache is cleared. The
/// pages read again after a clear are few (the shared metadata: methods, symbols, the code
/// cache): on a JVM with 1,000 threads 20 frames deep, 2,649 reads with 16,384 pages and 2,684
/// with 1,024, while the peak RSS of `inspect threads` fell from 22.0 to 18.3 MB.
const MAX_PAGES: usize = 1024;

/// The longest range read in one piece by [`Paged::focus`] (a longer one is read through the
/// page cache).
const MAX_FOCUS: usize = 1 << 20;

/// A read-through page cache over `inner`. A page that cannot be read whole is not cached: the
/// read goes to `inner` as asked, so a range at the end of a mapping still reads.
pub struct Paged<'a> {
    inner: &'a dyn ReadMemory,
    page: u64,
    pages: RefCell<AddressMap<Option<Box<[u8]>>>>,
    reads: std::cell::Cell<u64>,
    /// The ranges of the thread being read, each copied in one read.
    focus: RefCell<Vec<MemoryCopy>>,
    /// Buffers of copies [`Paged::focus`] dropped, for its next copies (at most
    /// [`SPARE_BUFFERS`]): a dump of 1,000 threads does not allocate and fault in fresh memory
    /// for each thread's stack.
    spare: RefCell<Vec<Vec<u8>>>,
}

/// The most buffers [`Paged::focus`] keeps for reuse (a thread's focus is three ranges), and
/// the longest kept.
const SPARE_BUFFERS: usize = 4;
const SPARE_MAX: usize = 256 << 10;

impl<'a> Paged<'a> {
    /// A cache over `inner`, with `inner`'s page size (at most 64 KiB, at least 4 KiB).
    pub fn new(inner: &'a dyn ReadMemory) -> Self {
        Paged {
            inner,
            page: inner.page_size().clamp(4096, 65536),
            pages: RefCell::new(AddressMap::default()),
            reads: std::cell::Cell::new(0),
            focus: RefCell::new(Vec::new()),
            spare: RefCell::new(Vec::new()),
        }
    }

    /// How many reads went to the underlying memory (for `-v`).
    pub fn reads(&self) -> u64 {
        self.reads.get()
    }

    /// Reads each `[from, to)` of `ranges` (what belongs to one thread: its `JavaThread`, the
    /// used part of its stack) and serves reads inside them from those copies, not the page
    /// cache, until the next call (`&[]` ends it). The ranges are read together
    /// ([`ReadMemory::read_each`]: one system call on Linux); a range that lies inside a copy
    /// the last call made keeps that copy and is not read again. A range longer than 1 MiB, or
    /// one that cannot be read whole, is left to the page cache.
    pub fn focus(&self, ranges: &[(u64, u64)]) {
        let mut focus = self.focus.borrow_mut();
        let old = std::mem::take(&mut *focus);
        let mut keep = vec![false; old.len()];
        let mut wanted = Vec::new();
        for &(from, to) in ranges {
            let Some(len) = to.checked_sub(from).and_then(|l| usize::try_from(l).ok()) else {
                continue;
            };
            if len == 0 || len > MAX_FOCUS {
                continue;
            }
            match old.iter().position(|c| c.contains(from, len)) {
                Some(i) => keep[i] = true,
                None => wanted.push((from, len)),
            }
        }
        let mut spare = self.spare.borrow_mut();
        for (copy, kept) in old.into_iter().zip(keep) {
            if kept {
                focus.push(copy);
            } else if spare.len() < SPARE_BUFFERS && copy.bytes().len() <= SPARE_MAX {
                spare.push(copy.into_bytes());
            }
        }
        let mut wanted: Vec<(u64, Vec<u8>)> = wanted
            .into_iter()
            .map(|(from, len)| {
                let mut buf = spare.pop().unwrap_or_default();
                buf.clear();
                buf.resize(len, 0);
                (from, buf)
            })
            .collect();
        drop(spare);
        if wanted.is_empty() {
            return;
        }
        self.reads.set(self.reads.get() + wanted.len() as u64);
        let mut reads: Vec<(u64, &mut [u8])> = wanted
            .iter_mut()
            .map(|(from, buf)| (*from, buf.as_mut_slice()))
            .collect();
        let results = self.inner.read_each(&mut reads);
        let page = self.inner.page_size();
        for ((from, bytes), result) in wanted.into_iter().zip(results) {
            if result.is_ok() {
                focus.push(MemoryCopy::new(from, bytes, page));
            }
        }
    }

    /// Drops the cached pages that hold any byte of `[from, from + len)`: the next read of them
    /// goes to the target again (what a thread that ran since may have changed).
    pub fn forget(&self, from: u64, len: u64) {
        if len == 0 {
            return;
        }
        let mask = self.page - 1;
        let last = from.saturating_add(len - 1) & !mask;
        let mut pages = self.pages.borrow_mut();
        let mut page = from & !mask;
        while page <= last {
            pages.remove(&page);
            match page.checked_add(self.page) {
                Some(next) => page = next,
                None => break,
            }
        }
    }

    /// Copies what page `base` holds from `off` into `out` (as much as fits), reading the page
    /// first if it is not cached; `None` when the page cannot be read whole.
    fn copy_from_page(&self, base: u64, off: usize, out: &mut [u8]) -> Option<usize> {
        let n = (self.page as usize - off).min(out.len());
        if let Some(p) = self.pages.borrow().get(&base) {
            out[..n].copy_from_slice(&p.as_ref()?[off..off + n]);
            return Some(n);
        }
        let mut buf = vec![0u8; self.page as usize].into_boxed_slice();
        self.reads.set(self.reads.get() + 1);
        let got = self.inner.read_exact_at(base, &mut buf).ok().map(|()| buf);
        if let Some(p) = &got {
            out[..n].copy_from_slice(&p[off..off + n]);
        }
        let mut pages = self.pages.borrow_mut();
        if pages.len() >= MAX_PAGES {
            pages.clear();
        }
        let ok = got.is_some();
        pages.insert(base, got);
        ok.then_some(n)
    }
}

impl ReadMemory for Paged<'_> {
    fn page_size(&self) -> u64 {
        self.inner.page_size()
    }

    fn committed(&self, addr: u64) -> bool {
        self.inner.committed(addr)
    }

    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        if let Some(copy) = self
            .focus
            .borrow()
            .iter()
            .find(|c| c.contains(addr, buf.len()))
        {
            return copy.read_exact_at(addr, buf);
        }
        // Up to 4 pages are served from the cache; a larger read, or one touching a page that
        // cannot be read whole, goes to the underlying memory as asked.
        if buf.len() as u64 <= 4 * self.page {
            let mask = self.page - 1;
            let mut done = 0usize;
            while done < buf.len() {
                let at = addr.wrapping_add(done as u64);
                let off = (at & mask) as usize;
                let Some(n) = self.copy_from_page(at & !mask, off, &mut buf[done..]) else {
                    break;
                };
                done += n;
            }
            if done == buf.len() {
                return Ok(());
            }
        }
        self.reads.set(self.reads.get() + 1);
        self.inner.read_exact_at(addr, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 KiB at 0x10000 whose every byte is its address's low byte.
    fn target() -> MemoryCopy {
        let bytes = (0..0x4000u32).map(|i| i as u8).collect();
        MemoryCopy::new(0x10000, bytes, 4096)
    }

    #[test]
    fn pages_are_read_once_and_focus_reads_its_range_in_one_read() {
        let t = target();
        let p = Paged::new(&t);
        assert_eq!(p.read_u32(0x10004).unwrap(), 0x0706_0504);
        assert_eq!(p.read_u32(0x10008).unwrap(), 0x0b0a_0908);
        assert_eq!(p.reads(), 1, "one page read for both");
        // A range across three pages in one read; reads inside it do not touch the cache.
        p.focus(&[(0x11ff0, 0x13010)]);
        assert_eq!(p.reads(), 2);
        let mut b = [0u8; 0x1020];
        p.read_exact_at(0x11ff0, &mut b).unwrap();
        assert_eq!((b[0], b[0x1f]), (0xf0, 0x0f));
        assert_eq!(p.reads(), 2);
        // Outside it, the cache as before; after it ends, the same addresses through the cache.
        assert_eq!(p.read_u8(0x10001).unwrap(), 1);
        p.focus(&[]);
        assert_eq!(p.read_u8(0x12000).unwrap(), 0);
        assert_eq!(p.reads(), 3);
    }

    #[test]
    fn unreadable_or_oversized_focus_is_left_to_the_cache() {
        let t = target();
        let p = Paged::new(&t);
        // Runs past the end of the target: not copied; reads in it still work through pages.
        p.focus(&[(0x13f00, 0x14100), (0x20000, 0x20000 + (2 << 20)), (5, 1)]);
        assert_eq!(p.read_u8(0x13f01).unwrap(), 1);
        assert!(p.read_u8(0x14000).is_err());
    }

    #[test]
    fn forgotten_pages_are_read_again_and_only_those() {
        let t = target();
        let p = Paged::new(&t);
        for page in 0..4u64 {
            p.read_u8(0x10000 + page * 0x1000).unwrap();
        }
        assert_eq!(p.reads(), 4);
        // A range from the end of the first page into the second: both dropped, no others.
        p.forget(0x10ff8, 0x10);
        for page in 0..4u64 {
            p.read_u8(0x10000 + page * 0x1000).unwrap();
        }
        assert_eq!(p.reads(), 6);
        // Nothing, and a range at the top of the address space, are no-ops without a panic.
        p.forget(0x12000, 0);
        p.forget(u64::MAX - 8, 100);
        p.read_u8(0x12000).unwrap();
        assert_eq!(p.reads(), 6);
    }

    #[test]
    fn a_focus_inside_the_last_keeps_its_copy_and_reads_the_rest_together() {
        let t = target();
        let p = Paged::new(&t);
        p.focus(&[(0x10100, 0x10300), (0x12000, 0x13000)]);
        assert_eq!(p.reads(), 2);
        // Inside the second copy: kept, not read; a new range: read; the first copy: dropped.
        p.focus(&[(0x12800, 0x12900), (0x11000, 0x11010)]);
        assert_eq!(p.reads(), 3);
        let mut b = [0u8; 2];
        p.read_exact_at(0x128fe, &mut b).unwrap();
        p.read_exact_at(0x1100e, &mut b).unwrap();
        assert_eq!(p.reads(), 3, "both served from the copies");
        p.read_exact_at(0x10100, &mut b).unwrap();
        assert_eq!(
            p.reads(),
            4,
            "the dropped copy's bytes come from the page cache"
        );
    }
}
