//! Pure decoders of HotSpot's in-memory metadata formats: bytes in, typed values out. No I/O and
//! no memory reads happen here: the caller reads the bytes from the target (bounded, through
//! `ReadMemory`) and hands them over with the layout facts it took from the target's vmStructs
//! tables (field offsets, int constants).
//!
//! The target is untrusted, so every decoder is bounded (a maximum count or length, or an
//! internal cap), returns a [`CodecError`] on truncated or malformed input, and never panics
//! (each file has a proptest feeding it arbitrary bytes, and round-trip tests against a small
//! encoder written from HotSpot's own encoder).
//!
//! | file | format | HotSpot source |
//! |---|---|---|
//! | [`unsigned5`] | UNSIGNED5 varints, both byte alphabets | `utilities/unsigned5.hpp` (JDK 20+), `code/compressedStream.hpp` (≤ 19) |
//! | [`compressed`] | `CompressedReadStream` (ints, signed ints, longs, doubles, bytes) | `code/compressedStream.{hpp,cpp}` |
//! | [`line_numbers`] | a method's compressed line number table | `oops/method.{hpp,cpp}` (`CompressedLineNumberReadStream`, `Method::line_number_from_bci`) |
//! | [`scopes`] | `PcDesc` rows, `ScopeDesc` chains (inlining), monitor lists | `code/pcDesc.hpp`, `code/scopeDesc.cpp`, `code/debugInfo.{hpp,cpp}`, `code/location.hpp` |
//! | [`field_info`] | `InstanceKlass` field metadata, both formats | `oops/fieldInfo.{hpp,cpp,inline.hpp}` (JDK 21+), `oops/fieldInfo.hpp` + `oops/fieldStreams.hpp` (≤ 20) |
//! | [`java_string`] | `java.lang.String` values (Latin-1, UTF-16, JDK 8 `char[]`) | `classfile/javaClasses.cpp` (`java_lang_String`) |
//! | [`symbol`] | `Symbol` headers and modified UTF-8 bodies | `oops/symbol.hpp` |
//!
//! Multi-byte fixed-width fields (PcDesc rows, the JDK ≤ 20 `u2` field array, UTF-16 chars) are
//! read little-endian: hsinspect's targets (x86-64, aarch64) are little-endian.

// Nothing outside this folder calls the decoders yet: the `inspect threads` pipeline (issue 28)
// is being written against them on its own branch. Remove once it is merged.
#![allow(dead_code)]

pub(crate) mod compressed;
pub(crate) mod field_info;
pub(crate) mod java_string;
pub(crate) mod line_numbers;
pub(crate) mod scopes;
pub(crate) mod unsigned5;

/// A decoder's refusal of its input (public as [`crate::error::CodecError`]).
pub(crate) use crate::error::CodecError;
