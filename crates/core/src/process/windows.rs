//! The Windows side of the process stage (see [`crate::process`] for the seam): a live process's
//! identity (pid + creation time), stopping it briefly with a debug attach, and its PerfData through the named file mapping or the
//! hsperfdata file (`src/hotspot/os/windows/perfMemory_windows.cpp`).
//!
//! Every handle is opened for reading or querying only (`PROCESS_VM_READ`,
//! `PROCESS_QUERY_LIMITED_INFORMATION`, `FILE_MAP_READ`, `GENERIC_READ`); nothing here writes to
//! a target or its files.

use std::ffi::OsString;
use std::fs::File;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{
    DBG_CONTINUE, DBG_EXCEPTION_NOT_HANDLED, ERROR_ACCESS_DENIED, ERROR_INVALID_PARAMETER,
    ERROR_SEM_TIMEOUT, EXCEPTION_BREAKPOINT, FILETIME, HANDLE, INVALID_HANDLE_VALUE, STILL_ACTIVE,
};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT,
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
    FILE_TYPE_DISK, GetFileInformationByHandle, GetFileType, GetTempPathW,
};
use windows_sys::Win32::System::Diagnostics::Debug::{
    CREATE_PROCESS_DEBUG_EVENT, CREATE_THREAD_DEBUG_EVENT, CheckRemoteDebuggerPresent,
    ContinueDebugEvent, DEBUG_EVENT, DebugActiveProcess, DebugActiveProcessStop,
    DebugSetProcessKillOnExit, EXCEPTION_DEBUG_EVENT, EXIT_PROCESS_DEBUG_EVENT,
    EXIT_THREAD_DEBUG_EVENT, LOAD_DLL_DEBUG_EVENT, WaitForDebugEvent,
};
use windows_sys::Win32::System::Memory::{
    FILE_MAP_READ, MEMORY_BASIC_INFORMATION, MEMORY_MAPPED_VIEW_ADDRESS, MapViewOfFile,
    OpenFileMappingW, UnmapViewOfFile, VirtualQuery,
};
use windows_sys::Win32::System::SystemInformation::GetSystemTimeAsFileTime;
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, GetProcessTimes, IsWow64Process, OpenProcess,
    PROCESS_QUERY_LIMITED_INFORMATION, QueryFullProcessImageNameW,
};

use crate::error::Error;
use crate::perfdata::MAX_REGION;
use crate::pid::Pid;
use crate::process::{StopMethod, StopReport, TaskStat};
use crate::registers::ThreadRegisters;

/// HotSpot's name prefix for the PerfData file and mapping (`PERFDATA_NAME`, `perfMemory.cpp`).
const PERFDATA_NAME: &str = "hsperfdata";

/// What to do when access to a process is refused.
pub fn permission_hint(pid: Pid) -> String {
    format!(
        "Reading process {pid} needs the same user as the JVM (and, for a service or another \
         user's JVM, an elevated prompt: Administrators hold SeDebugPrivilege)"
    )
}

pub(crate) fn last_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

pub(crate) fn os_code(e: &std::io::Error) -> u32 {
    e.raw_os_error().unwrap_or(0) as u32
}

fn wide(s: &str) -> Vec<u16> {
    std::ffi::OsStr::new(s)
        .encode_wide()
        .chain(std::iter::once(0))
        .collect()
}

fn filetime(t: FILETIME) -> u64 {
    (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)
}

/// A handle on process `pid` with `access`.
///
/// # Errors
/// [`Error::NoSuchProcess`], [`Error::PermissionDenied`] with the fix, [`Error::Os`].
pub(crate) fn open_handle(pid: Pid, access: u32) -> Result<OwnedHandle, Error> {
    let Ok(id) = u32::try_from(pid) else {
        return Err(Error::NoSuchProcess(pid));
    };
    // SAFETY: plain call; a non-null result is a handle we own.
    let h = unsafe { OpenProcess(access, 0, id) };
    if h.is_null() {
        let e = last_error();
        return Err(match os_code(&e) {
            ERROR_INVALID_PARAMETER => Error::NoSuchProcess(pid),
            ERROR_ACCESS_DENIED => Error::PermissionDenied {
                what: format!("opening process {pid}"),
                hint: permission_hint(pid),
            },
            _ => Error::Os {
                what: format!("OpenProcess({pid})"),
                source: e,
            },
        });
    }
    // SAFETY: `h` is a valid handle that nothing else owns.
    Ok(unsafe { OwnedHandle::from_raw_handle(h as _) })
}

/// `GetProcessTimes`' creation time (100 ns units since 1601): with the pid, the identity of a
/// process (pids are reused).
fn creation_time(h: HANDLE, pid: Pid) -> Result<u64, Error> {
    let mut t = [FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    }; 4];
    let [c, e, k, u] = &mut t;
    // SAFETY: four valid out-pointers.
    if unsafe { GetProcessTimes(h, c, e, k, u) } == 0 {
        return Err(Error::Os {
            what: format!("GetProcessTimes({pid})"),
            source: last_error(),
        });
    }
    Ok(filetime(t[0]))
}

fn still_active(h: HANDLE) -> bool {
    let mut code = 0u32;
    // SAFETY: valid out-pointer.
    unsafe { GetExitCodeProcess(h, &mut code) != 0 && code == STILL_ACTIVE as u32 }
}

/// jcmd.exe's `os_prio=` is `GetThreadPriority`'s, whatever the JVM's priority policy.
pub const OS_PRIORITY_IS_NICE: bool = false;

/// Windows has no pid namespaces: a JVM's `OSThread::_thread_id` is the thread id; empty.
pub fn namespace_tids(_pid: Pid) -> std::collections::HashMap<Pid, Pid> {
    std::collections::HashMap::new()
}

/// What holding only some threads gives here: a debug attach suspends every thread at once, so
/// the samplers (`inspect hot`, `inspect record`) and a dump that holds only the threads that run
/// are not done on Windows.
fn single_threads_unsupported() -> Error {
    Error::Unsupported {
        what: "holding only the threads that run",
        os: std::env::consts::OS,
    }
}

