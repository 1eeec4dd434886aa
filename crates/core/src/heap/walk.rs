//! One linear object walker over a space, as the Serviceability Agent's `ObjectHeap` walks
//! (`sun/jvm/hotspot/oops/ObjectHeap.java`): from `bottom`, read the object's klass from its
//! header, its size from the klass's layout helper, step over it; jump over the unparsable
//! TLAB tails. The space is read in chunks of up to [`CHUNK`] bytes, not an object at a time.
//!
//! Object layout (`oops/oop.hpp`, `oops/arrayOop.hpp`, `oops/klass.hpp`):
//! * klass: with compact headers (JDK 24+) the mark word's top bits (`markWord::klass_shift`),
//!   else the narrow klass (`u32` at 8, `CompressedKlassPointers` base/shift), else a full
//!   pointer at 8;
//! * array length: a `u32` after the header (8 with compact headers, 12 with compressed class
//!   pointers, 16 without);
//! * size: `Klass::_layout_helper` (`lh`): `lh > 0` an instance of `lh` bytes (bit 0 is the
//!   slow-path bit); `lh < 0` an array, header bytes `(lh >> 16) & 0xff`, log2 of the element
//!   size `lh & 0x3f`: `align(header + (length << log2), ObjectAlignmentInBytes)`;
//!   `java.lang.Class` (InstanceMirrorKlass) has its size in words in the mirror
//!   (`java_lang_Class::_oop_size_offset`); a `jdk.internal.vm.StackChunk`
//!   (InstanceStackChunkKlass) adds its stack (`size` field, words) and a bitmap of one bit per
//!   heap-oop slot.
//!
//! Nothing read is trusted: a zero or misaligned klass, a layout helper that is neither an
//! instance size nor an array descriptor, a size of zero, past the space's top or across a
//! TLAB hole, or an unreadable chunk ends the walk of that space with a [`Note`].

use super::Note;
use super::spaces::{Space, SpaceKind, Tlab};
use crate::error::{Error, VmError};
use crate::memory::{LeBytes, ReadMemory};
use crate::vm::java::JavaReader;
use crate::vm::{Layout, VmModel};

/// The most bytes read from the target at a time.
pub const CHUNK: usize = 1 << 20;
/// The most distinct klasses the walker remembers (a corrupt heap cannot grow it without end).
pub const MAX_KLASSES: usize = 1 << 20;
/// The largest object accepted (64 GiB: a `long[]` of `Integer.MAX_VALUE` is 16 GiB).
pub const MAX_OBJECT: u64 = 1 << 36;

/// `Klass::_lh_instance_slow_path_bit`.
const LH_SLOW_PATH: i32 = 1;

/// What [`Walker::walk`] calls for each object: its address, `Klass*`, size in bytes and (with
/// [`Walker::with_bodies`]) its bytes.
pub type Visit<'v> = dyn FnMut(u64, u64, u64, Option<&[u8]>) + 'v;

/// A map keyed by `Klass*` (the walk looks a klass up per object, where SipHash's cost shows).
pub type KlassMap<V> = crate::memory::AddressMap<V>;

/// A direct-mapped cache of one value per `Klass*`, in front of a [`KlassMap`]: a heap's
/// objects are mostly of a few classes, often interleaved, and one probe here costs less than a
/// hash map's lookup. [`Self::SLOTS`] slots, a `Klass*` in the slot its hash picks; 0 is no
/// klass.
#[derive(Debug, Clone)]
pub struct KlassCache<V: Copy> {
    slots: Box<[(u64, V)]>,
}

impl<V: Copy> KlassCache<V> {
    /// Slots in the cache.
    pub const SLOTS: usize = 256;

    /// An empty cache (`fill` is the unused slots' value).
    pub fn new(fill: V) -> Self {
        KlassCache {
            slots: vec![(0, fill); Self::SLOTS].into_boxed_slice(),
        }
    }

    fn slot(klass: u64) -> usize {
        ((klass >> 3).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize % Self::SLOTS
    }

    /// The value kept for `klass`, if it is in the cache.
    #[inline]
    pub fn get(&self, klass: u64) -> Option<V> {
        let (k, v) = self.slots[Self::slot(klass)];
        (k == klass && klass != 0).then_some(v)
    }

    /// Keeps `value` for `klass` (evicting the klass in its slot).
    pub fn put(&mut self, klass: u64, value: V) {
        self.slots[Self::slot(klass)] = (klass, value);
    }
}

/// [`PACKED_ARRAY`] in a packed sizing: an array.
const PACKED_ARRAY: u64 = 1 << 6;

/// A sizing in one word for the walk's cache: bits 8 and up an instance's bytes or an array's
/// header bytes, bit 6 set for an array, bits 0-5 log2 of its element size. `None` for mirrors
/// and stack chunks, whose size is read from the object.
fn pack(s: Sizing) -> Option<u64> {
    match s {
        // At most 1 MiB (`Sizing::from_layout_helper`).
        Sizing::Instance(b) => Some(b << 8),
        Sizing::Array { header, log2 } => Some(header << 8 | PACKED_ARRAY | u64::from(log2)),
        Sizing::Mirror | Sizing::StackChunk { .. } => None,
    }
}

/// How an object's size follows from its klass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizing {
    /// An instance of a fixed size in bytes (the layout helper).
    Instance(u64),
    /// An array: header bytes and log2 of the element size, from the layout helper.
    Array {
        /// Bytes before the first element.
        header: u64,
        /// log2 of an element's size in bytes.
        log2: u32,
    },
    /// A `java.lang.Class`: its size in words is an `int` field of the mirror.
    Mirror,
    /// A `jdk.internal.vm.StackChunk`: the fixed part in bytes and the offset of its `size`
    /// field (the stack, in words).
    StackChunk {
        /// The instance's fixed bytes (layout helper).
        fixed: u64,
        /// Offset of the `int size` field.
        size_field: u64,
    },
}

