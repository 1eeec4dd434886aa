//! The Linux side of the process stage (see [`crate::process`] for the seam): a process's
//! identity from `/proc/<pid>/stat` and `status` (procfs), its liveness through a pidfd, stopping
//! it with ptrace ([`ptrace`]), and hsperfdata files with HotSpot's rules ([`hsperfdata_file`],
//! `perfMemory_posix.cpp`).

pub mod hsperfdata_file;
pub mod ptrace;

pub use ptrace::Stopped;

use std::path::Path;
use std::time::Duration;

use procfs::Current;

use procfs::ProcError;
use procfs::process::{Process as ProcfsProcess, StatFlags};

use crate::error::Error;
use crate::pid::Pid;

/// What `/proc/<pid>/stat` and `/proc/<pid>/status` say about a process, as far as reading it goes.
#[derive(Debug, Clone)]
pub struct ProcessInfo {
    /// The pid as this inspector sees it.
    pub pid: Pid,
    /// `starttime` in clock ticks since boot: with the pid, identifies the process (pids are reused).
    pub start_time: u64,
    /// Effective uid (the owner of the JVM's hsperfdata file).
    pub euid: u32,
    /// The thread group id (`Tgid`): the process's pid; differs from `pid` when `pid` names one
    /// of its threads (`/proc/<tid>` exists for every thread, unlisted).
    pub tgid: Pid,
    /// The pid in the process's own (innermost) pid namespace: the last `NSpid` value.
    pub nspid: Pid,
    /// `State` letter (`R`, `S`, `D`, `T`, `t`, `Z`, ...).
    pub state: char,
    /// `TracerPid` (0 when not traced).
    pub tracer: Pid,
    /// `comm`.
    pub comm: String,
}

impl ProcessInfo {
    /// Reads the process's identity.
    ///
    /// # Errors
    /// [`Error::NoSuchProcess`], or [`Error::PermissionDenied`] when `/proc/<pid>` is hidden.
    pub fn read(pid: Pid) -> Result<Self, Error> {
        let (p, stat) = open_with_stat(pid)?;
        let status = p
            .status()
            .map_err(|e| process_error(pid, "read /proc/<pid>/status", e))?;
        Ok(ProcessInfo {
            pid,
            start_time: stat.starttime,
            euid: status.euid,
            tgid: status.tgid,
            nspid: status
                .nspid
                .as_ref()
                .and_then(|v| v.last().copied())
                .unwrap_or(pid),
            state: stat.state,
            tracer: status.tracerpid,
            comm: stat.comm,
        })
    }

    /// Whether the process is in group-stop (`T`), e.g. after SIGSTOP.
    pub fn is_stopped(&self) -> bool {
        self.state == 'T'
    }
}

/// Checks that `before` still names a live process: same pid, same start time.
///
/// # Errors
/// [`Error::ProcessExited`] or [`Error::PidReused`].
pub fn check_same_process(before: &ProcessInfo) -> Result<(), Error> {
    // Only `stat`: `status` of a many-threaded process costs a walk over all its threads.
    let pid = before.pid;
    let stat = ProcfsProcess::new(pid)
        .and_then(|p| p.stat())
        .map_err(|e| process_error(pid, "read /proc/<pid>/stat", e));
    match stat {
        Ok(now) if now.starttime != before.start_time => Err(Error::PidReused(pid)),
        Ok(now) if !matches!(now.state, 'Z' | 'X' | 'x') => Ok(()),
        Ok(_) | Err(Error::NoSuchProcess(_)) => Err(Error::ProcessExited(pid)),
        Err(e) => Err(e),
    }
}

/// A pidfd on the process a [`ProcessInfo`] describes (`pidfd_open(2)`, Linux 5.3+), so that
/// repeated samples can tell cheaply that the very same process is still there: one `poll(2)`
/// instead of parsing `/proc/<pid>/stat` (which costs about a third of a `--no-stop` sample).
/// Without pidfds (older kernels, seccomp), [`Liveness::check`] is [`check_same_process`].
#[derive(Debug)]
pub struct Liveness(Option<std::os::fd::OwnedFd>);

