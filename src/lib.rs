//! hsinspect: read HotSpot's PerfData (the hsperfdata counters) from outside the JVM.
//!
//! The data flows through the modules in this order:
//!
//! 1. [`process`]: which process or file; its identity; stopping it briefly ([`process::ptrace`]);
//!    the hsperfdata file rules ([`process::hsperf_file`]).
//! 2. [`locate`]: where libjvm is loaded, and the addresses of `PerfMemory::_start` /
//!    `_capacity` from symbol tables or `gHotSpotVMStructs`.
//! 3. [`read`]: the bytes of the region, through one [`read::ReadMemory`] interface.
//! 4. [`perfdata`]: the pure parser, bytes in, counters out.
//! 5. [`mod@format`]: jcmd-compatible output and counter filters.
//!
//! The functions below run steps 1 to 4 for each kind of target.

#![warn(missing_docs)]

pub mod error;
pub mod format;
pub(crate) mod locate;
pub mod perfdata;
pub mod pipeline;
pub(crate) mod process;
pub(crate) mod read;

pub use error::{Error, LocateFailure, MemoryItem, with_causes};
pub use pipeline::{
    ForcedOptions, MAX_REGION, Reading, Sampler, Source, TargetSpec, read_core, read_file,
    read_forced, read_shared, read_shared_wait, region_bytes,
};
