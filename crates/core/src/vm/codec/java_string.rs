//! The characters of a `java.lang.String`, from its `value` array
//! (`openjdk/jdk:src/hotspot/share/classfile/javaClasses.cpp` `java_lang_String`, and
//! `src/java.base/share/classes/java/lang/String.java`, `StringUTF16.java`):
//!
//! * JDK 9 and later (JEP 254, compact strings): `byte[] value` and `byte coder` — `LATIN1` (0):
//!   one byte per char, ISO-8859-1; `UTF16` (1): two bytes per UTF-16 code unit in the
//!   platform's byte order (`StringUTF16.HI_BYTE_SHIFT`/`LO_BYTE_SHIFT`; little-endian on x86-64
//!   and aarch64, hsinspect's targets). With `-XX:-CompactStrings` every string is UTF-16.
//! * JDK 8: `char[] value`: UTF-16 code units, platform order, no coder.
//!
//! The caller reads the array (its length from the array header, bounded) and passes its
//! element bytes. Valid strings decode losslessly; an unpaired surrogate (legal in Java, not in
//! Rust) becomes U+FFFD, as `String::from_utf16_lossy` does.

use super::CodecError;

/// `java.lang.String.LATIN1`.
pub(crate) const CODER_LATIN1: u8 = 0;
/// `java.lang.String.UTF16`.
pub(crate) const CODER_UTF16: u8 = 1;

fn check_len(bytes: &[u8], max_bytes: usize) -> Result<(), CodecError> {
    if bytes.len() > max_bytes {
        return Err(CodecError::TooMany {
            what: "java.lang.String value bytes",
            count: bytes.len() as u64,
            max: max_bytes as u64,
        });
    }
    Ok(())
}

/// A Latin-1 `value` (coder 0): every byte is the char of the same number.
///
/// # Errors
/// [`CodecError::TooMany`] for more than `max_bytes` bytes.
pub(crate) fn decode_latin1(bytes: &[u8], max_bytes: usize) -> Result<String, CodecError> {
    check_len(bytes, max_bytes)?;
    Ok(bytes.iter().map(|&b| char::from(b)).collect())
}

/// A UTF-16 `value` (coder 1, or a JDK 8 `char[]`), little-endian code units.
///
/// # Errors
/// [`CodecError::TooMany`] for more than `max_bytes` bytes; [`CodecError::Malformed`] for an
/// odd byte count.
pub(crate) fn decode_utf16le(bytes: &[u8], max_bytes: usize) -> Result<String, CodecError> {
    check_len(bytes, max_bytes)?;
    if !bytes.len().is_multiple_of(2) {
        return Err(CodecError::Malformed {
            what: "java.lang.String UTF-16 value",
            at: bytes.len() - 1,
            why: "an odd number of bytes",
        });
    }
    let units = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]));
    Ok(char::decode_utf16(units)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect())
}

/// A string's `value` bytes with its `coder` (`Some`, JDK 9+) or without (`None`: a JDK 8
/// `char[]`).
///
/// # Errors
/// [`CodecError::Malformed`] for a coder other than 0 and 1; otherwise as [`decode_latin1`] and
/// [`decode_utf16le`].
pub(crate) fn decode_value(
    bytes: &[u8],
    coder: Option<u8>,
    max_bytes: usize,
) -> Result<String, CodecError> {
    match coder {
        Some(CODER_LATIN1) => decode_latin1(bytes, max_bytes),
        Some(CODER_UTF16) | None => decode_utf16le(bytes, max_bytes),
        Some(_) => Err(CodecError::Malformed {
            what: "java.lang.String coder",
            at: 0,
            why: "neither LATIN1 (0) nor UTF16 (1)",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `StringUTF16.toBytes` on a little-endian JVM.
    fn utf16le(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    #[test]
    fn latin1_round_trips() {
        let s = "main Thread-1 café ÿ";
        let bytes: Vec<u8> = s
            .chars()
            .map(|c| u8::try_from(u32::from(c)).expect("Latin-1"))
            .collect();
        assert_eq!(
            decode_value(&bytes, Some(CODER_LATIN1), 100).as_deref(),
            Ok(s)
        );
        assert_eq!(decode_latin1(&[], 0).as_deref(), Ok(""));
    }

    #[test]
    fn utf16_round_trips_with_supplementary_chars() {
        let s = "pool-1-thread-7 线程 😀 Ω";
        let bytes = utf16le(s);
        assert_eq!(
            decode_value(&bytes, Some(CODER_UTF16), 100).as_deref(),
            Ok(s)
        );
        assert_eq!(
            decode_value(&bytes, None, 100).as_deref(),
            Ok(s),
            "a JDK 8 char[]"
        );
    }

    #[test]
    fn unpaired_surrogates_become_replacement_chars() {
        // 'a', a lone high surrogate, 'b', a lone low surrogate.
        let bytes: Vec<u8> = [0x61u16, 0xD800, 0x62, 0xDC00]
            .iter()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(
            decode_utf16le(&bytes, 100).as_deref(),
            Ok("a\u{FFFD}b\u{FFFD}")
        );
    }

    #[test]
    fn bad_values_are_errors() {
        assert!(matches!(
            decode_utf16le(&[0x61, 0, 0x62], 100),
            Err(CodecError::Malformed { .. })
        ));
        assert!(matches!(
            decode_value(b"abc", Some(2), 100),
            Err(CodecError::Malformed { .. })
        ));
        assert!(matches!(
            decode_value(b"abcd", Some(CODER_LATIN1), 3),
            Err(CodecError::TooMany { .. })
        ));
        assert!(matches!(
            decode_value(b"abcd", None, 3),
            Err(CodecError::TooMany { .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200), coder in proptest::option::of(proptest::num::u8::ANY)) {
            if let Ok(s) = decode_value(&bytes, coder, 150) {
                proptest::prop_assert!(s.chars().count() <= bytes.len());
            }
        }

        #[test]
        fn any_string_round_trips(s in ".{0,40}") {
            let utf16 = decode_value(&utf16le(&s), Some(CODER_UTF16), 1000);
            proptest::prop_assert_eq!(utf16, Ok(s.clone()));
            let latin1: String = s.chars().filter(|&c| u32::from(c) < 256).collect();
            let bytes: Vec<u8> = latin1.chars().map(|c| u32::from(c) as u8).collect();
            proptest::prop_assert_eq!(decode_value(&bytes, Some(CODER_LATIN1), 1000), Ok(latin1));
        }
    }
}
