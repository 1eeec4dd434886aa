//! An `InstanceKlass`'s field metadata, in both of HotSpot's formats: what gives the offsets of
//! `java.lang.Thread.name`, `tid`, `eetop`, `String.value`, `coder` ... without libjvm's symbols
//! (`java_lang_Thread::_name_offset` and friends are not in vmStructs).
//!
//! Names and signatures come back as indices: into the holder's `ConstantPool` for Java fields
//! (`ConstantPool::symbol_at`), into `vmSymbols` for injected ones (`Symbol::vm_symbol_at`,
//! e.g. `Class.klass`); resolving them needs memory reads and is the caller's job.
//!
//! # JDK 21 and later: `InstanceKlass::_fieldinfo_stream` (an `Array<u1>`)
//! JDK-8292818 replaced the `u2` array with an UNSIGNED5 stream
//! (`openjdk/jdk:src/hotspot/share/oops/fieldInfo.{hpp,cpp,inline.hpp}`, tags jdk-21, jdk-25), always
//! in the zero-free alphabet ([`Variant::ExcludeZero`]):
//!
//! ```text
//! FieldInfoStream := j=num_java_fields k=num_injected_fields Field[j+k] End
//! Field           := name_index signature_index offset access_flags field_flags Optionals(field_flags)
//! Optionals(f)    := initializer_index?  [f & 1 << _ff_initialized]
//!                    generic_signature?  [f & 1 << _ff_generic]
//!                    contention_group?   [f & 1 << _ff_contended]
//! End             := 0   (jdk-21; later releases drop it: "now we check limits instead")
//! ```
//!
//! `FieldInfo::FieldFlags` bit positions (fieldInfo.hpp): `_ff_initialized` 0, `_ff_injected`
//! 1, `_ff_generic` 2, `_ff_stable` 3, `_ff_contended` 4 ([`FieldFlagBits::HOTSPOT`]; the target
//! exports them as `FieldInfo::FieldFlags::_ff_*` int constants). (Project Valhalla builds add
//! more optional items; they are not read here.)
//!
//! # JDK 8 to 20: `InstanceKlass::_fields` (an `Array<u2>`)
//! Each field is `FieldInfo::field_slots` (6) shorts: `access_flags, name_index,
//! signature_index, initval_index, low_packed, high_packed` (`oops/fieldInfo.hpp`; the slot
//! offsets are the `FieldInfo::*_offset` int constants). The Java fields come first
//! (`InstanceKlass::_java_fields_count`), then the injected ones (flag `JVM_ACC_FIELD_INTERNAL`
//! 0x0400), then one extra short per field that has `JVM_ACC_FIELD_HAS_GENERIC_SIGNATURE`
//! (0x0800): its generic signature index, in field order (`oops/fieldStreams.hpp`
//! `init_generic_signature_start_slot`, which also gives the field count).
//! The offset is `(high << 16 | low) >> FIELDINFO_TAG_SIZE` once the low tag bits say it is set:
//!
//! * JDK 8 to 14 (jdk8u, jdk-11 `fieldInfo.hpp`): `FIELDINFO_TAG_SIZE` 2, tag `low & 3`:
//!   `0` blank, `1` `FIELDINFO_TAG_OFFSET` (an offset), `2` plain type, `3` contended type;
//! * JDK 15 to 20 (jdk-17 `fieldInfo.hpp`, after JDK-8237767's field layout rewrite): bit 0
//!   `FIELDINFO_TAG_OFFSET` (an offset), bit 1 `FIELDINFO_TAG_CONTENDED`.
//!
//! In both, a laid-out field's tag is `01`; the difference shows only before layout.

use super::CodecError;
use super::unsigned5::{Reader, Variant};

/// `JVM_ACC_STATIC`: a static field (its offset is into the class's `java.lang.Class` mirror).
pub(crate) const JVM_ACC_STATIC: u32 = 0x0008;

