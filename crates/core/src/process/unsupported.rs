//! The process stage where no live backend exists (an OS other than Linux and Windows, or the
//! `live` feature off): no live process can be opened, and a saved hsperfdata file is read with
//! the checks every OS can make (a regular file of a sane size). See [`crate::process`].

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use crate::error::Error;
use crate::perfdata::{MAX_REGION, PROLOGUE_SIZE};
use crate::pid::Pid;
use crate::process::StopReport;

/// The error every live operation gives here.
fn unsupported() -> Error {
    Error::Unsupported {
        what: "reading a live JVM",
        os: std::env::consts::OS,
    }
}

/// A live process: never opened on this build.
#[derive(Debug)]
pub enum Process {}

impl Process {
    /// # Errors
    /// Always [`Error::Unsupported`].
    pub fn open(_pid: Pid) -> Result<Self, Error> {
        Err(unsupported())
    }

    /// Never called: no `Process` exists.
    pub fn pid(&self) -> Pid {
        match *self {}
    }

    /// Never called: no `Process` exists.
    pub fn name(&self) -> &str {
        match *self {}
    }

    /// Never called: no `Process` exists.
    pub fn age(&self) -> Duration {
        match *self {}
    }

    /// Never called: no `Process` exists.
    ///
    /// # Errors
    /// None.
    pub fn check_same(&self) -> Result<(), Error> {
        match *self {}
    }
}

/// A held process: never exists on this build.
#[derive(Debug)]
pub enum Stopped {}

impl Stopped {
    /// Never called.
    pub fn release(self) -> StopReport {
        match self {}
    }

    /// Never called.
    pub fn registers(&self, _tid: Pid) -> Option<crate::registers::ThreadRegisters> {
        match *self {}
    }

    /// Never called.
    pub fn task_stat(&self, _tid: Pid) -> Option<super::TaskStat> {
        match *self {}
    }

    /// Never called.
    pub fn not_stopped(&self) -> Vec<Pid> {
        match *self {}
    }
}

/// No thread of a live process is read on this build.
pub const OS_PRIORITY_IS_NICE: bool = false;

/// No live process: no threads.
pub fn namespace_tids(_pid: Pid) -> std::collections::HashMap<Pid, Pid> {
    std::collections::HashMap::new()
}

/// No live process: no threads.
pub fn task_stat(_pid: Pid, _tid: Pid) -> Option<super::TaskStat> {
    None
}

/// # Errors
/// Always [`Error::Unsupported`]: no live process is read.
pub fn holds_single_threads() -> Result<(), Error> {
    Err(unsupported())
}

/// # Errors
/// Never returns: no `Process` exists.
pub fn stop_threads(
    process: &Process,
    _tids: &[Pid],
    _timeout: Duration,
) -> Result<Stopped, Error> {
    match *process {}
}

/// # Errors
/// Always [`Error::Unsupported`].
pub fn list_tasks(_pid: Pid) -> Result<Vec<Pid>, Error> {
    Err(unsupported())
}

/// No live process: no thread names.
pub fn thread_name(_pid: Pid, _tid: Pid) -> Option<String> {
    None
}

/// # Errors
/// Never returns: no `Process` exists.
pub fn stop(process: &Process, _timeout: Duration) -> Result<Stopped, Error> {
    match *process {}
}

/// # Errors
/// Never returns: no `Process` exists.
pub fn shared_bytes(process: &Process) -> Result<(String, Vec<u8>), Error> {
    match *process {}
}

/// No live process can be looked at: `false`, so errors keep their own cause.
pub fn exited_or_exiting(_pid: Pid) -> bool {
    false
}

/// What to do instead.
pub fn permission_hint(_pid: Pid) -> String {
    format!(
        "reading a live JVM is not supported on {}: read its hsperfdata file or a core instead",
        std::env::consts::OS
    )
}

/// No user database is consulted here: `None`.
pub fn user_name(_uid: u32) -> Option<String> {
    None
}

/// Reads a saved hsperfdata file: a regular file (not a directory or device) of
/// [`PROLOGUE_SIZE`] to [`MAX_REGION`] bytes.
///
/// # Errors
/// [`Error::Io`] when it cannot be opened or read; [`Error::HsperfdataFile`] when it is not a regular
/// file or its size is not a region's.
pub fn read_hsperfdata_file(path: &Path) -> Result<Vec<u8>, Error> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    let refuse = |reason: String| Error::HsperfdataFile {
        path: path.to_owned(),
        reason,
    };
    if !meta.is_file() {
        return Err(refuse(
            "is not a regular file: refused, it is not an hsperfdata file".into(),
        ));
    }
    let size = meta.len();
    if size < PROLOGUE_SIZE as u64 || size > MAX_REGION {
        return Err(refuse(format!(
            "{size} bytes: not the size of a PerfData region ({PROLOGUE_SIZE} bytes to {MAX_REGION}); refused"
        )));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.by_ref()
        .take(MAX_REGION)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

/// No live process: `None`.
pub fn not_a_jvm(_pid: Pid) -> Option<Error> {
    None
}

/// Always [`Error::Unsupported`].
pub fn usage(_pid: Pid) -> Result<super::ProcessUsage, Error> {
    Err(Error::Unsupported {
        what: "reading a process's resource usage",
        os: std::env::consts::OS,
    })
}
