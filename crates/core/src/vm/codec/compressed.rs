//! HotSpot's `CompressedReadStream`: the reader of debug info (an nmethod's scopes data) and of
//! line number tables (`openjdk/jdk:src/hotspot/share/code/compressedStream.{hpp,cpp}`, tags
//! jdk-11, jdk-17, jdk-21, jdk-25).
//!
//! Every `int` is an UNSIGNED5 value ([`super::unsigned5`]); the byte alphabet changed in JDK 20
//! (JDK-8292758), so the stream takes a [`Variant`] (choose it with
//! [`Variant::for_compressed_stream`]). Everything else is the same in all releases:
//!
//! * `read_int`: one UNSIGNED5 value;
//! * `read_signed_int`: one UNSIGNED5 value, zigzag-decoded (`decode_sign`);
//! * `read_byte`/`read_bool`: one raw byte (not UNSIGNED5);
//! * `read_long`: two signed ints, low half first (`jlong_from(high, low)`);
//! * `read_float`: one int, bit-reversed; `read_double`: two ints (high half first), each
//!   bit-reversed (`reverse_int` in jdk-11/17, `reverse_bits` from `utilities/moveBits.hpp` later).
//!
//! HotSpot's reader has no limit (it trusts its own data); this one stops at the end of the
//! slice it is given and reports [`CodecError::Truncated`].

use super::CodecError;
use super::unsigned5::{self, Variant};

/// A cursor over a compressed stream (`CompressedReadStream`), positioned in bytes from the start
/// of the slice (HotSpot's `_position`, e.g. a `decode_offset` into the scopes data).
#[derive(Debug, Clone)]
pub(crate) struct CompressedReadStream<'a> {
    buffer: &'a [u8],
    position: usize,
    variant: Variant,
}

impl<'a> CompressedReadStream<'a> {
    /// A stream over `buffer`, at `position`.
    pub(crate) fn new(buffer: &'a [u8], position: usize, variant: Variant) -> Self {
        Self {
            buffer,
            position,
            variant,
        }
    }

    /// The byte offset of the next read.
    pub(crate) fn position(&self) -> usize {
        self.position
    }

    /// Moves the cursor (`set_position`); a position past the end makes the next read fail.
    pub(crate) fn set_position(&mut self, position: usize) {
        self.position = position;
    }

    /// The byte alphabet of this stream's ints.
    pub(crate) fn variant(&self) -> Variant {
        self.variant
    }

    /// One raw byte (`read()`), as unsigned.
    ///
    /// # Errors
    /// [`CodecError::Truncated`] at the end of the data.
    pub(crate) fn read_u8(&mut self) -> Result<u8, CodecError> {
        let b = *self
            .buffer
            .get(self.position)
            .ok_or(CodecError::Truncated {
                what: "compressed stream",
                at: self.buffer.len(),
            })?;
        self.position += 1;
        Ok(b)
    }

    /// `read_byte`: one raw byte as a `jbyte`.
    ///
    /// # Errors
    /// As [`Self::read_u8`].
    pub(crate) fn read_byte(&mut self) -> Result<i8, CodecError> {
        self.read_u8().map(|b| b as i8)
    }

    /// `read_bool`: one raw byte, true unless 0 (HotSpot's callers test `!= 0`).
    ///
    /// # Errors
    /// As [`Self::read_u8`].
    pub(crate) fn read_bool(&mut self) -> Result<bool, CodecError> {
        self.read_u8().map(|b| b != 0)
    }

    /// `read_int`: one UNSIGNED5 value. HotSpot returns it as a `jint`; offsets and counts are
    /// non-negative, so it is kept unsigned here.
    ///
    /// # Errors
    /// As [`unsigned5::read_uint`]; the position does not move on an error.
    pub(crate) fn read_int(&mut self) -> Result<u32, CodecError> {
        let (value, next) = unsigned5::read_uint(self.buffer, self.position, self.variant)?;
        self.position = next;
        Ok(value)
    }

    /// `read_signed_int`: one zigzag-encoded UNSIGNED5 value.
    ///
    /// # Errors
    /// As [`Self::read_int`].
    pub(crate) fn read_signed_int(&mut self) -> Result<i32, CodecError> {
        self.read_int().map(unsigned5::decode_sign)
    }

    /// `read_long`: two signed ints, the low half first.
    ///
    /// # Errors
    /// As [`Self::read_int`].
    pub(crate) fn read_long(&mut self) -> Result<i64, CodecError> {
        let low = self.read_signed_int()?;
        let high = self.read_signed_int()?;
        Ok((i64::from(high) << 32) | i64::from(low as u32))
    }

    /// `read_float`: one int, bit-reversed (floats have trailing zeroes, ints leading ones).
    ///
    /// # Errors
    /// As [`Self::read_int`].
    pub(crate) fn read_float(&mut self) -> Result<f32, CodecError> {
        self.read_int().map(|r| f32::from_bits(r.reverse_bits()))
    }

    /// `read_double`: two ints, the high half first, each bit-reversed.
    ///
    /// # Errors
    /// As [`Self::read_int`].
    pub(crate) fn read_double(&mut self) -> Result<f64, CodecError> {
        let high = self.read_int()?.reverse_bits();
        let low = self.read_int()?.reverse_bits();
        Ok(f64::from_bits((u64::from(high) << 32) | u64::from(low)))
    }
}

/// `CompressedWriteStream`, written from `compressedStream.{hpp,cpp}`, for the round-trip tests
/// of the files that read compressed streams.
#[cfg(test)]
pub(crate) mod test_encoder {
    use super::super::unsigned5::{Variant, encode_sign, test_encoder::write_uint};