/// One field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct FieldInfo {
    /// The name: a constant pool index, or a `vmSymbols` index if [`Self::is_injected`].
    pub(crate) name_index: u16,
    /// The signature (`Ljava/lang/String;`, `J` ...), indexed the same way.
    pub(crate) signature_index: u16,
    /// Byte offset in the object (in the mirror for static fields); `None` for a JDK ≤ 20 field
    /// whose tag says the offset is not set (a class not yet linked).
    pub(crate) offset: Option<u32>,
    /// The class file's access flags (JDK ≤ 20: with HotSpot's `JVM_ACC_FIELD_*` bits).
    pub(crate) access_flags: u32,
    /// Injected by the JVM (not in the class file).
    pub(crate) is_injected: bool,
    /// ConstantValue attribute index (0: none).
    pub(crate) initializer_index: u16,
    /// Generic Signature attribute index (0: none).
    pub(crate) generic_signature_index: u16,
    /// `@Contended` group (JDK 21+ stream only; 0 otherwise).
    pub(crate) contention_group: u16,
    /// The JDK 21+ `FieldFlags` word (0 in the JDK ≤ 20 format).
    pub(crate) field_flags: u32,
}

impl FieldInfo {
    /// `JVM_ACC_STATIC` is set.
    pub(crate) fn is_static(&self) -> bool {
        self.access_flags & JVM_ACC_STATIC != 0
    }
}

/// The decoded fields of one class.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Fields {
    /// How many of [`Self::fields`] are Java fields (they come first).
    pub(crate) java_fields: u32,
    /// All fields, Java then injected, in declaration order.
    pub(crate) fields: Vec<FieldInfo>,
}

/// Bit positions of `FieldInfo::FieldFlags` (JDK 21+).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldFlagBits {
    /// `_ff_initialized`: an initializer index follows.
    pub(crate) initialized: u32,
    /// `_ff_injected`.
    pub(crate) injected: u32,
    /// `_ff_generic`: a generic signature index follows.
    pub(crate) generic: u32,
    /// `_ff_contended`: a contention group follows.
    pub(crate) contended: u32,
}

impl FieldFlagBits {
    /// The positions in jdk-21 and jdk-25 `fieldInfo.hpp`.
    pub(crate) const HOTSPOT: Self = Self {
        initialized: 0,
        injected: 1,
        generic: 2,
        contended: 4,
    };

    fn test(flags: u32, bit: u32) -> bool {
        bit < 32 && flags & (1 << bit) != 0
    }
}

/// A stream value that must fit in a `u2` (HotSpot's `checked_cast<u2>`).
fn u2(value: u32, at: usize) -> Result<u16, CodecError> {
    u16::try_from(value).map_err(|_| CodecError::Malformed {
        what: "field info stream",
        at,
        why: "an index larger than a u2",
    })
}

