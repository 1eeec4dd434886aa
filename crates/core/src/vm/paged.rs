//! A page cache over a [`ReadMemory`]: the VM model and the thread walk make many small reads
//! (vmStructs names, `Method`/`ConstMethod`/`Symbol` fields, stack slots) that cluster on few
//! pages, so each page is read once, whole, and later reads are copies. Only valid while the
//! target does not change: a stopped process or a core.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::memory::{MemoryError, ReadMemory};

/// At most this many pages are kept (64 MiB with 4 KiB pages); past it the cache is cleared.
const MAX_PAGES: usize = 16_384;

/// A read-through page cache over `inner`. A page that cannot be read whole is not cached: the
/// read goes to `inner` as asked, so a range at the end of a mapping still reads.
pub struct Paged<'a> {
    inner: &'a dyn ReadMemory,
    page: u64,
    pages: RefCell<HashMap<u64, Option<Rc<[u8]>>>>,
    reads: std::cell::Cell<u64>,
}

impl<'a> Paged<'a> {
    /// A cache over `inner`, with `inner`'s page size (at most 64 KiB, at least 4 KiB).
    pub fn new(inner: &'a dyn ReadMemory) -> Self {
        Paged {
            inner,
            page: inner.page_size().clamp(4096, 65536),
            pages: RefCell::new(HashMap::new()),
            reads: std::cell::Cell::new(0),
        }
    }

    /// How many reads went to the underlying memory (for `-v`).
    pub fn reads(&self) -> u64 {
        self.reads.get()
    }

    fn page_at(&self, base: u64) -> Option<Rc<[u8]>> {
        if let Some(p) = self.pages.borrow().get(&base) {
            return p.clone();
        }
        let mut buf = vec![0u8; self.page as usize];
        self.reads.set(self.reads.get() + 1);
        let got: Option<Rc<[u8]>> = self
            .inner
            .read_exact_at(base, &mut buf)
            .ok()
            .map(|()| Rc::from(buf));
        let mut pages = self.pages.borrow_mut();
        if pages.len() >= MAX_PAGES {
            pages.clear();
        }
        pages.insert(base, got.clone());
        got
    }
}

impl ReadMemory for Paged<'_> {
    fn page_size(&self) -> u64 {
        self.inner.page_size()
    }

    fn read_exact_at(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        // Up to 4 pages are served from the cache; a larger read, or one touching a page that
        // cannot be read whole, goes to the underlying memory as asked.
        if buf.len() as u64 <= 4 * self.page {
            let mask = self.page - 1;
            let mut done = 0usize;
            while done < buf.len() {
                let at = addr.wrapping_add(done as u64);
                let off = (at & mask) as usize;
                let Some(p) = self.page_at(at & !mask) else {
                    break;
                };
                let n = (self.page as usize - off).min(buf.len() - done);
                buf[done..done + n].copy_from_slice(&p[off..off + n]);
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
