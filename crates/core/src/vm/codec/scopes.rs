//! An nmethod's debug information: its `PcDesc` rows and the `ScopeDesc`s, scope values and
//! monitors they point to in the scopes data (`openjdk/jdk:src/hotspot/share/code/`
//! `pcDesc.hpp`, `scopeDesc.cpp`, `debugInfo.{hpp,cpp}`, `debugInfoRec.cpp`, `location.hpp`;
//! tags jdk-11, jdk-17, jdk-21, jdk-25, and jdk8u's `hotspot/src/share/vm/code/`).
//!
//! # PcDesc rows
//! `scopes_pcs` is an array of `PcDesc { int _pc_offset; int _scope_decode_offset; int
//! _obj_decode_offset; int _flags; }` (vmStructs exports the offsets and `sizeof(PcDesc)`),
//! sorted by `_pc_offset` (bytes from the nmethod's `code_begin`), starting with a sentinel at
//! `lower_offset_limit` (-1) and ending with one at `upper_offset_limit` (`i32::MAX`)
//! (`DebugInformationRecorder`). [`find_pc_desc`] looks a pc up as `PcDescContainer::
//! find_pc_desc_internal` does.
//!
//! # ScopeDesc chains
//! A PcDesc's `_scope_decode_offset` is a byte offset into the scopes data (a compressed stream,
//! [`super::compressed`]: its alphabet changed in JDK 20) where the innermost scope is written as
//! six ints (`DebugInformationRecorder::describe_scope`, `ScopeDesc::decode_body`):
//! `sender_decode_offset, method_index, bci + 1, locals, expressions, monitors` — the bci is
//! written as `bci - InvocationEntryBci` (-1) so that -1 fits the unsigned encoding; the method
//! is an index into the nmethod's metadata table, 1-based (`nmethod::metadata_at`: index 0 is
//! null, else `metadata_begin()[index - 1]`). `sender_decode_offset` leads to the caller it was
//! inlined into; 0 (`serialized_null`) marks the outermost scope. A `_scope_decode_offset` of 0
//! is a sentinel scope: the nmethod's own method at the entry bci. Offset 0 never holds data (the
//! recorder writes a 0xFF pad byte there first).
//!
//! # Scope values and monitors
//! Locals, expressions and monitors are lists (`int length`, then the items) at the decode
//! offsets. A scope value starts with a tag (`ScopeValue::read_from`, debugInfo.cpp):
//!
//! | tag | value | JDK |
//! |---|---|---|
//! | 0 `LOCATION_CODE` | a [`Location`] (one int) | all |
//! | 1 `CONSTANT_INT_CODE` | signed int | all |
//! | 2 `CONSTANT_OOP_CODE` | int: 1-based index into the nmethod's oops table (0 = null) | all |
//! | 3 `CONSTANT_LONG_CODE` | long (two signed ints) | all |
//! | 4 `CONSTANT_DOUBLE_CODE` | double (two bit-reversed ints) | all |
//! | 5 `OBJECT_CODE` | a scalar-replaced object: id, [is_root bool, 22+], klass value, field count, fields | all |
//! | 6 `OBJECT_ID_CODE` | id of an object described earlier | all |
//! | 7 `AUTO_BOX_OBJECT_CODE` | as 5, for a boxing cache object | 9+ (jdk-11: yes; jdk8u: no) |
//! | 8 `MARKER_CODE` | nothing | 9+ (jdk-11: yes; jdk8u: no) |
//! | 9 `OBJECT_MERGE_CODE` | id, selector value, merge pointer value, candidate count, candidates | 22+ |
//!
//! The `is_root` byte of objects and the merge code came with JDK-8287061 (allocation merges,
//! JDK 22): [`DebugInfoFormat::for_jdk`] sets it from 22 on.
//! A monitor (`MonitorValue`) is `basic_lock` (a Location int), `owner` (a scope value: a
//! location for a live object, a constant oop, or an object for an eliminated allocation), then
//! an `eliminated` bool byte.

use super::CodecError;
use super::compressed::CompressedReadStream;
use super::unsigned5::Variant;

/// `DebugInformationRecorder::serialized_null`: the decode offset meaning "none".
pub(crate) const SERIALIZED_NULL: u32 = 0;

/// `PcDesc::lower_offset_limit`: the first row's (sentinel's) pc offset.
pub(crate) const PC_OFFSET_LOWER_LIMIT: i32 = -1;

/// `InvocationEntryBci`: the bci of a method's entry, before any bytecode.
pub(crate) const INVOCATION_ENTRY_BCI: i32 = -1;

/// The deepest nesting of scope values (objects within objects) decoded.
const MAX_VALUE_DEPTH: usize = 16;

/// What a JVM's scopes data looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DebugInfoFormat {
    /// The compressed stream's byte alphabet (changed in JDK 20).
    pub(crate) variant: Variant,
    /// Whether object values carry an `is_root` bool after their id (JDK 22+).
    pub(crate) object_has_is_root: bool,
}

impl DebugInfoFormat {
    /// The format of a JVM of this feature release.
    pub(crate) fn for_jdk(jdk_major: u32) -> Self {
        Self {
            variant: Variant::for_compressed_stream(jdk_major),
            object_has_is_root: jdk_major >= 22,
        }
    }
}

