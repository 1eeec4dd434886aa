//! HotSpot's exported introspection tables, walked in a target's memory: `gHotSpotVMStructs`,
//! `gHotSpotVMTypes`, `gHotSpotVMIntConstants` and `gHotSpotVMLongConstants`.
//!
//! The tables and their exported layout variables are defined at the end of
//! `src/hotspot/share/runtime/vmStructs.cpp` (entry types in `vmStructs.hpp`):
//!
//! * `VMStructEntry { const char* typeName; const char* fieldName; const char* typeString;
//!   int32_t isStatic; uint64_t offset; void* address; }`, described by
//!   `gHotSpotVMStructEntry{TypeName,FieldName,TypeString,IsStatic,Offset,Address}Offset` and
//!   `gHotSpotVMStructEntryArrayStride`; the last row has a NULL `fieldName` (and `typeName`).
//! * `VMTypeEntry { const char* typeName; const char* superclassName; int32_t isOopType;
//!   int32_t isIntegerType; int32_t isUnsigned; uint64_t size; }`
//!   (`gHotSpotVMTypeEntry*Offset`, `...ArrayStride`); the last row has a NULL `typeName`.
//! * `VMIntConstantEntry { const char* name; int32_t value; }` and
//!   `VMLongConstantEntry { const char* name; uint64_t value; }`
//!   (`gHotSpotVM{Int,Long}ConstantEntry{Name,Value}Offset`, `...ArrayStride`); last row NULL name.
//!
//! The Serviceability Agent reads them the same way (`HotSpotTypeDataBase.readVMStructs`,
//! `readVMTypes`, `readVMIntConstants`, `readVMLongConstants`). The target is untrusted: each
//! layout value is checked against its entry's stride, each table is bounded by [`MAX_ENTRIES`]
//! rows and each name by [`MAX_NAME`] bytes.
//!
//! Nothing here is OS-specific: the caller supplies memory ([`ReadMemory`]) and the addresses of
//! exported symbols (`.dynsym` on Linux, the export table of `jvm.dll` on Windows).

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::error::{Error, VmEntry, VmError};
use crate::memory::{LeBytes, ReadMemory};

/// At most this many rows are walked in any table (JDK 21 has about 2 500 structs rows); a
/// longer table is treated as corrupt.
pub const MAX_ENTRIES: usize = 100_000;
/// Longest type, field or constant name read.
pub const MAX_NAME: usize = 256;
/// Rows read per memory access.
const BATCH: usize = 64;

/// The exported symbols of the `gHotSpotVMStructs` walk (the table, then its layout variables in
/// the order `StructsLayout` reads them).
pub const STRUCT_SYMBOLS: [&str; 8] = [
    "gHotSpotVMStructs",
    "gHotSpotVMStructEntryTypeNameOffset",
    "gHotSpotVMStructEntryFieldNameOffset",
    "gHotSpotVMStructEntryIsStaticOffset",
    "gHotSpotVMStructEntryAddressOffset",
    "gHotSpotVMStructEntryArrayStride",
    "gHotSpotVMStructEntryTypeStringOffset",
    "gHotSpotVMStructEntryOffsetOffset",
];

/// The exported symbols of the `gHotSpotVMTypes` walk.
pub const TYPE_SYMBOLS: [&str; 5] = [
    "gHotSpotVMTypes",
    "gHotSpotVMTypeEntryTypeNameOffset",
    "gHotSpotVMTypeEntrySuperclassNameOffset",
    "gHotSpotVMTypeEntrySizeOffset",
    "gHotSpotVMTypeEntryArrayStride",
];

/// The exported symbols of the `gHotSpotVMIntConstants` walk.
pub const INT_SYMBOLS: [&str; 4] = [
    "gHotSpotVMIntConstants",
    "gHotSpotVMIntConstantEntryNameOffset",
    "gHotSpotVMIntConstantEntryValueOffset",
    "gHotSpotVMIntConstantEntryArrayStride",
];

/// The exported symbols of the `gHotSpotVMLongConstants` walk.
pub const LONG_SYMBOLS: [&str; 4] = [
    "gHotSpotVMLongConstants",
    "gHotSpotVMLongConstantEntryNameOffset",
    "gHotSpotVMLongConstantEntryValueOffset",
    "gHotSpotVMLongConstantEntryArrayStride",
];

/// Every exported symbol the VM model needs.
pub fn all_symbols() -> impl Iterator<Item = &'static str> {
    STRUCT_SYMBOLS
        .iter()
        .chain(&TYPE_SYMBOLS)
        .chain(&INT_SYMBOLS)
        .chain(&LONG_SYMBOLS)
        .copied()
}

/// One `gHotSpotVMStructs` row as read: names are raw bytes (HotSpot's are ASCII).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructRow {
    /// `typeName` (e.g. `JavaThread`).
    pub type_name: Vec<u8>,
    /// `fieldName` (e.g. `_anchor`).
    pub field_name: Vec<u8>,
    /// `typeString`, the field's C++ type (`NULL` for some rows: `None`).
    pub type_string: Option<Vec<u8>>,
    /// `isStatic != 0`.
    pub is_static: bool,
    /// `offset`: the byte offset of a non-static field in its type.
    pub offset: u64,
    /// `address`: the address of a static field.
    pub address: u64,
}