impl Liveness {
    /// Opens a pidfd on `info.pid`, then checks that `info` still names that pid's process: the
    /// pidfd, opened before the check, is then that process's.
    ///
    /// # Errors
    /// As [`check_same_process`].
    pub fn watch(info: &ProcessInfo) -> Result<Self, Error> {
        use std::os::fd::{FromRawFd, OwnedFd};
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, info.pid, 0) };
        let fd = i32::try_from(fd)
            .ok()
            .filter(|&fd| fd >= 0)
            // SAFETY: a descriptor the kernel just returned to us, owned by no one else.
            .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) });
        check_same_process(info)?;
        Ok(Liveness(fd))
    }

    /// The same contract as [`check_same_process`]`(info)` (`info` must be the one given to
    /// [`Liveness::watch`]): a pidfd that does not poll readable means the process has not exited,
    /// so its pid cannot have been reused; otherwise `/proc` says which of the two happened.
    ///
    /// # Errors
    /// [`Error::ProcessExited`] or [`Error::PidReused`].
    pub fn check(&self, info: &ProcessInfo) -> Result<(), Error> {
        use std::os::fd::AsRawFd;
        if let Some(fd) = &self.0 {
            let mut p = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, no wait.
            if unsafe { libc::poll(&mut p, 1, 0) } == 0 {
                return Ok(());
            }
        }
        check_same_process(info)
    }
}

/// Whether process `pid` is gone, a zombie, or on its way out (`PF_EXITING`, or a user process
/// whose mappings are already torn down). Used to turn the odd errors an exiting process gives
/// (no libjvm in an empty `/proc/<pid>/maps`, `EPERM` from `PTRACE_SEIZE`, failed reads) into
/// [`Error::ProcessExited`].
pub fn exited_or_exiting(pid: Pid) -> bool {
    let Ok(process) = ProcfsProcess::new(pid) else {
        return true;
    };
    let Ok(stat) = process.stat() else {
        return true;
    };
    // PF_EXITING and PF_KTHREAD in `flags` (`include/linux/sched.h`): the task is exiting; a
    // kernel thread has no user mappings, and is not exiting for lack of them.
    let flags = stat.flags().unwrap_or(StatFlags::empty());
    if matches!(stat.state, 'Z' | 'X' | 'x') || flags.contains(StatFlags::PF_EXITING) {
        return true;
    }
    !flags.contains(StatFlags::PF_KTHREAD)
        && process.maps().is_ok_and(|m| m.iter().next().is_none())
}

/// The name of user `uid` on this host (`/etc/passwd`, or NSS: LDAP and the like); `None` when
/// the uid has no entry.
pub fn user_name(uid: u32) -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
}

/// Maps a procfs error about `pid` to ours.
pub fn process_error(pid: Pid, what: &str, e: ProcError) -> Error {
    match e {
        ProcError::NotFound(_) => Error::NoSuchProcess(pid),
        ProcError::PermissionDenied(_) => Error::PermissionDenied {
            what: format!(
                "{} of process {pid}",
                what.replace("<pid>", &pid.to_string())
            ),
            hint: permission_hint(pid),
        },
        ProcError::Io(e, _) if e.raw_os_error() == Some(libc::ESRCH) => Error::NoSuchProcess(pid),
        other => Error::Io {
            path: format!("/proc/{pid}").into(),
            source: std::io::Error::other(other.to_string()),
        },
    }
}

/// Why ptrace-level access to `pid` may be refused, and what fixes it. The way around it
/// (`inspect <pid>`, the hsperfdata file) is offered only when that file is readable for this
/// user.
pub fn permission_hint(pid: Pid) -> String {
    let owner = ProcfsProcess::new(pid).and_then(|p| p.uid()).ok();
    let me = nix::unistd::geteuid().as_raw();
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").ok();
    let mut hint = String::from("Reading another process's memory needs ptrace permission: ");
    match owner {
        Some(o) if o != me => {
            let who = match user_name(o) {
                Some(name) => format!("uid {o} ({name})"),
                None => format!("uid {o}"),
            };
            hint.push_str(&format!(
                "process {pid} belongs to {who} and you are uid {me}; run inspect as that user or as root (or with CAP_SYS_PTRACE)"
            ))
        }
        _ => hint.push_str("run inspect as the JVM's user or as root (or with CAP_SYS_PTRACE)"),
    }
    if let Some(s) = scope.as_deref().map(str::trim).filter(|s| *s != "0") {
        hint.push_str(&format!(
            "; kernel.yama.ptrace_scope is {s}, which also limits ptrace between processes of the same user (sysctl kernel.yama.ptrace_scope=0, or use root)"
        ));
    }
    hint.push_str(
        ". In a container, the inspector needs CAP_SYS_PTRACE (docker run --cap-add SYS_PTRACE).",
    );
    let file_readable = ProcessInfo::read(pid)
        .ok()
        .is_some_and(|info| hsperfdata_file::read_for_process(&info).is_ok());
    if file_readable {
        hint.push_str(&format!(
            " Without it, `inspect {pid}` (no -F) reads the JVM's hsperfdata file, which is readable for you."
        ));
    }
    hint
}

/// A live process opened by pid: its identity ([`ProcessInfo`]) and a pidfd that tells cheaply
/// that the pid still names it.
#[derive(Debug)]
pub struct Process {
    /// What `/proc/<pid>/stat` and `status` said when it was opened.
    pub info: ProcessInfo,
    liveness: Liveness,
}