/// Where a `PcDesc`'s fields are, in bytes, from vmStructs (`PcDesc::_pc_offset`,
/// `_scope_decode_offset`, `_obj_decode_offset`, `_flags`; `sizeof(PcDesc)`). Each field is a
/// 4-byte `int`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PcDescLayout {
    /// `sizeof(PcDesc)` (16 on every JDK so far).
    pub(crate) size: usize,
    /// Offset of `_pc_offset`.
    pub(crate) pc_offset: usize,
    /// Offset of `_scope_decode_offset`.
    pub(crate) scope_decode_offset: usize,
    /// Offset of `_obj_decode_offset`.
    pub(crate) obj_decode_offset: usize,
    /// Offset of `_flags`, if the table exports it.
    pub(crate) flags: Option<usize>,
}

impl PcDescLayout {
    /// The layout of every JDK from 8 to 25 (four ints in declaration order).
    pub(crate) const HOTSPOT: Self = Self {
        size: 16,
        pc_offset: 0,
        scope_decode_offset: 4,
        obj_decode_offset: 8,
        flags: Some(12),
    };

    fn check(&self) -> Result<(), CodecError> {
        let fits = |off: usize| off.checked_add(4).is_some_and(|end| end <= self.size);
        let ok = (4..=256).contains(&self.size)
            && fits(self.pc_offset)
            && fits(self.scope_decode_offset)
            && fits(self.obj_decode_offset)
            && self.flags.is_none_or(fits);
        if ok {
            Ok(())
        } else {
            Err(CodecError::Malformed {
                what: "PcDesc layout",
                at: 0,
                why: "a field does not fit in sizeof(PcDesc)",
            })
        }
    }
}

/// One `PcDesc` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PcDesc {
    /// Bytes from the nmethod's `code_begin` (`real_pc = code_begin + pc_offset`).
    pub(crate) pc_offset: i32,
    /// Where the innermost scope is in the scopes data ([`SERIALIZED_NULL`]: none).
    pub(crate) scope_decode_offset: i32,
    /// Where the scalar-replaced objects are in the scopes data ([`SERIALIZED_NULL`]: none).
    pub(crate) obj_decode_offset: i32,
    /// `_flags` (0 if the layout has none): bit 0 `PCDESC_reexecute`, 1 `is_method_handle_invoke`,
    /// 2 `return_oop`, 3 `rethrow_exception`, 4 `has_ea_local_in_scope`, 5 `arg_escape`
    /// (pcDesc.hpp; jdk8u has the first three as bit-fields in the same order).
    pub(crate) flags: i32,
}

impl PcDesc {
    /// `PCDESC_reexecute`: the top scope's bytecode is re-executed after deoptimization.
    pub(crate) fn should_reexecute(&self) -> bool {
        self.flags & 1 != 0
    }
}

/// Decodes the rows of a `scopes_pcs` region (`[scopes_pcs_begin, scopes_pcs_end)`).
///
/// # Errors
/// [`CodecError::Malformed`] if the layout is impossible or `bytes` is not a whole number of
/// rows; [`CodecError::TooMany`] for more than `max_rows` rows.
pub(crate) fn decode_pc_descs(
    bytes: &[u8],
    layout: &PcDescLayout,
    max_rows: usize,
) -> Result<Vec<PcDesc>, CodecError> {
    layout.check()?;
    if !bytes.len().is_multiple_of(layout.size) {
        return Err(CodecError::Malformed {
            what: "PcDesc array",
            at: bytes.len() - bytes.len() % layout.size,
            why: "a partial row",
        });
    }
    let rows = bytes.len() / layout.size;
    if rows > max_rows {
        return Err(CodecError::TooMany {
            what: "PcDesc rows",
            count: rows as u64,
            max: max_rows as u64,
        });
    }
    let int_at = |row: &[u8], off: usize| {
        i32::from_le_bytes([row[off], row[off + 1], row[off + 2], row[off + 3]])
    };
    Ok(bytes
        .chunks_exact(layout.size)
        .map(|row| PcDesc {
            pc_offset: int_at(row, layout.pc_offset),
            scope_decode_offset: int_at(row, layout.scope_decode_offset),
            obj_decode_offset: int_at(row, layout.obj_decode_offset),
            flags: layout.flags.map_or(0, |off| int_at(row, off)),
        })
        .collect())
}

/// The row for `pc_offset`, as `PcDescContainer::find_pc_desc_internal` matches
/// (`match_desc`): exact, the row whose `pc_offset` equals it (what a return address or a
/// safepoint poll has); approximate, the row `i` (after the first) with
/// `rows[i-1].pc_offset < pc_offset <= rows[i].pc_offset` (`nmethod::pc_desc_near`, for a pc that
/// is not at a recorded point). `None` if no row matches.
pub(crate) fn find_pc_desc(rows: &[PcDesc], pc_offset: i32, approximate: bool) -> Option<&PcDesc> {
    if approximate {
        rows.windows(2)
            .find(|w| w[0].pc_offset < pc_offset && pc_offset <= w[1].pc_offset)
            .map(|w| &w[1])
    } else {
        rows.iter().find(|pd| pd.pc_offset == pc_offset)
    }
}

/// A scope's method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScopeMethod {
    /// 1-based index into the nmethod's metadata table: `Method*` =
    /// `metadata_begin()[index - 1]`; index 0 is a null `Method*`.
    Metadata(u32),
    /// The sentinel scope (decode offset 0): the nmethod's own `_method`.
    NmethodMethod,
}