/// Decodes a JDK 21+ `_fieldinfo_stream` (the `Array<u1>`'s data; trailing bytes — the 0
/// terminator of jdk-21 — are not read).
///
/// # Errors
/// [`CodecError::TooMany`] if the header counts more than `max_fields` fields;
/// [`CodecError::Malformed`] for an index above `u16::MAX` or a zero byte inside a field;
/// [`CodecError::Truncated`] if the data ends before the last field.
pub(crate) fn decode_fieldinfo_stream(
    bytes: &[u8],
    bits: &FieldFlagBits,
    max_fields: usize,
) -> Result<Fields, CodecError> {
    let mut r = Reader::new(bytes, Variant::ExcludeZero);
    let java_fields = r.next_uint()?;
    let injected_fields = r.next_uint()?;
    let total = u64::from(java_fields) + u64::from(injected_fields);
    if total > max_fields as u64 {
        return Err(CodecError::TooMany {
            what: "fields",
            count: total,
            max: max_fields as u64,
        });
    }
    let mut fields = Vec::with_capacity(total as usize);
    for _ in 0..total {
        let at = r.position();
        let name_index = u2(r.next_uint()?, at)?;
        let signature_index = u2(r.next_uint()?, at)?;
        let offset = r.next_uint()?;
        let access_flags = r.next_uint()?;
        let field_flags = r.next_uint()?;
        let mut optional = |bit: u32| -> Result<u16, CodecError> {
            if FieldFlagBits::test(field_flags, bit) {
                u2(r.next_uint()?, at)
            } else {
                Ok(0)
            }
        };
        let initializer_index = optional(bits.initialized)?;
        let generic_signature_index = optional(bits.generic)?;
        let contention_group = optional(bits.contended)?;
        fields.push(FieldInfo {
            name_index,
            signature_index,
            offset: Some(offset),
            access_flags,
            is_injected: FieldFlagBits::test(field_flags, bits.injected),
            initializer_index,
            generic_signature_index,
            contention_group,
            field_flags,
        });
    }
    Ok(Fields {
        java_fields,
        fields,
    })
}

/// The JDK ≤ 20 `_fields` array's layout (the `FieldInfo::*_offset`, `FIELDINFO_TAG_*` and
/// `JVM_ACC_FIELD_*` int constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldsArrayLayout {
    /// `FieldInfo::field_slots`: shorts per field.
    pub(crate) field_slots: usize,
    /// `FieldInfo::access_flags_offset`.
    pub(crate) access_flags_offset: usize,
    /// `FieldInfo::name_index_offset`.
    pub(crate) name_index_offset: usize,
    /// `FieldInfo::signature_index_offset`.
    pub(crate) signature_index_offset: usize,
    /// `FieldInfo::initval_index_offset`.
    pub(crate) initval_index_offset: usize,
    /// `FieldInfo::low_packed_offset`.
    pub(crate) low_packed_offset: usize,
    /// `FieldInfo::high_packed_offset`.
    pub(crate) high_packed_offset: usize,
    /// `FIELDINFO_TAG_SIZE`: tag bits below the offset.
    pub(crate) tag_size: u32,
    /// The tag bits that say "offset set": `FIELDINFO_TAG_MASK` (3) in JDK 8–14,
    /// `FIELDINFO_TAG_OFFSET` (1) in JDK 15–20.
    pub(crate) offset_tag_mask: u16,
    /// Their value when it is: `FIELDINFO_TAG_OFFSET` (1).
    pub(crate) offset_tag: u16,
    /// `JVM_ACC_FIELD_INTERNAL`: an injected field.
    pub(crate) acc_field_internal: u16,
    /// `JVM_ACC_FIELD_HAS_GENERIC_SIGNATURE`: a generic signature slot at the end.
    pub(crate) acc_field_has_generic_signature: u16,
}

impl FieldsArrayLayout {
    /// jdk8u and jdk-11 (to 14).
    pub(crate) const JDK8: Self = Self {
        field_slots: 6,
        access_flags_offset: 0,
        name_index_offset: 1,
        signature_index_offset: 2,
        initval_index_offset: 3,
        low_packed_offset: 4,
        high_packed_offset: 5,
        tag_size: 2,
        offset_tag_mask: 3,
        offset_tag: 1,
        acc_field_internal: 0x0400,
        acc_field_has_generic_signature: 0x0800,
    };

    /// jdk-15 to jdk-20 (jdk-17).
    pub(crate) const JDK15: Self = Self {
        offset_tag_mask: 1,
        ..Self::JDK8
    };

    /// The layout of a JVM of this feature release (≤ 20).
    pub(crate) fn for_jdk(jdk_major: u32) -> Self {
        if jdk_major >= 15 {
            Self::JDK15
        } else {
            Self::JDK8
        }
    }