impl Sizing {
    /// The sizing a `Klass::_layout_helper` value gives (`oops/klass.hpp`), for an ordinary
    /// class (mirrors and stack chunks are told by name).
    ///
    /// # Errors
    /// A message when `lh` is neither an instance size (positive, word-aligned apart from the
    /// slow-path bit, at most 1 MiB) nor an array descriptor (tag -1 or -2, header 8..=32
    /// bytes, element size 1..=8 bytes).
    pub fn from_layout_helper(lh: i32) -> Result<Sizing, String> {
        if lh > 0 {
            let bytes = (lh & !LH_SLOW_PATH) as u64;
            // 65535 fields of 8 bytes at most: an instance is under 1 MiB.
            if bytes == 0 || !bytes.is_multiple_of(8) || bytes > 1 << 20 {
                return Err(format!("layout helper {lh:#x} is not an instance size"));
            }
            return Ok(Sizing::Instance(bytes));
        }
        let tag = lh >> 30;
        let header = ((lh >> 16) & 0xff) as u64;
        let log2 = (lh & 0x3f) as u32;
        if lh == 0 || !(tag == -1 || tag == -2) || !(8..=32).contains(&header) || log2 > 3 {
            return Err(format!(
                "layout helper {:#x} is neither an instance size nor an array",
                lh as u32
            ));
        }
        Ok(Sizing::Array { header, log2 })
    }
}

/// The sizing of `klass`'s instances (what a [`Walker`]'s resolver gives): from its
/// `Klass::_layout_helper` (at `lh_at`), `java.lang.Class` and `jdk.internal.vm.StackChunk` told
/// by name. A word that is not a klass is refused: its layout helper must be plausible and its
/// name a readable `Symbol` of 1 to 4096 bytes.
///
/// # Errors
/// A message saying why the word is not a usable klass.
pub fn sizing_of(
    mem: &dyn ReadMemory,
    reader: &JavaReader<'_>,
    lh_at: u64,
    klass: u64,
) -> Result<Sizing, String> {
    let lh = mem
        .read_i32(klass.wrapping_add(lh_at))
        .map_err(|e| format!("Klass::_layout_helper unreadable: {e}"))?;
    let sizing = Sizing::from_layout_helper(lh)?;
    // The name must be a readable Symbol: a garbage word rarely points at one.
    let name = reader
        .name_of_klass(klass)
        .map_err(|e| format!("Klass::_name unreadable: {e}"))?;
    if name.is_empty() || name.len() > 4096 {
        return Err(format!("a klass name of {} bytes", name.len()));
    }
    Ok(match (sizing, name.as_str()) {
        (Sizing::Instance(_), "java/lang/Class") => Sizing::Mirror,
        (Sizing::Instance(fixed), "jdk/internal/vm/StackChunk") => Sizing::StackChunk {
            fixed,
            size_field: reader
                .field_in(klass, "size", "I")
                .map_err(|e| format!("StackChunk.size: {e}"))?,
        },
        (s, _) => s,
    })
}

/// How objects are laid out in a target: resolved once from the model.
#[derive(Debug, Clone, Copy)]
pub struct ObjectLayout {
    /// The flags and compressed-pointer parameters.
    pub oops: Layout,
    /// `markWord::klass_shift` with compact headers.
    pub klass_shift: Option<u32>,
    /// `Klass::_layout_helper`.
    pub layout_helper: u64,
    /// `java_lang_Class::_oop_size_offset`'s value: where a mirror keeps its size in words.
    pub mirror_size: Option<u64>,
}

impl ObjectLayout {
    /// Resolves the layout from `vm`, reading `java_lang_Class::_oop_size_offset` through `mem`.
    ///
    /// # Errors
    /// [`Error::Vm`] when `Klass::_layout_helper` or (compact headers)
    /// `markWord::klass_shift` is missing.
    pub fn new(vm: &VmModel, mem: &dyn ReadMemory) -> Result<Self, Error> {
        let klass_shift = if vm.layout.compact_headers {
            let s = vm.long("markWord::klass_shift")?;
            if s >= 64 {
                return Err(VmError::Implausible {
                    what: "markWord::klass_shift".into(),
                    detail: format!("{s} (below 64)"),
                }
                .into());
            }
            Some(s as u32)
        } else {
            None
        };
        let mirror_size = vm
            .static_address("java_lang_Class", "_oop_size_offset")
            .ok()
            .and_then(|a| mem.read_u32(a).ok())
            .map(u64::from);
        Ok(ObjectLayout {
            oops: vm.layout,
            klass_shift,
            layout_helper: vm.offset("Klass", "_layout_helper")?,
            mirror_size,
        })
    }