impl Process {
    /// Opens process `pid`: reads its identity and watches it.
    ///
    /// # Errors
    /// [`Error::NoSuchProcess`], [`Error::PermissionDenied`] when `/proc/<pid>` is hidden,
    /// [`Error::ProcessExited`], [`Error::PidReused`].
    pub fn open(pid: Pid) -> Result<Self, Error> {
        let info = ProcessInfo::read(pid)?;
        // `/proc/<tid>` exists for every thread too (unlisted): a thread id is not a process.
        if info.tgid != pid {
            let comm = ProcfsProcess::new(info.tgid)
                .and_then(|p| p.stat())
                .map(|s| s.comm)
                .unwrap_or_else(|_| info.comm.clone());
            return Err(Error::ThreadOfProcess {
                tid: pid,
                pid: info.tgid,
                comm,
            });
        }
        let liveness = Liveness::watch(&info)?;
        Ok(Process { info, liveness })
    }

    /// The pid, as this host sees it.
    pub fn pid(&self) -> Pid {
        self.info.pid
    }

    /// Its `comm`.
    pub fn name(&self) -> &str {
        &self.info.comm
    }

    /// Whether it was in group-stop (SIGSTOP) when opened.
    pub fn already_stopped(&self) -> bool {
        self.info.is_stopped()
    }

    /// How long ago it started (`/proc/uptime` minus its `starttime`).
    pub fn age(&self) -> Duration {
        let ticks = procfs::ticks_per_second().max(1);
        let uptime = procfs::Uptime::current()
            .map(|u| u.uptime_duration())
            .unwrap_or_default();
        uptime.saturating_sub(Duration::from_millis(self.info.start_time * 1000 / ticks))
    }

    /// Checks that the pid still names this process.
    ///
    /// # Errors
    /// [`Error::ProcessExited`] or [`Error::PidReused`].
    pub fn check_same(&self) -> Result<(), Error> {
        self.liveness.check(&self.info)
    }
}

/// Holds every thread of `process` in ptrace-stop, waiting at most `timeout` for each
/// ([`ptrace::stop`]).
///
/// # Errors
/// As [`ptrace::stop`].
pub fn stop(process: &Process, timeout: Duration) -> Result<ptrace::Stopped, Error> {
    ptrace::stop(process.pid(), timeout, process.already_stopped())
}

/// The JVM's hsperfdata file (`/tmp/hsperfdata_<user>/<nspid>`, through the target's mount
/// namespace first) and a description of where it was found, for `-v`.
///
/// # Errors
/// As [`hsperfdata_file::read_for_process`].
pub fn shared_bytes(process: &Process) -> Result<(String, Vec<u8>), Error> {
    let info = &process.info;
    let (path, bytes) = hsperfdata_file::read_for_process(info)?;
    Ok((
        format!(
            "shared file {} (uid {}, NSpid {})",
            path.display(),
            info.euid,
            info.nspid
        ),
        bytes,
    ))
}

/// [`Error::NotAJvm`] when process `pid` maps no libjvm (its `/proc/<pid>/maps` is readable and
/// has no `libjvm.so`); `None` when it does, or when that cannot be told.
pub fn not_a_jvm(pid: Pid) -> Option<Error> {
    let process = ProcfsProcess::new(pid).ok()?;
    let maps = process.maps().ok()?;
    let jvm = maps.iter().any(|m| {
        matches!(&m.pathname, procfs::process::MMapPath::Path(p)
            if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(crate::process::LIBJVM)))
    });
    if jvm || maps.iter().next().is_none() {
        return None;
    }
    let comm = process.stat().map(|s| s.comm).unwrap_or_default();
    Some(Error::NotAJvm { pid, comm })
}

/// A saved hsperfdata file, read with the rules of [`hsperfdata_file::read_path`].
///
/// # Errors
/// As [`hsperfdata_file::read_path`].
pub fn read_hsperfdata_file(path: &Path) -> Result<Vec<u8>, Error> {
    hsperfdata_file::read_path(path)
}

/// `/proc/<pid>` and its `stat`.
fn open_with_stat(pid: Pid) -> Result<(ProcfsProcess, procfs::process::Stat), Error> {
    if pid <= 0 {
        return Err(Error::NoSuchProcess(pid));
    }
    let p = ProcfsProcess::new(pid).map_err(|e| process_error(pid, "open /proc/<pid>", e))?;
    let stat = p
        .stat()
        .map_err(|e| process_error(pid, "read /proc/<pid>/stat", e))?;
    Ok((p, stat))
}

