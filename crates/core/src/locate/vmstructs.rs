//! Walks HotSpot's exported `gHotSpotVMStructs` table in a target's memory to find the static
//! fields of `PerfMemory`.
//!
//! The table and its exported layout variables are defined at the end of
//! `src/hotspot/share/runtime/vmStructs.cpp` (`gHotSpotVMStructEntry{TypeName,FieldName,IsStatic,
//! Address}Offset`, `gHotSpotVMStructEntryArrayStride`); the `PerfMemory` rows (`_start`, `_end`,
//! `_top`, `_capacity`, `_prologue`, `_initialized`) are `static_field`s in `VM_STRUCTS` since JDK 8.
//! The Serviceability Agent reads it the same way (`HotSpotTypeDataBase.readVMStructs`).
//!
//! Nothing here is Linux-specific: the caller supplies memory ([`ReadMemory`]) and the addresses of
//! exported symbols (from `.dynsym` on Linux, the export table of `jvm.dll` on Windows).

use std::collections::HashMap;

use super::PerfMemoryVars;
use crate::error::Error;
use crate::memory::{LeBytes, ReadMemory};

/// At most this many rows are walked (JDK 21 has about 2 500); a longer table is treated as corrupt.
pub const MAX_ENTRIES: usize = 100_000;
/// Longest type or field name read.
const MAX_NAME: usize = 256;
/// Rows read per memory access.
const BATCH: usize = 64;

/// Where the layout variables say each field of a `VMStructEntry` is.
#[derive(Debug, Clone, Copy)]
struct Layout {
    type_name: u64,
    field_name: u64,
    is_static: u64,
    address: u64,
    stride: u64,
}

/// The exported symbols the walker needs.
pub const SYMBOLS: [&str; 6] = [
    "gHotSpotVMStructs",
    "gHotSpotVMStructEntryTypeNameOffset",
    "gHotSpotVMStructEntryFieldNameOffset",
    "gHotSpotVMStructEntryIsStaticOffset",
    "gHotSpotVMStructEntryAddressOffset",
    "gHotSpotVMStructEntryArrayStride",
];