    fn check(&self) -> Result<(), CodecError> {
        let slots = [
            self.access_flags_offset,
            self.name_index_offset,
            self.signature_index_offset,
            self.initval_index_offset,
            self.low_packed_offset,
            self.high_packed_offset,
        ];
        let ok = (1..=64).contains(&self.field_slots)
            && slots.iter().all(|&s| s < self.field_slots)
            && self.tag_size < 32;
        if ok {
            Ok(())
        } else {
            Err(CodecError::Malformed {
                what: "FieldInfo layout",
                at: 0,
                why: "a slot outside FieldInfo::field_slots",
            })
        }
    }
}

/// Decodes a JDK ≤ 20 `_fields` array (the `Array<u2>`'s data, `2 * _length` bytes,
/// little-endian). `java_fields_count` is `InstanceKlass::_java_fields_count`.
///
/// # Errors
/// [`CodecError::Malformed`] for an odd byte count, an impossible layout, more Java fields than
/// fields, or a generic signature slot outside the array; [`CodecError::TooMany`] for more than
/// `max_fields` fields.
pub(crate) fn decode_fields_array(
    bytes: &[u8],
    java_fields_count: u16,
    layout: &FieldsArrayLayout,
    max_fields: usize,
) -> Result<Fields, CodecError> {
    layout.check()?;
    if !bytes.len().is_multiple_of(2) {
        return Err(CodecError::Malformed {
            what: "fields array",
            at: bytes.len() - 1,
            why: "an odd number of bytes for an Array<u2>",
        });
    }
    let shorts: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let slot = |field: usize, off: usize| shorts.get(field * layout.field_slots + off).copied();
    // init_generic_signature_start_slot: every field with a generic signature takes one short
    // off the end, so count fields while they fit in what is left.
    let mut length = shorts.len();
    let mut count = 0usize;
    while (count + 1) * layout.field_slots <= length {
        let flags = slot(count, layout.access_flags_offset).unwrap_or(0);
        if flags & layout.acc_field_has_generic_signature != 0 {
            length -= 1;
        }
        count += 1;
        if count > max_fields {
            return Err(CodecError::TooMany {
                what: "fields",
                count: count as u64,
                max: max_fields as u64,
            });
        }
    }
    if usize::from(java_fields_count) > count {
        return Err(CodecError::Malformed {
            what: "fields array",
            at: bytes.len(),
            why: "more Java fields than fields",
        });
    }
    let mut generic_slot = length;
    let mut fields = Vec::with_capacity(count);
    for i in 0..count {
        let at = i * layout.field_slots * 2;
        let get = |off: usize| {
            slot(i, off).ok_or(CodecError::Truncated {
                what: "fields array",
                at: bytes.len(),
            })
        };
        let flags = get(layout.access_flags_offset)?;
        let low = get(layout.low_packed_offset)?;
        let high = get(layout.high_packed_offset)?;
        let offset = (low & layout.offset_tag_mask == layout.offset_tag)
            .then(|| ((u32::from(high) << 16) | u32::from(low)) >> layout.tag_size);
        let generic_signature_index = if flags & layout.acc_field_has_generic_signature != 0 {
            let index = shorts
                .get(generic_slot)
                .copied()
                .ok_or(CodecError::Malformed {
                    what: "fields array",
                    at,
                    why: "a generic signature slot past the end",
                })?;
            generic_slot += 1;
            index
        } else {
            0
        };
        fields.push(FieldInfo {
            name_index: get(layout.name_index_offset)?,
            signature_index: get(layout.signature_index_offset)?,
            offset,
            access_flags: u32::from(flags),
            is_injected: flags & layout.acc_field_internal != 0,
            initializer_index: get(layout.initval_index_offset)?,
            generic_signature_index,
            contention_group: 0,
            field_flags: 0,
        });
    }
    Ok(Fields {
        java_fields: u32::from(java_fields_count),
        fields,
    })
}