/// # Errors
/// Always [`Error::Unsupported`]: see [`single_threads_unsupported`].
pub fn holds_single_threads() -> Result<(), Error> {
    Err(single_threads_unsupported())
}

/// # Errors
/// Always [`Error::Unsupported`]: see [`single_threads_unsupported`].
pub fn stop_threads(
    _process: &Process,
    _tids: &[Pid],
    _timeout: Duration,
) -> Result<Stopped, Error> {
    Err(single_threads_unsupported())
}

/// # Errors
/// Always [`Error::Unsupported`]: a process's threads are not listed on their own here (the
/// samplers that need them are not done on Windows).
pub fn list_tasks(_pid: Pid) -> Result<Vec<Pid>, Error> {
    Err(Error::Unsupported {
        what: "listing a process's threads",
        os: std::env::consts::OS,
    })
}

/// A thread's OS name is not read here: `None`.
pub fn thread_name(_pid: Pid, _tid: Pid) -> Option<String> {
    None
}

/// Whether `pid` names no running process (gone, or exiting).
pub fn exited_or_exiting(pid: Pid) -> bool {
    match open_handle(pid, PROCESS_QUERY_LIMITED_INFORMATION) {
        Ok(h) => !still_active(h.as_raw_handle() as HANDLE),
        Err(Error::NoSuchProcess(_)) => true,
        Err(_) => false,
    }
}

/// A live Windows process opened by pid with `PROCESS_QUERY_LIMITED_INFORMATION` (identity and
/// whether it runs; its memory is opened by the read stage).
#[derive(Debug)]
pub struct Process {
    /// The Windows process id.
    pid: Pid,
    /// Its creation time (100 ns units since 1601).
    pub creation: u64,
    handle: OwnedHandle,
}

impl Process {
    /// Opens `pid` to learn its identity and whether it runs.
    ///
    /// # Errors
    /// [`Error::NoSuchProcess`]; [`Error::PermissionDenied`] with the fix; [`Error::Os`];
    /// [`Error::ProcessExited`].
    pub fn open(pid: Pid) -> Result<Self, Error> {
        let h = open_handle(pid, PROCESS_QUERY_LIMITED_INFORMATION)?;
        let creation = creation_time(h.as_raw_handle() as HANDLE, pid)?;
        let p = Process {
            pid,
            creation,
            handle: h,
        };
        if !p.running() {
            return Err(Error::ProcessExited(pid));
        }
        Ok(p)
    }

    /// The Windows process id.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// The file name of its executable.
    pub fn name(&self) -> String {
        self.image_name()
    }

    pub(crate) fn handle(&self) -> HANDLE {
        self.handle.as_raw_handle() as HANDLE
    }

