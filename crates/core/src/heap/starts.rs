//! Where objects start: one bit per 8 bytes over the walked spaces, set by a first walk of the
//! heap, so that a heap dump writes a reference only when it points at an object the dump
//! holds. A dead object's field may still hold the address of an object moved or freed since,
//! in memory reused since: inside a walked space (a G1 region or a ZGC page allocated again)
//! but where no object starts now. Only knowing every object start tells such a reference from
//! a good one.
//!
//! Memory: `(top - bottom) / 64` bytes per space (a humongous object's space one bit), bounded
//! by [`MAX_BYTES`]; a heap whose spaces need more gets no map ([`Starts::new`] says so).

use std::cell::Cell;

use super::spaces::{Space, SpaceKind};

/// Bytes a bit stands for: the smallest object alignment (`MinObjAlignmentInBytes`, 8; with
/// compact object headers an object may be a single word).
pub const GRANULE: u64 = 8;

/// The most memory the map may take: 512 MiB, enough for 32 GiB of walked spaces.
pub const MAX_BYTES: u64 = 512 << 20;

/// A walked space as the map covers it.
#[derive(Debug, Clone, Copy)]
struct Span {
    /// The space's bottom.
    bottom: u64,
    /// The end of what may hold an object start (exclusive).
    end: u64,
    /// The bit of `bottom`.
    first: u64,
    /// A collection set whose objects may have been copied out (Shenandoah's).
    collection_set: bool,
}

/// The object starts of a heap's walked spaces (see the module documentation): spans sorted by
/// address, each with its bits in one shared bitmap.
#[derive(Debug, Clone)]
pub struct Starts {
    spans: Vec<Span>,
    bits: Vec<u64>,
    /// The span the last lookup found (references cluster).
    last: Cell<usize>,
    /// Bits set.
    count: u64,
}

/// Where an address lies, for [`Starts::find`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// An object starts there.
    Start,
    /// Inside a walked space but not at an object start; `true` when that space is a
    /// collection set (an object there may have been copied out: its mark word says where).
    Inside(bool),
    /// Outside every walked space.
    Outside,
}

impl Starts {
    /// An empty map over `spaces` (sorted by bottom, not overlapping). A
    /// [`SpaceKind::HumongousStart`] space gets one bit, its bottom: its one object may run on
    /// past its top.
    ///
    /// # Errors
    /// The bytes the map would take, when that is more than [`MAX_BYTES`] (or the spaces are not
    /// sorted).
    pub fn new(spaces: &[Space]) -> Result<Self, u64> {
        let (spans, bits) = Self::spans(spaces)?;
        Ok(Starts {
            spans,
            bits: vec![0; bits.div_ceil(64) as usize],
            last: Cell::new(0),
            count: 0,
        })
    }

