//! A method's compressed line number table (`openjdk/jdk:src/hotspot/share/oops/method.{hpp,cpp}`:
//! `CompressedLineNumberWriteStream::write_pair`, `CompressedLineNumberReadStream::read_pair`,
//! `Method::line_number_from_bci`; the same in tags jdk-11, jdk-17, jdk-21, jdk-25).
//!
//! Where it is: right after the bytecodes, at `ConstMethod* + sizeof(ConstMethod) + _code_size`
//! (two words further for native methods, which have no line numbers anyway), present only when
//! `ConstMethod::_flags` has `has_linenumber_table` (SA `oops/ConstMethod.java`). The caller reads
//! it and hands the bytes over.
//!
//! Format: a compressed stream ([`super::compressed`], so its ints changed alphabet in JDK 20) of
//! `(bci, line)` deltas against the previous pair (starting from `(0, 0)`):
//!
//! * a byte `0` ends the table;
//! * a byte `0xFF` is an escape: two signed ints follow, the bci delta then the line delta;
//! * any other byte `b` is one pair: bci delta `b >> 3` (5 bits), line delta `b & 7` (3 bits).
//!
//! The writer skips `(0, 0)` deltas (they would read as the terminator). Pairs are "not
//! necessarily sorted and not necessarily one-to-one" (method.cpp).

use super::CodecError;
use super::compressed::CompressedReadStream;
use super::unsigned5::Variant;

/// `InvocationEntryBci` / `SynchronizationEntryBCI` (`utilities/globalDefinitions.hpp`): the bci of
/// a method's entry (and of its synchronization), before any bytecode.
pub(crate) const INVOCATION_ENTRY_BCI: i32 = -1;

/// A decoded table: `(bci, line)` pairs in stream order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LineNumberTable {
    /// The pairs, as `(start bci, line number)`.
    pub(crate) entries: Vec<(i32, i32)>,
    /// The table's size in bytes, terminator included.
    pub(crate) encoded_len: usize,
}

impl LineNumberTable {
    /// Decodes a table from its first byte. `bytes` may extend past the table (the caller
    /// cannot know its length before decoding); decoding stops at the terminator.
    ///
    /// # Errors
    /// [`CodecError::Truncated`] if `bytes` ends before the terminator;
    /// [`CodecError::TooMany`] after `max_entries` pairs without a terminator;
    /// [`CodecError::Malformed`] for an excluded zero byte inside an escaped pair (JDK 20+).
    pub(crate) fn decode(
        bytes: &[u8],
        variant: Variant,
        max_entries: usize,
    ) -> Result<Self, CodecError> {
        let mut stream = CompressedReadStream::new(bytes, 0, variant);
        let mut entries = Vec::new();
        let (mut bci, mut line) = (0i32, 0i32);
        loop {
            let next = stream.read_u8().map_err(|_| CodecError::Truncated {
                what: "line number table",
                at: bytes.len(),
            })?;
            match next {
                0 => break,
                0xFF => {
                    bci = bci.wrapping_add(stream.read_signed_int()?);
                    line = line.wrapping_add(stream.read_signed_int()?);
                }
                b => {
                    bci = bci.wrapping_add(i32::from(b >> 3));
                    line = line.wrapping_add(i32::from(b & 7));
                }
            }
            if entries.len() == max_entries {
                return Err(CodecError::TooMany {
                    what: "line number table entries",
                    count: entries.len() as u64 + 1,
                    max: max_entries as u64,
                });
            }
            entries.push((bci, line));
        }
        Ok(Self {
            entries,
            encoded_len: stream.position(),
        })
    }

    /// The source line of `bci`, as `Method::line_number_from_bci` finds it: the
    /// [`INVOCATION_ENTRY_BCI`] counts as bci 0; a bci outside `0..code_size` (when the code size
    /// is given) has none; the first pair whose bci equals `bci` wins; otherwise the pair with the
    /// largest bci below `bci` (the last of equals). `None` where HotSpot answers -1 (no table
    /// entry at or below `bci`), which jstack prints as `(File.java)` with no line.
    pub(crate) fn line_for_bci(&self, bci: i32, code_size: Option<u32>) -> Option<i32> {
        let bci = if bci == INVOCATION_ENTRY_BCI { 0 } else { bci };
        if bci < 0 || code_size.is_some_and(|size| i64::from(bci) >= i64::from(size)) {
            return None;
        }
        let mut best_bci = 0;
        let mut best_line = -1;
        for &(start, line) in &self.entries {
            if start == bci {
                return Some(line);
            }
            if start < bci && start >= best_bci {
                best_bci = start;
                best_line = line;
            }
        }
        (best_line != -1).then_some(best_line)
    }
}

/// `CompressedLineNumberWriteStream`, written from method.{hpp,cpp}, for the tests.
#[cfg(test)]
pub(crate) mod test_encoder {
    use super::super::compressed::test_encoder::CompressedWriteStream;
    use super::super::unsigned5::Variant;

