//! Bounds-checked walk of a PerfData buffer. Every field is untrusted: each offset and length is
//! checked against the buffer before use, nothing is allocated from a size the buffer gives that is
//! not already backed by bytes of the buffer, and every loop is bounded by the buffer's length.

use super::{
    ByteOrder, Counter, ENTRY_HEADER_SIZE, MAGIC, PROLOGUE_SIZE, Prologue, Snapshot, Units, Value,
    Variability,
};
use crate::memory::LeBytes;

/// Why a buffer is not a valid PerfData region, and where (byte offset into the buffer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed PerfData at offset {offset:#x}: {reason}")]
pub struct ParseError {
    /// Byte offset into the buffer of the field at fault.
    pub offset: usize,
    /// What is wrong, in words.
    pub reason: String,
}

fn err<T>(offset: usize, reason: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        offset,
        reason: reason.into(),
    })
}

struct Fields<'a> {
    buf: &'a [u8],
    order: ByteOrder,
}

impl Fields<'_> {
    fn bytes<const N: usize>(&self, at: usize, what: &str) -> Result<[u8; N], ParseError> {
        match LeBytes::new(self.buf).array::<N>(at) {
            Some(b) => Ok(b),
            None => err(
                at,
                format!(
                    "{what} lies past the end of the {}-byte buffer",
                    self.buf.len()
                ),
            ),
        }
    }

    fn i32(&self, at: usize, what: &str) -> Result<i32, ParseError> {
        let b = self.bytes::<4>(at, what)?;
        Ok(match self.order {
            ByteOrder::Big => i32::from_be_bytes(b),
            ByteOrder::Little => i32::from_le_bytes(b),
        })
    }

    fn i64(&self, at: usize, what: &str) -> Result<i64, ParseError> {
        let b = self.bytes::<8>(at, what)?;
        Ok(match self.order {
            ByteOrder::Big => i64::from_be_bytes(b),
            ByteOrder::Little => i64::from_le_bytes(b),
        })
    }

    /// A non-negative `jint` as an offset or length.
    fn len(&self, at: usize, what: &str) -> Result<usize, ParseError> {
        let v = self.i32(at, what)?;
        usize::try_from(v).or_else(|_| err(at, format!("{what} is negative ({v})")))
    }
}

/// Parses a PerfData region: the prologue, every entry up to `num_entries` (or up to a zero
/// `entry_length`, the tail the VM is still writing), then appends jvmstat's pseudo counters
/// `sun.perfdata.{majorVersion,minorVersion,size,used,overflow,timestamp}`.
///
/// `buf` is the whole region (`PerfMemory::_capacity` bytes, or the whole hsperfdata file); its
/// length becomes `sun.perfdata.size`. Accessibility is reported in the prologue, not checked here.
///
/// # Errors
/// A [`ParseError`] with the offset and the rule broken: short buffer, bad magic, unknown byte
/// order, a version other than 2.0, `used`/`entry_offset`/`num_entries` out of range, and for each
/// entry a length, name or data that does not fit, a misaligned entry, a name without NUL or not
/// UTF-8, unknown units or variability. The offset is that of the field at fault and always lies
/// inside the buffer (0 for a buffer shorter than the prologue).
pub fn parse(buf: &[u8]) -> Result<Snapshot, ParseError> {
    parse_reusing(buf, Vec::new())
}

/// [`parse`], reusing the allocations of `spare`, the counters of an earlier snapshot of the same
/// region (for repeated samples): an entry whose name is byte for byte the name of the counter at
/// the same position keeps that counter's `String`, and a string value overwrites the old one's
/// buffer. The result, and any error, is exactly [`parse`]'s.
///
/// # Errors
/// As [`parse`].
pub fn parse_reusing(buf: &[u8], spare: Vec<Counter>) -> Result<Snapshot, ParseError> {
    let prologue = parse_prologue(buf)?;
    let mut spare = spare.into_iter();
    let f = Fields {
        buf,
        order: prologue.byte_order,
    };
    // Entries live in [entry_offset, used): `PerfMemory::alloc` bumps `used` before it writes.
    let limit = prologue.used as usize;
    let num_entries = prologue.num_entries as usize;
    let mut counters = Vec::with_capacity(num_entries.min(limit / ENTRY_HEADER_SIZE) + 6);
    let mut at = prologue.entry_offset as usize;
    let mut tail_in_progress = false;
    for index in 0..num_entries {
        if at + 4 > limit {
            // Not even an `entry_length` fits before `used`: `num_entries` counts entries that are
            // not there (`at` may be the buffer's end, so the fault is reported at the count).
            return err(
                28,
                format!(
                    "num_entries = {num_entries}, but entry {index} would start at offset {at:#x}, \
                     with less than 4 bytes left before used = {limit}"
                ),
            );
        }
        if !at.is_multiple_of(4) {
            return err(
                at,
                format!("entry {index} is misaligned (offset not a multiple of 4)"),
            );
        }
        if at + ENTRY_HEADER_SIZE > limit {
            // The header is not even reserved yet: only possible while `used` races ahead.
            if f.i32(at, "entry_length")? == 0 {
                tail_in_progress = true;
                break;
            }
            return err(
                at,
                format!("entry {index} header runs past used ({limit} bytes)"),
            );
        }
        match parse_entry(&f, at, limit, index, spare.next())? {
            Some((counter, length)) => {
                counters.push(counter);
                at += length;
            }
            None => {
                tail_in_progress = true;
                break;
            }
        }
    }
    push_pseudo_counters(&mut counters, &prologue, buf.len());
    Ok(Snapshot {
        prologue,
        size: buf.len(),
        counters,
        tail_in_progress,
    })
}