    fn align(&self) -> u64 {
        u64::from(self.oops.object_alignment.max(8))
    }

    /// The bytes of the header needed to find the klass and an array's length.
    pub fn header_len(&self) -> u64 {
        self.oops.array_length_offset() + 4
    }

    /// The `Klass*` in the header `h` (at least [`Self::header_len`] bytes, or fewer at a
    /// space's end: then `None` unless the klass is within them).
    pub fn klass(&self, h: LeBytes<'_>) -> Option<u64> {
        if let Some(shift) = self.klass_shift {
            let mark = h.u64_at(0)?;
            return Some(self.oops.narrow_klass.decode((mark >> shift) as u32));
        }
        if self.oops.compressed_class_pointers {
            Some(self.oops.narrow_klass.decode(h.u32_at(8)?))
        } else {
            h.u64_at(8)
        }
    }
}

/// Reads a target's memory in chunks of up to [`CHUNK`] bytes for a reader that goes up
/// through it (the objects of a space in address order), counting the reads in
/// [`WalkStats::reads`] and [`WalkStats::bytes_read`].
#[derive(Debug, Default)]
pub struct Chunks {
    buf: Vec<u8>,
    at: u64,
    len: usize,
}

impl Chunks {
    /// The bytes `[at, at + want)` (`want` at most [`CHUNK`]), from the chunk in hand or from
    /// a new one read from `at` up to `limit` (at most [`CHUNK`] bytes; the exact range when
    /// that read fails). `None` when those bytes cannot be read.
    pub fn get(
        &mut self,
        mem: &dyn ReadMemory,
        stats: &mut WalkStats,
        at: u64,
        want: usize,
        limit: u64,
    ) -> Option<&[u8]> {
        if !self.load(mem, stats, at, want, limit) {
            return None;
        }
        let off = (at - self.at) as usize;
        Some(&self.buf[off..off + want])
    }

    /// As [`Self::get`], or when those bytes cannot be read the first `least` of them.
    pub fn get_or_least(
        &mut self,
        mem: &dyn ReadMemory,
        stats: &mut WalkStats,
        at: u64,
        want: usize,
        least: usize,
        limit: u64,
    ) -> Option<&[u8]> {
        let n = if self.load(mem, stats, at, want, limit) {
            want
        } else if least < want && self.load(mem, stats, at, least, limit) {
            least
        } else {
            return None;
        };
        let off = (at - self.at) as usize;
        Some(&self.buf[off..off + n])
    }

    /// Whether `[at, at + want)` is in the chunk in hand, after reading one if it was not.
    fn load(
        &mut self,
        mem: &dyn ReadMemory,
        stats: &mut WalkStats,
        at: u64,
        want: usize,
        limit: u64,
    ) -> bool {
        if want > CHUNK {
            return false;
        }
        let Some(end) = at.checked_add(want as u64) else {
            return false;
        };
        let inside = at >= self.at && end <= self.at + self.len as u64;
        if !inside {
            let n = (limit.saturating_sub(at).min(CHUNK as u64) as usize).max(want);
            if self.buf.len() < n {
                self.buf.resize(n, 0);
            }
            stats.reads += 1;
            stats.bytes_read += n as u64;
            self.len = 0;
            if mem.read_exact_at(at, &mut self.buf[..n]).is_err() {
                if n == want {
                    return false;
                }
                stats.reads += 1;
                stats.bytes_read += want as u64;
                if mem.read_exact_at(at, &mut self.buf[..want]).is_err() {
                    return false;
                }
                self.at = at;
                self.len = want;
            } else {
                self.at = at;
                self.len = n;
            }
        }
        true
    }
}

/// What a walk did, for `-v` and the speed figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WalkStats {
    /// Objects visited.
    pub objects: u64,
    /// Bytes of objects visited.
    pub bytes: u64,
    /// Bytes skipped as TLAB tails.
    pub tlab_bytes: u64,
    /// Objects whose header was not written yet (a thread held between bumping its TLAB's top
    /// and storing the klass): the rest of that TLAB up to its top was skipped.
    pub torn: u64,
    /// Objects of a collection set already copied elsewhere (forwarded), stepped over.
    pub forwarded: u64,
    /// Bytes of CMS free chunks stepped over ([`SpaceKind::FreeList`]).
    pub free_bytes: u64,
    /// Reads of the target's memory.
    pub reads: u64,
    /// Bytes read from the target.
    pub bytes_read: u64,
}

impl WalkStats {
    /// Adds another walk's figures to these (two threads' walks of one heap).
    pub fn add(&mut self, o: &WalkStats) {
        self.objects += o.objects;
        self.bytes += o.bytes;
        self.tlab_bytes += o.tlab_bytes;
        self.torn += o.torn;
        self.forwarded += o.forwarded;
        self.free_bytes += o.free_bytes;
        self.reads += o.reads;
        self.bytes_read += o.bytes_read;
    }
}

/// The least bytes of spaces worth a second walking thread.
pub const PARALLEL_BYTES: u64 = 1 << 20;