    /// The file name of the process's executable (`QueryFullProcessImageNameW`), or `?`.
    pub fn image_name(&self) -> String {
        let mut buf = vec![0u16; 1024];
        let mut len = buf.len() as u32;
        // SAFETY: the buffer holds `len` u16s.
        let ok =
            unsafe { QueryFullProcessImageNameW(self.handle(), 0, buf.as_mut_ptr(), &mut len) };
        if ok == 0 {
            return "?".into();
        }
        let path = PathBuf::from(from_wide(&buf[..len as usize]));
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// Whether the process has not exited.
    pub fn running(&self) -> bool {
        still_active(self.handle())
    }

    /// How long ago the process was created.
    pub fn age(&self) -> Duration {
        let mut now = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        // SAFETY: valid out-pointer.
        unsafe { GetSystemTimeAsFileTime(&mut now) };
        Duration::from_nanos(
            filetime(now)
                .saturating_sub(self.creation)
                .saturating_mul(100),
        )
    }

    /// Whether a 32-bit process runs under WOW64 (the reader is 64-bit only).
    pub fn is_wow64(&self) -> bool {
        let mut wow = 0;
        // SAFETY: valid out-pointer.
        unsafe { IsWow64Process(self.handle(), &mut wow) != 0 && wow != 0 }
    }

    /// Checks that the pid still names this process: it is running, and a fresh handle by pid has
    /// the same creation time.
    ///
    /// # Errors
    /// [`Error::ProcessExited`] or [`Error::PidReused`].
    pub fn check_same(&self) -> Result<(), Error> {
        if !self.running() {
            return Err(Error::ProcessExited(self.pid));
        }
        match Process::open(self.pid) {
            Ok(now) if now.creation == self.creation => Ok(()),
            Ok(_) => Err(Error::PidReused(self.pid)),
            Err(_) => Err(Error::ProcessExited(self.pid)),
        }
    }
}

pub(crate) fn from_wide(s: &[u16]) -> OsString {
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    OsString::from_wide(&s[..end])
}

// ---- stopping: a debug attach --------------------------------------------------------------

#[link(name = "ntdll")]
unsafe extern "system" {
    /// Creates the calling thread's debug object (what `DebugActiveProcess` does first), so that
    /// `DebugSetProcessKillOnExit(FALSE)` can be set before the attach.
    fn DbgUiConnectToDbg() -> i32;
}

/// The attach's debug events (one per thread and DLL, then the breakpoint) take 30-80 ms for a
/// JVM under Wine: the stop timeout (`--stop-timeout`, made for ptrace's thread stops) is raised
/// to this.
const MIN_ATTACH_TIMEOUT: Duration = Duration::from_secs(2);

/// Holds `process` still with a debug attach ([`Stopped::attach`]), waiting at most `timeout`
/// (at least 2 s) for the attach breakpoint.
///
/// # Errors
/// As [`Stopped::attach`].
pub fn stop(process: &Process, timeout: Duration) -> Result<Stopped, Error> {
    Stopped::attach(process, timeout.max(MIN_ATTACH_TIMEOUT))
}

/// A JVM held still by a debug attach: while the attach breakpoint's debug event is not
/// continued, every thread of the process is suspended by the system. Released by
/// [`Stopped::release`] or on drop (`ContinueDebugEvent` + `DebugActiveProcessStop`); and
/// because `DebugSetProcessKillOnExit(FALSE)` is set before the attach, if `inspect` dies the
/// system detaches it and the JVM runs on (unlike `SuspendThread`, whose suspensions outlive the
/// suspender).
#[derive(Debug)]
pub struct Stopped {
    pid: u32,
    /// The thread of the pending breakpoint event.
    pending: Option<u32>,
    /// Each thread's handle as the attach's debug events gave it (`CREATE_PROCESS_DEBUG_EVENT`'s
    /// first thread, one `CREATE_THREAD_DEBUG_EVENT` per other thread), by thread id: owned by
    /// the debug session (closed by the system at `DebugActiveProcessStop`), never closed here,
    /// used only while the process is held.
    threads: std::collections::HashMap<u32, usize>,
    attached: bool,
    events: usize,
    to_stop: Duration,
    stopped_at: Instant,
}

impl Stopped {
    /// Attaches to `pid` as a debugger and drains the attach's debug events (process, threads,
    /// DLLs) up to its breakpoint, within `bound`; other exceptions are passed back unhandled.
    ///
    /// # Errors
    /// [`Error::PermissionDenied`]; [`Error::Os`] when the process already has a debugger, the
    /// attach fails, or the breakpoint does not come within `bound`; [`Error::ProcessExited`].
    pub fn attach(process: &Process, bound: Duration) -> Result<Self, Error> {
        let pid = process.pid as u32;
        let mut present = 0;
        // SAFETY: valid out-pointer.
        if unsafe { CheckRemoteDebuggerPresent(process.handle(), &mut present) } != 0
            && present != 0
        {
            return Err(Error::Os {
                what: format!("process {pid} already has a debugger attached"),
                source: std::io::Error::other(
                    "detach it first, or read with --no-stop (-F) or without -F",
                ),
            });
        }
        let began = Instant::now();
        // Kill-on-exit off *before* the attach: a debugger that dies must not take the JVM along.
        // SAFETY: plain calls.
        let status = unsafe { DbgUiConnectToDbg() };
        if status < 0 || unsafe { DebugSetProcessKillOnExit(0) } == 0 {
            return Err(Error::Os {
                what: format!(
                    "preparing the debug attach (DbgUiConnectToDbg status {status:#x}, DebugSetProcessKillOnExit)"
                ),
                source: last_error(),
            });
        }
        // SAFETY: plain call.
        if unsafe { DebugActiveProcess(pid) } == 0 {
            let e = last_error();
            return Err(match os_code(&e) {
                _ if !process.running() => Error::ProcessExited(process.pid),
                ERROR_ACCESS_DENIED => Error::PermissionDenied {
                    what: format!("attaching to process {pid} to stop it during the read"),
                    hint: format!(
                        "{} Or read without stopping it: --no-stop.",
                        permission_hint(process.pid)
                    ),
                },
                _ => Error::Os {
                    what: format!("DebugActiveProcess({pid}) (another debugger attached?)"),
                    source: e,
                },
            });
        }
        let mut stop = Stopped {
            pid,
            pending: None,
            threads: std::collections::HashMap::new(),
            attached: true,
            events: 0,
            to_stop: Duration::ZERO,
            stopped_at: began,
        };
        let deadline = began + bound;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Os {
                    what: format!(
                        "the debug attach to process {pid} did not reach its breakpoint within {} ms ({} events); the JVM was detached unread",
                        bound.as_millis(),
                        stop.events
                    ),
                    source: std::io::Error::from(std::io::ErrorKind::TimedOut),
                });
            }
            // SAFETY: DEBUG_EVENT is plain data; zero is a valid value.
            let mut ev: DEBUG_EVENT = unsafe { std::mem::zeroed() };
            // SAFETY: valid out-pointer.
            if unsafe { WaitForDebugEvent(&mut ev, left.as_millis().max(1) as u32) } == 0 {
                let e = last_error();
                if os_code(&e) == ERROR_SEM_TIMEOUT {
                    continue;
                }
                return Err(Error::Os {
                    what: format!("WaitForDebugEvent (process {pid})"),
                    source: e,
                });
            }
            stop.events += 1;
            let mut status = DBG_CONTINUE;
            // SAFETY: the union member read is the one dwDebugEventCode names; the file handles
            // the events carry are ours to close.
            unsafe {
                match ev.dwDebugEventCode {
                    CREATE_PROCESS_DEBUG_EVENT => {
                        close(ev.u.CreateProcessInfo.hFile);
                        stop.keep_thread(ev.dwThreadId, ev.u.CreateProcessInfo.hThread);
                    }
                    CREATE_THREAD_DEBUG_EVENT => {
                        stop.keep_thread(ev.dwThreadId, ev.u.CreateThread.hThread);
                    }
                    EXIT_THREAD_DEBUG_EVENT => {
                        stop.threads.remove(&ev.dwThreadId);
                    }
                    LOAD_DLL_DEBUG_EVENT => close(ev.u.LoadDll.hFile),
                    EXCEPTION_DEBUG_EVENT => {
                        if ev.u.Exception.ExceptionRecord.ExceptionCode == EXCEPTION_BREAKPOINT {
                            stop.pending = Some(ev.dwThreadId);
                            stop.to_stop = began.elapsed();
                            stop.stopped_at = Instant::now();
                            return Ok(stop);
                        }
                        status = DBG_EXCEPTION_NOT_HANDLED;
                    }
                    EXIT_PROCESS_DEBUG_EVENT => {
                        ContinueDebugEvent(ev.dwProcessId, ev.dwThreadId, status);
                        return Err(Error::ProcessExited(process.pid));
                    }
                    _ => {}
                }
                ContinueDebugEvent(ev.dwProcessId, ev.dwThreadId, status);
            }
        }
    }

    fn keep_thread(&mut self, tid: u32, h: HANDLE) {
        if !h.is_null() && h != INVALID_HANDLE_VALUE && self.threads.len() < MAX_THREADS {
            self.threads.insert(tid, h as usize);
        }
    }

    /// The registers of thread `tid` of the held process (`GetThreadContext` with
    /// `CONTEXT_CONTROL | CONTEXT_INTEGER`, decoded by
    /// [`ThreadRegisters::from_amd64_context`]): through the handle the attach's debug events
    /// gave, else a handle opened by id (`THREAD_GET_CONTEXT | THREAD_QUERY_LIMITED_INFORMATION`)
    /// that must belong to this process (`GetProcessIdOfThread`: a thread id read from the
    /// target is untrusted). `None` for a thread not of this process, one the system does not
    /// let us read, or a non-x64 build.
    pub fn registers(&self, tid: Pid) -> Option<ThreadRegisters> {
        let tid = u32::try_from(tid).ok().filter(|&t| t != 0)?;
        // Only while held.
        self.pending?;
        if let Some(&h) = self.threads.get(&tid) {
            return thread_registers(h as HANDLE);
        }
        use windows_sys::Win32::System::Threading::{
            GetProcessIdOfThread, OpenThread, THREAD_GET_CONTEXT, THREAD_QUERY_LIMITED_INFORMATION,
        };
        // SAFETY: plain call; a non-null result is a handle we own.
        let h = unsafe {
            OpenThread(
                THREAD_GET_CONTEXT | THREAD_QUERY_LIMITED_INFORMATION,
                0,
                tid,
            )
        };
        if h.is_null() {
            return None;
        }
        // SAFETY: a valid handle nothing else owns.
        let owned = unsafe { OwnedHandle::from_raw_handle(h as _) };
        let h = owned.as_raw_handle() as HANDLE;
        // SAFETY: plain call on an open handle.
        if unsafe { GetProcessIdOfThread(h) } != self.pid {
            return None;
        }
        thread_registers(h)
    }

    /// Thread `tid`'s CPU time and priority read while the process is held ([`task_stat`]);
    /// `None` once released.
    pub fn task_stat(&self, tid: Pid) -> Option<TaskStat> {
        self.pending?;
        task_stat(self.pid as Pid, tid)
    }

    /// Threads that did not stop: none, the attach breakpoint suspends them all.
    pub fn not_stopped(&self) -> Vec<Pid> {
        Vec::new()
    }

    /// Lets the JVM run again and detaches.
    pub fn release(mut self) -> StopReport {
        let stopped_for = self.stopped_at.elapsed();
        self.detach();
        StopReport {
            method: StopMethod::DebugAttach {
                events: self.events,
                to_stop: self.to_stop,
            },
            stopped_for,
            not_stopped: Vec::new(),
        }
    }

    fn detach(&mut self) {
        // SAFETY: plain calls on our own debuggee.
        unsafe {
            if let Some(tid) = self.pending.take() {
                ContinueDebugEvent(self.pid, tid, DBG_CONTINUE);
            }
            if std::mem::take(&mut self.attached) {
                DebugActiveProcessStop(self.pid);
            }
        }
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        self.detach();
    }
}