/// Finds the addresses of `PerfMemory::_start`, `_capacity`, `_top` and `_initialized` by walking
/// `gHotSpotVMStructs`. `resolve` gives the run-time address of an exported symbol.
///
/// # Errors
/// [`Error::VmStructs`] when a symbol is not exported, a layout value is implausible, the table
/// is not terminated within [`MAX_ENTRIES`] rows, or it has no `PerfMemory::_start`/`_capacity`
/// rows; [`Error::Memory`] when the target's memory cannot be read.
pub fn find_perf_memory(
    mem: &dyn ReadMemory,
    resolve: &dyn Fn(&str) -> Option<u64>,
) -> Result<PerfMemoryVars, Error> {
    let addr_of = |name: &str| {
        resolve(name).ok_or_else(|| Error::VmStructs(format!("symbol {name} is not exported")))
    };
    let read_var = |name: &str| -> Result<u64, Error> {
        mem.read_u64(addr_of(name)?)
            .map_err(|e| Error::memory(name.to_string(), e))
    };
    let layout = Layout {
        type_name: read_var(SYMBOLS[1])?,
        field_name: read_var(SYMBOLS[2])?,
        is_static: read_var(SYMBOLS[3])?,
        address: read_var(SYMBOLS[4])?,
        stride: read_var(SYMBOLS[5])?,
    };
    if !(16..=1024).contains(&layout.stride)
        || [layout.type_name, layout.field_name, layout.address]
            .iter()
            .any(|&o| o + 8 > layout.stride)
        || layout.is_static + 4 > layout.stride
    {
        return Err(Error::VmStructs(format!(
            "implausible entry layout {layout:?}"
        )));
    }
    let table = read_var(SYMBOLS[0])?;
    if table == 0 {
        return Err(Error::VmStructs(
            "gHotSpotVMStructs is NULL (the VM is not initialized yet?)".into(),
        ));
    }

    let stride = layout.stride as usize;
    let mut is_perf_memory: HashMap<u64, bool> = HashMap::new();
    let mut vars = PartialVars::default();
    let mut rows = vec![0u8; stride * BATCH];
    let mut index = 0usize;
    while index < MAX_ENTRIES {
        let base = table.wrapping_add((index * stride) as u64);
        // A batch may run past the end of the mapping that holds the table: fall back to one row.
        let n = match mem.read_exact_at(base, &mut rows) {
            Ok(()) => BATCH,
            Err(_) => {
                mem.read_exact_at(base, &mut rows[..stride])
                    .map_err(|e| Error::memory(format!("gHotSpotVMStructs row {index}"), e))?;
                1
            }
        };
        for row in rows[..n * stride].chunks_exact(stride) {
            // The layout check above keeps every field inside the row.
            let row = LeBytes::new(row);
            let word = |off: u64| row.u64_at(off as usize).unwrap_or(0);
            let (type_ptr, field_ptr) = (word(layout.type_name), word(layout.field_name));
            if field_ptr == 0 {
                return vars.finish(index);
            }
            let is_pm = match is_perf_memory.get(&type_ptr) {
                Some(&b) => b,
                None => {
                    let b = type_ptr != 0
                        && read_name(mem, type_ptr, "type name")?.as_deref()
                            == Some(b"PerfMemory".as_slice());
                    is_perf_memory.insert(type_ptr, b);
                    b
                }
            };
            if is_pm {
                let is_static = row.u32_at(layout.is_static as usize).unwrap_or(0);
                let field = read_name(mem, field_ptr, "field name")?;
                if is_static != 0 {
                    vars.set(field.as_deref().unwrap_or_default(), word(layout.address));
                }
                if vars.complete() {
                    return vars.finish(index);
                }
            }
            index += 1;
        }
    }
    Err(Error::VmStructs(format!(
        "no terminating row within {MAX_ENTRIES} rows: the table is corrupt"
    )))
}

fn read_name(mem: &dyn ReadMemory, ptr: u64, what: &str) -> Result<Option<Vec<u8>>, Error> {
    mem.read_c_string(ptr, MAX_NAME)
        .map_err(|e| Error::memory(format!("vmStructs {what} at {ptr:#x}"), e))
}

#[derive(Default)]
struct PartialVars {
    start: Option<u64>,
    capacity: Option<u64>,
    top: Option<u64>,
    initialized: Option<u64>,
}

impl PartialVars {
    fn set(&mut self, field: &[u8], address: u64) {
        let slot = match field {
            b"_start" => &mut self.start,
            b"_capacity" => &mut self.capacity,
            b"_top" => &mut self.top,
            b"_initialized" => &mut self.initialized,
            _ => return,
        };
        slot.get_or_insert(address);
    }

    fn complete(&self) -> bool {
        self.start.is_some()
            && self.capacity.is_some()
            && self.top.is_some()
            && self.initialized.is_some()
    }