/// A thread's nice value is jcmd's `os_prio=` only when the JVM uses the OS's priorities
/// (`-XX:ThreadPriorityPolicy`, `os::get_native_priority` in `os_linux.cpp`); else it prints 0.
pub const OS_PRIORITY_IS_NICE: bool = true;

/// Thread `tid` of process `pid` as `/proc/<pid>/task/<tid>/stat` and `schedstat` say (an open
/// and a read each: the `stat` line is about 300 bytes, `comm` at most 16 and 52 numbers);
/// `None` when it is gone or unreadable.
///
/// The CPU time is the scheduler's own, in nanoseconds (`schedstat`'s first field,
/// `sum_exec_runtime`: what the thread's CPU clock and so jcmd's `cpu=` read); `stat`'s user and
/// system ticks (10 ms steps) only when `schedstat` is not there (a kernel without
/// `CONFIG_SCHED_INFO`).
///
/// `schedstat` is read before `stat`, so that a state other than `R` was seen after the run
/// count was (what [`RunWatch`] relies on).
pub fn task_stat(pid: Pid, tid: Pid) -> Option<super::TaskStat> {
    let task = |name: &str| std::fs::File::open(format!("/proc/{pid}/task/{tid}/{name}")).ok();
    let sched = task("schedstat").and_then(|f| read_schedstat(&f));
    stat_with(task("stat")?, sched)
}

/// The run time and run count of a thread's open `schedstat` file, read from its start.
fn read_schedstat(f: &std::fs::File) -> Option<(u64, u64)> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 128];
    let n = f.read_at(&mut buf, 0).ok()?;
    schedstat(&buf[..n])
}

/// A thread's open `stat` file, read from its start, with the CPU time and run count of its
/// `schedstat` (`sched`) when there is one.
fn stat_with(f: std::fs::File, sched: Option<(u64, u64)>) -> Option<super::TaskStat> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 1024];
    let n = f.read_at(&mut buf, 0).ok()?;
    let mut stat = super::TaskStat::parse(&buf[..n], tick_ms())?;
    if let Some((ns, count)) = sched {
        stat.cpu_ms = ns as f64 / 1e6;
        stat.run_count = Some(count);
    }
    Some(stat)
}

/// A first look at some threads of one process, kept so that a later look tells which of them
/// provably did not run in between: what a walk made without holding them needs. Each thread's
/// `schedstat` is read first (its run count, `sched_info.pcount`, counts the times the
/// scheduler put it on a CPU), then its `stat` (the state letter): a thread that was not
/// running or runnable at the `stat` read and whose run count is still the same later was on
/// no CPU from the first read to the later one ([`super::TaskStat::quiet_until`]).
///
/// The files are opened relative to `/proc/<pid>/task` (no walk of the whole path each time),
/// and each thread's `schedstat` is kept open for the later look: on a JVM of 1,000 threads the
/// later look is 1,000 `pread`s. A kept file stays with its thread, so an id that a new thread
/// took since reads as gone. The soft open-file limit is raised for them when it is too low
/// (up to the hard limit: this reader's own limit, nothing of the target's); a thread past what
/// the hard limit allows has its file opened again by its path at the later look, for its CPU
/// time only: its run count is then unknown and it is never quiet (it is held).
pub struct RunWatch {
    pid: Pid,
    first: std::collections::HashMap<Pid, Watched>,
}

/// The open-file limit (`RLIMIT_NOFILE`'s soft limit) raised to `wanted` when it is lower and
/// the hard limit allows (to the hard limit when that is lower): what [`RunWatch`] may keep
/// open. 1,024 when the limit cannot be read; `wanted` 0 only reads it
/// ([`TaskStates::max_kept`]).
fn open_files_for(wanted: usize) -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    let wanted = libc::rlim_t::try_from(wanted).unwrap_or(libc::rlim_t::MAX);
    if limit.rlim_cur < wanted && limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: wanted.min(limit.rlim_max),
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads the struct it is given; a refusal leaves the limit as it was.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        }
    }
    usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
}

/// One thread's first look and its kept `schedstat`.
struct Watched {
    stat: super::TaskStat,
    schedstat: Option<std::fs::File>,
}