/// What jcmd.exe prints of thread `tid` of process `pid` as `cpu=` and `os_prio=`, as HotSpot
/// reads them on Windows (`os_windows.cpp`: `os::thread_cpu_time` is `GetThreadTimes`' kernel
/// plus user time, `os::get_native_priority` is `GetThreadPriority`), from a handle opened with
/// `THREAD_QUERY_LIMITED_INFORMATION` that must belong to `pid` (`GetProcessIdOfThread`: the id
/// comes from the target's memory). `state` is `b'T'`: the fields of Linux's `stat` that
/// Windows has no word for are not filled. `None` when the thread cannot be opened or read.
pub fn task_stat(pid: Pid, tid: Pid) -> Option<TaskStat> {
    use windows_sys::Win32::System::Threading::{
        GetProcessIdOfThread, GetThreadPriority, GetThreadTimes, OpenThread,
        THREAD_QUERY_LIMITED_INFORMATION,
    };
    /// `GetThreadPriority`'s failure value (`winbase.h`: `MAXLONG`).
    const THREAD_PRIORITY_ERROR_RETURN: i32 = i32::MAX;
    let (pid, tid) = (u32::try_from(pid).ok()?, u32::try_from(tid).ok()?);
    // SAFETY: plain call; a non-null result is a handle we own.
    let h = unsafe { OpenThread(THREAD_QUERY_LIMITED_INFORMATION, 0, tid) };
    if h.is_null() {
        return None;
    }
    // SAFETY: a valid handle nothing else owns.
    let owned = unsafe { OwnedHandle::from_raw_handle(h as _) };
    let h = owned.as_raw_handle() as HANDLE;
    // SAFETY: plain call on an open handle.
    if unsafe { GetProcessIdOfThread(h) } != pid {
        return None;
    }
    let mut t = [FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    }; 4];
    let [created, exited, kernel, user] = &mut t;
    // SAFETY: four valid out-pointers, an open handle.
    if unsafe { GetThreadTimes(h, created, exited, kernel, user) } == 0 {
        return None;
    }
    // SAFETY: plain call on an open handle.
    let priority = unsafe { GetThreadPriority(h) };
    if priority == THREAD_PRIORITY_ERROR_RETURN {
        return None;
    }
    Some(TaskStat {
        state: b'T',
        // 100 ns units.
        cpu_ms: (filetime(t[2]) + filetime(t[3])) as f64 / 1e4,
        nice: i64::from(priority),
        run_count: None,
    })
}

/// Most thread handles kept from the attach's events (a JVM has hundreds to a few thousand).
const MAX_THREADS: usize = 1 << 16;

/// A `CONTEXT` as `GetThreadContext` needs it: 16-byte aligned (`winnt.h` declares it
/// `DECLSPEC_ALIGN(16)`; windows-sys' struct is only `repr(C)`).
#[cfg(target_arch = "x86_64")]
#[repr(C, align(16))]
struct AlignedContext(windows_sys::Win32::System::Diagnostics::Debug::CONTEXT);

