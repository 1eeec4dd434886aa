//! Post-mortem targets from Windows: a JVM's minidump (`inspect --core hs_err_pid4242.mdmp`), read
//! on any OS.
//!
//! `jvm.dll` is found in the dump's module list; its PE headers and export table, the
//! `gHotSpotVMStructs` walk, `PerfMemory::_start` / `_capacity` and the region are then read from
//! the dump's memory ([`MinidumpMemory`]) exactly as from a live Windows process
//! ([`locate::pe::locate_jvm_dll`], [`read_region`]). Only a dump with full memory holds them; any
//! other kind is refused with the kind that would and how to write one.

use std::path::Path;

use super::{Detail, ReadPath, Reading, Warning, read_region};
use crate::error::Error;
use crate::locate::{self, JVM_DLL};
use crate::memory::MemoryError;
use crate::perfdata;
use crate::read::{DumpModule, MinidumpMemory, dump_type_name};

/// How to write a dump with full memory (for the errors of other kinds).
pub(crate) const FULL_DUMP_HOWTO: &str = "write one with `procdump -ma <pid>`, with Task Manager (Details, right-click java.exe, \"Create dump file\"), or let HotSpot write hs_err_pid<pid>.mdmp when the JVM crashes (always with full memory: by default on Windows Server editions, elsewhere with -XX:+CreateCoredumpOnCrash); Windows Error Reporting's LocalDumps need DumpType 2";

/// Reads the PerfData region out of a Windows minidump (`inspect --core <file>` when the file
/// starts with `MDMP`).
///
/// # Errors
/// [`Error::Core`] when the file is not a usable minidump (see `MinidumpMemory::open`), its
/// process has no `jvm.dll`, the dump lacks full memory (with how to write one), `_start` is NULL,
/// or the region is not in it; [`Error::Pe`], [`Error::Locate`] and the vmStructs walk's errors
/// when `jvm.dll` in the dump is not as expected; [`Error::PerfData`] when the bytes are
/// malformed.
pub fn read_minidump(path: &Path) -> Result<Reading, Error> {
    let dump = MinidumpMemory::open(path)?;
    let who = who(&dump);
    let module = jvm_dll(&dump)?;
    let located = locate::pe::locate_jvm_dll(&dump, &module.path, module.base, module.size)
        .map_err(|e| explain(&dump, e, &format!("{JVM_DLL}'s image"), PERFDATA))?;
    let mut details = vec![
        Detail::Path(ReadPath::Minidump {
            path: path.to_owned(),
            pid: dump.process_id(),
            executable: dump.executable(),
        }),
        Detail::MinidumpContents {
            flags: dump.flags(),
            streams: dump.streams().to_vec(),
            memory: dump
                .memory_list()
                .map(|(list, n, bytes)| (list.to_string(), n, bytes)),
        },
        Detail::Module(located.module.clone()),
        Detail::Symbols(located.source.clone()),
        Detail::Variables {
            start: located.vars.start,
            capacity: located.vars.capacity,
        },
    ];
    let region = read_region(&located.vars, &dump, None)
        .map_err(|e| explain(&dump, e, "the PerfData region", PERFDATA))?;
    let Some(bytes) = region.bytes else {
        return Err(Error::core(
            path,
            format!(
                "PerfMemory::_start is NULL in the dump of {who}: the JVM ran with -XX:-UsePerfData, or had not yet created its PerfData region"
            ),
        ));
    };
    details.push(Detail::Region {
        start: region.start,
        capacity: region.capacity,
    });
    let snapshot = perfdata::parse(&bytes)?;
    let mut warnings = Vec::new();
    if !snapshot.prologue.accessible {
        warnings.push(Warning::CoreNotAccessible);
    }
    Ok(Reading {
        pid: None,
        snapshot,
        bytes,
        details,
        warnings,
        fallback: None,
    })
}

/// Which process the dump is of, for messages: `process 4242 (java.exe)`.
pub(super) fn who(dump: &MinidumpMemory) -> String {
    match (dump.process_id(), dump.executable()) {
        (Some(pid), Some(exe)) => format!("process {pid} ({exe})"),
        (Some(pid), None) => format!("process {pid}"),
        (None, Some(exe)) => format!("a process of {exe}"),
        (None, None) => "an unknown process".into(),
    }
}

/// `jvm.dll` in the dump's module list.
///
/// # Errors
/// [`Error::Core`] when the dumped process has none (not a HotSpot JVM).
pub(super) fn jvm_dll(dump: &MinidumpMemory) -> Result<DumpModule, Error> {
    dump.module(JVM_DLL).cloned().ok_or_else(|| {
        Error::core(
            dump.path(),
            format!(
                "the dump of {} has no {JVM_DLL} in its module list ({} modules): not a HotSpot JVM's dump",
                who(dump),
                dump.modules().len()
            ),
        )
    })
}

/// What the counters need that only a dump with full memory holds (for [`explain`]).
const PERFDATA: &str = "the PerfData region is";

/// A read of the dump's memory that failed because the dump lacks the bytes becomes an error that
/// says what kind of dump this is and that `needs` (`"the PerfData region is"`) only in one with
/// full memory, and how to write one; other errors pass unchanged.
pub(super) fn explain(dump: &MinidumpMemory, e: Error, what: &str, needs: &str) -> Error {
    let Error::Memory {
        what: item,
        source: source @ (MemoryError::NotDumped { .. } | MemoryError::Unmapped { .. }),
    } = &e
    else {
        return e;
    };
    if let Some(problem) = dump.memory_problem() {
        return Error::core(
            dump.path(),
            format!("{what} cannot be read ({item}): {problem}"),
        );
    }
    if dump.full_memory() {
        return e;
    }
    let memory = match dump.memory_list() {
        Some((list, n, bytes)) => format!(
            "its only memory is a {list} of {n} ranges ({bytes} bytes: thread stacks and a few small ranges)"
        ),
        None => "it holds no memory at all".into(),
    };
    Error::core(
        dump.path(),
        format!(
            "{what} is not in the dump ({item} at {:#x}): it was written without full memory ({}; streams: {}) and {memory}; {needs} only in a minidump with full memory (MiniDumpWithFullMemory): {FULL_DUMP_HOWTO}",
            match source {
                MemoryError::NotDumped { addr, .. } | MemoryError::Unmapped { addr, .. } => *addr,
                _ => 0,
            },
            dump_type_name(dump.flags()),
            dump.streams().join(", "),
        ),
    )
}