/// Runs `walk` over `spaces` (sorted by address) in two halves of about equal bytes, the upper
/// on a second thread when the host has two cores or more and the spaces hold at least
/// [`PARALLEL_BYTES`] (each walk its own reader, buffer and counts); else over all of them here.
/// The results come in address order: one, or the lower half's then the upper's. A second
/// thread that cannot start, or panics, has its half walked here.
pub fn walk_in_halves<T: Send>(spaces: &[Space], walk: impl Fn(&[Space]) -> T + Sync) -> Vec<T> {
    let total: u64 = spaces.iter().map(|s| s.top.saturating_sub(s.bottom)).sum();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if total < PARALLEL_BYTES || cores < 2 || spaces.len() < 2 {
        return vec![walk(spaces)];
    }
    let mut sum = 0u64;
    let split = spaces
        .iter()
        .position(|s| {
            sum += s.top.saturating_sub(s.bottom);
            sum >= total / 2
        })
        .map_or(spaces.len(), |i| i + 1);
    let (low, high) = spaces.split_at(split);
    if high.is_empty() {
        return vec![walk(low)];
    }
    let walk = &walk;
    let (lower, upper) = std::thread::scope(|scope| {
        let other = std::thread::Builder::new()
            .name("heap-walk".into())
            .spawn_scoped(scope, move || walk(high))
            .ok();
        let lower = walk(low);
        (lower, other.and_then(|h| h.join().ok()))
    });
    let upper = upper.unwrap_or_else(|| walk(high));
    vec![lower, upper]
}

/// Resolves a klass the walker has not met: its [`Sizing`], or why it is not a klass.
pub type Resolve<'a> = dyn FnMut(u64) -> Result<Sizing, String> + 'a;

/// Walks spaces of one heap, keeping what it learnt of each klass.
pub struct Walker<'a> {
    mem: &'a dyn ReadMemory,
    layout: ObjectLayout,
    resolve: Box<Resolve<'a>>,
    sizings: KlassMap<Result<Sizing, String>>,
    /// The sizings of the klasses met lately, packed ([`pack`]); mirrors and stack chunks are
    /// not kept here.
    recent: KlassCache<u64>,
    buf: Vec<u8>,
    buf_at: u64,
    buf_len: usize,
    /// What the walks so far did.
    pub stats: WalkStats,
    /// Whether the visitor gets the objects' bytes.
    bodies: bool,
}

/// A chunk read failed or a header was cut short.
struct Short(String);

impl<'a> Walker<'a> {
    /// A walker reading `mem` laid out as `layout`; `resolve` tells a new klass's sizing (and
    /// refuses a word that is not a klass).
    pub fn new(mem: &'a dyn ReadMemory, layout: ObjectLayout, resolve: Box<Resolve<'a>>) -> Self {
        Walker {
            mem,
            layout,
            resolve,
            sizings: KlassMap::default(),
            recent: KlassCache::new(0),
            buf: Vec::new(),
            buf_at: 0,
            buf_len: 0,
            stats: WalkStats::default(),
            bodies: false,
        }
    }

    /// A walker reading `mem` laid out as `layout`, a new klass sized by [`sizing_of`] through
    /// `java` (which refuses a word that is not a klass).
    pub fn sized_by(
        mem: &'a dyn ReadMemory,
        java: &'a JavaReader<'_>,
        layout: ObjectLayout,
    ) -> Self {
        let lh_at = layout.layout_helper;
        Self::new(
            mem,
            layout,
            Box::new(move |klass| sizing_of(mem, java, lh_at, klass)),
        )
    }

    /// Makes [`Self::walk`] hand each object's bytes to its visitor (when the object is at
    /// most [`CHUNK`] bytes; `None` for a larger one, which the visitor reads itself).
    #[must_use]
    pub fn with_bodies(mut self) -> Self {
        self.bodies = true;
        self
    }

    /// The bytes `[at, at + want)`, or fewer when `limit` comes first, from the chunk buffer;
    /// reads the next chunk from `at` when they are not in it.
    fn bytes(&mut self, at: u64, want: u64, limit: u64) -> Result<&[u8], Short> {
        let want = want.min(limit.saturating_sub(at)) as usize;
        let inside = at >= self.buf_at
            && at
                .checked_add(want as u64)
                .is_some_and(|e| e <= self.buf_at + self.buf_len as u64);
        if !inside {
            let n = (limit.saturating_sub(at)).min(CHUNK as u64) as usize;
            if self.buf.len() < n.max(want) {
                self.buf.resize(n.max(want).min(CHUNK), 0);
            }
            let n = n.max(want).min(self.buf.len());
            self.stats.reads += 1;
            self.stats.bytes_read += n as u64;
            if let Err(e) = self.mem.read_exact_at(at, &mut self.buf[..n]) {
                self.buf_len = 0;
                return Err(Short(format!("unreadable: {e}")));
            }
            self.buf_at = at;
            self.buf_len = n;
        }
        let off = (at - self.buf_at) as usize;
        Ok(&self.buf[off..off + want])
    }

    fn sizing(&mut self, klass: u64) -> Result<Sizing, String> {
        if let Some(s) = self.sizings.get(&klass) {
            if let Some(packed) = s.as_ref().ok().and_then(|s| pack(*s)) {
                self.recent.put(klass, packed);
            }
            return s.clone();
        }
        let s = if klass == 0 || !klass.is_multiple_of(8) {
            Err(format!("{klass:#x} is not a klass pointer"))
        } else {
            (self.resolve)(klass)
        };
        if self.sizings.len() < MAX_KLASSES {
            self.sizings.insert(klass, s.clone());
        }
        s
    }