/// Thread `h`'s control and integer registers (`GetThreadContext`), decoded; `None` when the
/// call fails.
#[cfg(target_arch = "x86_64")]
fn thread_registers(h: HANDLE) -> Option<ThreadRegisters> {
    use windows_sys::Win32::System::Diagnostics::Debug::{
        CONTEXT_CONTROL_AMD64, CONTEXT_INTEGER_AMD64, GetThreadContext,
    };
    // SAFETY: CONTEXT is plain data; zero is a valid value.
    let mut ctx: AlignedContext = unsafe { std::mem::zeroed() };
    ctx.0.ContextFlags = CONTEXT_CONTROL_AMD64 | CONTEXT_INTEGER_AMD64;
    // SAFETY: a 16-byte aligned CONTEXT with its flags set; `h` is an open thread handle.
    if unsafe { GetThreadContext(h, &mut ctx.0) } == 0 {
        return None;
    }
    let c = &ctx.0;
    ThreadRegisters::from_amd64_context(&minidump::format::CONTEXT_AMD64 {
        context_flags: c.ContextFlags,
        rip: c.Rip,
        rsp: c.Rsp,
        rbp: c.Rbp,
        r13: c.R13,
        ..Default::default()
    })
}

/// Only x64 JVMs are read (a WOW64 process is refused).
#[cfg(not(target_arch = "x86_64"))]
fn thread_registers(_h: HANDLE) -> Option<ThreadRegisters> {
    None
}

unsafe fn close(h: HANDLE) {
    if !h.is_null() && h != INVALID_HANDLE_VALUE {
        // SAFETY: the caller passes a handle it owns.
        drop(unsafe { OwnedHandle::from_raw_handle(h as _) });
    }
}

// ---- the shared PerfData: named mapping or hsperfdata file --------------------------------

/// This process's temp directory (`GetTempPathW`, what HotSpot's `os::get_temp_directory` uses).
pub fn temp_dir() -> PathBuf {
    let mut buf = vec![0u16; 1024];
    // SAFETY: the buffer holds `len` u16s.
    let n = unsafe { GetTempPathW(buf.len() as u32, buf.as_mut_ptr()) } as usize;
    if n == 0 || n > buf.len() {
        return std::env::temp_dir();
    }
    PathBuf::from(from_wide(&buf[..n]))
}

/// The users that may own JVM `pid`'s PerfData here: every `hsperfdata_<user>` directory in the
/// temp directory that has a file named `<pid>` (HotSpot's attach looks the same way), then
/// `%USERNAME%`.
pub fn candidate_users(pid: Pid) -> (Vec<String>, Vec<PathBuf>) {
    let tmp = temp_dir();
    let mut users = Vec::new();
    let mut tried = Vec::new();
    if let Ok(dir) = std::fs::read_dir(&tmp) {
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(user) = name.strip_prefix(&format!("{PERFDATA_NAME}_")) {
                let file = entry.path().join(pid.to_string());
                if file.exists() && !users.iter().any(|u| u == user) {
                    users.push(user.to_string());
                }
                tried.push(file);
            }
        }
    }
    if let Ok(me) = std::env::var("USERNAME")
        && !users.contains(&me)
    {
        tried.push(
            tmp.join(format!("{PERFDATA_NAME}_{me}"))
                .join(pid.to_string()),
        );
        users.push(me);
    }
    (users, tried)
}

/// Copies the PerfData out of the named file mapping `hsperfdata_<user>_<pid>`, in this session's
/// namespace or else the global one (a service's) (opened `FILE_MAP_READ`, mapped read-only,
/// unmapped at once); `None` when no such mapping exists.
///
/// # Errors
/// [`Error::ImplausibleRegion`] for a mapping of an impossible size; [`Error::Os`].
pub fn read_mapping(user: &str, pid: Pid) -> Result<Option<(String, Vec<u8>)>, Error> {
    let plain = format!("{PERFDATA_NAME}_{user}_{pid}");
    // HotSpot names the mapping without a namespace, so it is in its creator's session: a
    // service's (session 0) is the global namespace, which another session reaches as `Global\`.
    let global = format!("Global\\{plain}");
    let Some((name, h)) = [plain, global].into_iter().find_map(|name| {
        let wname = wide(&name);
        // SAFETY: NUL-terminated name.
        let h = unsafe { OpenFileMappingW(FILE_MAP_READ, 0, wname.as_ptr()) };
        (!h.is_null()).then_some((name, h))
    }) else {
        return Ok(None);
    };
    // SAFETY: a handle we own.
    let mapping = unsafe { OwnedHandle::from_raw_handle(h as _) };
    // SAFETY: read-only view of the whole mapping.
    let view = unsafe { MapViewOfFile(mapping.as_raw_handle() as HANDLE, FILE_MAP_READ, 0, 0, 0) };
    if view.Value.is_null() {
        return Err(Error::Os {
            what: format!("MapViewOfFile({name})"),
            source: last_error(),
        });
    }
    let unmap = Unmap(view);
    // SAFETY: zeroed MEMORY_BASIC_INFORMATION is valid; the query is on our own view.
    let mut info: MEMORY_BASIC_INFORMATION = unsafe { std::mem::zeroed() };
    let got = unsafe {
        VirtualQuery(
            view.Value,
            &mut info,
            std::mem::size_of::<MEMORY_BASIC_INFORMATION>(),
        )
    };
    let size = info.RegionSize as u64;
    if got == 0 || size < crate::perfdata::PROLOGUE_SIZE as u64 || size > MAX_REGION {
        return Err(Error::ImplausibleRegion(format!(
            "the mapping {name} is {size} bytes"
        )));
    }
    // SAFETY: the view is mapped readable for `size` bytes until `unmap` drops.
    let bytes =
        unsafe { std::slice::from_raw_parts(view.Value as *const u8, size as usize) }.to_vec();
    drop(unmap);
    Ok(Some((name, bytes)))
}

struct Unmap(MEMORY_MAPPED_VIEW_ADDRESS);