impl RunWatch {
    /// Looks at threads `tids` of process `pid` now; a thread that is gone (or whose files
    /// cannot be read) is left out, and so never quiet.
    pub fn start(pid: Pid, tids: &[Pid]) -> RunWatch {
        use nix::fcntl::{OFlag, openat};
        use nix::sys::stat::Mode;
        let mut first = std::collections::HashMap::with_capacity(tids.len());
        let dir = std::fs::File::open(format!("/proc/{pid}/task")).ok();
        let open = |tid: Pid, name: &str| -> Option<std::fs::File> {
            let path = format!("{tid}/{name}");
            let fd = match &dir {
                Some(d) => openat(
                    d,
                    path.as_str(),
                    OFlag::O_RDONLY | OFlag::O_CLOEXEC,
                    Mode::empty(),
                )
                .ok()?,
                None => return std::fs::File::open(format!("/proc/{pid}/task/{path}")).ok(),
            };
            Some(std::fs::File::from(fd))
        };
        let mut room = open_files_for(tids.len() + 128).saturating_sub(128);
        for &tid in tids {
            let sched_file = open(tid, "schedstat");
            let sched = sched_file.as_ref().and_then(read_schedstat);
            let Some(stat) = open(tid, "stat").and_then(|f| stat_with(f, sched)) else {
                continue;
            };
            let schedstat = sched_file.filter(|_| sched.is_some() && room > 0);
            room -= usize::from(schedstat.is_some());
            first.insert(tid, Watched { stat, schedstat });
        }
        RunWatch { pid, first }
    }

    /// Thread `tid` at the first look; `None` when it was not seen.
    pub fn first(&self, tid: Pid) -> Option<super::TaskStat> {
        self.first.get(&tid).map(|w| w.stat)
    }

    /// Thread `tid` now: its CPU time and run count read again, its state letter and nice value
    /// those of the first look. `None` when it was not seen then or is gone now.
    pub fn again(&self, tid: Pid) -> Option<super::TaskStat> {
        let w = self.first.get(&tid)?;
        // A file opened again by its path may be another thread's that took the id: its CPU
        // time serves `cpu=`, but its run count proves nothing (unknown: never quiet).
        let (sched, kept) = match &w.schedstat {
            Some(f) => (read_schedstat(f)?, true),
            None => {
                let f = std::fs::File::open(format!("/proc/{}/task/{tid}/schedstat", self.pid));
                (read_schedstat(&f.ok()?)?, false)
            }
        };
        Some(super::TaskStat {
            cpu_ms: sched.0 as f64 / 1e6,
            run_count: kept.then_some(sched.1),
            ..w.stat
        })
    }

    /// Whether thread `tid` provably did not run since the first look: not running or
    /// runnable then, and put on no CPU since (its run count the same now).
    pub fn quiet(&self, tid: Pid) -> bool {
        match (self.first(tid), self.again(tid)) {
            (Some(b), Some(a)) => b.quiet_until(&a),
            _ => false,
        }
    }
}

/// The state letters and run times of some threads of one process, read again and again: each
/// thread's `/proc/<pid>/task/<tid>/stat` and `schedstat` are opened once and re-read from
/// offset 0 (`pread`: `proc` generates the text afresh at each read from the start), so a
/// sampler's look at its threads costs one read a thread, not an open, a read and a close. An
/// open file stays with the thread it was opened for: a thread that ended reads as gone even
/// when its id is reused. At most [`TaskStates::max_kept`] files are kept open (a JVM of
/// thousands of threads must not use up the reader's descriptors); past that a read opens and
/// closes its file.
pub struct TaskStates {
    pid: Pid,
    files: std::cell::RefCell<std::collections::HashMap<(Pid, TaskFile), std::fs::File>>,
    /// The most files kept open at once ([`TaskStates::max_kept`]).
    max_kept: usize,
}

/// Which file of a thread [`TaskStates`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TaskFile {
    Stat,
    Schedstat,
}

impl TaskStates {
    /// The most files kept open at once: this process's open-file limit (`RLIMIT_NOFILE`'s soft
    /// limit, 1,024 by default) less 128 for everything else, at least 64 and at most 4,096 (two
    /// files a thread: a JVM of 200 threads keeps its 400 files open by default).
    pub fn max_kept() -> usize {
        open_files_for(0).saturating_sub(128).clamp(64, 4096)
    }

    /// No file open yet.
    pub fn new(pid: Pid) -> Self {
        TaskStates {
            pid,
            files: std::cell::RefCell::new(std::collections::HashMap::new()),
            max_kept: Self::max_kept(),
        }
    }

    /// Reads thread `tid`'s file `which` from its start into `buf` (opened the first time, kept
    /// while there is room when `keep`); the bytes read, `None` when the thread is gone (its file
    /// closed).
    fn read(&self, tid: Pid, which: TaskFile, buf: &mut [u8], keep: bool) -> Option<usize> {
        use std::os::unix::fs::FileExt;
        let mut files = self.files.borrow_mut();
        let key = (tid, which);
        if let Some(f) = files.get(&key) {
            match f.read_at(buf, 0) {
                Ok(n) if n > 0 => return Some(n),
                _ => {
                    files.remove(&key);
                    return None;
                }
            }
        }
        let name = match which {
            TaskFile::Stat => "stat",
            TaskFile::Schedstat => "schedstat",
        };
        let f = std::fs::File::open(format!("/proc/{}/task/{tid}/{name}", self.pid)).ok()?;
        let n = f.read_at(buf, 0).ok().filter(|&n| n > 0)?;
        if keep && files.len() < self.max_kept {
            files.insert(key, f);
        }
        Some(n)
    }