    /// The size in bytes of the object at `at` of klass `klass` (`length`: the array length
    /// word of its header, when read already).
    fn size_of(
        &mut self,
        at: u64,
        klass: u64,
        limit: u64,
        length: Option<i32>,
    ) -> Result<u64, String> {
        let align = self.layout.align();
        // The common case: a klass met lately, an instance or an array whose length is in
        // the header read (one probe, no branch on the kind).
        if let Some(packed) = self.recent.get(klass) {
            let array = packed & PACKED_ARRAY != 0;
            let len = match (array, length) {
                (false, _) => Some(0),
                (true, Some(l)) => u64::try_from(l).ok(),
                (true, None) => None,
            };
            if let Some(len) = len
                && align.is_power_of_two()
            {
                let raw = (packed >> 8) + (len << (packed & 0x3f));
                let size = (raw + (align - 1)) & !(align - 1);
                if size != 0 && size <= MAX_OBJECT {
                    return Ok(size);
                }
            }
        }
        let sizing = self.sizing(klass)?;
        let raw = match sizing {
            Sizing::Instance(b) => b,
            Sizing::Array { header, log2 } => {
                let len = match length {
                    Some(l) => l,
                    None => {
                        let off = self.layout.oops.array_length_offset();
                        let h = self.bytes(at, off + 4, limit).map_err(|s| s.0)?;
                        LeBytes::new(h)
                            .i32_at(off as usize)
                            .ok_or("an array header cut short by the space's top")?
                    }
                };
                if len < 0 {
                    return Err(format!("an array of length {len}"));
                }
                header + ((len as u64) << log2)
            }
            Sizing::Mirror => {
                let off = self
                    .layout
                    .mirror_size
                    .ok_or("java_lang_Class::_oop_size_offset is not in vmStructs")?;
                let words = self.int_at(at, off, limit)?;
                (words as u64).saturating_mul(8)
            }
            Sizing::StackChunk { fixed, size_field } => {
                let stack = self.int_at(at, size_field, limit)? as u64;
                // One bit per heap-oop slot of the stack, rounded up to words.
                let per_word = if self.layout.oops.compressed_oops {
                    2
                } else {
                    1
                };
                let bitmap = (stack * per_word).div_ceil(64);
                fixed + (stack + bitmap) * 8
            }
        };
        let size = if align.is_power_of_two() {
            raw.saturating_add(align - 1) & !(align - 1)
        } else {
            raw.div_ceil(align) * align
        };
        if size == 0 || size > MAX_OBJECT {
            return Err(format!("an object of {size} bytes"));
        }
        Ok(size)
    }

    fn int_at(&mut self, at: u64, off: u64, limit: u64) -> Result<i32, String> {
        let h = self
            .bytes(at.wrapping_add(off), 4, limit)
            .map_err(|s| s.0)?;
        let v = LeBytes::new(h)
            .i32_at(0)
            .ok_or("a size field cut short by the space's top")?;
        if v < 0 {
            return Err(format!("a size field of {v}"));
        }
        Ok(v)
    }