impl Drop for Unmap {
    fn drop(&mut self) {
        // SAFETY: a view we mapped.
        unsafe { UnmapViewOfFile(self.0) };
    }
}

/// Reads an hsperfdata file with HotSpot-like checks (`perfMemory_windows.cpp`): no reparse point
/// (symbolic link, junction) as the file or its directory, a regular disk file with one link, of
/// a sane size (32 bytes to 64 MiB). Opened `GENERIC_READ` with every share mode (the JVM keeps it
/// open) and `FILE_FLAG_OPEN_REPARSE_POINT` (a reparse point is opened, seen and refused, never
/// followed).
///
/// # Errors
/// [`Error::HsperfdataFile`] for a broken rule; [`Error::Io`].
pub fn read_hsperfdata_file(path: &Path) -> Result<Vec<u8>, Error> {
    let refuse = |reason: String| Error::HsperfdataFile {
        path: path.to_owned(),
        reason,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let meta = std::fs::symlink_metadata(dir).map_err(|e| Error::io(dir, e))?;
        if meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return Err(refuse(format!(
                "its directory {} is a reparse point (link or junction); refused",
                dir.display()
            )));
        }
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let h = file.as_raw_handle() as HANDLE;
    // SAFETY: zero is a valid BY_HANDLE_FILE_INFORMATION; `h` is open.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    if unsafe { GetFileInformationByHandle(h, &mut info) } == 0 {
        return Err(Error::io(path, last_error()));
    }
    // SAFETY: `h` is open.
    let kind = unsafe { GetFileType(h) };
    let size = (u64::from(info.nFileSizeHigh) << 32) | u64::from(info.nFileSizeLow);
    if info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(refuse(
            "a reparse point (link or junction), not a file; refused".into(),
        ));
    }
    if info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0 || kind != FILE_TYPE_DISK {
        return Err(refuse("not a regular file; refused".into()));
    }
    if info.nNumberOfLinks != 1 {
        return Err(refuse(format!(
            "has {} hard links (HotSpot's files have one); refused",
            info.nNumberOfLinks
        )));
    }
    if size < crate::perfdata::PROLOGUE_SIZE as u64 || size > MAX_REGION {
        return Err(refuse(format!(
            "{size} bytes: not the size of a PerfData region ({} bytes to {MAX_REGION}); refused",
            crate::perfdata::PROLOGUE_SIZE
        )));
    }
    read_all(&file, size).map_err(|e| Error::io(path, e))
}

fn read_all(file: &File, size: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(size).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < size {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("short read: {} of {size} bytes", bytes.len()),
        ));
    }
    Ok(bytes)
}

/// The JVM's shared PerfData: the named file mapping `hsperfdata_<user>_<pid>`, else its backing
/// file `%TEMP%\\hsperfdata_<user>\\<pid>`, for the user owning the process's token
/// ([`token_user`]), each user whose hsperfdata directory has that file, then `%USERNAME%`; and
/// where it was found, for `-v`.
///
/// # Errors
/// [`Error::NoHsperfdataFile`] (e.g. `-XX:+PerfDisableSharedMem`), [`Error::HsperfdataFile`],
/// [`Error::Os`].
pub fn shared_bytes(process: &Process) -> Result<(String, Vec<u8>), Error> {
    let pid = process.pid;
    let (mut users, tried) = candidate_users(pid);
    // The token's user first: its mapping is found whatever temp directory its file is in
    // (another user's profile, a service account's).
    if let Some(owner) = token_user(process)
        && !users.contains(&owner)
    {
        users.insert(0, owner);
    }
    for user in &users {
        if let Some((name, bytes)) = read_mapping(user, pid)? {
            return Ok((format!("shared file mapping {name}"), bytes));
        }
    }
    for path in &tried {
        if path.exists() {
            let bytes = read_hsperfdata_file(path)?;
            return Ok((format!("shared file {}", path.display()), bytes));
        }
    }
    let tried = tried
        .into_iter()
        .map(|path| crate::error::Looked {
            path,
            why: "no such file".into(),
        })
        .chain(users.iter().map(|user| crate::error::Looked {
            path: format!("{PERFDATA_NAME}_{user}_{pid}").into(),
            why: "no such file mapping".into(),
        }))
        .collect();
    Err(Error::NoHsperfdataFile {
        pid,
        tried,
        why: format!(
            "the JVM may run with -XX:+PerfDisableSharedMem or -XX:-UsePerfData: use `inspect -F {pid}` to read its memory"
        ),
    })
}

/// Windows has no uids: `None`.
pub fn user_name(_uid: u32) -> Option<String> {
    None
}

/// Whether a process is not a JVM is not told here yet: `None` (the module list is the locate
/// stage's).
pub fn not_a_jvm(_pid: Pid) -> Option<Error> {
    None
}