    /// A growable compressed stream.
    #[derive(Debug)]
    pub(crate) struct CompressedWriteStream {
        pub(crate) bytes: Vec<u8>,
        pub(crate) variant: Variant,
    }

    impl CompressedWriteStream {
        pub(crate) fn new(variant: Variant) -> Self {
            Self {
                bytes: Vec::new(),
                variant,
            }
        }
        pub(crate) fn position(&self) -> usize {
            self.bytes.len()
        }
        pub(crate) fn write_byte(&mut self, b: u8) {
            self.bytes.push(b);
        }
        pub(crate) fn write_bool(&mut self, b: bool) {
            self.bytes.push(u8::from(b));
        }
        pub(crate) fn write_int(&mut self, v: u32) {
            write_uint(&mut self.bytes, v, self.variant);
        }
        pub(crate) fn write_signed_int(&mut self, v: i32) {
            self.write_int(encode_sign(v));
        }
        pub(crate) fn write_long(&mut self, v: i64) {
            self.write_signed_int(v as i32);
            self.write_signed_int((v >> 32) as i32);
        }
        pub(crate) fn write_float(&mut self, v: f32) {
            self.write_int(v.to_bits().reverse_bits());
        }
        pub(crate) fn write_double(&mut self, v: f64) {
            let bits = v.to_bits();
            self.write_int(((bits >> 32) as u32).reverse_bits());
            self.write_int((bits as u32).reverse_bits());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_encoder::CompressedWriteStream;
    use super::*;

    const VARIANTS: [Variant; 2] = [Variant::Legacy, Variant::ExcludeZero];

    /// The "interesting" values of HotSpot's own `test_compressed_stream` (compressedStream.cpp,
    /// jdk-11): `stretch(n, bits)` spreads the bits of `n` over the width.
    fn stretch(x: i32, bits: u32) -> i64 {
        let h = i64::from(x >> (16 - 4)) << (bits - 4);
        let l = (i64::from(x) << (64 - 12)) >> (64 - 12);
        let l = l << (x >> 16);
        h ^ l
    }

    #[test]
    fn round_trip_like_hotspots_own_test() {
        let limit = (1 << 16) * (64 - 16 + 1) / 97; // a sample of HotSpot's range, for speed
        for variant in VARIANTS {
            let mut w = CompressedWriteStream::new(variant);
            for n in 0..=255u8 {
                w.write_byte(n);
            }
            for n in 0..limit {
                let x = stretch(n * 97, 32) as i32;
                w.write_int(x as u32);
                w.write_signed_int(x);
                w.write_float(f32::from_bits(x as u32));
            }
            for n in 0..limit {
                let x = stretch(n * 97, 64);
                w.write_long(x);
                w.write_double(f64::from_bits(x as u64));
                w.write_bool(x & 1 == 1);
            }
            let mut r = CompressedReadStream::new(&w.bytes, 0, variant);
            for n in 0..=255u8 {
                assert_eq!(r.read_byte(), Ok(n as i8));
            }
            for n in 0..limit {
                let x = stretch(n * 97, 32) as i32;
                assert_eq!(r.read_int(), Ok(x as u32));
                assert_eq!(r.read_signed_int(), Ok(x));
                assert_eq!(r.read_float().map(f32::to_bits), Ok(x as u32));
            }
            for n in 0..limit {
                let x = stretch(n * 97, 64);
                assert_eq!(r.read_long(), Ok(x));
                assert_eq!(r.read_double().map(f64::to_bits), Ok(x as u64));
                assert_eq!(r.read_bool(), Ok(x & 1 == 1));
            }
            assert_eq!(r.position(), w.position());
            assert!(matches!(r.read_u8(), Err(CodecError::Truncated { .. })));
        }
    }

    #[test]
    fn the_two_alphabets_differ() {
        // 191 is one byte in the legacy alphabet, two in the JDK 20+ one; 0 is byte 0 vs byte 1.
        let mut legacy = CompressedWriteStream::new(Variant::Legacy);
        let mut x = CompressedWriteStream::new(Variant::ExcludeZero);
        for v in [0, 191] {
            legacy.write_int(v);
            x.write_int(v);
        }
        assert_eq!(legacy.bytes, [0, 191]);
        assert_eq!(x.bytes, [1, 0xC0, 0x01]);
        // Read with the wrong alphabet, the values differ (or fail): the variant matters.
        let mut wrong = CompressedReadStream::new(&legacy.bytes, 0, Variant::ExcludeZero);
        assert!(wrong.read_int().is_err());
    }

    #[test]
    fn errors_leave_the_position() {
        let mut r = CompressedReadStream::new(&[0xC5], 0, Variant::Legacy);
        assert!(matches!(r.read_int(), Err(CodecError::Truncated { .. })));
        assert_eq!(r.position(), 0);
        r.set_position(7);
        assert!(r.read_u8().is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64), start in 0usize..70, ops in proptest::collection::vec(0u8..7, 0..40)) {
            for variant in VARIANTS {
                let mut r = CompressedReadStream::new(&bytes, start, variant);
                for &op in &ops {
                    let before = r.position();
                    let ok = match op {
                        0 => r.read_int().is_ok(),
                        1 => r.read_signed_int().is_ok(),
                        2 => r.read_long().is_ok(),
                        3 => r.read_double().is_ok(),
                        4 => r.read_float().is_ok(),
                        5 => r.read_bool().is_ok(),
                        _ => r.read_byte().is_ok(),
                    };
                    proptest::prop_assert!(!ok || r.position() > before);
                    proptest::prop_assert!(!ok || r.position() <= bytes.len());
                }
            }
        }
    }
}
