//! UNSIGNED5: HotSpot's variable-length encoding of `u32` values in 1 to 5 bytes, taken from
//! Pack200 (`openjdk/jdk:src/hotspot/share/utilities/unsigned5.hpp`, tag jdk-21 and later).
//!
//! A byte is a *low* byte (ends the value) or a *high* byte (six more bits follow). Byte `i`
//! contributes `(b_i - X) << (6 * i)`; the value ends at the first low byte or after five bytes.
//! HotSpot has used two byte alphabets ([`Variant`]):
//!
//! * [`Variant::Legacy`]: `X = 0`, low bytes `0..=191` (`L = 192`), high bytes `192..=255`.
//!   This is `CompressedStream`'s own copy of the algorithm up to JDK 19
//!   (`code/compressedStream.hpp`, tags jdk-11, jdk-17: `lg_H = 6, H = 64, L = 192, MAX_i = 4`).
//! * [`Variant::ExcludeZero`]: `X = 1`, byte 0 is never produced (so a stream can be
//!   0-terminated), low bytes `1..=191` (`L = 191`), high bytes `192..=255`. JDK-8292758
//!   ("put support for UNSIGNED5 format into its own header file", openjdk/jdk#10067, integrated
//!   September 2022, so JDK 20 build 15 on) made `CompressedReadStream` use it, which changed
//!   the encoding of debug info (scopes data) and line number tables from JDK 20 on. The JDK 21+
//!   `_fieldinfo_stream` (`oops/fieldInfo.hpp`) has only ever used this variant. The
//!   Serviceability Agent's `utilities/Unsigned5.java` notes: "Previous versions of HotSpot used
//!   X=0 (not 1) and L=192 (not 191)".
//!
//! Signed values go through [`encode_sign`]/[`decode_sign`] first (Pack200 SIGNED5: zigzag,
//! `UNSIGNED5::encode_sign`).

use super::CodecError;

/// The longest encoding, in bytes (`UNSIGNED5::MAX_LENGTH`).
pub(crate) const MAX_LENGTH: usize = 5;

/// Which byte alphabet a stream uses (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// `X = 0`, `L = 192`: `CompressedStream` up to JDK 19.
    Legacy,
    /// `X = 1`, `L = 191`, no zero bytes: `UNSIGNED5` in JDK 20 and later (and every
    /// `_fieldinfo_stream`).
    ExcludeZero,
}

impl Variant {
    /// The variant of `CompressedReadStream` (debug info, line number tables) in a JVM of this
    /// feature release: [`Variant::ExcludeZero`] from 20 on. (Early-access builds of JDK 20
    /// before build 15 used the legacy one; the OpenTelemetry profiler checks the build number,
    /// `interpreter/hotspot/data.go`.)
    pub(crate) fn for_compressed_stream(jdk_major: u32) -> Self {
        if jdk_major >= 20 {
            Self::ExcludeZero
        } else {
            Self::Legacy
        }
    }

    /// `X`: the number of excluded byte values at the bottom of the alphabet.
    const fn excluded(self) -> u32 {
        match self {
            Self::Legacy => 0,
            Self::ExcludeZero => 1,
        }
    }

    /// `L`: the number of low bytes.
    const fn low(self) -> u32 {
        256 - 64 - self.excluded()
    }
}

/// `lg(H)`: each high byte carries six bits.
const LG_H: u32 = 6;

/// Decodes one value starting at `pos` (`UNSIGNED5::read_uint`). Returns the value and the
/// position just after it.
///
/// # Errors
/// [`CodecError::Truncated`] if the data ends inside the value (or `pos` is at or past the end);
/// [`CodecError::Malformed`] if an [`Variant::ExcludeZero`] stream holds a zero byte (HotSpot
/// asserts "avoid excluded bytes"). Values that overflow 32 bits wrap as HotSpot's `uint32_t`
/// arithmetic does.
pub(crate) fn read_uint(
    bytes: &[u8],
    pos: usize,
    variant: Variant,
) -> Result<(u32, usize), CodecError> {
    let x = variant.excluded();
    let l = variant.low();
    let byte = |i: usize| -> Result<u32, CodecError> {
        let at = pos.checked_add(i).ok_or(CodecError::Truncated {
            what: "UNSIGNED5 value",
            at: usize::MAX,
        })?;
        let b = u32::from(*bytes.get(at).ok_or(CodecError::Truncated {
            what: "UNSIGNED5 value",
            at: bytes.len(),
        })?);
        if b < x {
            return Err(CodecError::Malformed {
                what: "UNSIGNED5 value",
                at,
                why: "a zero byte (excluded in this encoding)",
            });
        }
        Ok(b)
    };
    let b0 = byte(0)?;
    let mut sum = b0 - x;
    if sum < l {
        return Ok((sum, pos + 1));
    }
    let mut shift = LG_H;
    for i in 1..MAX_LENGTH {
        let bi = byte(i)?;
        sum = sum.wrapping_add((bi - x) << shift);
        if bi < x + l || i == MAX_LENGTH - 1 {
            return Ok((sum, pos + i + 1));
        }
        shift += LG_H;
    }
    unreachable!("the loop returns at i == MAX_LENGTH - 1")
}