fn parse_prologue(buf: &[u8]) -> Result<Prologue, ParseError> {
    if buf.len() < PROLOGUE_SIZE {
        return err(
            0,
            format!(
                "buffer is {} bytes, shorter than the {PROLOGUE_SIZE}-byte prologue",
                buf.len()
            ),
        );
    }
    if buf[0..4] != MAGIC {
        return err(
            0,
            format!(
                "bad magic {:02x?}, expected ca fe c0 c0 (not a PerfData region)",
                &buf[0..4]
            ),
        );
    }
    let byte_order = match buf[4] {
        0 => ByteOrder::Big,
        1 => ByteOrder::Little,
        b => {
            return err(
                4,
                format!("unknown byte order {b} (0 = big endian, 1 = little endian)"),
            );
        }
    };
    let f = Fields {
        buf,
        order: byte_order,
    };
    let (major_version, minor_version) = (buf[5], buf[6]);
    if (major_version, minor_version) != (2, 0) {
        return err(
            5,
            format!(
                "PerfData version {major_version}.{minor_version} is not supported (only 2.0, written by HotSpot since JDK 1.4.2)"
            ),
        );
    }
    let used = f.i32(8, "used")?;
    if used < PROLOGUE_SIZE as i32 || used as usize > buf.len() {
        return err(
            8,
            format!(
                "used = {used} is outside [{PROLOGUE_SIZE}, {}] (the buffer size)",
                buf.len()
            ),
        );
    }
    let overflow = f.i32(12, "overflow")?;
    if overflow < 0 {
        return err(12, format!("overflow is negative ({overflow})"));
    }
    let mod_time_stamp = f.i64(16, "mod_time_stamp")?;
    let entry_offset = f.i32(24, "entry_offset")?;
    if entry_offset < PROLOGUE_SIZE as i32 || entry_offset > used {
        return err(
            24,
            format!("entry_offset = {entry_offset} is outside [{PROLOGUE_SIZE}, used = {used}]"),
        );
    }
    let num_entries = f.i32(28, "num_entries")?;
    if num_entries < 0 {
        return err(28, format!("num_entries is negative ({num_entries})"));
    }
    Ok(Prologue {
        byte_order,
        major_version,
        minor_version,
        accessible: buf[7] != 0,
        used,
        overflow,
        mod_time_stamp,
        entry_offset,
        num_entries,
    })
}

/// Parses the entry at `at`; `Ok(None)` for a zero `entry_length` (the end of what is written).
fn parse_entry(
    f: &Fields,
    at: usize,
    limit: usize,
    index: usize,
    spare: Option<Counter>,
) -> Result<Option<(Counter, usize)>, ParseError> {
    let e = EntryAt { at, index };
    let Some(h) = EntryHeader::read(f, e, limit)? else {
        return Ok(None);
    };
    let entry = &f.buf[at..at + h.length];
    let (spare_name, spare_value) = match spare {
        Some(c) => (Some(c.name), Some(c.value)),
        None => (None, None),
    };
    let name = h.name(entry, e, spare_name)?;
    let units =
        Units::from_code(h.units_code).ok_or_else(|| e.unknown_units(&name, h.units_code))?;
    let variability = Variability::from_code(h.variability_code)
        .ok_or_else(|| e.unknown_variability(&name, h.variability_code))?;
    let value = h.value(entry, f.order, units, e, &name, spare_value)?;
    let counter = Counter {
        name,
        value,
        units,
        variability,
        supported: h.flags & 1 != 0,
        offset: Some(at),
    };
    Ok(Some((counter, h.length)))
}

