//! The hsperfdata pipeline (`inspect <pid>`), written once over the OS seam: the JVM's own shared
//! PerfData (the hsperfdata file, or on Windows its named file mapping), waited for while the
//! JVM starts.

use std::time::{Duration, Instant};

use super::{Detail, ReadPath, Reading, STARTUP_GRACE, ready, still_starting};
use crate::error::Error;
use crate::perfdata;
use crate::process::Pid;
use crate::process::{self, Process};

/// Reads the JVM's shared PerfData by pid (`inspect <pid>`): on Linux its hsperfdata file, with
/// HotSpot's safety rules; on Windows the named file mapping `hsperfdata_<user>_<pid>`, else its
/// backing file. A JVM that is still starting may not have created it yet (waited for while the
/// process is younger than 2 s), not yet sized it (an empty file: waited for up to `wait`,
/// whatever the JVM's age) or not yet marked it accessible (waited for up to `wait`, as
/// jvmstat's `PerfDataBuffer` does).
///
/// # Errors
/// [`Error::NoHsperfdataFile`] (which says to use `-F`), [`Error::HsperfdataFile`] for a file that breaks
/// a safety rule, [`Error::PerfData`] when its contents are malformed, [`Error::NotAccessible`]
/// when the region stayed inaccessible for all of `wait`, [`Error::HsperfdataFileNotSized`] when its file stayed empty for all of `wait`, [`Error::ProcessExited`],
/// [`Error::Unsupported`] on an OS without a live backend.
pub fn read_hsperfdata(pid: Pid, wait: Duration) -> Result<Reading, Error> {
    read_hsperfdata_inner(pid, wait).map_err(|e| match e {
        // The JVM deletes its file as it exits: "no file" then means "exited".
        Error::NoHsperfdataFile { .. }
        | Error::HsperfdataFile { .. }
        | Error::HsperfdataFileNotSized { .. }
            if process::exited_or_exiting(pid) =>
        {
            Error::ProcessExited(pid)
        }
        // No file because no JVM: say that, not "-XX:+PerfDisableSharedMem".
        e @ Error::NoHsperfdataFile { .. } => process::not_a_jvm(pid).unwrap_or(e),
        e => e,
    })
}

/// How often a file HotSpot has created and not yet sized is looked at again: it is sized right
/// after, so a short poll.
const SIZING_POLL: Duration = Duration::from_millis(2);

fn read_hsperfdata_inner(pid: Pid, wait: Duration) -> Result<Reading, Error> {
    let process = Process::open(pid)?;
    let began = Instant::now();
    loop {
        let (found, bytes) = match process::shared_bytes(&process) {
            Err(Error::NoHsperfdataFile { .. }) if process.age() < STARTUP_GRACE => {
                // Too young to conclude there will be none.
                still_starting(pid, began, wait)?;
                continue;
            }
            // Created and not sized yet: a starting JVM, whatever its age says (a loaded machine,
            // or a debugger, may hold it there). Waited for up to `wait`.
            Err(Error::HsperfdataFileNotSized {
                pid, path, size, ..
            }) => {
                if began.elapsed() < wait {
                    std::thread::sleep(SIZING_POLL);
                    continue;
                }
                return Err(Error::HsperfdataFileNotSized {
                    pid,
                    path,
                    size,
                    waited_ms: began.elapsed().as_millis() as u64,
                });
            }
            r => r?,
        };
        let age = || process.age();
        let Some(snapshot) = ready(perfdata::parse(&bytes), &bytes, pid, &age, began, wait)? else {
            continue;
        };
        return Ok(Reading {
            pid: Some(pid),
            snapshot,
            bytes,
            details: vec![Detail::Path(ReadPath::Hsperfdata(found))],
            warnings: Vec::new(),
            fallback: None,
        });
    }
}
