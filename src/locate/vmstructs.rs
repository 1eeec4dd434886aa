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
use crate::Error;
use crate::read::ReadMemory;

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
            let word = |off: u64| {
                u64::from_le_bytes(
                    row[off as usize..off as usize + 8]
                        .try_into()
                        .expect("8 bytes"),
                )
            };
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
                let is_static = u32::from_le_bytes(
                    row[layout.is_static as usize..layout.is_static as usize + 4]
                        .try_into()
                        .expect("4 bytes"),
                );
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