    /// Thread `tid`'s state letter (`R`, `S`, ...); `None` when it is gone. Its file is kept
    /// open for the next look.
    pub fn state(&self, tid: Pid) -> Option<u8> {
        self.state_of(tid, true)
    }

    /// As [`TaskStates::state`], for a look that is not repeated (a thread seen for the first
    /// time): its file is closed again unless it was open already, so a look at every thread
    /// does not take the room of the files read each second.
    pub fn state_once(&self, tid: Pid) -> Option<u8> {
        self.state_of(tid, false)
    }

    fn state_of(&self, tid: Pid, keep: bool) -> Option<u8> {
        let mut buf = [0u8; 1024];
        let n = self.read(tid, TaskFile::Stat, &mut buf, keep)?;
        super::TaskStat::parse(&buf[..n], tick_ms()).map(|s| s.state)
    }

    /// The process's thread count (`num_threads`, the 20th field of any of its threads'
    /// `stat`), read through thread `tid`'s kept file; `None` when that thread is gone.
    pub fn thread_count(&self, tid: Pid) -> Option<u64> {
        let mut buf = [0u8; 1024];
        let n = self.read(tid, TaskFile::Stat, &mut buf, true)?;
        super::num_threads(&buf[..n])
    }

    /// Thread `tid`'s CPU time in nanoseconds (`schedstat`'s run time); `None` when it is
    /// gone or the kernel keeps no schedstat.
    pub fn run_time_ns(&self, tid: Pid) -> Option<u64> {
        let mut buf = [0u8; 128];
        let n = self.read(tid, TaskFile::Schedstat, &mut buf, true)?;
        schedstat(&buf[..n]).map(|(ns, _)| ns)
    }

    /// Closes the files of every thread not in `tids`.
    pub fn keep_only(&self, tids: &[Pid]) {
        self.files.borrow_mut().retain(|(t, _), _| tids.contains(t));
    }
}

/// The first and third fields of a `/proc/<pid>/task/<tid>/schedstat` line (`fs/proc/base.c`
/// `proc_pid_schedstat`: run time, wait time, timeslices): the thread's CPU time in nanoseconds
/// and how many times it was put on a CPU.
fn schedstat(line: &[u8]) -> Option<(u64, u64)> {
    let mut f = std::str::from_utf8(line).ok()?.split_ascii_whitespace();
    let ns = f.next()?.parse().ok()?;
    let count = f.nth(1)?.parse().ok()?;
    Some((ns, count))
}

/// Thread `tid`'s name (`/proc/<pid>/task/<tid>/comm`, at most 15 bytes); `None` when it is
/// gone.
pub fn thread_name(pid: Pid, tid: Pid) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// The threads of process `pid` (`/proc/<pid>/task`).
///
/// # Errors
/// [`Error::NoSuchProcess`] when it is gone, [`Error::Io`] when the directory cannot be read.
pub fn list_tasks(pid: Pid) -> Result<Vec<Pid>, Error> {
    ptrace::list_tasks(pid)
}

/// Threads are held one by one here (ptrace): always `Ok`.
///
/// # Errors
/// None.
pub fn holds_single_threads() -> Result<(), Error> {
    Ok(())
}

/// Holds threads `tids` of `process` only, in ptrace-stop ([`ptrace::stop_threads`]).
///
/// # Errors
/// As [`ptrace::stop`].
pub fn stop_threads(
    process: &Process,
    tids: &[Pid],
    timeout: Duration,
) -> Result<ptrace::Stopped, Error> {
    ptrace::stop_threads(process.pid(), tids, timeout, process.already_stopped())
}

/// The host's thread ids of `pid`'s threads, keyed by the ids their own (innermost) pid
/// namespace gives them (the last `NSpid` of `/proc/<pid>/task/<tid>/status`): a JVM in a
/// container records the latter as `OSThread::_thread_id` (jcmd's `nid`). Empty when the process
/// is in this reader's pid namespace (the ids are the same) or its status is unreadable.
pub fn namespace_tids(pid: Pid) -> std::collections::HashMap<Pid, Pid> {
    let mut map = std::collections::HashMap::new();
    let Ok(info) = ProcessInfo::read(pid) else {
        return map;
    };
    if info.nspid == pid {
        return map;
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return map;
    };
    for tid in tasks.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<Pid>().ok()) {
        let inner = procfs::process::Process::new(pid)
            .and_then(|p| p.task_from_tid(tid))
            .and_then(|t| t.status())
            .ok()
            .and_then(|s| s.nspid?.last().copied());
        if let Some(inner) = inner {
            map.insert(inner, tid);
        }
    }
    map
}