/// Encoders following `FieldInfoStream::create_FieldInfoStream` / `Mapper::map_field_info`
/// (JDK 21+) and `ClassFileParser`'s `_fields` array (JDK ≤ 20), for the tests.
#[cfg(test)]
pub(crate) mod test_encoder {
    use super::super::unsigned5::{Variant, test_encoder::write_uint};
    use super::{FieldFlagBits, FieldInfo, FieldsArrayLayout};

    /// The stream, with the jdk-21 terminator if `terminated`.
    pub(crate) fn stream(
        java: u32,
        fields: &[FieldInfo],
        bits: &FieldFlagBits,
        terminated: bool,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let w = |out: &mut Vec<u8>, v: u32| write_uint(out, v, Variant::ExcludeZero);
        w(&mut out, java);
        w(&mut out, fields.len() as u32 - java);
        for f in fields {
            w(&mut out, f.name_index.into());
            w(&mut out, f.signature_index.into());
            w(&mut out, f.offset.unwrap_or(0));
            w(&mut out, f.access_flags);
            w(&mut out, f.field_flags);
            if FieldFlagBits::test(f.field_flags, bits.initialized) {
                w(&mut out, f.initializer_index.into());
            }
            if FieldFlagBits::test(f.field_flags, bits.generic) {
                w(&mut out, f.generic_signature_index.into());
            }
            if FieldFlagBits::test(f.field_flags, bits.contended) {
                w(&mut out, f.contention_group.into());
            }
        }
        if terminated {
            out.push(0);
        }
        out
    }