/// Reads an exported variable that holds a layout value or a table address.
fn read_var(
    mem: &dyn ReadMemory,
    resolve: &dyn Fn(&str) -> Option<u64>,
    name: &str,
) -> Result<u64, Error> {
    let addr = resolve(name).ok_or_else(|| VmError::MissingEntry {
        entry: VmEntry::Symbol(name.to_owned()),
    })?;
    mem.read_u64(addr)
        .map_err(|e| Error::memory(name.to_string(), e))
}

fn read_name(mem: &dyn ReadMemory, ptr: u64, what: &str) -> Result<Option<Vec<u8>>, Error> {
    mem.read_c_string(ptr, MAX_NAME)
        .map_err(|e| Error::memory(format!("vmStructs {what} at {ptr:#x}"), e))
}

/// Checks a table's layout: a stride of 16..=1024 bytes, and each `(offset, width)` inside it.
fn check_layout(table: &'static str, stride: u64, fields: &[(u64, u64)]) -> Result<(), Error> {
    if !(16..=1024).contains(&stride)
        || fields
            .iter()
            .any(|&(o, w)| o.checked_add(w).is_none_or(|end| end > stride))
    {
        return Err(VmError::TableLayout {
            table: table.to_owned(),
            stride,
            fields: fields.to_vec(),
        }
        .into());
    }
    Ok(())
}

/// Reads the rows of a table at `table` with `stride`-byte rows in batches, handing each row's
/// bytes to `row` until it breaks or [`MAX_ENTRIES`] rows pass. `name` names the table in errors.
fn walk_rows(
    mem: &dyn ReadMemory,
    name: &'static str,
    table: u64,
    stride: usize,
    mut row: impl FnMut(usize, &[u8]) -> Result<ControlFlow<()>, Error>,
) -> Result<usize, Error> {
    if table == 0 {
        return Err(VmError::NotInitialized { what: name.into() }.into());
    }
    let mut rows = vec![0u8; stride * BATCH];
    let mut index = 0usize;
    while index < MAX_ENTRIES {
        let base = table.wrapping_add((index * stride) as u64);
        // A batch may run past the end of the mapping that holds the table: fall back to one row.
        let n = match mem.read_exact_at(base, &mut rows) {
            Ok(()) => BATCH,
            Err(_) => {
                mem.read_exact_at(base, &mut rows[..stride])
                    .map_err(|e| Error::memory(format!("{name} row {index}"), e))?;
                1
            }
        };
        for bytes in rows[..n * stride].chunks_exact(stride) {
            if row(index, bytes)?.is_break() {
                return Ok(index);
            }
            index += 1;
        }
    }
    Err(VmError::Unterminated {
        what: name.into(),
        unit: "rows (no terminating row)",
        max: MAX_ENTRIES as u64,
    }
    .into())
}

/// The `u64` at `off` of a row (every offset was checked against the stride; a field that
/// does not fit reads as 0, which no row of a sane table holds there).
fn word(row: &[u8], off: u64) -> u64 {
    LeBytes::new(row).u64_at(off as usize).unwrap_or(0)
}

/// The `u32` at `off` of a row, as [`word`].
fn word32(row: &[u8], off: u64) -> u32 {
    LeBytes::new(row).u32_at(off as usize).unwrap_or(0)
}