/// Milliseconds per clock tick (`sysconf(_SC_CLK_TCK)`), the unit of `stat`'s CPU times.
fn tick_ms() -> f64 {
    1000.0 / procfs::ticks_per_second().max(1) as f64
}

/// [`super::ProcessUsage`] from `/proc/<pid>/{stat,fd,limits}` and `/proc/stat`'s `btime`.
pub fn usage(pid: Pid) -> Result<super::ProcessUsage, Error> {
    let (p, stat) = open_with_stat(pid)?;
    let tps = procfs::ticks_per_second() as f64;
    let page = procfs::page_size();
    let boot =
        procfs::boot_time_secs().map_err(|e| process_error(pid, "read /proc/stat", e))? as f64;
    let open_fds = p.fd_count().ok().map(|n| n as u64);
    let max_fds = p
        .limits()
        .ok()
        .and_then(|l| match l.max_open_files.soft_limit {
            procfs::process::LimitValue::Value(v) => Some(v),
            procfs::process::LimitValue::Unlimited => None,
        });
    Ok(super::ProcessUsage {
        cpu_seconds: (stat.utime + stat.stime) as f64 / tps,
        start_time_seconds: boot + stat.starttime as f64 / tps,
        resident_bytes: stat.rss * page,
        virtual_bytes: stat.vsize,
        open_fds,
        max_fds,
        threads: stat.num_threads.max(0) as u64,
    })
}

#[cfg(test)]
mod usage_tests {
    /// Our own process's usage agrees with what `ps` says of it.
    #[test]
    fn usage_of_this_process_agrees_with_ps() {
        let me = std::process::id() as crate::pid::Pid;
        let u = super::usage(me).unwrap();
        let out = std::process::Command::new("ps")
            .args(["-o", "vsz=,etimes=", "-p", &me.to_string()])
            .output()
            .expect("ps (procps) runs");
        let text = String::from_utf8(out.stdout).unwrap();
        let mut f = text.split_whitespace().map(|w| w.parse::<f64>().unwrap());
        let (vsz_kib, etimes) = (f.next().unwrap(), f.next().unwrap());
        assert!(u.resident_bytes > 0 && u.threads >= 1, "{u:?}");
        assert!(u.open_fds.unwrap() >= 3, "{u:?}");
        assert!(u.max_fds.unwrap_or(u64::MAX) >= u.open_fds.unwrap());
        // vsz moves while other tests' threads map and unmap their stacks: ps's reading must lie
        // between ours before and after it (10% of slack either side).
        let after = super::usage(me).unwrap();
        let (lo, hi) = (
            u.virtual_bytes.min(after.virtual_bytes) as f64 / 1024.0,
            u.virtual_bytes.max(after.virtual_bytes) as f64 / 1024.0,
        );
        assert!(
            vsz_kib >= lo * 0.9 && vsz_kib <= hi * 1.1,
            "ps {vsz_kib} KiB outside ours {lo}..{hi} KiB"
        );
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let age = now - u.start_time_seconds;
        assert!((age - etimes).abs() <= 2.0, "age {age} vs ps {etimes}");
        assert!(super::usage(-1).is_err());
    }
}

#[cfg(test)]
mod schedstat_tests {
    #[test]
    fn schedstat_gives_the_run_time_in_nanoseconds_and_the_run_count() {
        assert_eq!(
            super::schedstat(b"86184613 1043922 57\n"),
            Some((86_184_613, 57))
        );
        assert_eq!(super::schedstat(b""), None);
        assert_eq!(super::schedstat(b"x 1 2\n"), None);
        // This thread's own: it has run to get here.
        let me = std::process::id() as crate::pid::Pid;
        let s = super::task_stat(me, me).expect("our own stat");
        assert!(s.cpu_ms > 0.0, "{s:?}");
        assert!(s.run_count.is_some_and(|c| c > 0), "{s:?}");
        // This test's thread is running now: never quiet, whatever the counts.
        let tid = nix::unistd::gettid().as_raw();
        let running = super::task_stat(me, tid).expect("this thread's stat");
        assert_eq!(running.state, b'R');
        assert!(!running.quiet_until(&running));
        let asleep = crate::process::TaskStat { state: b'S', ..s };
        assert!(asleep.quiet_until(&asleep));
        let ran = crate::process::TaskStat {
            run_count: s.run_count.map(|c| c + 1),
            ..asleep
        };
        assert!(!asleep.quiet_until(&ran));
        let unknown = crate::process::TaskStat {
            run_count: None,
            ..asleep
        };
        assert!(!unknown.quiet_until(&unknown));
    }
}