/// One decoded `ScopeDesc` header (`ScopeDesc::decode_body`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScopeDesc {
    /// Where this scope was read from.
    pub(crate) decode_offset: u32,
    /// The scope this one was inlined into; [`SERIALIZED_NULL`] for the outermost.
    pub(crate) sender_decode_offset: u32,
    /// The method.
    pub(crate) method: ScopeMethod,
    /// The bytecode index, [`INVOCATION_ENTRY_BCI`] at the method's entry.
    pub(crate) bci: i32,
    /// Where the locals are ([`SERIALIZED_NULL`]: none).
    pub(crate) locals_decode_offset: u32,
    /// Where the expression stack is ([`SERIALIZED_NULL`]: none).
    pub(crate) expressions_decode_offset: u32,
    /// Where the monitors are ([`SERIALIZED_NULL`]: none).
    pub(crate) monitors_decode_offset: u32,
}

impl ScopeDesc {
    /// `ScopeDesc::is_top`: the outermost scope (no sender).
    pub(crate) fn is_top(&self) -> bool {
        self.sender_decode_offset == SERIALIZED_NULL
    }

    /// Decodes the scope at `decode_offset` in the scopes data.
    ///
    /// # Errors
    /// [`CodecError::Truncated`]/[`CodecError::Malformed`] from the stream.
    pub(crate) fn decode(
        scopes_data: &[u8],
        decode_offset: u32,
        variant: Variant,
    ) -> Result<Self, CodecError> {
        if decode_offset == SERIALIZED_NULL {
            return Ok(Self {
                decode_offset,
                sender_decode_offset: SERIALIZED_NULL,
                method: ScopeMethod::NmethodMethod,
                bci: INVOCATION_ENTRY_BCI,
                locals_decode_offset: SERIALIZED_NULL,
                expressions_decode_offset: SERIALIZED_NULL,
                monitors_decode_offset: SERIALIZED_NULL,
            });
        }
        let mut s = CompressedReadStream::new(scopes_data, decode_offset as usize, variant);
        Ok(Self {
            decode_offset,
            sender_decode_offset: s.read_int()?,
            method: ScopeMethod::Metadata(s.read_int()?),
            bci: (s.read_int()? as i32).wrapping_add(INVOCATION_ENTRY_BCI),
            locals_decode_offset: s.read_int()?,
            expressions_decode_offset: s.read_int()?,
            monitors_decode_offset: s.read_int()?,
        })
    }
}

/// The scopes of one pc, innermost (the inlined callee executing at the pc) first, outermost (the
/// nmethod's own method) last: what jstack prints as consecutive frames of one compiled frame.
///
/// # Errors
/// [`CodecError::Malformed`] for a negative decode offset; [`CodecError::TooMany`] if the chain
/// is longer than `max_depth` (HotSpot's `MaxInlineLevel` is 15 by default; a cycle in bad data
/// ends here too); the stream's errors.
pub(crate) fn scope_chain(
    scopes_data: &[u8],
    pc: &PcDesc,
    variant: Variant,
    max_depth: usize,
) -> Result<Vec<ScopeDesc>, CodecError> {
    let first = u32::try_from(pc.scope_decode_offset).map_err(|_| CodecError::Malformed {
        what: "PcDesc",
        at: 0,
        why: "a negative scope decode offset",
    })?;
    let mut chain = Vec::new();
    let mut offset = first;
    loop {
        if chain.len() == max_depth {
            return Err(CodecError::TooMany {
                what: "inlined scopes",
                count: chain.len() as u64 + 1,
                max: max_depth as u64,
            });
        }
        let scope = ScopeDesc::decode(scopes_data, offset, variant)?;
        chain.push(scope);
        if scope.is_top() {
            return Ok(chain);
        }
        offset = scope.sender_decode_offset;
    }
}

/// `Location::Where`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Where {
    /// `on_stack`: a slot in the compiled frame.
    OnStack,
    /// `in_register`: a `VMReg` number.
    InRegister,
}

/// `Location::Type`. The numbering moved in JDK 16, when JDK-8223347 (the Vector API) inserted
/// `vector` before `addr` (location.hpp): pass `has_vector` by release, or compare with the
/// `Location::*` int constants where the target exports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LocationType {
    /// `invalid` (0).
    Invalid,
    /// `normal` (1): an int, a float or half of a double.
    Normal,
    /// `oop` (2): an uncompressed oop.
    Oop,
    /// `int_in_long` (3).
    IntInLong,
    /// `lng` (4).
    Lng,
    /// `float_in_dbl` (5).
    FloatInDbl,
    /// `dbl` (6).
    Dbl,
    /// `vector` (7, JDK 16+).
    Vector,
    /// `addr` (7 before JDK 16, 8 after): a JSR return address.
    Addr,
    /// `narrowoop` (8 before JDK 16, 9 after): a compressed oop.
    NarrowOop,
    /// Any other code.
    Unknown(u8),
}

/// A `Location` (location.hpp): bits 3..0 the type, bit 4 where, bits 31..5 the offset (a stack
/// offset in 4-byte units, or a `VMReg` number). The pre-JDK 13 copies (`share/vm/code/`,
/// jdk8u's too) pack it the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Location(pub(crate) u32);

