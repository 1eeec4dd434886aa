//! hsinspect-core: read HotSpot's PerfData (the hsperfdata counters that `jcmd PerfCounter.print`
//! and `jstat` show) from outside the JVM: from a live process's memory, its hsperfdata file, a
//! saved copy, or a core file.
//!
//! # Use
//!
//! Name a [`Target`] and take [`Reading`]s of it with a [`Sampler`] (or call one of the
//! `read_*` functions once). A reading holds the parsed [`perfdata::Snapshot`]; [`mod@format`]
//! prints it as jcmd does.
//!
//! ```no_run
//! # extern crate hsinspect_core as hsinspect; // the CLI's name for this package
//! use std::time::Duration;
//! use hsinspect_core::{LiveOptions, Sampler, Target};
//!
//! # fn main() -> Result<(), hsinspect_core::Error> {
//! // A live JVM's memory, without stopping it (`inspect -F --no-stop 4242`).
//! let source = Target::Live {
//!     pid: 4242,
//!     opts: LiveOptions { stop: false, ..LiveOptions::default() },
//! };
//! let mut sampler = Sampler::new(source);
//! for _ in 0..3 {
//!     let reading = sampler.sample()?; // symbols are resolved once, then only the region is read
//!     let gcs = reading.snapshot.long("sun.gc.collector.0.invocations");
//!     println!("young collections: {gcs:?}");
//!     std::thread::sleep(Duration::from_secs(1));
//! }
//!
//! // A saved hsperfdata file, printed as `jcmd <pid> PerfCounter.print` prints it.
//! let reading = hsinspect_core::read_file("saved.hsperf".as_ref())?;
//! let filter = hsinspect_core::format::Filter::default();
//! let counters = hsinspect_core::format::sorted(&reading.snapshot, &filter);
//! hsinspect_core::format::write_jcmd(&mut std::io::stdout(), &counters).expect("stdout");
//! # Ok(())
//! # }
//! ```
//!
//! # How it works
//!
//! The data flows `target → locate region → read bytes → parse PerfData → format`, one module
//! for each step (only the first and the last two are public):
//!
//! 1. `process`: a live process's identity (pid, start time, NSpid), stopping its threads
//!    briefly with ptrace, and HotSpot's rules for hsperfdata files (`perfMemory_posix.cpp`).
//! 2. `locate`: where libjvm is loaded (load bias), and the addresses of `PerfMemory::_start`
//!    and `_capacity` from its symbol tables (read with the `elf` module) or the
//!    `gHotSpotVMStructs` table HotSpot exports (`vmStructs.cpp`).
//! 3. `read`: the region's bytes, through one `ReadMemory` interface for a live process and a
//!    core file.
//! 4. [`perfdata`]: the pure parser, bytes in, counters out (`perfMemory.hpp`, `perfData.hpp`).
//! 5. [`mod@format`]: jcmd-compatible output and counter filters, and the machine formats
//!    (JSON Lines, Prometheus text exposition) with their allow-list of exportable strings.
//!
//! [`pipeline`] strings the steps together for each kind of target; errors are [`Error`]s.
//! `discover` (Linux and Windows, feature `discover`) finds every JVM on the host (`inspect
//! list`, `serve`, `top`) with one scan of `/proc` (Linux) or a toolhelp snapshot (Windows) and
//! those pipelines; `serve` (feature `serve`) builds the Prometheus
//! page of them all (the HTTP side is the `inspect` CLI's). [`container`] says which container
//! and Kubernetes pod a process runs in (its cgroup, then the container runtime's own files).
//!
//! Each stage that touches the OS (`process`, `locate`, `read`) has one seam module per OS
//! (Linux, Windows, and `unsupported` for any other OS or without the `live` feature); files,
//! cores, `stat` and the formats work on every OS. Bring your own memory source by implementing
//! [`ReadMemory`].

#![warn(missing_docs)]

pub mod container;
pub mod cpu;
#[cfg(all(any(target_os = "linux", windows), feature = "discover"))]
pub mod discover;
pub(crate) mod elf;
pub mod error;
pub mod format;
pub mod heap;
pub(crate) mod locate;
pub mod memory;
pub mod metrics;
pub mod perfdata;
mod pid;
pub mod pipeline;
pub(crate) mod process;
pub(crate) mod read;
pub mod registers;
#[cfg(all(any(target_os = "linux", windows), feature = "serve"))]
pub mod serve;
pub mod stat;
pub(crate) mod sys;
pub mod threads;
pub(crate) mod vm;

pub use error::{Error, LocateFailure, Looked, MemoryItem, VmError, with_causes};
pub use locate::{LoadedModule, Note};
pub use memory::{LeBytes, MemoryCopy, MemoryError, ReadMemory};
pub use pipeline::{
    Detail, LiveOptions, ReadPath, Reading, Sampler, SymbolCacheUse, Target, Warning, read_core,
    read_file, read_hsperfdata, read_live, read_minidump,
};
pub use process::{Pid, ProcessUsage, StopMethod, StopReport, TaskStat, usage as process_usage};
pub use vm::flags::{FlagOrigin, FlagValue, VmArguments, VmFlag};