    /// The `_fields` array bytes: field records, then the generic signature slots.
    pub(crate) fn array(fields: &[FieldInfo], layout: &FieldsArrayLayout) -> Vec<u8> {
        let mut shorts = Vec::new();
        let mut generics = Vec::new();
        for f in fields {
            let mut rec = vec![0u16; layout.field_slots];
            rec[layout.access_flags_offset] = f.access_flags as u16;
            rec[layout.name_index_offset] = f.name_index;
            rec[layout.signature_index_offset] = f.signature_index;
            rec[layout.initval_index_offset] = f.initializer_index;
            if let Some(offset) = f.offset {
                // FieldInfo::set_offset
                let packed = (offset << layout.tag_size) | u32::from(layout.offset_tag);
                rec[layout.low_packed_offset] = packed as u16;
                rec[layout.high_packed_offset] = (packed >> 16) as u16;
            }
            shorts.extend(rec);
            if f.access_flags as u16 & layout.acc_field_has_generic_signature != 0 {
                generics.push(f.generic_signature_index);
            }
        }
        shorts.extend(generics);
        shorts.iter().flat_map(|s| s.to_le_bytes()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: u16, sig: u16, offset: u32, access: u32) -> FieldInfo {
        FieldInfo {
            name_index: name,
            signature_index: sig,
            offset: Some(offset),
            access_flags: access,
            ..FieldInfo::default()
        }
    }

    /// A `java.lang.Thread`-like class: `name` (generic-free), `tid` (initialized), a contended
    /// generic field, and an injected field.
    fn stream_fields() -> Vec<FieldInfo> {
        let bits = FieldFlagBits::HOTSPOT;
        vec![
            field(12, 13, 16, 0x0002),
            FieldInfo {
                initializer_index: 44,
                field_flags: 1 << bits.initialized,
                ..field(14, 15, 24, 0x0012)
            },
            FieldInfo {
                generic_signature_index: 300,
                contention_group: 2,
                field_flags: (1 << bits.generic) | (1 << bits.contended) | (1 << 3),
                ..field(16, 17, 0x1_0000, 0x0008)
            },
            FieldInfo {
                is_injected: true,
                field_flags: 1 << bits.injected,
                ..field(400, 401, 40, 0x1002)
            },
        ]
    }

    #[test]
    fn fieldinfo_stream_round_trips() {
        let bits = FieldFlagBits::HOTSPOT;
        let fields = stream_fields();
        for terminated in [true, false] {
            let bytes = test_encoder::stream(3, &fields, &bits, terminated);
            let got = decode_fieldinfo_stream(&bytes, &bits, 100).expect("decodes");
            assert_eq!(
                got,
                Fields {
                    java_fields: 3,
                    fields: fields.clone()
                }
            );
            assert!(got.fields[2].is_static() && !got.fields[0].is_static());
        }
    }

    #[test]
    fn fieldinfo_stream_errors() {
        let bits = FieldFlagBits::HOTSPOT;
        let bytes = test_encoder::stream(3, &stream_fields(), &bits, false);
        assert!(matches!(
            decode_fieldinfo_stream(&bytes, &bits, 3),
            Err(CodecError::TooMany { .. })
        ));
        assert!(matches!(
            decode_fieldinfo_stream(&bytes[..bytes.len() - 1], &bits, 10),
            Err(CodecError::Truncated { .. })
        ));
        assert!(decode_fieldinfo_stream(&[], &bits, 10).is_err());
        // A name index above u16::MAX.
        let mut big = Vec::new();
        for v in [1, 0, 70_000, 1, 1, 1, 0] {
            super::super::unsigned5::test_encoder::write_uint(&mut big, v, Variant::ExcludeZero);
        }
        assert!(matches!(
            decode_fieldinfo_stream(&big, &bits, 10),
            Err(CodecError::Malformed { .. })
        ));
        // Huge header counts are refused before any allocation.
        let mut huge = Vec::new();
        for v in [u32::MAX, u32::MAX] {
            super::super::unsigned5::test_encoder::write_uint(&mut huge, v, Variant::ExcludeZero);
        }
        assert!(matches!(
            decode_fieldinfo_stream(&huge, &bits, 1000),
            Err(CodecError::TooMany { .. })
        ));
    }

    fn array_fields() -> Vec<FieldInfo> {
        vec![
            field(10, 11, 12, 0x0002),
            FieldInfo {
                generic_signature_index: 77,
                ..field(20, 21, 16, 0x0002 | 0x0800)
            },
            FieldInfo {
                initializer_index: 5,
                ..field(22, 23, 112, 0x0018)
            },
            FieldInfo {
                generic_signature_index: 78,
                ..field(24, 25, 0x2_0004, 0x0001 | 0x0800)
            },
            FieldInfo {
                is_injected: true,
                ..field(30, 31, 40, 0x1002 | 0x0400)
            },
        ]
    }

    #[test]
    fn fields_array_round_trips_for_both_tag_schemes() {
        for layout in [FieldsArrayLayout::JDK8, FieldsArrayLayout::JDK15] {
            let fields = array_fields();
            let bytes = test_encoder::array(&fields, &layout);
            assert_eq!(bytes.len(), 2 * (5 * 6 + 2));
            let got = decode_fields_array(&bytes, 4, &layout, 100).expect("decodes");
            assert_eq!(
                got,
                Fields {
                    java_fields: 4,
                    fields
                }
            );
        }
        assert_eq!(FieldsArrayLayout::for_jdk(11), FieldsArrayLayout::JDK8);
        assert_eq!(FieldsArrayLayout::for_jdk(17), FieldsArrayLayout::JDK15);
    }

    #[test]
    fn fields_array_tags_before_layout() {
        // Before layout there is no offset. JDK 8's tags 2 (plain type) and 3 (contended type)
        // and JDK 15's 0b10 (contended) all say so; JDK 15 would misread JDK 8's tag 3, so the
        // scheme matters.
        let decode = |tag: u16, layout: &FieldsArrayLayout| {
            let rec = [0u16, 1, 2, 0, tag, 9];
            let bytes: Vec<u8> = rec.iter().flat_map(|s| s.to_le_bytes()).collect();
            decode_fields_array(&bytes, 1, layout, 10)
                .expect("decodes")
                .fields[0]
                .offset
        };
        assert_eq!(decode(2, &FieldsArrayLayout::JDK8), None);
        assert_eq!(decode(3, &FieldsArrayLayout::JDK8), None);
        assert_eq!(decode(2, &FieldsArrayLayout::JDK15), None);
        assert_eq!(decode(3, &FieldsArrayLayout::JDK15), Some(9 << 14));
        assert_eq!(
            decode(1 | (5 << 2), &FieldsArrayLayout::JDK8),
            Some((9 << 14) | 5)
        );
    }

    #[test]
    fn fields_array_errors() {
        let layout = FieldsArrayLayout::JDK15;
        let bytes = test_encoder::array(&array_fields(), &layout);
        assert!(matches!(
            decode_fields_array(&bytes[..bytes.len() - 1], 4, &layout, 10),
            Err(CodecError::Malformed { .. })
        ));
        assert!(matches!(
            decode_fields_array(&bytes, 6, &layout, 10),
            Err(CodecError::Malformed { .. })
        ));
        assert!(matches!(
            decode_fields_array(&bytes, 4, &layout, 4),
            Err(CodecError::TooMany { .. })
        ));
        // Lose the generic signature slots: as in HotSpot's count, the last record becomes the
        // slots, and a class that declared five Java fields is found out.
        let cut = &bytes[..bytes.len() - 4];
        assert_eq!(
            decode_fields_array(cut, 4, &layout, 10).map(|f| f.fields.len()),
            Ok(4)
        );
        assert!(decode_fields_array(cut, 5, &layout, 10).is_err());
        let bad = FieldsArrayLayout {
            high_packed_offset: 6,
            ..layout
        };
        assert!(decode_fields_array(&bytes, 4, &bad, 10).is_err());
        assert_eq!(
            decode_fields_array(&[], 0, &layout, 10),
            Ok(Fields::default())
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512), java in proptest::num::u16::ANY) {
            let _ = decode_fieldinfo_stream(&bytes, &FieldFlagBits::HOTSPOT, 64);
            let odd = FieldFlagBits { initialized: 40, injected: 31, generic: 99, contended: 0 };
            let _ = decode_fieldinfo_stream(&bytes, &odd, 64);
            for layout in [FieldsArrayLayout::JDK8, FieldsArrayLayout::JDK15] {
                if let Ok(f) = decode_fields_array(&bytes, java % 8, &layout, 64) {
                    proptest::prop_assert!(f.fields.len() <= 64);
                }
            }
        }

        #[test]
        fn any_stream_round_trips(raw in proptest::collection::vec((proptest::num::u16::ANY, proptest::num::u16::ANY, proptest::num::u32::ANY, 0u32..0x10000, 0u32..32, proptest::num::u16::ANY), 0..30), java_frac in 0usize..=100) {
            let bits = FieldFlagBits::HOTSPOT;
            let fields: Vec<FieldInfo> = raw.iter().map(|&(n, s, off, acc, ff, extra)| FieldInfo {
                name_index: n, signature_index: s, offset: Some(off), access_flags: acc,
                is_injected: FieldFlagBits::test(ff, bits.injected),
                initializer_index: if FieldFlagBits::test(ff, bits.initialized) { extra } else { 0 },
                generic_signature_index: if FieldFlagBits::test(ff, bits.generic) { extra.wrapping_add(1) } else { 0 },
                contention_group: if FieldFlagBits::test(ff, bits.contended) { extra.wrapping_add(2) } else { 0 },
                field_flags: ff,
            }).collect();
            let java = (fields.len() * java_frac / 100) as u32;
            let bytes = test_encoder::stream(java, &fields, &bits, true);
            let got = decode_fieldinfo_stream(&bytes, &bits, 64).expect("decodes");
            proptest::prop_assert_eq!(got, Fields { java_fields: java, fields });
        }
    }
}