/// What process `pid` uses now ([`super::ProcessUsage`]), from the process's own accounting:
/// `GetProcessTimes` (user + kernel time; the creation time), `GetProcessMemoryInfo` (the
/// working set is the resident size), the `VirtualSize` of `NtQueryInformationProcess`'s
/// `ProcessVmCounters` (the address space in use, reserved included: what Linux's `vsize` is;
/// where that call fails, the commit charge `PrivateUsage`), `GetProcessHandleCount` as the open
/// descriptors (Windows has handles, not file descriptors: every kernel object the process holds
/// open, files and sockets among them; `None` when the OS counts none, as Wine does) with no limit
/// (`max_fds` `None`: Windows sets no per-process soft limit), and the thread count of a toolhelp
/// process snapshot. One handle opened with `PROCESS_QUERY_LIMITED_INFORMATION` (granted for
/// other users' processes too, except protected ones).
///
/// # Errors
/// [`Error::NoSuchProcess`], [`Error::PermissionDenied`], [`Error::Os`].
pub fn usage(pid: Pid) -> Result<super::ProcessUsage, Error> {
    use windows_sys::Win32::System::ProcessStatus::{
        GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS, PROCESS_MEMORY_COUNTERS_EX,
    };
    use windows_sys::Win32::System::Threading::GetProcessHandleCount;
    let handle = open_handle(pid, PROCESS_QUERY_LIMITED_INFORMATION)?;
    let h = handle.as_raw_handle() as HANDLE;
    if !still_active(h) {
        return Err(Error::NoSuchProcess(pid));
    }
    let mut t = [FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    }; 4];
    let [created, exited, kernel, user] = &mut t;
    // SAFETY: four valid out-pointers.
    if unsafe { GetProcessTimes(h, created, exited, kernel, user) } == 0 {
        return Err(Error::Os {
            what: format!("GetProcessTimes({pid})"),
            source: last_error(),
        });
    }
    // SAFETY: zero is a valid PROCESS_MEMORY_COUNTERS_EX; `cb` says which struct it is.
    let mut mem: PROCESS_MEMORY_COUNTERS_EX = unsafe { std::mem::zeroed() };
    mem.cb = std::mem::size_of::<PROCESS_MEMORY_COUNTERS_EX>() as u32;
    // SAFETY: the EX struct starts with PROCESS_MEMORY_COUNTERS and `cb` is its size.
    let ok = unsafe {
        GetProcessMemoryInfo(h, (&raw mut mem).cast::<PROCESS_MEMORY_COUNTERS>(), mem.cb)
    };
    if ok == 0 {
        return Err(Error::Os {
            what: format!("GetProcessMemoryInfo({pid})"),
            source: last_error(),
        });
    }
    let mut handles = 0u32;
    // SAFETY: valid out-pointer.
    let counted = unsafe { GetProcessHandleCount(h, &mut handles) } != 0;
    // A live process holds handles (its image's section, at least): 0 is a count not kept.
    let open_fds = (counted && handles > 0).then_some(u64::from(handles));
    let threads = processes()?
        .into_iter()
        .find(|p| p.pid == pid)
        .map_or(0, |p| u64::from(p.threads));
    Ok(super::ProcessUsage {
        cpu_seconds: (filetime(t[2]) + filetime(t[3])) as f64 / 1e7,
        start_time_seconds: unix_seconds(filetime(t[0])),
        resident_bytes: mem.WorkingSetSize as u64,
        virtual_bytes: virtual_size(h).unwrap_or(mem.PrivateUsage as u64),
        open_fds,
        max_fds: None,
        threads,
    })
}

/// `VM_COUNTERS`, what `NtQueryInformationProcess(ProcessVmCounters)` fills (the layout of
/// `ntddk.h`/`winternl.h`).
#[repr(C)]
#[derive(Default)]
struct VmCounters {
    peak_virtual_size: usize,
    virtual_size: usize,
    page_fault_count: u32,
    peak_working_set_size: usize,
    working_set_size: usize,
    quota_peak_paged_pool_usage: usize,
    quota_paged_pool_usage: usize,
    quota_peak_non_paged_pool_usage: usize,
    quota_non_paged_pool_usage: usize,
    pagefile_usage: usize,
    peak_pagefile_usage: usize,
}

/// The process's virtual size (`VM_COUNTERS.VirtualSize`), `None` when the call fails.
fn virtual_size(h: HANDLE) -> Option<u64> {
    use windows_sys::Wdk::System::Threading::{NtQueryInformationProcess, ProcessVmCounters};
    let mut counters = VmCounters::default();
    let mut len = 0u32;
    // SAFETY: the buffer is a VM_COUNTERS of the size given.
    let status = unsafe {
        NtQueryInformationProcess(
            h,
            ProcessVmCounters,
            (&raw mut counters).cast(),
            std::mem::size_of::<VmCounters>() as u32,
            &mut len,
        )
    };
    (status >= 0 && counters.virtual_size > 0).then_some(counters.virtual_size as u64)
}

/// 100 ns units since 1601-01-01 (a `FILETIME`) as seconds since the Unix epoch.
pub(crate) fn unix_seconds(filetime: u64) -> f64 {
    /// 1601-01-01 to 1970-01-01 in 100 ns units.
    const EPOCH_DIFFERENCE: u64 = 116_444_736_000_000_000;
    filetime.saturating_sub(EPOCH_DIFFERENCE) as f64 / 1e7
}

/// One process of a toolhelp process snapshot.
#[derive(Debug, Clone)]
pub struct ProcessEntry {
    /// Its process id.
    pub pid: Pid,
    /// Its thread count.
    pub threads: u32,
    /// The file name of its executable (`szExeFile`).
    pub exe: String,
}

/// Every process now, from one toolhelp snapshot (`TH32CS_SNAPPROCESS`), in snapshot order.
///
/// # Errors
/// [`Error::Os`] when the snapshot cannot be taken.
pub fn processes() -> Result<Vec<ProcessEntry>, Error> {
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW,
        TH32CS_SNAPPROCESS,
    };
    // SAFETY: plain call; checked below.
    let h = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    if h == INVALID_HANDLE_VALUE {
        return Err(Error::Os {
            what: "CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS)".into(),
            source: last_error(),
        });
    }
    // SAFETY: a valid handle that we own.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(h as _) };
    let h = snapshot.as_raw_handle() as HANDLE;
    // SAFETY: zero is a valid PROCESSENTRY32W; dwSize set as the API requires.
    let mut entry: PROCESSENTRY32W = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
    let mut out = Vec::new();
    // SAFETY: `entry` is initialized with its size.
    let mut more = unsafe { Process32FirstW(h, &mut entry) } != 0;
    while more {
        out.push(ProcessEntry {
            pid: entry.th32ProcessID as Pid,
            threads: entry.cntThreads,
            exe: from_wide(&entry.szExeFile).to_string_lossy().into_owned(),
        });
        // SAFETY: as above.
        more = unsafe { Process32NextW(h, &mut entry) } != 0;
    }
    Ok(out)
}