/// The `PerfDataEntry` header (`perfMemory.hpp`): `entry_length` @0, `name_offset` @4,
/// `vector_length` @8, `data_type` @12, `flags` @13, `data_units` @14, `data_variability` @15,
/// `data_offset` @16; offsets are from the entry's start.
struct EntryHeader {
    length: usize,
    name_offset: usize,
    vector_length: usize,
    type_code: u8,
    flags: u8,
    units_code: u8,
    variability_code: u8,
    data_offset: usize,
}

impl EntryHeader {
    /// The header at `e.at`, checked against the entry's bounds; `None` for `entry_length` 0.
    fn read(f: &Fields, e: EntryAt, limit: usize) -> Result<Option<Self>, ParseError> {
        let at = e.at;
        let length = f.len(at, "entry_length").map_err(|x| e.field(x))?;
        if length == 0 {
            return Ok(None);
        }
        if length < ENTRY_HEADER_SIZE || length > limit - at {
            return Err(e.length_out_of_range(length, limit - at));
        }
        let name_offset = f.len(at + 4, "name_offset").map_err(|x| e.field(x))?;
        let vector_length = f.len(at + 8, "vector_length").map_err(|x| e.field(x))?;
        let data_offset = f.len(at + 16, "data_offset").map_err(|x| e.field(x))?;
        // In bounds: `length >= ENTRY_HEADER_SIZE` and the entry lies in the buffer.
        let b = &f.buf[at..at + ENTRY_HEADER_SIZE];
        let h = EntryHeader {
            length,
            name_offset,
            vector_length,
            type_code: b[12],
            flags: b[13],
            units_code: b[14],
            variability_code: b[15],
            data_offset,
        };
        if name_offset < ENTRY_HEADER_SIZE || name_offset >= length {
            return Err(e.name_offset_out_of_range(&h));
        }
        if data_offset < name_offset || data_offset > length {
            return Err(e.data_offset_out_of_range(&h));
        }
        Ok(Some(h))
    }

    /// The NUL-terminated UTF-8 name in `[name_offset, data_offset)`.
    /// `spare`: the name of the counter this entry had in an earlier snapshot, kept when equal.
    fn name(&self, entry: &[u8], e: EntryAt, spare: Option<String>) -> Result<String, ParseError> {
        let name_area = &entry[self.name_offset..self.data_offset];
        if let Some(old) = spare {
            // Equal bytes followed by a NUL: the same name, already checked non-empty UTF-8.
            if !old.is_empty()
                && name_area.get(old.len()) == Some(&0)
                && name_area.starts_with(old.as_bytes())
            {
                return Ok(old);
            }
        }
        let Some(nul) = name_area.iter().position(|&b| b == 0) else {
            return Err(e.name_without_nul(self));
        };
        if nul == 0 {
            return Err(e.empty_name(self));
        }
        std::str::from_utf8(&name_area[..nul])
            .map(str::to_owned)
            .map_err(|u| e.name_not_utf8(self, u.valid_up_to()))
    }

    /// The value at `data_offset`: a `'J'` scalar, a `'B'` vector (a string when the units say
    /// so), or an [`Value::Unsupported`] type reported as such.
    fn value(
        &self,
        entry: &[u8],
        order: ByteOrder,
        units: Units,
        e: EntryAt,
        name: &str,
        spare: Option<Value>,
    ) -> Result<Value, ParseError> {
        let data = &entry[self.data_offset..];
        Ok(match (self.type_code, self.vector_length) {
            (b'J', 0) => {
                let bytes: [u8; 8] = LeBytes::new(data)
                    .array(0)
                    .ok_or_else(|| e.long_past_entry(self, name, data.len()))?;
                Value::Long(match order {
                    ByteOrder::Big => i64::from_be_bytes(bytes),
                    ByteOrder::Little => i64::from_le_bytes(bytes),
                })
            }
            (b'B', n) if n > 0 => {
                let bytes = data
                    .get(..n)
                    .ok_or_else(|| e.vector_past_entry(self, name))?;
                if units == Units::String {
                    let end = bytes.iter().position(|&b| b == 0).unwrap_or(n);
                    let text = String::from_utf8_lossy(&bytes[..end]);
                    Value::String(match spare {
                        Some(Value::String(mut old)) => {
                            old.clear();
                            old.push_str(&text);
                            old
                        }
                        _ => text.into_owned(),
                    })
                } else {
                    Value::Bytes(bytes.to_vec())
                }
            }
            (type_code, n) => Value::Unsupported {
                type_code,
                vector_length: u32::try_from(n).unwrap_or(u32::MAX),
            },
        })
    }
}