impl Location {
    /// Stack slot or register.
    pub(crate) fn where_(self) -> Where {
        if self.0 & 0x10 == 0 {
            Where::OnStack
        } else {
            Where::InRegister
        }
    }

    /// The raw type code (bits 3..0).
    pub(crate) fn type_code(self) -> u8 {
        (self.0 & 0x0F) as u8
    }

    /// The type, numbered as in JDK 16+ (`has_vector`) or before.
    pub(crate) fn location_type(self, has_vector: bool) -> LocationType {
        match (self.type_code(), has_vector) {
            (0, _) => LocationType::Invalid,
            (1, _) => LocationType::Normal,
            (2, _) => LocationType::Oop,
            (3, _) => LocationType::IntInLong,
            (4, _) => LocationType::Lng,
            (5, _) => LocationType::FloatInDbl,
            (6, _) => LocationType::Dbl,
            (7, true) => LocationType::Vector,
            (7, false) | (8, true) => LocationType::Addr,
            (8, false) | (9, true) => LocationType::NarrowOop,
            (code, _) => LocationType::Unknown(code),
        }
    }

    /// The offset field (bits 31..5).
    pub(crate) fn offset(self) -> u32 {
        self.0 >> 5
    }

    /// For a stack location, its byte offset from the frame's sp (`stack_offset`:
    /// `offset << LogBytesPerInt`).
    pub(crate) fn stack_offset_bytes(self) -> Option<u32> {
        (self.where_() == Where::OnStack).then_some(self.offset() << 2)
    }

    /// For a register location, its `VMReg` number (`register_number`).
    pub(crate) fn register_number(self) -> Option<u32> {
        (self.where_() == Where::InRegister).then_some(self.offset())
    }
}

/// A decoded `ScopeValue` (see the module's tag table).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ScopeValue {
    /// `LocationValue`: the value lives in a stack slot or a register.
    Location(Location),
    /// `ConstantIntValue`.
    ConstantInt(i32),
    /// `ConstantOopReadValue`: 1-based index into the nmethod's oops table, 0 = null
    /// (`nmethod::oop_at`).
    ConstantOop(u32),
    /// `ConstantLongValue`.
    ConstantLong(i64),
    /// `ConstantDoubleValue`.
    ConstantDouble(f64),
    /// `ObjectValue` / `AutoBoxObjectValue`: an object the compiler scalar-replaced.
    Object(Box<ObjectValue>),
    /// A reference (`OBJECT_ID_CODE`) to the object of this id described earlier (in the same
    /// list or in the PcDesc's object pool at `obj_decode_offset`).
    ObjectRef(u32),
    /// `MarkerValue`.
    Marker,
    /// `ObjectMergeValue` (JDK 22+).
    ObjectMerge(Box<ObjectMergeValue>),
}

/// A scalar-replaced object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ObjectValue {
    /// Its id (what [`ScopeValue::ObjectRef`] refers to).
    pub(crate) id: u32,
    /// `AUTO_BOX_OBJECT_CODE` rather than `OBJECT_CODE`.
    pub(crate) auto_box: bool,
    /// `_is_root` (JDK 22+; `None` before).
    pub(crate) is_root: Option<bool>,
    /// Its class, as a value (a constant oop: the `java.lang.Class` mirror).
    pub(crate) klass: ScopeValue,
    /// Its fields' values.
    pub(crate) fields: Vec<ScopeValue>,
}

/// An allocation merge (JDK 22+).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ObjectMergeValue {
    /// Its id.
    pub(crate) id: u32,
    /// Which candidate was taken (-1: the merge pointer).
    pub(crate) selector: ScopeValue,
    /// The non-scalar-replaced object.
    pub(crate) merge_pointer: ScopeValue,
    /// The scalar-replaced candidates.
    pub(crate) candidates: Vec<ScopeValue>,
}

/// A `MonitorValue`: one monitor held by a compiled scope.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MonitorValue {
    /// The `BasicLock`'s location (a stack slot of the compiled frame).
    pub(crate) basic_lock: Location,
    /// The locked object.
    pub(crate) owner: ScopeValue,
    /// C2 eliminated the lock (jstack prints `- eliminated <owner>`; the object may be
    /// scalar-replaced).
    pub(crate) eliminated: bool,
}

impl MonitorValue {
    /// The owner's 1-based oops-table index, if it is a constant oop.
    pub(crate) fn owner_oop_index(&self) -> Option<u32> {
        match self.owner {
            ScopeValue::ConstantOop(index) => Some(index),
            _ => None,
        }
    }

    /// The owner's location, if it lives in a stack slot or a register.
    pub(crate) fn owner_location(&self) -> Option<Location> {
        match self.owner {
            ScopeValue::Location(loc) => Some(loc),
            _ => None,
        }
    }
}

/// A value decoder with a budget: at most `left` values in all, nested at most
/// [`MAX_VALUE_DEPTH`] deep.
struct ValueReader<'a> {
    stream: CompressedReadStream<'a>,
    format: DebugInfoFormat,
    left: usize,
    max: usize,
}

impl<'a> ValueReader<'a> {
    fn new(data: &'a [u8], offset: u32, format: DebugInfoFormat, max_values: usize) -> Self {
        Self {
            stream: CompressedReadStream::new(data, offset as usize, format.variant),
            format,
            left: max_values,
            max: max_values,
        }
    }