/// The account name (without its domain) of the user that owns `process`'s token (`TokenUser`,
/// `LookupAccountSidW`): the `<user>` of HotSpot's `hsperfdata_<user>_<pid>` mapping, which
/// HotSpot takes from the same token. `None` when the token cannot be opened (another user's or
/// a service's process, without an elevated prompt) or the SID names no account.
pub fn token_user(process: &Process) -> Option<String> {
    use windows_sys::Win32::Security::{
        GetTokenInformation, LookupAccountSidW, TOKEN_QUERY, TOKEN_USER, TokenUser,
    };
    use windows_sys::Win32::System::Threading::OpenProcessToken;
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the handle is ours to close.
    if unsafe { OpenProcessToken(process.handle(), TOKEN_QUERY, &mut token) } == 0 {
        return None;
    }
    // SAFETY: a handle we own.
    let token = unsafe { OwnedHandle::from_raw_handle(token as _) };
    // TOKEN_USER plus its SID: 8-byte aligned, big enough for any SID.
    let mut buf = [0u64; 64];
    let mut len = 0u32;
    // SAFETY: the buffer holds `size_of_val(&buf)` bytes.
    let ok = unsafe {
        GetTokenInformation(
            token.as_raw_handle() as HANDLE,
            TokenUser,
            buf.as_mut_ptr().cast(),
            std::mem::size_of_val(&buf) as u32,
            &mut len,
        )
    };
    if ok == 0 {
        return None;
    }
    // SAFETY: GetTokenInformation(TokenUser) wrote a TOKEN_USER at the start of `buf`.
    let user = unsafe { &*buf.as_ptr().cast::<TOKEN_USER>() };
    let mut name = [0u16; 256];
    let mut domain = [0u16; 256];
    let (mut name_len, mut domain_len) = (name.len() as u32, domain.len() as u32);
    let mut kind = 0;
    // SAFETY: buffers of the lengths given; the SID points into `buf`, alive here.
    let ok = unsafe {
        LookupAccountSidW(
            std::ptr::null(),
            user.User.Sid,
            name.as_mut_ptr(),
            &mut name_len,
            domain.as_mut_ptr(),
            &mut domain_len,
            &mut kind,
        )
    };
    (ok != 0).then(|| from_wide(&name).to_string_lossy().into_owned())
}

/// Enables `SeDebugPrivilege` in this process's token when the token holds it (an elevated
/// prompt of an administrator: the privilege is there, disabled), so that service JVMs and other
/// users' JVMs can be opened as Windows' own tools do; a no-op otherwise. Only this process's
/// own token is changed. Returns whether the privilege is now enabled.
pub fn enable_debug_privilege() -> bool {
    use windows_sys::Win32::Foundation::{ERROR_NOT_ALL_ASSIGNED, GetLastError, LUID};
    use windows_sys::Win32::Security::{
        AdjustTokenPrivileges, LUID_AND_ATTRIBUTES, LookupPrivilegeValueW, SE_DEBUG_NAME,
        SE_PRIVILEGE_ENABLED, TOKEN_ADJUST_PRIVILEGES, TOKEN_PRIVILEGES, TOKEN_QUERY,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: valid out-pointer; GetCurrentProcess' pseudo-handle needs no closing.
    if unsafe {
        OpenProcessToken(
            GetCurrentProcess(),
            TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY,
            &mut token,
        )
    } == 0
    {
        return false;
    }
    // SAFETY: a handle we own.
    let token = unsafe { OwnedHandle::from_raw_handle(token as _) };
    let mut luid = LUID {
        LowPart: 0,
        HighPart: 0,
    };
    // SAFETY: a constant NUL-terminated name, a valid out-pointer.
    if unsafe { LookupPrivilegeValueW(std::ptr::null(), SE_DEBUG_NAME, &mut luid) } == 0 {
        return false;
    }
    let privileges = TOKEN_PRIVILEGES {
        PrivilegeCount: 1,
        Privileges: [LUID_AND_ATTRIBUTES {
            Luid: luid,
            Attributes: SE_PRIVILEGE_ENABLED,
        }],
    };
    // SAFETY: a valid TOKEN_PRIVILEGES; no previous state asked for.
    let ok = unsafe {
        AdjustTokenPrivileges(
            token.as_raw_handle() as HANDLE,
            0,
            &privileges,
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    // Success with ERROR_NOT_ALL_ASSIGNED: the token does not hold the privilege.
    // SAFETY: plain call.
    ok != 0 && unsafe { GetLastError() } != ERROR_NOT_ALL_ASSIGNED
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test process's own usage, against what it knows of itself: it has spent CPU time,
    /// started within the last hour, has a working set, handles and at least the threads it
    /// started.
    #[test]
    fn usage_of_this_process() {
        let hold = std::sync::Arc::new(std::sync::Barrier::new(4));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let hold = std::sync::Arc::clone(&hold);
                std::thread::spawn(move || {
                    hold.wait();
                })
            })
            .collect();
        let spin = Instant::now();
        let mut x = 0u64;
        while spin.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let u = usage(std::process::id() as Pid).unwrap();
        hold.wait();
        for t in threads {
            t.join().unwrap();
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(u.cpu_seconds > 0.0, "{u:?}");
        assert!(
            u.start_time_seconds <= now && u.start_time_seconds > now - 3600.0,
            "{u:?}"
        );
        assert!(
            u.resident_bytes > 1 << 20 && u.virtual_bytes > 1 << 20,
            "{u:?}"
        );
        assert!(u.open_fds.is_none_or(|n| n > 0), "{u:?}");
        assert!(u.threads >= 4, "{u:?}");
        assert!(matches!(usage(999_999), Err(Error::NoSuchProcess(999_999))));
    }

    /// The toolhelp snapshot has this process, with its executable's name.
    #[test]
    fn processes_has_this_one() {
        let me = std::process::id() as crate::pid::Pid;
        let all = processes().unwrap();
        let mine = all.iter().find(|p| p.pid == me).unwrap();
        assert!(mine.exe.to_lowercase().ends_with(".exe"), "{mine:?}");
        assert!(mine.threads >= 1);
    }
}