    /// Encodes `(bci, line)` pairs as `write_pair` does, then the terminator.
    pub(crate) fn encode(pairs: &[(i32, i32)], variant: Variant) -> Vec<u8> {
        let mut w = CompressedWriteStream::new(variant);
        let (mut last_bci, mut last_line) = (0i32, 0i32);
        for &(bci, line) in pairs {
            let bci_delta = bci.wrapping_sub(last_bci);
            let line_delta = line.wrapping_sub(last_line);
            last_bci = bci;
            last_line = line;
            if bci_delta == 0 && line_delta == 0 {
                continue;
            }
            if bci_delta & !0x1F == 0 && line_delta & !0x7 == 0 {
                let value = ((bci_delta << 3) | line_delta) as u8;
                if value != 0xFF {
                    w.write_byte(value);
                    continue;
                }
            }
            w.write_byte(0xFF);
            w.write_signed_int(bci_delta);
            w.write_signed_int(line_delta);
        }
        w.write_byte(0);
        w.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::test_encoder::encode;
    use super::*;

    const VARIANTS: [Variant; 2] = [Variant::Legacy, Variant::ExcludeZero];

    /// The pairs a decoder gives back: the writer drops repeats of the previous pair.
    fn without_repeats(pairs: &[(i32, i32)]) -> Vec<(i32, i32)> {
        let mut out = Vec::new();
        let mut last = (0, 0);
        for &p in pairs {
            if p != last {
                out.push(p);
            }
            last = p;
        }
        out
    }

    #[test]
    fn one_byte_and_escaped_pairs_round_trip() {
        // 0 → (0,10) needs an escape (line delta 10 > 7); (3, 12) fits in one byte; a backwards
        // bci and a far line need escapes; (31, 7) deltas would be 0xFF and must be escaped.
        let pairs = [
            (0, 10),
            (3, 12),
            (8, 13),
            (5, 40),
            (5, 41),
            (36, 48),
            (4000, 70_000),
            (4000, 70_000),
            (4001, 9),
        ];
        for variant in VARIANTS {
            let bytes = encode(&pairs, variant);
            let table = LineNumberTable::decode(&bytes, variant, 100).expect("decodes");
            assert_eq!(table.entries, without_repeats(&pairs));
            assert_eq!(table.encoded_len, bytes.len());
        }
        let bytes = encode(&[(31, 7)], Variant::Legacy);
        assert_eq!(bytes[0], 0xFF, "(31 << 3) | 7 is the escape byte");
        let bytes = encode(&[(3, 2)], Variant::Legacy);
        assert_eq!(bytes, [(3 << 3) | 2, 0]);
    }

    #[test]
    fn trailing_bytes_are_not_read() {
        let mut bytes = encode(&[(0, 5), (4, 6)], Variant::ExcludeZero);
        let len = bytes.len();
        bytes.extend([0xFF, 0xFF, 0xFF]);
        let table = LineNumberTable::decode(&bytes, Variant::ExcludeZero, 10).expect("decodes");
        assert_eq!(table.encoded_len, len);
    }

    #[test]
    fn line_for_bci_follows_method_cpp() {
        // Unsorted, with a repeated bci: exact match first, else the largest start below.
        let table = LineNumberTable {
            entries: vec![(0, 10), (12, 14), (4, 11), (12, 99), (20, 16)],
            encoded_len: 0,
        };
        assert_eq!(table.line_for_bci(0, None), Some(10));
        assert_eq!(
            table.line_for_bci(-1, None),
            Some(10),
            "the entry bci is bci 0"
        );
        assert_eq!(table.line_for_bci(3, None), Some(10));
        assert_eq!(table.line_for_bci(4, None), Some(11));
        assert_eq!(
            table.line_for_bci(12, None),
            Some(14),
            "the first exact match wins"
        );
        assert_eq!(
            table.line_for_bci(13, None),
            Some(99),
            "the last of equal best starts wins"
        );
        assert_eq!(table.line_for_bci(25, None), Some(16));
        assert_eq!(table.line_for_bci(25, Some(25)), None, "past the code");
        assert_eq!(table.line_for_bci(-2, None), None);
        let late = LineNumberTable {
            entries: vec![(5, 7)],
            encoded_len: 0,
        };
        assert_eq!(
            late.line_for_bci(2, None),
            None,
            "nothing at or below bci 2"
        );
        assert_eq!(LineNumberTable::default().line_for_bci(0, None), None);
    }

    #[test]
    fn bad_tables_are_errors() {
        assert!(matches!(
            LineNumberTable::decode(&[], Variant::Legacy, 10),
            Err(CodecError::Truncated { .. })
        ));
        assert!(matches!(
            LineNumberTable::decode(&[8, 9], Variant::Legacy, 10),
            Err(CodecError::Truncated { .. })
        ));
        assert!(matches!(
            LineNumberTable::decode(&[0xFF, 3], Variant::Legacy, 10),
            Err(CodecError::Truncated { .. })
        ));
        assert!(matches!(
            LineNumberTable::decode(&[0xFF, 0, 3, 0], Variant::ExcludeZero, 10),
            Err(CodecError::Malformed { .. })
        ));
        assert!(matches!(
            LineNumberTable::decode(&[8, 8, 8, 0], Variant::Legacy, 2),
            Err(CodecError::TooMany { .. })
        ));
        assert_eq!(
            LineNumberTable::decode(&[8, 8, 0], Variant::Legacy, 2).map(|t| t.entries.len()),
            Ok(2)
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256), bci in proptest::num::i32::ANY) {
            for variant in VARIANTS {
                if let Ok(table) = LineNumberTable::decode(&bytes, variant, 64) {
                    proptest::prop_assert!(table.encoded_len <= bytes.len() && table.entries.len() <= 64);
                    let _ = table.line_for_bci(bci, Some(1000));
                }
            }
        }

        #[test]
        fn any_table_round_trips(pairs in proptest::collection::vec((0i32..70_000, 0i32..70_000), 0..50)) {
            for variant in VARIANTS {
                let bytes = encode(&pairs, variant);
                let table = LineNumberTable::decode(&bytes, variant, 100).expect("decodes");
                proptest::prop_assert_eq!(&table.entries, &without_repeats(&pairs));
                proptest::prop_assert_eq!(table.encoded_len, bytes.len());
            }
        }
    }
}