    fn spend(&mut self) -> Result<(), CodecError> {
        if self.left == 0 {
            return Err(CodecError::TooMany {
                what: "scope values",
                count: self.max as u64 + 1,
                max: self.max as u64,
            });
        }
        self.left -= 1;
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<ScopeValue, CodecError> {
        if depth > MAX_VALUE_DEPTH {
            return Err(CodecError::TooMany {
                what: "nested scope values",
                count: depth as u64,
                max: MAX_VALUE_DEPTH as u64,
            });
        }
        self.spend()?;
        let at = self.stream.position();
        let s = &mut self.stream;
        Ok(match s.read_int()? {
            0 => ScopeValue::Location(Location(s.read_int()?)),
            1 => ScopeValue::ConstantInt(s.read_signed_int()?),
            2 => ScopeValue::ConstantOop(s.read_int()?),
            3 => ScopeValue::ConstantLong(s.read_long()?),
            4 => ScopeValue::ConstantDouble(s.read_double()?),
            tag @ (5 | 7) => {
                let id = s.read_int()?;
                let is_root = if self.format.object_has_is_root {
                    Some(s.read_bool()?)
                } else {
                    None
                };
                let klass = self.value(depth + 1)?;
                let fields = self.list(depth + 1)?;
                ScopeValue::Object(Box::new(ObjectValue {
                    id,
                    auto_box: tag == 7,
                    is_root,
                    klass,
                    fields,
                }))
            }
            6 => ScopeValue::ObjectRef(s.read_int()?),
            8 => ScopeValue::Marker,
            9 => {
                let id = s.read_int()?;
                let selector = self.value(depth + 1)?;
                let merge_pointer = self.value(depth + 1)?;
                let candidates = self.list(depth + 1)?;
                ScopeValue::ObjectMerge(Box::new(ObjectMergeValue {
                    id,
                    selector,
                    merge_pointer,
                    candidates,
                }))
            }
            _ => {
                return Err(CodecError::Malformed {
                    what: "scope value",
                    at,
                    why: "an unknown tag",
                });
            }
        })
    }

    /// A length-prefixed list of values.
    fn list(&mut self, depth: usize) -> Result<Vec<ScopeValue>, CodecError> {
        let len = self.stream.read_int()? as usize;
        if len > self.left {
            return Err(CodecError::TooMany {
                what: "scope values",
                count: len as u64,
                max: self.max as u64,
            });
        }
        (0..len).map(|_| self.value(depth)).collect()
    }
}

/// The scope values (locals or expression stack) at `decode_offset` (`decode_scope_values`);
/// empty for [`SERIALIZED_NULL`].
///
/// # Errors
/// [`CodecError::TooMany`] beyond `max_values` values (nested ones count) or
/// [`MAX_VALUE_DEPTH`] nesting; [`CodecError::Malformed`] for an unknown tag; the stream's errors.
pub(crate) fn decode_scope_values(
    scopes_data: &[u8],
    decode_offset: u32,
    format: DebugInfoFormat,
    max_values: usize,
) -> Result<Vec<ScopeValue>, CodecError> {
    if decode_offset == SERIALIZED_NULL {
        return Ok(Vec::new());
    }
    ValueReader::new(scopes_data, decode_offset, format, max_values).list(0)
}

/// The monitors at `decode_offset` (`decode_monitor_values`), in the order HotSpot lists them
/// (outermost lock first); empty for [`SERIALIZED_NULL`].
///
/// # Errors
/// [`CodecError::TooMany`] beyond `max_monitors` monitors or `max_values` values in their owners;
/// otherwise as [`decode_scope_values`].
pub(crate) fn decode_monitors(
    scopes_data: &[u8],
    decode_offset: u32,
    format: DebugInfoFormat,
    max_monitors: usize,
    max_values: usize,
) -> Result<Vec<MonitorValue>, CodecError> {
    if decode_offset == SERIALIZED_NULL {
        return Ok(Vec::new());
    }
    let mut r = ValueReader::new(scopes_data, decode_offset, format, max_values);
    let len = r.stream.read_int()? as usize;
    if len > max_monitors {
        return Err(CodecError::TooMany {
            what: "monitors",
            count: len as u64,
            max: max_monitors as u64,
        });
    }
    let mut monitors = Vec::with_capacity(len);
    for _ in 0..len {
        let basic_lock = Location(r.stream.read_int()?);
        let owner = r.value(0)?;
        let eliminated = r.stream.read_bool()?;
        monitors.push(MonitorValue {
            basic_lock,
            owner,
            eliminated,
        });
    }
    Ok(monitors)
}

/// The writers of `DebugInformationRecorder` and `ScopeValue::write_on` (debugInfoRec.cpp,
/// debugInfo.cpp), for the tests.
#[cfg(test)]
pub(crate) mod test_encoder {
    use super::super::compressed::test_encoder::CompressedWriteStream;
    use super::*;

    /// A scopes data stream, with HotSpot's 0xFF pad byte at offset 0.
    pub(crate) struct ScopesWriter {
        pub(crate) w: CompressedWriteStream,
        pub(crate) format: DebugInfoFormat,
    }

    impl ScopesWriter {
        pub(crate) fn new(format: DebugInfoFormat) -> Self {
            let mut w = CompressedWriteStream::new(format.variant);
            w.write_byte(0xFF);
            Self { w, format }
        }