#[cfg(test)]
mod run_watch_tests {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// A thread of this process that sends its id, then waits for a message (asleep, `S`) and
    /// ends after the second; `wake` sends one.
    fn sleeper() -> (
        crate::pid::Pid,
        mpsc::Sender<()>,
        std::thread::JoinHandle<()>,
    ) {
        let (tx, rx) = mpsc::channel();
        let (wake, wait) = mpsc::channel::<()>();
        let handle = std::thread::spawn(move || {
            tx.send(nix::unistd::gettid().as_raw()).unwrap();
            let _ = wait.recv();
            let _ = wait.recv();
        });
        (rx.recv().unwrap(), wake, handle)
    }

    /// Waits until thread `tid` of this process sleeps.
    fn until_asleep(tid: crate::pid::Pid) {
        let me = std::process::id() as crate::pid::Pid;
        let deadline = Instant::now() + Duration::from_secs(10);
        while super::task_stat(me, tid).is_none_or(|s| s.state != b'S') {
            assert!(Instant::now() < deadline, "thread {tid} never slept");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A sleeping thread is quiet until it is woken and runs; this (running) thread never is;
    /// a thread not watched, or ended, is not either.
    #[test]
    fn a_thread_is_quiet_until_it_runs() {
        let me = std::process::id() as crate::pid::Pid;
        let running = nix::unistd::gettid().as_raw();
        let (asleep, wake, handle) = sleeper();
        until_asleep(asleep);
        let watch = super::RunWatch::start(me, &[running, asleep]);
        assert_eq!(watch.first(running).map(|s| s.state), Some(b'R'));
        assert!(!watch.quiet(running), "the watching thread runs");
        assert!(watch.quiet(asleep), "{:?}", watch.first(asleep));
        assert!(watch.quiet(asleep), "still asleep: quiet when asked again");
        let first = watch.first(asleep).unwrap();
        let again = watch.again(asleep).unwrap();
        assert_eq!((again.state, again.nice), (first.state, first.nice));
        // Woken: it runs (to wait again), so its run count moved.
        wake.send(()).unwrap();
        until_asleep(asleep);
        assert!(!watch.quiet(asleep), "it ran: {:?}", watch.again(asleep));
        assert!(watch.again(asleep).unwrap().run_count > first.run_count);
        assert!(!watch.quiet(1), "not watched");
        wake.send(()).unwrap();
        handle.join().unwrap();
        assert_eq!(watch.again(asleep), None, "an ended thread's kept file");
        assert!(!watch.quiet(asleep));
    }
}

#[cfg(test)]
mod task_states_tests {
    /// A thread's file read again gives its state now: this thread runs, a sleeping thread
    /// sleeps, and after it ended its kept file reads as gone.
    #[test]
    fn kept_stat_files_read_each_threads_state_now() {
        let me = std::process::id() as crate::pid::Pid;
        let states = super::TaskStates::new(me);
        let tid = nix::unistd::gettid().as_raw();
        assert_eq!(states.state(tid), Some(b'R'));
        assert_eq!(
            states.state(tid),
            Some(b'R'),
            "read again from its kept file"
        );
        let (tx, rx) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let sleeper = std::thread::spawn(move || {
            tx.send(nix::unistd::gettid().as_raw()).unwrap();
            let _ = wait.recv();
        });
        let other = rx.recv().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while states.state(other) != Some(b'S') {
            assert!(
                std::time::Instant::now() < deadline,
                "the thread never slept"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        go.send(()).unwrap();
        sleeper.join().unwrap();
        assert_eq!(states.state(other), None, "an ended thread's kept file");
        assert_eq!(states.run_time_ns(other), None);
        states.keep_only(&[tid]);
        assert_eq!(states.state(tid), Some(b'R'));
    }

    /// The thread count read through one thread's kept `stat` follows the process's threads
    /// as `/proc/self/task` lists them, one started and then ended.
    #[test]
    fn kept_stat_file_gives_the_process_thread_count() {
        let me = std::process::id() as crate::pid::Pid;
        let states = super::TaskStates::new(me);
        let tid = nix::unistd::gettid().as_raw();
        let listed = || std::fs::read_dir("/proc/self/task").unwrap().count() as u64;
        // Other test threads come and go: compare with listings taken around the read.
        let (before, count, after) = (listed(), states.thread_count(tid), listed());
        let count = count.expect("no thread count");
        assert!(
            count >= before.min(after) && count <= before.max(after) + 2,
            "{count} threads, listed {before} then {after}"
        );
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let (ready, started) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            ready.send(()).unwrap();
            let _ = wait.recv();
        });
        started.recv().unwrap();
        let with = states.thread_count(tid).unwrap();
        go.send(()).unwrap();
        other.join().unwrap();
        assert!(with >= 2, "{with} threads with a second one running");
    }
}