/// Zigzag-encodes a signed value (`UNSIGNED5::encode_sign`): small magnitudes become small
/// unsigned values, the sign in bit 0.
pub(crate) fn encode_sign(value: i32) -> u32 {
    ((value as u32) << 1) ^ ((value >> 31) as u32)
}

/// Inverse of [`encode_sign`] (`UNSIGNED5::decode_sign`).
pub(crate) fn decode_sign(value: u32) -> i32 {
    ((value >> 1) as i32) ^ -((value & 1) as i32)
}

/// A cursor over an UNSIGNED5 stream (`UNSIGNED5::Reader`), with an exclusive limit (the data's
/// length).
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
    variant: Variant,
}

impl<'a> Reader<'a> {
    /// A reader at position 0.
    pub(crate) fn new(bytes: &'a [u8], variant: Variant) -> Self {
        Self {
            bytes,
            position: 0,
            variant,
        }
    }

    /// The next value.
    ///
    /// # Errors
    /// As [`read_uint`]; the position does not move on an error.
    pub(crate) fn next_uint(&mut self) -> Result<u32, CodecError> {
        let (value, next) = read_uint(self.bytes, self.position, self.variant)?;
        self.position = next;
        Ok(value)
    }

    /// Whether a value starts here: the position is before the limit and, in the
    /// [`Variant::ExcludeZero`] alphabet, the byte is not the 0 terminator
    /// (`UNSIGNED5::Reader::has_next`, simplified to the first byte).
    pub(crate) fn has_next(&self) -> bool {
        match self.bytes.get(self.position) {
            None => false,
            Some(&b) => u32::from(b) >= self.variant.excluded(),
        }
    }

    /// The byte offset of the next value.
    pub(crate) fn position(&self) -> usize {
        self.position
    }

    /// The data's length (the exclusive limit).
    pub(crate) fn limit(&self) -> usize {
        self.bytes.len()
    }
}

/// The encoder, written from `UNSIGNED5::write_uint` (and `CompressedWriteStream::write_int_mb`
/// for the legacy alphabet), for the round-trip tests of every codec file.
#[cfg(test)]
pub(crate) mod test_encoder {
    use super::{LG_H, MAX_LENGTH, Variant};

    /// Appends the encoding of `value`.
    pub(crate) fn write_uint(out: &mut Vec<u8>, value: u32, variant: Variant) {
        let x = variant.excluded();
        let l = variant.low();
        let h = 1u32 << LG_H;
        let mut sum = value;
        for i in 0..MAX_LENGTH {
            if sum < l || i == MAX_LENGTH - 1 {
                out.push(u8::try_from(x + sum).expect("a low byte or the fifth byte"));
                return;
            }
            sum -= l;
            out.push(u8::try_from(x + l + (sum % h)).expect("a high byte"));
            sum >>= LG_H;
        }
    }

    /// Appends the encoding of a signed value (`write_signed_int`).
    pub(crate) fn write_signed(out: &mut Vec<u8>, value: i32, variant: Variant) {
        write_uint(out, super::encode_sign(value), variant);
    }
}

#[cfg(test)]
mod tests {
    use super::test_encoder::write_uint;
    use super::*;

    const VARIANTS: [Variant; 2] = [Variant::Legacy, Variant::ExcludeZero];

    #[test]
    fn small_values_are_one_byte() {
        // unsigned5.hpp: "values up to 0xBE ... code in 1 byte"; the legacy alphabet one more.
        let mut out = Vec::new();
        write_uint(&mut out, 0xBE, Variant::ExcludeZero);
        assert_eq!(out, [0xBF]);
        out.clear();
        write_uint(&mut out, 0xBF, Variant::ExcludeZero);
        assert_eq!(out.len(), 2);
        out.clear();
        write_uint(&mut out, 191, Variant::Legacy);
        assert_eq!(out, [191]);
        out.clear();
        write_uint(&mut out, 0, Variant::Legacy);
        assert_eq!(out, [0]);
        out.clear();
        write_uint(&mut out, 0, Variant::ExcludeZero);
        assert_eq!(out, [1]);
    }