        /// `describe_scope`: returns the scope's decode offset.
        pub(crate) fn scope(
            &mut self,
            sender: u32,
            method_index: u32,
            bci: i32,
            locals: u32,
            expressions: u32,
            monitors: u32,
        ) -> u32 {
            let at = self.w.position() as u32;
            self.w.write_int(sender);
            self.w.write_int(method_index);
            self.w
                .write_int(bci.wrapping_sub(INVOCATION_ENTRY_BCI) as u32);
            self.w.write_int(locals);
            self.w.write_int(expressions);
            self.w.write_int(monitors);
            at
        }

        /// `ScopeValue::write_on`.
        pub(crate) fn value(&mut self, v: &ScopeValue) {
            let w = &mut self.w;
            match v {
                ScopeValue::Location(loc) => {
                    w.write_int(0);
                    w.write_int(loc.0);
                }
                ScopeValue::ConstantInt(i) => {
                    w.write_int(1);
                    w.write_signed_int(*i);
                }
                ScopeValue::ConstantOop(i) => {
                    w.write_int(2);
                    w.write_int(*i);
                }
                ScopeValue::ConstantLong(l) => {
                    w.write_int(3);
                    w.write_long(*l);
                }
                ScopeValue::ConstantDouble(d) => {
                    w.write_int(4);
                    w.write_double(*d);
                }
                ScopeValue::Object(o) => {
                    w.write_int(if o.auto_box { 7 } else { 5 });
                    w.write_int(o.id);
                    if self.format.object_has_is_root {
                        w.write_bool(o.is_root.unwrap_or(true));
                    }
                    self.value(&o.klass);
                    self.list(&o.fields);
                }
                ScopeValue::ObjectRef(id) => {
                    w.write_int(6);
                    w.write_int(*id);
                }
                ScopeValue::Marker => w.write_int(8),
                ScopeValue::ObjectMerge(m) => {
                    w.write_int(9);
                    w.write_int(m.id);
                    self.value(&m.selector);
                    self.value(&m.merge_pointer);
                    self.list(&m.candidates);
                }
            }
        }

        /// `serialize_scope_values`: returns the list's decode offset.
        pub(crate) fn list(&mut self, values: &[ScopeValue]) -> u32 {
            let at = self.w.position() as u32;
            self.w.write_int(values.len() as u32);
            for v in values {
                self.value(v);
            }
            at
        }

        /// `serialize_monitor_values`: returns the list's decode offset.
        pub(crate) fn monitors(&mut self, monitors: &[MonitorValue]) -> u32 {
            let at = self.w.position() as u32;
            self.w.write_int(monitors.len() as u32);
            for m in monitors {
                self.w.write_int(m.basic_lock.0);
                self.value(&m.owner);
                self.w.write_bool(m.eliminated);
            }
            at
        }
    }