/// Where an entry starts and its index: the errors about it, one constructor per rule, each
/// pointing at the field at fault.
#[derive(Clone, Copy)]
struct EntryAt {
    at: usize,
    index: usize,
}

impl EntryAt {
    fn error(self, offset: usize, reason: String) -> ParseError {
        ParseError { offset, reason }
    }

    /// A header field that could not be read at all, named as every error about the entry is.
    fn field(self, e: ParseError) -> ParseError {
        ParseError {
            reason: format!("entry {}: {}", self.index, e.reason),
            ..e
        }
    }

    fn length_out_of_range(self, length: usize, left: usize) -> ParseError {
        self.error(
            self.at,
            format!(
                "entry {}: entry_length {length} is outside [{ENTRY_HEADER_SIZE}, {left}] (bytes left before used)",
                self.index
            ),
        )
    }

    fn name_offset_out_of_range(self, h: &EntryHeader) -> ParseError {
        self.error(
            self.at + 4,
            format!(
                "entry {}: name_offset {} is outside [{ENTRY_HEADER_SIZE}, {}) (the entry)",
                self.index, h.name_offset, h.length
            ),
        )
    }

    fn data_offset_out_of_range(self, h: &EntryHeader) -> ParseError {
        self.error(
            self.at + 16,
            format!(
                "entry {}: data_offset {} is outside [name_offset = {}, entry_length = {}]",
                self.index, h.data_offset, h.name_offset, h.length
            ),
        )
    }

    fn name_without_nul(self, h: &EntryHeader) -> ParseError {
        self.error(
            self.at + h.name_offset,
            format!(
                "entry {}: name has no NUL before data_offset {}",
                self.index, h.data_offset
            ),
        )
    }

    fn empty_name(self, h: &EntryHeader) -> ParseError {
        self.error(
            self.at + h.name_offset,
            format!("entry {}: empty name", self.index),
        )
    }

    fn name_not_utf8(self, h: &EntryHeader, valid_up_to: usize) -> ParseError {
        self.error(
            self.at + h.name_offset + valid_up_to,
            format!("entry {}: name is not UTF-8", self.index),
        )
    }

    fn unknown_units(self, name: &str, code: u8) -> ParseError {
        self.error(
            self.at + 14,
            format!("entry {} ({name}): unknown data_units {code}", self.index),
        )
    }

    fn unknown_variability(self, name: &str, code: u8) -> ParseError {
        self.error(
            self.at + 15,
            format!(
                "entry {} ({name}): unknown data_variability {code}",
                self.index
            ),
        )
    }

    fn long_past_entry(self, h: &EntryHeader, name: &str, left: usize) -> ParseError {
        self.error(
            self.at + 16,
            format!(
                "entry {} ({name}): data_offset {} leaves {left} bytes before entry_length {}, too few for a jlong",
                self.index, h.data_offset, h.length
            ),
        )
    }

    fn vector_past_entry(self, h: &EntryHeader, name: &str) -> ParseError {
        self.error(
            self.at + 8,
            format!(
                "entry {} ({name}): vector_length {} runs past entry_length {}",
                self.index, h.vector_length, h.length
            ),
        )
    }
}

/// jvmstat's pseudo counters (`v2_0/PerfDataBuffer.buildPseudoMonitors`): prologue fields shown
/// as counters by jcmd `PerfCounter.print` and `jstat -snap`.
fn push_pseudo_counters(out: &mut Vec<Counter>, p: &Prologue, size: usize) {
    let pseudo = |name: &str, value: i64, units, variability| Counter {
        name: name.to_owned(),
        value: Value::Long(value),
        units,
        variability,
        supported: true,
        offset: None,
    };
    out.extend([
        pseudo(
            "sun.perfdata.majorVersion",
            p.major_version.into(),
            Units::None,
            Variability::Constant,
        ),
        pseudo(
            "sun.perfdata.minorVersion",
            p.minor_version.into(),
            Units::None,
            Variability::Constant,
        ),
        pseudo(
            "sun.perfdata.size",
            size as i64,
            Units::Bytes,
            Variability::Constant,
        ),
        pseudo(
            "sun.perfdata.used",
            p.used.into(),
            Units::Bytes,
            Variability::Monotonic,
        ),
        pseudo(
            "sun.perfdata.overflow",
            p.overflow.into(),
            Units::Bytes,
            Variability::Monotonic,
        ),
        pseudo(
            "sun.perfdata.timestamp",
            p.mod_time_stamp,
            Units::Ticks,
            Variability::Monotonic,
        ),
    ]);
}
