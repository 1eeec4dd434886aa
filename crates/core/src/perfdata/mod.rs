//! The PerfData format: a pure parser from bytes to counters.
//!
//! The layout is HotSpot's (`src/hotspot/share/runtime/perfMemory.hpp` for the prologue,
//! `perfData.hpp` / `perfData.cpp` for entries) and the reading rules follow jvmstat's
//! `sun/jvmstat/perfdata/monitor/v2_0/PerfDataBuffer.java`. Nothing here knows where the bytes came
//! from: a live process, a core file or an hsperfdata file all end up in [`parse`].

pub mod java_command;
mod parse;

pub use parse::{ParseError, parse, parse_reusing};

/// Size in bytes of `PerfDataPrologue` (`perfMemory.hpp`).
pub const PROLOGUE_SIZE: usize = 32;

/// Largest PerfData region accepted from any target, in bytes: a `PerfMemory::_capacity` read
/// from a JVM's memory or a core, and an hsperfdata file's size. HotSpot's default is 32 KiB
/// (`-XX:PerfDataMemorySize`, `globals.hpp`); anything beyond 64 MiB is not a region.
pub const MAX_REGION: u64 = 64 << 20;
/// Size in bytes of the fixed `PerfDataEntry` header (`perfMemory.hpp`).
pub const ENTRY_HEADER_SIZE: usize = 20;
/// The four magic bytes as they lie in memory, whatever the byte order (`0xcafec0c0` read big-endian).
pub const MAGIC: [u8; 4] = [0xca, 0xfe, 0xc0, 0xc0];

/// Whether `buf` starts with a prologue marked accessible (magic in place, byte 7 non-zero). A
/// region that is not is still being set up by a starting VM (`PerfMemory::initialize` zeroes
/// it, then writes the prologue; `set_accessible` comes last), so it may not parse yet.
pub fn marked_accessible(buf: &[u8]) -> bool {
    buf.len() >= PROLOGUE_SIZE && buf[..4] == MAGIC && buf[7] != 0
}

/// Byte order of the multi-byte fields, from prologue byte 4 (`PERFDATA_BIG_ENDIAN` = 0,
/// `PERFDATA_LITTLE_ENDIAN` = 1 in `perfMemory.hpp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// `PERFDATA_BIG_ENDIAN` (0).
    Big,
    /// `PERFDATA_LITTLE_ENDIAN` (1).
    Little,
}

/// The 32-byte `PerfDataPrologue` at the start of every PerfData region (`perfMemory.hpp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prologue {
    /// Byte order of every multi-byte field after the magic.
    pub byte_order: ByteOrder,
    /// `major_version` (HotSpot writes 2).
    pub major_version: u8,
    /// `minor_version` (HotSpot writes 0).
    pub minor_version: u8,
    /// `accessible`: set once the VM finished starting (`PerfMemory::set_accessible`).
    pub accessible: bool,
    /// `used`: bytes in use, prologue included (`_top - _start`).
    pub used: i32,
    /// `overflow`: bytes of entries that did not fit and went to the C heap (not in the region).
    pub overflow: i32,
    /// `mod_time_stamp`: `os::elapsed_counter()` ticks at the last structural change.
    pub mod_time_stamp: i64,
    /// `entry_offset`: offset of the first entry (HotSpot writes 32).
    pub entry_offset: i32,
    /// `num_entries`: entries allocated so far.
    pub num_entries: i32,
}

/// `PerfData::Units` (`perfData.hpp`): what a counter's number measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Units {
    /// `U_None` (1).
    None,
    /// `U_Bytes` (2).
    Bytes,
    /// `U_Ticks` (3): divide by `sun.os.hrt.frequency` for seconds.
    Ticks,
    /// `U_Events` (4).
    Events,
    /// `U_String` (5).
    String,
    /// `U_Hertz` (6).
    Hertz,
}

impl Units {
    /// Maps the `data_units` byte; `None` for a value HotSpot does not define.
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            1 => Units::None,
            2 => Units::Bytes,
            3 => Units::Ticks,
            4 => Units::Events,
            5 => Units::String,
            6 => Units::Hertz,
            _ => return None,
        })
    }
}

/// `PerfData::Variability` (`perfData.hpp`): how a counter's value may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variability {
    /// `V_Constant` (1): set once.
    Constant,
    /// `V_Monotonic` (2): only grows.
    Monotonic,
    /// `V_Variable` (3): goes up and down.
    Variable,
}

impl Variability {
    /// Maps the `data_variability` byte; `None` for a value HotSpot does not define.
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            1 => Variability::Constant,
            2 => Variability::Monotonic,
            3 => Variability::Variable,
            _ => return None,
        })
    }
}

/// A counter's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A `'J'` scalar (jlong), HotSpot's `PerfLong` family.
    Long(i64),
    /// A `'B'` vector with units `U_String`, cut at its first NUL (`PerfString`). Bytes that are not
    /// UTF-8 are replaced with U+FFFD.
    String(String),
    /// A `'B'` vector with other units: raw bytes (HotSpot creates none today).
    Bytes(Vec<u8>),
    /// An entry of a type HotSpot does not write (`'I'`, `'D'`, ...): reported, not decoded.
    Unsupported {
        /// The `data_type` byte (a jvmstat `TypeCode` character).
        type_code: u8,
        /// `vector_length` (0 for a scalar).
        vector_length: u32,
    },
}

/// One PerfData counter: an entry of the region, or a jvmstat pseudo counter derived from the
/// prologue (`sun.perfdata.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    /// Dotted name, e.g. `sun.gc.collector.0.invocations`.
    pub name: String,
    /// The decoded value.
    pub value: Value,
    /// `data_units`.
    pub units: Units,
    /// `data_variability`.
    pub variability: Variability,
    /// `flags & F_Supported`: HotSpot marks `java.*` and `com.sun.*` names as supported.
    pub supported: bool,
    /// Offset of the entry in the region; `None` for a pseudo counter.
    pub offset: Option<usize>,
}

/// A parsed PerfData region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The prologue as read.
    pub prologue: Prologue,
    /// Size of the buffer that was parsed (the region's capacity), in bytes.
    pub size: usize,
    /// Entries in region order, followed by the jvmstat pseudo counters.
    pub counters: Vec<Counter>,
    /// True when the walk stopped at a zero `entry_length` before `num_entries` entries: the VM was
    /// writing its newest entry while the bytes were taken.
    pub tail_in_progress: bool,
}

impl Snapshot {
    /// The counter with exactly this name.
    pub fn get(&self, name: &str) -> Option<&Counter> {
        self.counters.iter().find(|c| c.name == name)
    }

    /// The `'J'` value of the counter with this name.
    pub fn long(&self, name: &str) -> Option<i64> {
        match self.get(name)?.value {
            Value::Long(v) => Some(v),
            _ => None,
        }
    }
}