    /// Walks `space`, calling `visit(address, klass, size, bytes)` for each object (`bytes`
    /// only [`Self::with_bodies`]), jumping over the
    /// unused tails `[top, end)` of the `tlabs` (sorted by top) it meets. An object that cannot
    /// be read inside a TLAB's `[start, top)` is one being allocated: the walk goes on at that
    /// TLAB's top ([`WalkStats::torn`]). Returns the note of why the walk stopped early, if it
    /// did.
    pub fn walk(&mut self, space: &Space, tlabs: &[Tlab], visit: &mut Visit<'_>) -> Option<Note> {
        let holes: Vec<(u64, u64)> = tlabs.iter().map(|t| (t.top, t.end)).collect();
        let holes = holes.as_slice();
        let in_tlab = |at: u64| {
            tlabs
                .iter()
                .find(|t| t.start <= at && at < t.top)
                .map(|t| t.top)
        };
        let note = |at: u64, reason: String| Note {
            space: space.name.clone(),
            at,
            skipped: space.top.saturating_sub(at),
            reason,
        };
        let header = self.layout.header_len();
        let layout = self.layout;
        if space.kind == SpaceKind::HumongousStart {
            let at = space.bottom;
            let limit = at.saturating_add(header);
            let klass = match self.bytes(at, header, limit) {
                Ok(h) => layout.klass(LeBytes::new(h)),
                Err(s) => return Some(note(at, s.0)),
            };
            let Some(klass) = klass else {
                return Some(note(at, "a header cut short".into()));
            };
            // The object may run on past this region (its continues-humongous regions).
            let limit = at.saturating_add(MAX_OBJECT);
            return match self.size_of(at, klass, limit, None) {
                Ok(size) => {
                    self.stats.objects += 1;
                    self.stats.bytes += size;
                    let body = if self.bodies && size <= CHUNK as u64 {
                        self.bytes(at, size, at.saturating_add(size)).ok()
                    } else {
                        None
                    };
                    visit(at, klass, size, body);
                    None
                }
                Err(r) => Some(note(at, r)),
            };
        }
        let first = holes.partition_point(|h| h.1 <= space.bottom);
        let mut hole = first;
        let mut at = space.bottom;
        while at < space.top {
            while hole < holes.len() && holes[hole].1 <= at {
                hole += 1;
            }
            if let Some(&(s, e)) = holes.get(hole)
                && s <= at
            {
                self.stats.tlab_bytes += e.min(space.top) - at;
                at = e;
                continue;
            }
            // A CMS free chunk: stepped over by its own size.
            if let SpaceKind::FreeList(chunks) = space.kind {
                let (word0, word1) = match self.bytes(at, 16, space.top) {
                    Ok(h) => {
                        let h = LeBytes::new(h);
                        (h.u64_at(0).unwrap_or(0), h.u64_at(8).unwrap_or(0))
                    }
                    Err(s) => return Some(note(at, s.0)),
                };
                if let Some(bytes) = chunks.free_chunk(word0, word1) {
                    if bytes < 16 || at.saturating_add(bytes) > space.top {
                        return Some(note(
                            at,
                            format!("a free chunk of {bytes} bytes (past the space's end?)"),
                        ));
                    }
                    self.stats.free_bytes += bytes;
                    at += bytes;
                    continue;
                }
            }
            let next_hole = holes.get(hole).map_or(u64::MAX, |h| h.0);
            let length_at = layout.oops.array_length_offset() as usize;
            let (klass, length) = match self.bytes(at, header, space.top) {
                Ok(h) => {
                    let h = LeBytes::new(h);
                    (layout.klass(h), h.i32_at(length_at))
                }
                Err(s) => return Some(note(at, s.0)),
            };
            let Some(mut klass) = klass else {
                return Some(note(
                    at,
                    "an object header cut short by the space's top".into(),
                ));
            };
            // In a collection set being evacuated, an object whose mark word is forwarded
            // (lock bits 0b11) has its live copy elsewhere: stepped over, not counted. With
            // compact headers its klass is read from that copy.
            let mut forwarded = false;
            if space.kind == SpaceKind::CollectionSet {
                let mark = match self.bytes(at, 8, space.top) {
                    Ok(h) => LeBytes::new(h).u64_at(0).unwrap_or(0),
                    Err(s) => return Some(note(at, s.0)),
                };
                if mark & 3 == 3 {
                    forwarded = true;
                    if layout.klass_shift.is_some() {
                        let copy = mark & !3;
                        let limit = copy.saturating_add(header);
                        match self.bytes(copy, header, limit) {
                            Ok(h) => match layout.klass(LeBytes::new(h)) {
                                Some(k) => klass = k,
                                None => {
                                    return Some(note(at, "a forwardee's header cut short".into()));
                                }
                            },
                            Err(s) => {
                                return Some(note(
                                    at,
                                    format!("the forwardee at {copy:#x}: {}", s.0),
                                ));
                            }
                        }
                    }
                }
            }
            let size = match self.size_of(at, klass, space.top, length) {
                Ok(s) => s,
                Err(r) => match in_tlab(at) {
                    Some(top) => {
                        self.stats.torn += 1;
                        at = top;
                        continue;
                    }
                    None => return Some(note(at, format!("klass {klass:#x}: {r}"))),
                },
            };
            let end = at.saturating_add(size);
            if end > space.top {
                return Some(note(
                    at,
                    format!("an object of {size} bytes runs past the space's top"),
                ));
            }
            if end > next_hole {
                return Some(note(
                    at,
                    format!(
                        "an object of {size} bytes runs into a TLAB's unused part at {next_hole:#x}"
                    ),
                ));
            }
            if forwarded {
                self.stats.forwarded += 1;
            } else {
                self.stats.objects += 1;
                self.stats.bytes += size;
                let body = if self.bodies && size <= CHUNK as u64 {
                    match self.bytes(at, size, space.top) {
                        Ok(b) => Some(b),
                        Err(s) => return Some(note(at, s.0)),
                    }
                } else {
                    None
                };
                visit(at, klass, size, body);
            }
            at = match space.kind {
                SpaceKind::Aligned(a) if a.is_power_of_two() => {
                    end.saturating_add(a - 1) & !(a - 1)
                }
                // A block is at least the smallest free chunk
                // (`CompactibleFreeListSpace::adjustObjectSize`).
                SpaceKind::FreeList(chunks) => at.saturating_add(size.max(chunks.min_block)),
                _ => end,
            };
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::spaces::FreeChunks;
    use crate::memory::MemoryCopy;
    use crate::vm::Narrow;

    const BASE: u64 = 0x8_0000_0000;
    const INSTANCE: u64 = 0x1000;
    const BYTES: u64 = 0x2000; // byte[]
    const LONGS: u64 = 0x3000; // long[]

    fn layout() -> ObjectLayout {
        ObjectLayout {
            oops: Layout {
                compressed_oops: true,
                compressed_class_pointers: true,
                object_alignment: 8,
                narrow_klass: Narrow { base: 0, shift: 0 },
                ..Layout::default()
            },
            klass_shift: None,
            layout_helper: 8,
            mirror_size: None,
        }
    }

    fn resolve(k: u64) -> Result<Sizing, String> {
        // HotSpot's values: an instance of 24 bytes; byte[] (tag -1, header 16, log2 0);
        // long[] (header 16, log2 3).
        let lh = match k {
            INSTANCE => 24,
            BYTES => (0xC0u32 << 24 | 16 << 16 | 8 << 8) as i32,
            LONGS => (0xC0u32 << 24 | 16 << 16 | 11 << 8 | 3) as i32,
            _ => return Err(format!("{k:#x} is not a klass")),
        };
        Sizing::from_layout_helper(lh)
    }

    /// Writes an object header (mark 1, narrow klass, array length) at `off`.
    fn object(bytes: &mut [u8], off: usize, klass: u32, len: Option<u32>) {
        bytes[off..off + 8].copy_from_slice(&1u64.to_le_bytes());
        bytes[off + 8..off + 12].copy_from_slice(&klass.to_le_bytes());
        if let Some(l) = len {
            bytes[off + 12..off + 16].copy_from_slice(&l.to_le_bytes());
        }
    }

    fn space(top: u64) -> Space {
        Space {
            name: "eden".into(),
            bottom: BASE,
            top: BASE + top,
            kind: SpaceKind::Contiguous,
        }
    }

    fn walk(mem: &MemoryCopy, top: u64, tlabs: &[Tlab]) -> (Vec<(u64, u64, u64)>, Option<Note>) {
        let mut w = Walker::new(mem, layout(), Box::new(resolve));
        let mut seen = Vec::new();
        let note = w.walk(&space(top), tlabs, &mut |a, k, s, _| {
            seen.push((a - BASE, k, s))
        });
        (seen, note)
    }

    fn tlab(start: u64, top: u64, end: u64) -> Tlab {
        Tlab {
            start: BASE + start,
            top: BASE + top,
            end: BASE + end,
        }
    }

    /// A CMS free-list space: an instance (24 bytes), an empty byte[] (16 bytes, a block of
    /// the 24-byte minimum), a free chunk of 40 bytes marked in its mark word (compressed
    /// oops: neutral, bit 7 set, the size in words from bit 8), another instance, and the
    /// space's end as one free chunk marked the other way (`_prev`'s low bit, `_size` in words).
    #[test]
    fn a_free_list_space_steps_over_free_chunks_and_small_blocks() {
        let mut bytes = vec![0u8; 160];
        object(&mut bytes, 0, INSTANCE as u32, None);
        object(&mut bytes, 24, BYTES as u32, Some(0));
        let mark = 1u64 | 1 << 7 | 5 << 8;
        bytes[48..56].copy_from_slice(&mark.to_le_bytes());
        object(&mut bytes, 88, INSTANCE as u32, None);
        let mem = MemoryCopy::new(BASE, bytes.clone(), 4096);
        let chunks = FreeChunks {
            in_mark: Some((7, 8)),
            min_block: 24,
        };
        let free_list = |top: u64, chunks: FreeChunks| Space {
            kind: SpaceKind::FreeList(chunks),
            ..space(top)
        };
        let mut w = Walker::new(&mem, layout(), Box::new(resolve));
        let mut seen = Vec::new();
        let note = w.walk(&free_list(112, chunks), &[], &mut |a, k, s, _| {
            seen.push((a - BASE, k, s))
        });
        assert_eq!(note, None);
        assert_eq!(
            seen,
            [(0, INSTANCE, 24), (24, BYTES, 16), (88, INSTANCE, 24)]
        );
        assert_eq!(w.stats.free_bytes, 40);
        // Without compressed oops: `_size` (words) first, `_prev` with its low bit set.
        bytes[112..120].copy_from_slice(&6u64.to_le_bytes());
        bytes[120..128].copy_from_slice(&1u64.to_le_bytes());
        let mem = MemoryCopy::new(BASE, bytes, 4096);
        let chunks = FreeChunks {
            in_mark: None,
            min_block: 24,
        };
        assert_eq!(chunks.free_chunk(6, 1), Some(48));
        assert_eq!(chunks.free_chunk(6, 0x1000), None);
        let mut w = Walker::new(&mem, layout(), Box::new(resolve));
        let mut n = 0;
        // Walked from the instance at 88: its block, then the free chunk to the end.
        let tail = Space {
            bottom: BASE + 88,
            ..free_list(160, chunks)
        };
        assert_eq!(w.walk(&tail, &[], &mut |_, _, _, _| n += 1), None);
        assert_eq!((n, w.stats.free_bytes), (1, 48));
        // A free chunk said to run past the end is a note, not a step out of the space.
        let mut w = Walker::new(&mem, layout(), Box::new(resolve));
        let short = Space {
            bottom: BASE + 88,
            ..free_list(150, chunks)
        };
        let note = w.walk(&short, &[], &mut |_, _, _, _| {}).expect("a note");
        assert!(note.reason.contains("free chunk of 48 bytes"), "{note:?}");
    }

    #[test]
    fn layout_helper_sizes() {
        assert_eq!(Sizing::from_layout_helper(24), Ok(Sizing::Instance(24)));
        // The slow-path bit is not part of the size.
        assert_eq!(Sizing::from_layout_helper(25), Ok(Sizing::Instance(24)));
        assert_eq!(
            resolve(LONGS),
            Ok(Sizing::Array {
                header: 16,
                log2: 3
            })
        );
        // Object arrays (tag -2): 0x80 in the top byte.
        assert_eq!(
            Sizing::from_layout_helper((0x80u32 << 24 | 16 << 16 | 12 << 8 | 2) as i32),
            Ok(Sizing::Array {
                header: 16,
                log2: 2
            })
        );
        for bad in [
            0,
            12,
            (0x40u32 << 24) as i32,
            (0xC0u32 << 24 | 2 << 16) as i32,
        ] {
            assert!(Sizing::from_layout_helper(bad).is_err(), "{bad:#x}");
        }
    }

    #[test]
    fn walks_instances_and_arrays_and_skips_a_tlab_tail() {
        let mut bytes = vec![0u8; 256];
        object(&mut bytes, 0, INSTANCE as u32, None); // 24 bytes
        object(&mut bytes, 24, BYTES as u32, Some(5)); // 16 + 5 -> 24
        object(&mut bytes, 48, LONGS as u32, Some(2)); // 16 + 16 = 32
        // 80..128: a TLAB's unused part (garbage).
        bytes[80..128].fill(0xAB);
        object(&mut bytes, 128, BYTES as u32, Some(0)); // 16
        let mem = MemoryCopy::new(BASE, bytes, 4096);
        let (seen, note) = walk(&mem, 144, &[tlab(24, 80, 128)]);
        assert_eq!(note, None);
        assert_eq!(
            seen,
            vec![
                (0, INSTANCE, 24),
                (24, BYTES, 24),
                (48, LONGS, 32),
                (128, BYTES, 16)
            ]
        );
    }

    #[test]
    fn an_object_being_allocated_in_a_tlab_skips_to_its_top() {
        let mut bytes = vec![0u8; 128];
        object(&mut bytes, 0, INSTANCE as u32, None);
        // 24..48: a header not written yet (klass 0), the TLAB's top at 48, its tail to 64.
        object(&mut bytes, 64, INSTANCE as u32, None);
        let mem = MemoryCopy::new(BASE, bytes, 4096);
        let mut w = Walker::new(&mem, layout(), Box::new(resolve));
        let mut seen = Vec::new();
        let note = w.walk(&space(88), &[tlab(0, 48, 64)], &mut |a, _, _, _| {
            seen.push(a - BASE)
        });
        assert_eq!((seen, note), (vec![0, 64], None));
        assert_eq!((w.stats.torn, w.stats.tlab_bytes), (1, 16));
    }

    #[test]
    fn a_corrupt_klass_is_a_note_not_a_panic() {
        let mut bytes = vec![0u8; 128];
        object(&mut bytes, 0, INSTANCE as u32, None);
        object(&mut bytes, 24, 0xdead_bee8, None);
        let mem = MemoryCopy::new(BASE, bytes, 4096);
        let (seen, note) = walk(&mem, 128, &[]);
        assert_eq!(seen, vec![(0, INSTANCE, 24)]);
        let note = note.expect("a note");
        assert_eq!((note.at, note.skipped), (BASE + 24, 104));
        assert!(note.reason.contains("not a klass"), "{note}");
        // A zero klass (an object whose header is not written yet) and a huge array.
        let mut bytes = vec![0u8; 64];
        object(&mut bytes, 0, BYTES as u32, Some(0x7fff_ffff));
        let mem = MemoryCopy::new(BASE, bytes, 4096);
        let (seen, note) = walk(&mem, 64, &[]);
        assert!(seen.is_empty());
        assert!(
            note.expect("a note")
                .reason
                .contains("past the space's top")
        );
        let mem = MemoryCopy::new(BASE, vec![0u8; 64], 4096);
        let (_, note) = walk(&mem, 64, &[]);
        assert!(note.expect("a note").reason.contains("not a klass pointer"));
    }

    #[test]
    fn unreadable_memory_and_a_short_header_end_the_space() {
        let mut bytes = vec![0u8; 40];
        object(&mut bytes, 0, INSTANCE as u32, None);
        let mem = MemoryCopy::new(BASE, bytes, 4096);
        // The space claims more than is mapped: the chunk read fails.
        let (seen, note) = walk(&mem, 4096, &[]);
        assert!(seen.is_empty());
        assert!(note.expect("a note").reason.contains("unreadable"));
        // A top 8 bytes past the last object: no room for a header.
        let (seen, note) = walk(&mem, 32, &[]);
        assert_eq!(seen, vec![(0, INSTANCE, 24)]);
        assert!(note.expect("a note").reason.contains("cut short"));
    }

    #[test]
    fn reads_in_chunks_not_per_object() {
        // 100 000 objects of 16 bytes: a few 1 MiB reads.
        let n = 100_000usize;
        let mut bytes = vec![0u8; n * 16];
        for i in 0..n {
            object(&mut bytes, i * 16, BYTES as u32, Some(0));
        }
        let mem = MemoryCopy::new(BASE, bytes, 4096);
        let mut w = Walker::new(&mem, layout(), Box::new(resolve));
        let mut count = 0;
        let note = w.walk(&space((n * 16) as u64), &[], &mut |_, _, _, _| count += 1);
        assert_eq!((count, note), (n, None));
        assert!(w.stats.reads <= 3, "{:?}", w.stats);
    }
}