    /// The bytes a map of `spaces` takes.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn bytes_for(spaces: &[Space]) -> Result<u64, u64> {
        Self::spans(spaces).map(|(_, bits)| bits.div_ceil(64) * 8)
    }

    /// The spans of `spaces` and the bits they take.
    fn spans(spaces: &[Space]) -> Result<(Vec<Span>, u64), u64> {
        let mut spans = Vec::with_capacity(spaces.len());
        let mut bits = 0u64;
        let mut prev_end = 0u64;
        for s in spaces {
            let end = if s.kind == SpaceKind::HumongousStart {
                s.bottom.saturating_add(GRANULE)
            } else {
                s.top
            };
            if s.bottom < prev_end {
                return Err(u64::MAX);
            }
            prev_end = end;
            let n = end.saturating_sub(s.bottom).div_ceil(GRANULE);
            spans.push(Span {
                bottom: s.bottom,
                end,
                first: bits,
                collection_set: s.kind == SpaceKind::CollectionSet,
            });
            bits = bits.saturating_add(n);
        }
        let bytes = bits.div_ceil(64).saturating_mul(8);
        if bytes > MAX_BYTES {
            return Err(bytes);
        }
        Ok((spans, bits))
    }

    /// The bytes the map takes.
    pub fn bytes(&self) -> u64 {
        self.bits.len() as u64 * 8
    }

    /// How many starts are set.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The span holding `a` and its bit, if any.
    #[inline]
    fn locate(&self, a: u64) -> Option<(&Span, Option<u64>)> {
        let mut last = self.last.get();
        let hit = self
            .spans
            .get(last)
            .is_some_and(|s| s.bottom <= a && a < s.end);
        if !hit {
            last = self.spans.partition_point(|s| s.end <= a);
            if self.spans.get(last).is_none_or(|s| s.bottom > a) {
                return None;
            }
            self.last.set(last);
        }
        let s = &self.spans[last];
        let off = a - s.bottom;
        let bit = off.is_multiple_of(GRANULE).then(|| s.first + off / GRANULE);
        Some((s, bit))
    }

    /// Records an object at `a`; `false` when `a` is outside every span or misaligned.
    pub fn set(&mut self, a: u64) -> bool {
        let Some((_, Some(bit))) = self.locate(a) else {
            return false;
        };
        self.set_bit(bit);
        true
    }

    fn set_bit(&mut self, bit: u64) {
        let word = &mut self.bits[(bit / 64) as usize];
        let mask = 1u64 << (bit % 64);
        if *word & mask == 0 {
            *word |= mask;
            self.count += 1;
        }
    }

    /// Records an object at `a` in span `span` (the index of its space in the spaces the map
    /// was made of); `false` when `a` is not in that span or misaligned.
    pub fn set_in(&mut self, span: usize, a: u64) -> bool {
        let Some(s) = self.spans.get(span) else {
            return false;
        };
        let off = a.wrapping_sub(s.bottom);
        if a < s.bottom || a >= s.end || !off.is_multiple_of(GRANULE) {
            return false;
        }
        let bit = s.first + off / GRANULE;
        self.set_bit(bit);
        true
    }

    /// Appends `other`, a map of spaces above this one's, its spans after this one's (their
    /// indices shifted by this map's span count).
    ///
    /// # Errors
    /// `other` back, when its first space is not above this map's last.
    pub fn append(&mut self, other: Starts) -> Result<(), Starts> {
        let above = match (self.spans.last(), other.spans.first()) {
            (Some(a), Some(b)) => b.bottom >= a.end,
            _ => true,
        };
        if !above {
            return Err(other);
        }
        let shift = self.bits.len() as u64 * 64;
        self.spans.extend(other.spans.iter().map(|s| Span {
            first: s.first + shift,
            ..*s
        }));
        self.bits.extend_from_slice(&other.bits);
        self.count += other.count;
        Ok(())
    }

    /// The object starts of span `span`, in address order (none for an index out of range).
    pub fn starts_in(&self, span: usize) -> impl Iterator<Item = u64> + '_ {
        let (bottom, first, end) = match self.spans.get(span) {
            Some(s) => (
                s.bottom,
                s.first,
                s.first + (s.end - s.bottom).div_ceil(GRANULE),
            ),
            None => (0, 0, 0),
        };
        let mut word = (first / 64) as usize;
        let mut bits = match self.bits.get(word) {
            Some(w) if first < end => w & (!0u64 << (first % 64)),
            _ => 0,
        };
        std::iter::from_fn(move || {
            loop {
                if bits != 0 {
                    let b = word as u64 * 64 + u64::from(bits.trailing_zeros());
                    if b >= end {
                        return None;
                    }
                    bits &= bits - 1;
                    return Some(bottom + (b - first) * GRANULE);
                }
                word += 1;
                if word as u64 * 64 >= end {
                    return None;
                }
                bits = *self.bits.get(word)?;
            }
        })
    }

    /// Where `a` lies.
    #[inline]
    pub fn find(&self, a: u64) -> Place {
        let (collection_set, bit) = match self.locate(a) {
            None => return Place::Outside,
            Some((s, bit)) => (s.collection_set, bit),
        };
        match bit {
            Some(b) if self.bits[(b / 64) as usize] & (1u64 << (b % 64)) != 0 => Place::Start,
            _ => Place::Inside(collection_set),
        }
    }

    /// Whether an object starts at `a`.
    pub fn contains(&self, a: u64) -> bool {
        self.find(a) == Place::Start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(bottom: u64, top: u64, kind: SpaceKind) -> Space {
        Space {
            name: format!("{bottom:#x}"),
            bottom,
            top,
            kind,
        }
    }

    #[test]
    fn starts_are_told_from_the_middle_of_objects_and_from_outside() {
        let spaces = [
            space(0x1000, 0x1100, SpaceKind::Contiguous),
            space(0x2000, 0x2000, SpaceKind::Contiguous), // empty
            space(0x3000, 0x3008, SpaceKind::HumongousStart), // runs on past its top
            space(0x9000, 0x9100, SpaceKind::CollectionSet),
        ];
        let mut s = Starts::new(&spaces).unwrap();
        assert!(!s.set_in(0, 0x1004), "misaligned");
        // 0x100 / 8 = 32 bits, 0, 1, 32: 65 bits in two words.
        assert_eq!(s.bytes(), 16);
        for a in [0x1000, 0x1018, 0x10f8, 0x3000, 0x9010] {
            assert!(s.set(a), "{a:#x}");
        }
        assert!(s.set(0x1018), "set twice, counted once");
        assert_eq!(s.count(), 5);
        for a in [0x1100, 0x0ff8, 0x1004, 0x2000, 0x3008, 0x5000] {
            assert!(!s.set(a), "{a:#x}");
        }
        assert_eq!(s.find(0x1018), Place::Start);
        assert_eq!(s.find(0x1010), Place::Inside(false));
        assert_eq!(s.find(0x101c), Place::Inside(false));
        assert_eq!(s.find(0x3000), Place::Start);
        assert_eq!(s.find(0x3008), Place::Outside);
        assert_eq!(s.find(0x9010), Place::Start);
        assert_eq!(s.find(0x9018), Place::Inside(true));
        assert_eq!(s.find(0x1100), Place::Outside);
        assert_eq!(s.find(0), Place::Outside);
        assert_eq!(s.find(u64::MAX), Place::Outside);
        // Back to an earlier span after the last lookup moved on.
        assert!(s.contains(0x1000));
        assert!(s.contains(0x10f8));
        assert_eq!(
            s.starts_in(0).collect::<Vec<_>>(),
            vec![0x1000, 0x1018, 0x10f8]
        );
        assert_eq!(s.starts_in(1).count(), 0);
        assert_eq!(s.starts_in(2).collect::<Vec<_>>(), vec![0x3000]);
        assert_eq!(s.starts_in(3).collect::<Vec<_>>(), vec![0x9010]);
        assert_eq!(s.starts_in(4).count(), 0);
        assert!(s.set_in(0, 0x1020));
        assert!(!s.set_in(0, 0x3000), "in another span");
        assert!(!s.set_in(9, 0x1020));
    }

    #[test]
    fn maps_of_two_halves_append_into_one() {
        let low = [
            space(0x1000, 0x1040, SpaceKind::Contiguous), // 8 bits
            space(0x2000, 0x2400, SpaceKind::Contiguous), // 128 bits
        ];
        let high = [space(0x8000, 0x8100, SpaceKind::Contiguous)];
        let mut a = Starts::new(&low).unwrap();
        let mut b = Starts::new(&high).unwrap();
        a.set_in(0, 0x1038);
        a.set_in(1, 0x23f8);
        b.set_in(0, 0x8000);
        b.set_in(0, 0x80f8);
        let again = Starts::new(&low).unwrap();
        assert!(b.clone().append(again).is_err(), "below");
        a.append(b).unwrap();
        assert_eq!(a.count(), 4);
        for at in [0x1038, 0x23f8, 0x8000, 0x80f8] {
            assert_eq!(a.find(at), Place::Start, "{at:#x}");
        }
        assert_eq!(a.find(0x8008), Place::Inside(false));
        assert_eq!(a.starts_in(2).collect::<Vec<_>>(), vec![0x8000, 0x80f8]);
        // Every bit of a span, across words.
        let one = [space(0x1000, 0x1000 + 8 * 200, SpaceKind::Contiguous)];
        let mut all = Starts::new(&one).unwrap();
        for i in 0..200 {
            assert!(all.set_in(0, 0x1000 + 8 * i));
        }
        assert!(all.starts_in(0).eq((0..200).map(|i| 0x1000 + 8 * i)));
    }

    #[test]
    fn the_map_is_bounded_and_wants_sorted_spaces() {
        let huge = [space(0, (MAX_BYTES + 8) * 64, SpaceKind::Contiguous)];
        assert_eq!(Starts::new(&huge).unwrap_err(), MAX_BYTES + 8);
        let unsorted = [
            space(0x2000, 0x2100, SpaceKind::Contiguous),
            space(0x1000, 0x1100, SpaceKind::Contiguous),
        ];
        assert!(Starts::new(&unsorted).is_err());
        let none = Starts::new(&[]).unwrap();
        assert_eq!(none.bytes(), 0);
    }
}