    #[test]
    fn length_boundaries_from_unsigned5_hpp() {
        // The largest value of each length is `UNSIGNED5::max_encoded_in_length(len)`:
        // sum over i < len of L * H^i, minus 1. (The header comment's "0x308207F" for 4 bytes is
        // one more than that function gives; the function is what the encoder does.)
        let l = 191u64;
        let mut max_of_len = Vec::new();
        let mut all = 0u64;
        for i in 0..4 {
            all += l << (6 * i);
            max_of_len.push(all - 1);
        }
        assert_eq!(max_of_len, [0xBE, 0x307E, 0xC207E, 0x308207E]);
        for (len, &max) in (1..).zip(&max_of_len) {
            for (value, want) in [(max, len), (max + 1, len + 1)] {
                let value = u32::try_from(value).expect("fits");
                let mut out = Vec::new();
                write_uint(&mut out, value, Variant::ExcludeZero);
                assert_eq!(out.len(), want, "{value:#x}");
                assert!(!out.contains(&0));
                assert_eq!(read_uint(&out, 0, Variant::ExcludeZero), Ok((value, want)));
            }
        }
        let mut out = Vec::new();
        write_uint(&mut out, u32::MAX, Variant::ExcludeZero);
        assert_eq!(read_uint(&out, 0, Variant::ExcludeZero), Ok((u32::MAX, 5)));
    }

    #[test]
    fn round_trip_interesting_values() {
        let mut values: Vec<u32> = (0..70_000).collect();
        for shift in 0..32 {
            let v = 1u32 << shift;
            values.extend([v - 1, v, v + 1, !v, u32::MAX - v]);
        }
        for variant in VARIANTS {
            let mut out = Vec::new();
            for &v in &values {
                write_uint(&mut out, v, variant);
            }
            let mut r = Reader::new(&out, variant);
            for &v in &values {
                assert_eq!(r.next_uint(), Ok(v), "{variant:?}");
            }
            assert_eq!(r.position(), out.len());
            assert!(!r.has_next());
        }
    }

    #[test]
    fn sign_encoding_is_zigzag() {
        for (v, e) in [
            (0, 0),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (i32::MAX, u32::MAX - 1),
            (i32::MIN, u32::MAX),
        ] {
            assert_eq!(encode_sign(v), e);
            assert_eq!(decode_sign(e), v);
        }
    }

    #[test]
    fn truncated_and_excluded_bytes_are_errors() {
        assert!(matches!(
            read_uint(&[], 0, Variant::Legacy),
            Err(CodecError::Truncated { .. })
        ));
        assert!(matches!(
            read_uint(&[0xC0, 0xC0], 0, Variant::Legacy),
            Err(CodecError::Truncated { .. })
        ));
        assert!(matches!(
            read_uint(&[0], 0, Variant::ExcludeZero),
            Err(CodecError::Malformed { .. })
        ));
        assert!(matches!(
            read_uint(&[0xC0, 0], 0, Variant::ExcludeZero),
            Err(CodecError::Malformed { at: 1, .. })
        ));
        assert!(matches!(
            read_uint(&[1], usize::MAX, Variant::Legacy),
            Err(CodecError::Truncated { .. })
        ));
        // The fifth byte may be a high byte; it still ends the value.
        assert_eq!(
            read_uint(&[0xFF; 6], 0, Variant::Legacy).map(|(_, n)| n),
            Ok(5)
        );
        assert!(!Reader::new(&[0], Variant::ExcludeZero).has_next());
        assert!(Reader::new(&[0], Variant::Legacy).has_next());
    }

    #[test]
    fn variant_by_release() {
        assert_eq!(Variant::for_compressed_stream(17), Variant::Legacy);
        assert_eq!(Variant::for_compressed_stream(19), Variant::Legacy);
        assert_eq!(Variant::for_compressed_stream(20), Variant::ExcludeZero);
        assert_eq!(Variant::for_compressed_stream(25), Variant::ExcludeZero);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64), pos in 0usize..80) {
            for variant in VARIANTS {
                if let Ok((_, next)) = read_uint(&bytes, pos, variant) {
                    proptest::prop_assert!(next > pos && next <= bytes.len() && next - pos <= MAX_LENGTH);
                }
                let mut r = Reader::new(&bytes, variant);
                while r.has_next() && r.next_uint().is_ok() {}
            }
        }

        #[test]
        fn any_value_round_trips(value in proptest::num::u32::ANY, signed in proptest::num::i32::ANY) {
            for variant in VARIANTS {
                let mut out = Vec::new();
                write_uint(&mut out, value, variant);
                super::test_encoder::write_signed(&mut out, signed, variant);
                let (v, next) = read_uint(&out, 0, variant).expect("decodes");
                proptest::prop_assert_eq!(v, value);
                let (s, end) = read_uint(&out, next, variant).expect("decodes");
                proptest::prop_assert_eq!(decode_sign(s), signed);
                proptest::prop_assert_eq!(end, out.len());
            }
        }
    }
}