    /// `PcDesc` rows in the HotSpot layout.
    pub(crate) fn pc_rows(rows: &[PcDesc]) -> Vec<u8> {
        rows.iter()
            .flat_map(|r| {
                [
                    r.pc_offset,
                    r.scope_decode_offset,
                    r.obj_decode_offset,
                    r.flags,
                ]
            })
            .flat_map(i32::to_le_bytes)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_encoder::{ScopesWriter, pc_rows};
    use super::*;

    const FORMATS: [DebugInfoFormat; 3] = [
        DebugInfoFormat {
            variant: Variant::Legacy,
            object_has_is_root: false,
        },
        DebugInfoFormat {
            variant: Variant::ExcludeZero,
            object_has_is_root: false,
        },
        DebugInfoFormat {
            variant: Variant::ExcludeZero,
            object_has_is_root: true,
        },
    ];

    /// `Location::new_stk_loc(oop, offset_bytes)`: type `oop` (2), on the stack.
    fn stack_oop(offset_bytes: u32) -> Location {
        Location(((offset_bytes >> 2) << 5) | 2)
    }

    fn pd(pc_offset: i32, scope: u32) -> PcDesc {
        PcDesc {
            pc_offset,
            scope_decode_offset: scope as i32,
            obj_decode_offset: 0,
            flags: 0,
        }
    }

    #[test]
    fn formats_by_release() {
        assert_eq!(DebugInfoFormat::for_jdk(17), FORMATS[0]);
        assert_eq!(DebugInfoFormat::for_jdk(21), FORMATS[1]);
        assert_eq!(DebugInfoFormat::for_jdk(25), FORMATS[2]);
    }

    #[test]
    fn pc_desc_rows_and_lookup() {
        let rows = [
            pd(PC_OFFSET_LOWER_LIMIT, 0),
            pd(0x10, 5),
            pd(0x24, 9),
            pd(0x40, 13),
            pd(i32::MAX, 0),
        ];
        let bytes = pc_rows(&rows);
        let decoded = decode_pc_descs(&bytes, &PcDescLayout::HOTSPOT, 10).expect("decodes");
        assert_eq!(decoded, rows);
        assert_eq!(find_pc_desc(&decoded, 0x24, false), Some(&rows[2]));
        assert_eq!(find_pc_desc(&decoded, 0x25, false), None);
        assert_eq!(
            find_pc_desc(&decoded, 0x25, true),
            Some(&rows[3]),
            "the row ending the range"
        );
        assert_eq!(find_pc_desc(&decoded, 0x24, true), Some(&rows[2]));
        assert_eq!(find_pc_desc(&decoded, 0, true), Some(&rows[1]));
        assert_eq!(
            find_pc_desc(&decoded, -1, true),
            None,
            "nothing before the sentinel"
        );
        // Without a flags field, flags read as 0; other layouts are honoured.
        let no_flags = PcDescLayout {
            flags: None,
            ..PcDescLayout::HOTSPOT
        };
        assert!(
            decode_pc_descs(&bytes, &no_flags, 10)
                .expect("decodes")
                .iter()
                .all(|r| r.flags == 0)
        );
        assert!(matches!(
            decode_pc_descs(&bytes[..bytes.len() - 1], &PcDescLayout::HOTSPOT, 10),
            Err(CodecError::Malformed { .. })
        ));
        assert!(matches!(
            decode_pc_descs(&bytes, &PcDescLayout::HOTSPOT, 4),
            Err(CodecError::TooMany { .. })
        ));
        let bad = PcDescLayout {
            obj_decode_offset: 13,
            ..PcDescLayout::HOTSPOT
        };
        assert!(matches!(
            decode_pc_descs(&bytes, &bad, 10),
            Err(CodecError::Malformed { .. })
        ));
        let zero = PcDescLayout {
            size: 0,
            ..PcDescLayout::HOTSPOT
        };
        assert!(decode_pc_descs(&bytes, &zero, 10).is_err());
    }

    #[test]
    fn inlined_chain_innermost_first() {
        for format in FORMATS {
            let mut w = ScopesWriter::new(format);
            // Outer method (metadata #1) at bci 17 calls #2 at bci 0, which calls #3 at its entry.
            let outer = w.scope(SERIALIZED_NULL, 1, 17, 0, 0, 0);
            let middle = w.scope(outer, 2, 0, 0, 0, 0);
            let inner = w.scope(middle, 3, INVOCATION_ENTRY_BCI, 0, 0, 0);
            let data = w.w.bytes;
            let chain = scope_chain(&data, &pd(0x30, inner), format.variant, 16).expect("decodes");
            let got: Vec<_> = chain.iter().map(|s| (s.method, s.bci)).collect();
            assert_eq!(
                got,
                [
                    (ScopeMethod::Metadata(3), -1),
                    (ScopeMethod::Metadata(2), 0),
                    (ScopeMethod::Metadata(1), 17)
                ]
            );
            assert!(chain[2].is_top() && !chain[0].is_top());
            assert_eq!(chain[0].decode_offset, inner);
            assert!(matches!(
                scope_chain(&data, &pd(0x30, inner), format.variant, 2),
                Err(CodecError::TooMany { .. })
            ));
            // The sentinel scope: the nmethod's own method at its entry.
            let sentinel = scope_chain(&data, &pd(0x30, 0), format.variant, 16).expect("decodes");
            assert_eq!(sentinel.len(), 1);
            assert_eq!(
                (sentinel[0].method, sentinel[0].bci),
                (ScopeMethod::NmethodMethod, -1)
            );
            assert!(
                scope_chain(
                    &data,
                    &PcDesc {
                        scope_decode_offset: -5,
                        ..pd(0, 0)
                    },
                    format.variant,
                    16
                )
                .is_err()
            );
        }
    }

    #[test]
    fn a_cycle_ends_at_the_depth_limit() {
        let format = FORMATS[1];
        let mut w = ScopesWriter::new(format);
        let at = w.w.position() as u32;
        let written = w.scope(at, 1, 3, 0, 0, 0); // its own sender
        assert_eq!(written, at);
        assert!(matches!(
            scope_chain(&w.w.bytes, &pd(0, at), format.variant, 64),
            Err(CodecError::TooMany { .. })
        ));
    }

    #[test]
    fn values_and_monitors_round_trip() {
        for format in FORMATS {
            let has_root = format.object_has_is_root;
            let obj = ScopeValue::Object(Box::new(ObjectValue {
                id: 4,
                auto_box: false,
                is_root: has_root.then_some(true),
                klass: ScopeValue::ConstantOop(7),
                fields: vec![
                    ScopeValue::ConstantInt(-3),
                    ScopeValue::ConstantLong(-1 << 40),
                    ScopeValue::ConstantDouble(2.5),
                    ScopeValue::Marker,
                ],
            }));
            let boxed = ScopeValue::Object(Box::new(ObjectValue {
                id: 5,
                auto_box: true,
                is_root: has_root.then_some(false),
                klass: ScopeValue::ConstantOop(8),
                fields: vec![ScopeValue::ConstantInt(1)],
            }));
            let merge = ScopeValue::ObjectMerge(Box::new(ObjectMergeValue {
                id: 6,
                selector: ScopeValue::ConstantInt(-1),
                merge_pointer: ScopeValue::ConstantOop(0),
                candidates: vec![ScopeValue::ObjectRef(4)],
            }));
            let locals = vec![
                ScopeValue::Location(stack_oop(16)),
                obj.clone(),
                ScopeValue::ObjectRef(4),
                boxed,
                merge,
            ];
            let monitors = vec![
                MonitorValue {
                    basic_lock: Location(8 << 5 | 1),
                    owner: ScopeValue::Location(stack_oop(24)),
                    eliminated: false,
                },
                MonitorValue {
                    basic_lock: Location(10 << 5 | 1),
                    owner: ScopeValue::ConstantOop(3),
                    eliminated: false,
                },
                MonitorValue {
                    basic_lock: Location(12 << 5 | 1),
                    owner: obj,
                    eliminated: true,
                },
            ];
            let mut w = ScopesWriter::new(format);
            let l = w.list(&locals);
            let m = w.monitors(&monitors);
            let data = w.w.bytes.clone();
            assert_eq!(
                decode_scope_values(&data, l, format, 100).expect("decodes"),
                locals
            );
            let got = decode_monitors(&data, m, format, 8, 100).expect("decodes");
            assert_eq!(got, monitors);
            assert_eq!(
                got[0]
                    .owner_location()
                    .and_then(Location::stack_offset_bytes),
                Some(24)
            );
            assert_eq!(got[1].owner_oop_index(), Some(3));
            assert!(got[2].eliminated && got[2].owner_oop_index().is_none());
            assert_eq!(
                decode_monitors(&data, SERIALIZED_NULL, format, 8, 100),
                Ok(vec![])
            );
            assert_eq!(
                decode_scope_values(&data, SERIALIZED_NULL, format, 100),
                Ok(vec![])
            );
            assert!(matches!(
                decode_monitors(&data, m, format, 2, 100),
                Err(CodecError::TooMany { .. })
            ));
            assert!(matches!(
                decode_scope_values(&data, l, format, 5),
                Err(CodecError::TooMany { .. })
            ));
        }
    }

    #[test]
    fn locations() {
        let reg = Location((5 << 5) | 0x10 | 9);
        assert_eq!(reg.where_(), Where::InRegister);
        assert_eq!(reg.register_number(), Some(5));
        assert_eq!(reg.stack_offset_bytes(), None);
        assert_eq!(reg.location_type(true), LocationType::NarrowOop);
        assert_eq!(reg.location_type(false), LocationType::Unknown(9));
        assert_eq!(Location(8).location_type(false), LocationType::NarrowOop);
        assert_eq!(Location(8).location_type(true), LocationType::Addr);
        assert_eq!(Location(7).location_type(true), LocationType::Vector);
        assert_eq!(Location(7).location_type(false), LocationType::Addr);
        let stk = stack_oop(40);
        assert_eq!(
            (
                stk.where_(),
                stk.stack_offset_bytes(),
                stk.location_type(false)
            ),
            (Where::OnStack, Some(40), LocationType::Oop)
        );
    }

    #[test]
    fn bad_values_are_errors() {
        let format = FORMATS[1];
        let mut w = ScopesWriter::new(format);
        let at = w.w.position() as u32;
        w.w.write_int(1); // one value
        w.w.write_int(10); // an unknown tag
        assert!(matches!(
            decode_scope_values(&w.w.bytes, at, format, 10),
            Err(CodecError::Malformed { .. })
        ));
        // Objects nested deeper than the limit.
        let mut w = ScopesWriter::new(format);
        let at = w.w.position() as u32;
        w.w.write_int(1);
        for id in 0..40 {
            w.w.write_int(5);
            w.w.write_int(id);
        }
        assert!(matches!(
            decode_scope_values(&w.w.bytes, at, format, 1000),
            Err(CodecError::TooMany { .. })
        ));
        // A huge length is refused before anything is allocated.
        let mut w = ScopesWriter::new(format);
        let at = w.w.position() as u32;
        w.w.write_int(u32::MAX);
        assert!(matches!(
            decode_scope_values(&w.w.bytes, at, format, 1000),
            Err(CodecError::TooMany { .. })
        ));
        assert!(matches!(
            decode_monitors(&w.w.bytes, at, format, 10, 10),
            Err(CodecError::TooMany { .. })
        ));
        assert!(decode_scope_values(&w.w.bytes, 1000, format, 10).is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(proptest::num::u8::ANY, 0..256), offset in 0u32..300, pc in proptest::num::i32::ANY) {
            for format in FORMATS {
                let _ = decode_scope_values(&data, offset, format, 64);
                let _ = decode_monitors(&data, offset, format, 8, 64);
                let _ = ScopeDesc::decode(&data, offset, format.variant);
                let _ = scope_chain(&data, &pd(0, offset), format.variant, 16);
            }
            if let Ok(rows) = decode_pc_descs(&data[..data.len() / 16 * 16], &PcDescLayout::HOTSPOT, 64) {
                let _ = find_pc_desc(&rows, pc, true);
                let _ = find_pc_desc(&rows, pc, false);
            }
            let _ = decode_pc_descs(&data, &PcDescLayout::HOTSPOT, 4);
        }

        #[test]
        fn any_chain_round_trips(frames in proptest::collection::vec((0u32..100_000, -1i32..70_000), 1..20)) {
            for format in FORMATS {
                let mut w = ScopesWriter::new(format);
                let mut sender = SERIALIZED_NULL;
                for &(method, bci) in &frames {
                    sender = w.scope(sender, method, bci, 0, 0, 0);
                }
                let chain = scope_chain(&w.w.bytes, &pd(0, sender), format.variant, 32).expect("decodes");
                let got: Vec<_> = chain.iter().map(|s| (s.method, s.bci)).collect();
                let want: Vec<_> = frames.iter().rev().map(|&(m, b)| (ScopeMethod::Metadata(m), b)).collect();
                proptest::prop_assert_eq!(got, want);
            }
        }
    }
}