    fn finish(self, rows: usize) -> Result<PerfMemoryVars, Error> {
        match (self.start, self.capacity) {
            (Some(start), Some(capacity)) => Ok(PerfMemoryVars {
                start,
                capacity,
                top: self.top,
                initialized: self.initialized,
            }),
            _ => Err(Error::VmStructs(format!(
                "no static PerfMemory::_start/_capacity rows among the {rows} rows walked"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The walker over a synthetic address space laid out as `vmStructs.cpp` lays it out on LP64
    //! (typeName 0, fieldName 8, typeString 16, isStatic 24, offset 32, address 40, stride 48).
    //! Real JVMs exercise it in the integration tests (stripped libjvm).
    use super::*;
    use crate::memory::MemoryCopy;

    const BASE: u64 = 0x10_0000;
    const STRINGS: u64 = 0x100; // offset of the string pool
    const VARS: u64 = 0x800; // offset of the exported layout variables
    const TABLE: u64 = 0x1000; // offset of the table

    fn put(bytes: &mut [u8], off: u64, v: u64) {
        bytes[off as usize..off as usize + 8].copy_from_slice(&v.to_le_bytes());
    }

    /// Builds a space with `rows` (type, field, is_static, address) and a terminating row unless
    /// `terminate` is false. Returns it and the resolver of the exported symbols.
    fn space(rows: &[(&str, &str, u32, u64)], terminate: bool, stride: u64) -> MemoryCopy {
        let mut bytes = vec![0u8; 0x1000 + (rows.len() + 1) * stride.max(48) as usize];
        let mut pool = STRINGS;
        let mut intern = |bytes: &mut Vec<u8>, s: &str| {
            let at = pool;
            bytes[at as usize..at as usize + s.len()].copy_from_slice(s.as_bytes());
            pool += s.len() as u64 + 1;
            BASE + at
        };
        for (i, (ty, field, is_static, address)) in rows.iter().enumerate() {
            let row = TABLE + i as u64 * stride;
            let t = intern(&mut bytes, ty);
            let f = intern(&mut bytes, field);
            put(&mut bytes, row, t);
            put(&mut bytes, row + 8, f);
            bytes[row as usize + 24..row as usize + 28].copy_from_slice(&is_static.to_le_bytes());
            put(&mut bytes, row + 40, *address);
        }
        if !terminate {
            bytes.truncate((TABLE + rows.len() as u64 * stride) as usize);
        }
        for (i, v) in [BASE + TABLE, 0, 8, 24, 40, stride].into_iter().enumerate() {
            put(&mut bytes, VARS + 8 * i as u64, v);
        }
        MemoryCopy::new(BASE, bytes, crate::memory::DEFAULT_PAGE_SIZE)
    }

    fn resolve(name: &str) -> Option<u64> {
        SYMBOLS
            .iter()
            .position(|s| *s == name)
            .map(|i| BASE + VARS + 8 * i as u64)
    }

    #[test]
    fn finds_the_static_perf_memory_fields() {
        let mem = space(
            &[
                ("Klass", "_name", 0, 0),
                ("PerfMemory", "_end", 1, 0x5000),
                ("PerfMemory", "_start", 1, 0x5008),
                ("PerfMemory", "_top", 1, 0x5010),
                ("PerfMemory", "_capacity", 1, 0x5018),
                ("PerfMemory", "_initialized", 1, 0x5020),
            ],
            true,
            48,
        );
        let vars = find_perf_memory(&mem, &resolve).unwrap();
        assert_eq!(
            vars,
            PerfMemoryVars {
                start: 0x5008,
                capacity: 0x5018,
                top: Some(0x5010),
                initialized: Some(0x5020)
            }
        );
    }

    #[test]
    fn a_table_without_perf_memory_is_an_error() {
        let mem = space(&[("Klass", "_name", 0, 0)], true, 48);
        let err = find_perf_memory(&mem, &resolve).unwrap_err().to_string();
        assert!(
            err.contains("no static PerfMemory::_start/_capacity rows among the 1 rows"),
            "{err}"
        );
    }

    #[test]
    fn an_unterminated_table_ends_at_unreadable_memory_with_an_error() {
        let rows: Vec<_> = (0..100).map(|_| ("Klass", "_name", 0, 0)).collect();
        let mem = space(&rows, false, 48);
        let err = find_perf_memory(&mem, &resolve).unwrap_err().to_string();
        assert!(err.contains("gHotSpotVMStructs row 100"), "{err}");
    }

    #[test]
    fn an_implausible_layout_is_refused() {
        let mem = space(&[("PerfMemory", "_start", 1, 1)], true, 8);
        let err = find_perf_memory(&mem, &resolve).unwrap_err().to_string();
        assert!(err.contains("implausible entry layout"), "{err}");
    }

    #[test]
    fn a_missing_export_is_named() {
        let mem = space(&[], true, 48);
        let err = find_perf_memory(&mem, &|n| if n == SYMBOLS[0] { None } else { resolve(n) })
            .unwrap_err()
            .to_string();
        assert!(err.contains("gHotSpotVMStructs is not exported"), "{err}");
    }
}