/// Walks `gHotSpotVMStructs`, handing each row to `visit` until it breaks or the terminating row
/// (NULL `fieldName`). `wanted_type` limits the rows whose names are read: a row of another
/// type is skipped after reading its type name only (names are cached by pointer). Returns the
/// number of rows walked.
///
/// `TypeString` and `Offset` offsets are optional for this walk (older callers only resolve the
/// first six [`STRUCT_SYMBOLS`]): without them a row's `type_string` is `None`, `offset` 0.
///
/// # Errors
/// [`Error::Vm`] when a symbol is not exported, a layout value is implausible, or the
/// table is not terminated within [`MAX_ENTRIES`] rows; [`Error::Memory`] when a read fails.
pub fn walk_structs(
    mem: &dyn ReadMemory,
    resolve: &dyn Fn(&str) -> Option<u64>,
    wanted_type: Option<&[u8]>,
    mut visit: impl FnMut(StructRow) -> ControlFlow<()>,
) -> Result<usize, Error> {
    let [_, tn, fname, is_static, address, stride, tstring, offset] = STRUCT_SYMBOLS;
    let tn = read_var(mem, resolve, tn)?;
    let fname = read_var(mem, resolve, fname)?;
    let is_static = read_var(mem, resolve, is_static)?;
    let address = read_var(mem, resolve, address)?;
    let stride = read_var(mem, resolve, stride)?;
    let optional = |name| {
        if resolve(name).is_some() {
            read_var(mem, resolve, name).map(Some)
        } else {
            Ok(None)
        }
    };
    let tstring = optional(tstring)?;
    let offset = optional(offset)?;
    let mut fields = vec![(tn, 8), (fname, 8), (is_static, 4), (address, 8)];
    fields.extend(tstring.map(|o| (o, 8)));
    fields.extend(offset.map(|o| (o, 8)));
    check_layout("gHotSpotVMStructs", stride, &fields)?;
    let table = read_var(mem, resolve, STRUCT_SYMBOLS[0])?;
    let mut type_names: HashMap<u64, Option<Vec<u8>>> = HashMap::new();
    walk_rows(
        mem,
        "gHotSpotVMStructs",
        table,
        stride as usize,
        |_, row| {
            let (type_ptr, field_ptr) = (word(row, tn), word(row, fname));
            if field_ptr == 0 {
                return Ok(ControlFlow::Break(()));
            }
            let type_name = match type_names.get(&type_ptr) {
                Some(n) => n.clone(),
                None => {
                    let n = if type_ptr == 0 {
                        None
                    } else {
                        read_name(mem, type_ptr, "type name")?
                    };
                    let keep = match wanted_type {
                        Some(w) => n.as_deref() == Some(w),
                        None => true,
                    };
                    let n = if keep { n } else { None };
                    type_names.insert(type_ptr, n.clone());
                    n
                }
            };
            let Some(type_name) = type_name else {
                return Ok(ControlFlow::Continue(()));
            };
            let field_name = read_name(mem, field_ptr, "field name")?.unwrap_or_default();
            let type_string = match tstring.map(|o| word(row, o)) {
                Some(p) if p != 0 => read_name(mem, p, "type string")?,
                _ => None,
            };
            Ok(visit(StructRow {
                type_name,
                field_name,
                type_string,
                is_static: word32(row, is_static) != 0,
                offset: offset.map_or(0, |o| word(row, o)),
                address: word(row, address),
            }))
        },
    )
}

/// One `gHotSpotVMTypes` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeRow {
    /// `typeName`.
    pub type_name: Vec<u8>,
    /// `superclassName`, when not NULL.
    pub superclass: Option<Vec<u8>>,
    /// `size`: `sizeof` the type in bytes.
    pub size: u64,
}

/// Walks `gHotSpotVMTypes` up to its terminating row (NULL `typeName`).
///
/// # Errors
/// As [`walk_structs`].
pub fn read_types(
    mem: &dyn ReadMemory,
    resolve: &dyn Fn(&str) -> Option<u64>,
) -> Result<Vec<TypeRow>, Error> {
    let [table, tn, sup, size, stride] = TYPE_SYMBOLS;
    let (tn, sup, size) = (
        read_var(mem, resolve, tn)?,
        read_var(mem, resolve, sup)?,
        read_var(mem, resolve, size)?,
    );
    let stride = read_var(mem, resolve, stride)?;
    check_layout("gHotSpotVMTypes", stride, &[(tn, 8), (sup, 8), (size, 8)])?;
    let table = read_var(mem, resolve, table)?;
    let mut out = Vec::new();
    walk_rows(mem, "gHotSpotVMTypes", table, stride as usize, |_, row| {
        let name_ptr = word(row, tn);
        if name_ptr == 0 {
            return Ok(ControlFlow::Break(()));
        }
        let type_name = read_name(mem, name_ptr, "type name")?.unwrap_or_default();
        let superclass = match word(row, sup) {
            0 => None,
            p => read_name(mem, p, "superclass name")?,
        };
        out.push(TypeRow {
            type_name,
            superclass,
            size: word(row, size),
        });
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(out)
}

/// Walks `gHotSpotVMIntConstants` (`long: false`, values sign-extended from `int32_t`) or
/// `gHotSpotVMLongConstants` (`long: true`, `uint64_t` values) up to the NULL name.
///
/// # Errors
/// As [`walk_structs`].
pub fn read_constants(
    mem: &dyn ReadMemory,
    resolve: &dyn Fn(&str) -> Option<u64>,
    long: bool,
) -> Result<Vec<(Vec<u8>, u64)>, Error> {
    let [table, name, value, stride] = if long { LONG_SYMBOLS } else { INT_SYMBOLS };
    let what = table;
    let (name, value) = (
        read_var(mem, resolve, name)?,
        read_var(mem, resolve, value)?,
    );
    let stride = read_var(mem, resolve, stride)?;
    let width = if long { 8 } else { 4 };
    check_layout(what, stride, &[(name, 8), (value, width)])?;
    let table = read_var(mem, resolve, table)?;
    let mut out = Vec::new();
    walk_rows(mem, what, table, stride as usize, |_, row| {
        let name_ptr = word(row, name);
        if name_ptr == 0 {
            return Ok(ControlFlow::Break(()));
        }
        let n = read_name(mem, name_ptr, "constant name")?.unwrap_or_default();
        let v = if long {
            word(row, value)
        } else {
            word32(row, value) as i32 as i64 as u64
        };
        out.push((n, v));
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(out)
}
