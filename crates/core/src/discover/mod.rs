//! Finding every HotSpot JVM on the host (`inspect list`, and the JVMs `serve` exports): one pass
//! over `/proc`, then a look at each JVM found, without stopping it and without writing to it.
//!
//! **What is a JVM.** A process that maps `libjvm.so` (a line of `/proc/<pid>/maps`), whatever its
//! executable: `java`, or a product launcher that embeds the VM through `JNI_CreateJavaVM`. A
//! process merely named `java` is not one. When `/proc/<pid>/maps` cannot be read (another user's
//! process, as an unprivileged user), a process is still known to be a JVM when an hsperfdata file
//! of its pid, owned by its user, is in this host's `/tmp/hsperfdata_<user>/` (HotSpot makes the
//! directory world-listable, `perfMemory_posix.cpp`, unless a umask such as Tomcat's 0027 closes
//! it), or when its command line, which every user may read, is a JVM's
//! ([`launcher::looks_like_jvm`]); such a JVM is listed as [`Readable::Neither`] with the reason
//! and the fix. An unreadable process whose command line is readable and not a JVM's is not one
//! to warn about; the rest (command line unreadable too, e.g. `hidepid`) are counted in
//! [`Scan::not_inspected`], with the reason. Kernel threads, zombies and processes that
//! exit or whose pid is reused during the scan are left out ([`Scan::vanished`] counts the last).
//!
//! **What is said about it** ([`JvmInfo`]). The main class (or jar) and the VM version come from
//! the PerfData strings (`sun.rt.javaCommand`; `java.property.java.vm.version`, or on JDK 8
//! `java.property.java.version`: [`java_version`]), read from the
//! hsperfdata file when there is one, else from the process's memory *without stopping it*
//! ([`crate::read_forced`] with `stop: false`), else from `/proc/<pid>/cmdline` and the JDK's
//! `release` file. Whether each way of reading works is [`Readable`]; when neither does, the
//! reason and the fix.
//!
//! **Secrets.** Main arguments and JVM flags (`-m`, `-v`) often hold passwords and tokens
//! (`-Djavax.net.ssl.keyStorePassword=...`, `--db-password ...`). They are collected only when
//! [`ScanOptions`] asks for them, and serialized only then: `serve` never asks, and `inspect
//! list --format json` includes them only on an explicit `-m`/`-v`.
//!
//! **Cost.** One read of `maps` per process, up to libjvm's line (a byte search, no parsing;
//! `stat` only for JVMs), then per JVM a file read and a no-stop memory read, spread over the
//! cores. Nearly all of it is the kernel formatting `maps`. Symbol work runs once per
//! libjvm build: the first JVM of each distinct libjvm is looked at before the others, which then
//! find its `PerfMemory` addresses in the symbol cache (`locate/cache.rs`).

pub mod launcher;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use procfs::ProcError;
use procfs::process::{Process, StatFlags};
use serde::Serialize;

use crate::perfdata::{Snapshot, Value};
// discover is Linux-only: it uses the Linux process module directly.
use crate::process::os::{self as process, ProcessInfo};
use crate::{Error, ForcedOptions, Reading, SymbolCacheUse};

/// How this inspector can read a JVM's PerfData.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Readable {
    /// Its hsperfdata file (`inspect <pid>`), not its memory.
    #[serde(rename = "file")]
    File,
    /// Its memory (`inspect -F <pid>`), not a file (e.g. `-XX:+PerfDisableSharedMem`).
    #[serde(rename = "-F")]
    Forced,
    /// Both ways.
    #[serde(rename = "both")]
    Both,
    /// Neither: [`JvmInfo::reason`] says why.
    #[serde(rename = "neither")]
    Neither,
}

impl Readable {
    /// The name used in text and JSON: `file`, `-F`, `both`, `neither`.
    pub fn as_str(self) -> &'static str {
        match self {
            Readable::File => "file",
            Readable::Forced => "-F",
            Readable::Both => "both",
            Readable::Neither => "neither",
        }
    }
}

/// Where [`JvmInfo::main`] and [`JvmInfo::jvm_version`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InfoSource {
    /// The hsperfdata file's PerfData strings.
    File,
    /// The PerfData region in the process's memory, read without stopping it.
    Memory,
    /// `/proc/<pid>/cmdline` (a `java` launcher's) and the JDK's `release` file.
    Cmdline,
    /// Nothing could be read: main and version are empty.
    None,
}

/// One HotSpot JVM. The JSON field names are a stable interface (`serve` uses the same as labels).
#[derive(Debug, Clone, Serialize)]
pub struct JvmInfo {
    /// The pid in this host's (the inspector's) pid namespace.
    pub pid: i32,
    /// The pid in the JVM's own, innermost pid namespace (the last `NSpid` of
    /// `/proc/<pid>/status`: a container's pid), when it differs from `pid`.
    pub container_pid: Option<i32>,
    /// The effective uid.
    pub uid: u32,
    /// The user name of `uid` on this host (NSS), or the uid as a number.
    pub user: String,
    /// The kernel's command name (`comm`, up to 15 bytes): the launcher's name.
    pub comm: String,
    /// The main class, `<module>/<class>` or jar path, as `jps -l` prints it (the first word of
    /// `sun.rt.javaCommand`); empty for a JVM embedded through `JNI_CreateJavaVM`, which sets
    /// none, and when nothing could be read.
    pub main: String,
    /// The Java version ([`java_version`]): `java.vm.version` on JDK 9 and later (e.g.
    /// `17.0.15+6-Debian-1deb12u1`), `java.version` on JDK 8 (e.g. `1.8.0_504`); from a `release`
    /// file, its `JAVA_RUNTIME_VERSION`. Empty when unknown.
    pub jvm_version: String,
    /// Seconds since the process started (`starttime` of `/proc/<pid>/stat`), to 10 ms.
    pub uptime_s: f64,
    /// How its PerfData can be read here.
    pub readable: Readable,
    /// With [`Readable::Neither`]: why, and what would fix it.
    pub reason: Option<String>,
    /// Where `main` and `jvm_version` came from.
    pub info_from: InfoSource,
    /// The main arguments (`jps -m`), only when [`ScanOptions::main_args`] asked. They may hold
    /// secrets, so they are never serialized: text output only.
    #[serde(skip)]
    pub main_args: Option<String>,
    /// The JVM flags (`jps -v`: `java.rt.vmArgs`), only when [`ScanOptions::jvm_flags`] asked.
    /// They may hold secrets (`-D...password=`), so they are never serialized: text output only.
    #[serde(skip)]
    pub jvm_flags: Option<String>,
    /// What the scan read, only when [`ScanOptions::keep_readings`] asked: the hsperfdata file's
    /// reading where it was readable, else the memory's (read without a stop). Never serialized.
    #[serde(skip)]
    pub reading: Option<Reading>,
}

/// A process that could not be looked at, so it may be a JVM this scan does not list.
#[derive(Debug, Clone, Serialize)]
pub struct NotInspected {
    /// Its pid.
    pub pid: i32,
    /// Its uid, when `/proc/<pid>` says.
    pub uid: Option<u32>,
    /// What was refused, and the fix.
    pub reason: String,
}

/// The result of a [`scan`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scan {
    /// The JVMs, by pid.
    pub jvms: Vec<JvmInfo>,
    /// Processes whose mappings could not be read (and that show no hsperfdata file).
    pub not_inspected: Vec<NotInspected>,
    /// Processes that exited, or whose pid was reused, while they were being looked at.
    pub vanished: usize,
}

impl Scan {
    /// [`Scan::not_inspected`] grouped by reason: `(reason, count)`, most frequent first.
    pub fn not_inspected_by_reason(&self) -> Vec<(String, usize)> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for n in &self.not_inspected {
            match counts.iter_mut().find(|(r, _)| *r == n.reason) {
                Some((_, c)) => *c += 1,
                None => counts.push((n.reason.clone(), 1)),
            }
        }
        counts.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
        counts
    }
}

/// What a [`scan`] collects beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Collect [`JvmInfo::main_args`] (may hold secrets).
    pub main_args: bool,
    /// Collect [`JvmInfo::jvm_flags`] (may hold secrets).
    pub jvm_flags: bool,
    /// Do not use or fill the per-build symbol cache (`--no-cache`).
    pub no_symbol_cache: bool,
    /// Keep each JVM's reading in [`JvmInfo::reading`] (`serve`: no second read of a JVM the
    /// scan has just read).
    pub keep_readings: bool,
}

/// Finds every HotSpot JVM this user can see (see the module docs for how), in pid order.
///
/// # Errors
/// [`Error::Io`] only when `/proc` itself cannot be listed; a process that cannot be read is
/// counted in [`Scan::not_inspected`], never an error.
pub fn scan(opts: &ScanOptions) -> Result<Scan, Error> {
    let me = std::process::id() as i32;
    // Pids first, each process opened only while it is looked at: holding a descriptor per
    // process would run out of them on a host with thousands.
    let pids: Vec<i32> = std::fs::read_dir("/proc")
        .map_err(|e| Error::io(Path::new("/proc"), e))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid| *pid != me)
        .collect();
    // Pass 1: which processes are JVMs (cheap, every process), spread over the cores.
    let host_files = OnceLock::new();
    let examined = parallel_map(&pids, |&pid| match Process::new(pid) {
        Ok(process) => examine(&process, &host_files),
        Err(ProcError::NotFound(_)) => Examined::Vanished,
        Err(e) => Examined::NotInspected(NotInspected {
            pid,
            uid: None,
            reason: format!("/proc/<pid>: {e}"),
        }),
    });
    let mut result = Scan::default();
    let mut candidates = Vec::new();
    for e in examined {
        match e {
            Examined::Jvm(c) => candidates.push(c),
            Examined::NotAJvm => {}
            Examined::Vanished => result.vanished += 1,
            Examined::NotInspected(n) => result.not_inspected.push(n),
        }
    }
    let clock = Clock::now();
    let users = Users::default();
    let outcomes = inspect_all(&candidates, opts, &clock, &users);
    for outcome in outcomes {
        match outcome {
            Some(info) => result.jvms.push(info),
            None => result.vanished += 1,
        }
    }
    result.jvms.sort_by_key(|j| j.pid);
    Ok(result)
}

/// A process found to be a JVM by the first pass.
#[derive(Debug)]
struct Candidate {
    pid: i32,
    start_time: u64,
    comm: String,
    /// libjvm's path from `maps`; `None` when `maps` was unreadable (known by its file).
    libjvm: Option<PathBuf>,
}

enum Examined {
    Jvm(Candidate),
    NotAJvm,
    Vanished,
    NotInspected(NotInspected),
}

/// Whether `process` is a JVM. `maps` is read first: for most processes it is all that is read
/// (a kernel thread's and a zombie's are empty); `stat` only for a JVM or an unreadable `maps`.
fn examine(process: &Process, host_files: &OnceLock<HostHsperfFiles>) -> Examined {
    let pid = process.pid();
    let maps = read_libjvm_line(process);
    if let Ok(None) = maps {
        return Examined::NotAJvm;
    }
    let Ok(stat) = process.stat() else {
        // `stat` is readable for every process: failing means it is gone.
        return Examined::Vanished;
    };
    // A kernel thread (`PF_KTHREAD` in `flags`, `include/linux/sched.h`) or a zombie.
    let kthread = stat
        .flags()
        .is_ok_and(|f| f.contains(StatFlags::PF_KTHREAD));
    if kthread || matches!(stat.state, 'Z' | 'X' | 'x') {
        return Examined::NotAJvm;
    }
    let candidate = |libjvm| {
        Examined::Jvm(Candidate {
            pid,
            start_time: stat.starttime,
            comm: stat.comm.clone(),
            libjvm,
        })
    };
    match maps {
        Ok(libjvm) => candidate(libjvm),
        Err(ProcError::NotFound(_)) => Examined::Vanished,
        Err(e) => {
            let uid = process.uid().ok();
            let files = host_files.get_or_init(HostHsperfFiles::list);
            if uid.is_some_and(|uid| files.has(pid, uid)) && same_pid_inside(process) {
                return candidate(None);
            }
            // What everyone may read of another user's process: its command line. A JVM by it
            // is listed (unreadable, with the reason and the fix); a process whose command line
            // is readable and is not a JVM's is no JVM to warn about.
            match cmdline_of(process) {
                Some(argv) if launcher::looks_like_jvm(&argv) => return candidate(None),
                Some(argv) if !argv.is_empty() => return Examined::NotAJvm,
                _ => {}
            }
            let me = nix::unistd::geteuid().as_raw();
            let reason = match e {
                ProcError::PermissionDenied(_) if uid.is_some_and(|u| u != me) && me != 0 => {
                    "another user's process: its /proc/<pid>/maps is not readable (run as root, or as that user, to see whether it is a JVM)".to_string()
                }
                ProcError::PermissionDenied(_) => {
                    "its /proc/<pid>/maps is not readable (a process that is not dumpable, or a security module's or container's policy; CAP_SYS_PTRACE lifts the first)".to_string()
                }
                e => format!("/proc/<pid>/maps: {e}"),
            };
            Examined::NotInspected(NotInspected { pid, uid, reason })
        }
    }
}

/// `/proc/<pid>/cmdline` as arguments; `None` when it cannot be read (`hidepid`), empty for a
/// process that has none (a kernel thread, a zombie).
fn cmdline_of(process: &Process) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{}/cmdline", process.pid())).ok()?;
    Some(
        raw.split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// libjvm's path from `/proc/<pid>/maps`, reading only as far as its first line (the kernel
/// formats the file as it is read, and a JVM's is long).
fn read_libjvm_line(process: &Process) -> Result<Option<PathBuf>, ProcError> {
    let mut file = process.open_relative("maps")?;
    let mut maps = Vec::with_capacity(64 << 10);
    let mut chunk = vec![0u8; 16 << 10];
    loop {
        let n = file.read(&mut chunk).map_err(ProcError::from)?;
        if n == 0 {
            return Ok(None);
        }
        maps.extend_from_slice(&chunk[..n]);
        if let Some(path) = launcher::libjvm_in_maps(&maps) {
            return Ok(Some(path));
        }
    }
}

/// Whether the process's innermost pid is its host pid (a file named by host pid is its own).
fn same_pid_inside(process: &Process) -> bool {
    process
        .status()
        .ok()
        .and_then(|s| s.nspid?.last().copied())
        .is_none_or(|inner| inner == process.pid())
}

/// The pids that have an hsperfdata file in this host's `/tmp/hsperfdata_*/`, with the file's
/// owner: how jps finds JVMs, used here only for processes whose mappings are unreadable.
struct HostHsperfFiles(HashMap<i32, u32>);

impl HostHsperfFiles {
    fn list() -> Self {
        use std::os::unix::fs::MetadataExt;
        let mut pids = HashMap::new();
        let Ok(tmp) = std::fs::read_dir("/tmp") else {
            return HostHsperfFiles(pids);
        };
        for dir in tmp.flatten() {
            if !dir.file_name().to_string_lossy().starts_with("hsperfdata_") {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir.path()) else {
                continue;
            };
            for e in entries.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|n| n.parse().ok()) else {
                    continue;
                };
                // Not followed: a symlink planted there is nobody's file.
                if let Ok(meta) = e.metadata()
                    && meta.is_file()
                {
                    pids.insert(pid, meta.uid());
                }
            }
        }
        HostHsperfFiles(pids)
    }

    fn has(&self, pid: i32, uid: u32) -> bool {
        self.0.get(&pid) == Some(&uid)
    }
}

/// The clock the uptimes are computed with.
struct Clock {
    uptime: Duration,
    ticks_per_second: u64,
}

impl Clock {
    fn now() -> Self {
        let uptime = std::fs::read_to_string("/proc/uptime")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
            .map(Duration::from_secs_f64)
            .unwrap_or_default();
        Clock {
            uptime,
            ticks_per_second: procfs::ticks_per_second().max(1),
        }
    }

    fn age_s(&self, start_time: u64) -> f64 {
        let started = start_time as f64 / self.ticks_per_second as f64;
        ((self.uptime.as_secs_f64() - started).max(0.0) * 100.0).round() / 100.0
    }
}

/// User names by uid, looked up once each.
#[derive(Default)]
struct Users(Mutex<HashMap<u32, String>>);

impl Users {
    fn name(&self, uid: u32) -> String {
        let mut names = self.0.lock().unwrap_or_else(|e| e.into_inner());
        names
            .entry(uid)
            .or_insert_with(|| process::user_name(uid).unwrap_or_else(|| uid.to_string()))
            .clone()
    }
}

/// Looks at every candidate, on as many threads as there are cores: first one JVM of each
/// distinct libjvm (so its symbol lookup fills the cache), then the rest. `None` for a process
/// that vanished meanwhile.
fn inspect_all(
    candidates: &[Candidate],
    opts: &ScanOptions,
    clock: &Clock,
    users: &Users,
) -> Vec<Option<JvmInfo>> {
    let mut first = Vec::new();
    let mut rest = Vec::new();
    let mut libjvms: Vec<&Path> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        match c.libjvm.as_deref() {
            Some(lib) if !libjvms.contains(&lib) => {
                libjvms.push(lib);
                first.push(i);
            }
            _ => rest.push(i),
        }
    }
    let mut out: Vec<Option<JvmInfo>> = vec![None; candidates.len()];
    for phase in [first, rest] {
        let infos = parallel_map(&phase, |&i| inspect_one(&candidates[i], opts, clock, users));
        for (i, info) in phase.into_iter().zip(infos) {
            out[i] = info;
        }
    }
    out
}

/// `items.iter().map(f)` on as many threads as there are cores (at most 8), results in order.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get().min(8))
        .min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(k) else { break };
                        mine.push((k, f(item)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|(k, _)| *k);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Whether an error means the process is gone or is another process now.
fn vanished(e: &Error) -> bool {
    matches!(
        e,
        Error::NoSuchProcess(_) | Error::ProcessExited(_) | Error::PidReused(_)
    )
}

/// Everything about one JVM; `None` when it exited or its pid was reused meanwhile.
fn inspect_one(c: &Candidate, opts: &ScanOptions, clock: &Clock, users: &Users) -> Option<JvmInfo> {
    let info = ProcessInfo::read(c.pid).ok()?;
    if info.start_time != c.start_time {
        return None;
    }
    // No waiting: a JVM still starting is listed as such, not waited for.
    let file = crate::read_shared_wait(c.pid, Duration::ZERO);
    // Only when the mappings were readable: otherwise ptrace is refused too.
    let forced = c.libjvm.as_ref().map(|_| {
        crate::read_forced(
            c.pid,
            &ForcedOptions {
                stop: false,
                wait_accessible: Duration::ZERO,
                symbol_cache: if opts.no_symbol_cache {
                    SymbolCacheUse::Off
                } else {
                    SymbolCacheUse::ReadOnly
                },
                ..ForcedOptions::default()
            },
        )
    });
    let file_gone = file.as_ref().err().is_some_and(vanished);
    let forced_gone = forced
        .as_ref()
        .is_some_and(|f| f.as_ref().err().is_some_and(vanished));
    if (file_gone || forced_gone) && process::check_same_process(&info).is_err() {
        return None;
    }
    let readable = match (file.is_ok(), forced.as_ref().is_some_and(|f| f.is_ok())) {
        (true, true) => Readable::Both,
        (true, false) => Readable::File,
        (false, true) => Readable::Forced,
        (false, false) => Readable::Neither,
    };
    let user = users.name(info.euid);
    let reason = (readable == Readable::Neither)
        .then(|| why_neither(&info, &user, c, file.as_ref().err(), forced.as_ref()));
    let (described, info_from) = match (&file, &forced) {
        (Ok(r), _) => (from_perfdata(&r.snapshot), InfoSource::File),
        (_, Some(Ok(r))) => (from_perfdata(&r.snapshot), InfoSource::Memory),
        _ => match from_cmdline(c, info.nspid == c.pid) {
            Some(d) => (d, InfoSource::Cmdline),
            None => (Described::default(), InfoSource::None),
        },
    };
    // A pid reused during the look: what was read may be another process's.
    process::check_same_process(&info).ok()?;
    let reading = if opts.keep_readings {
        file.ok().or_else(|| forced.and_then(Result::ok))
    } else {
        None
    };
    Some(JvmInfo {
        pid: c.pid,
        container_pid: (info.nspid != c.pid).then_some(info.nspid),
        uid: info.euid,
        user,
        comm: c.comm.clone(),
        main: described.main,
        jvm_version: described.version,
        uptime_s: clock.age_s(c.start_time),
        readable,
        reason,
        info_from,
        main_args: opts.main_args.then_some(described.main_args).flatten(),
        jvm_flags: opts.jvm_flags.then_some(described.jvm_flags).flatten(),
        reading,
    })
}

/// Main, version, arguments and flags, from wherever they came.
#[derive(Debug, Default)]
struct Described {
    main: String,
    version: String,
    main_args: Option<String>,
    jvm_flags: Option<String>,
}

fn string_counter(snapshot: &Snapshot, name: &str) -> Option<String> {
    match &snapshot.get(name)?.value {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// What jps reads (`MonitoredVmUtil`): `sun.rt.javaCommand`, `java.rt.vmArgs`; the version is
/// [`java_version`]'s.
fn from_perfdata(snapshot: &Snapshot) -> Described {
    let command = string_counter(snapshot, "sun.rt.javaCommand").unwrap_or_default();
    Described {
        main: launcher::jps_main(&command).to_string(),
        version: java_version(
            string_counter(snapshot, "java.property.java.version").as_deref(),
            string_counter(snapshot, "java.property.java.vm.version").as_deref(),
        ),
        main_args: launcher::jps_main_args(&command).map(String::from),
        jvm_flags: string_counter(snapshot, "java.rt.vmArgs").filter(|s| !s.is_empty()),
    }
}

/// The Java version shown for a JVM (`inspect list`'s VERSION, `serve`'s `jvm_version` label) from
/// its PerfData strings `java.property.java.version` (`java`) and `java.property.java.vm.version`
/// (`vm`): `vm` when it is `java` plus a build suffix, as on JDK 9 and later (`17.0.15+6-Debian-1deb12u1`
/// for `17.0.15`: JEP 223 gives both one scheme), else `java` (JDK 8, where `java.vm.version` is
/// HotSpot's own numbering, `25.504-b01`, and `java.version` is `1.8.0_504`), else `vm`, else
/// empty.
pub fn java_version(java: Option<&str>, vm: Option<&str>) -> String {
    match (java.filter(|j| !j.is_empty()), vm.filter(|v| !v.is_empty())) {
        (Some(j), Some(v)) if v.starts_with(j) => v.to_string(),
        (Some(j), _) => j.to_string(),
        (None, Some(v)) => v.to_string(),
        (None, None) => String::new(),
    }
}

/// From `/proc/<pid>/cmdline` (readable for every process) when it is a `java` launcher's, and
/// the version from the `release` file of the JDK whose libjvm is mapped, or whose `bin/java` it
/// runs (through `/proc/<pid>/root`, so a container's JDK; another user's `/proc/<pid>/root` is
/// closed, and then the host's path is read, only for a process in this pid namespace,
/// `host_ns`: not in a container).
fn from_cmdline(c: &Candidate, host_ns: bool) -> Option<Described> {
    let raw = std::fs::read(format!("/proc/{}/cmdline", c.pid)).ok()?;
    let argv: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let launcher_home = || {
        argv.first()
            .map(Path::new)
            .and_then(launcher::java_home_of_launcher)
    };
    let version = c
        .libjvm
        .as_deref()
        .and_then(launcher::java_home_of)
        .or_else(launcher_home)
        .and_then(|home| {
            let rel = home.strip_prefix("/").unwrap_or(home);
            std::fs::read_to_string(
                Path::new(&format!("/proc/{}/root", c.pid))
                    .join(rel)
                    .join("release"),
            )
            .ok()
            .or_else(|| {
                host_ns
                    .then(|| std::fs::read_to_string(home.join("release")).ok())
                    .flatten()
            })
        })
        .and_then(|text| launcher::release_version(&text))
        .unwrap_or_default();
    let join = |v: Vec<String>| (!v.is_empty()).then(|| v.join(" "));
    let parsed = launcher::parse_java_cmdline(&argv);
    if parsed.is_none() && version.is_empty() {
        return None;
    }
    Some(match parsed {
        Some(cmd) => Described {
            main: cmd.main,
            version,
            main_args: join(cmd.main_args),
            jvm_flags: join(cmd.jvm_flags),
        },
        None => Described {
            version,
            ..Described::default()
        },
    })
}

/// Why neither the file nor the memory could be read, and what would fix it, in one line.
fn why_neither(
    info: &ProcessInfo,
    user: &str,
    c: &Candidate,
    file: Option<&Error>,
    forced: Option<&Result<Reading, Error>>,
) -> String {
    let me = nix::unistd::geteuid().as_raw();
    let forced = forced.and_then(|f| f.as_ref().err());
    let denied = |e: Option<&Error>| matches!(e, Some(Error::PermissionDenied { .. }));
    let no_file = matches!(file, Some(Error::NoHsperfdataFile { .. }));
    let other_user = info.euid != me && me != 0;
    match (file, forced) {
        (_, Some(Error::PerfDataDisabled(_))) => {
            "perf data is disabled (-XX:-UsePerfData): nothing to read; remove the flag".into()
        }
        // Still starting, but readable once started: not when the maps are closed to this user.
        (Some(Error::NotAccessible { .. }), _) | (_, Some(Error::NotAccessible { .. }))
            if c.libjvm.is_some() || me == 0 || !other_user =>
        {
            "the JVM is still starting (its PerfData is not accessible yet): list again".into()
        }
        _ if c.libjvm.is_none() && me == 0 => "its /proc/<pid>/maps is not readable even to root (a security module's or container's policy, or no CAP_SYS_PTRACE)".into(),
        _ if c.libjvm.is_none() && info.nspid != info.pid && other_user => format!(
            "in a container of another user ({user}, uid {}): run inspect as root",
            info.euid
        ),
        _ if c.libjvm.is_none() || (denied(file) && (forced.is_none() || denied(forced))) => {
            let who = if info.euid == 0 {
                "root".to_string()
            } else {
                format!("root or as {user}")
            };
            format!(
                "another user's JVM ({user}, uid {}): run inspect as {who}",
                info.euid
            )
        }
        _ if no_file && denied(forced) => "no hsperfdata file (-XX:+PerfDisableSharedMem, or a /tmp not visible here) and no ptrace permission for -F: run inspect as root, as the JVM's user, or with CAP_SYS_PTRACE".into(),
        (_, Some(e)) => format!("-F: {e}"),
        (Some(e), None) => format!("file: {e}"),
        (None, None) => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(euid: u32, nspid: i32) -> ProcessInfo {
        ProcessInfo {
            pid: 4242,
            start_time: 1,
            euid,
            tgid: 4242,
            nspid,
            state: 'S',
            tracer: 0,
            comm: "java".into(),
        }
    }

    fn candidate(maps_readable: bool) -> Candidate {
        Candidate {
            pid: 4242,
            start_time: 1,
            comm: "java".into(),
            libjvm: maps_readable.then(|| PathBuf::from("/j/lib/server/libjvm.so")),
        }
    }

    fn denied() -> Error {
        Error::PermissionDenied {
            what: "x".into(),
            hint: "y".into(),
        }
    }

    /// The version of real regions: JDK 8's Java version, not HotSpot's `25.504-b01`; JDK 9+'s
    /// `java.vm.version` as jps and jcmd's `VM.version` show it.
    #[test]
    fn version_of_captured_regions() {
        let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        for (file, want) in [
            ("stat/jdk8-parallel.hsperf", "1.8.0_504"),
            ("stat/jdk8-cms.hsperf", "1.8.0_504"),
            ("stat/jdk11-parallel.hsperf", "11.0.13+8"),
            ("captures/jdk17-serial.hsperf", "17.0.15+6-Debian-1deb12u1"),
            ("captures/jdk21-g1.hsperf", "21.0.8+9-LTS"),
            ("stat/jdk25-g1.hsperf", "25.0.2+10-LTS"),
        ] {
            let buf = std::fs::read(testdata.join(file)).unwrap();
            let snapshot = crate::perfdata::parse(&buf).unwrap();
            assert_eq!(from_perfdata(&snapshot).version, want, "{file}");
        }
        assert_eq!(java_version(None, Some("17.0.1+12")), "17.0.1+12");
        assert_eq!(java_version(Some(""), Some("")), "");
        assert_eq!(java_version(Some("1.8.0_1"), None), "1.8.0_1");
    }

    #[test]
    fn readable_names_are_the_json_strings() {
        for r in [
            Readable::File,
            Readable::Forced,
            Readable::Both,
            Readable::Neither,
        ] {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
        }
    }

    /// A JVM neither path could read: who it is, what each path said, what the reason must say.
    struct Case {
        euid: u32,
        nspid: i32,
        maps_readable: bool,
        file: Error,
        forced: Option<Error>,
        wanted: &'static [&'static str],
    }

    #[test]
    fn every_neither_has_a_cause_and_a_fix() {
        let no_file = || Error::NoHsperfdataFile {
            pid: 4242,
            tried: vec![],
        };
        let me = nix::unistd::geteuid().as_raw();
        let case = |euid, maps_readable, file, forced, wanted| Case {
            euid,
            nspid: 4242,
            maps_readable,
            file,
            forced,
            wanted,
        };
        let starting = Error::NotAccessible {
            pid: 4242,
            waited_ms: 0,
        };
        let mut cases = vec![
            case(
                me,
                true,
                no_file(),
                Some(Error::PerfDataDisabled(4242)),
                &["-XX:-UsePerfData"],
            ),
            case(me, true, no_file(), Some(starting), &["still starting"]),
            case(
                me,
                true,
                no_file(),
                Some(denied()),
                &["PerfDisableSharedMem", "CAP_SYS_PTRACE"],
            ),
            case(
                me + 1,
                true,
                denied(),
                Some(denied()),
                &["another user's JVM (bob", "as bob"],
            ),
            case(
                me + 1,
                false,
                denied(),
                None,
                if me == 0 {
                    &["not readable even to root"]
                } else {
                    &["another user's JVM (bob"]
                },
            ),
        ];
        if me != 0 {
            cases.push(Case {
                nspid: 1,
                ..case(
                    me + 1,
                    false,
                    no_file(),
                    None,
                    &["container of another user"],
                )
            });
        }
        for c in cases {
            let forced = c.forced.map(Err);
            let info = info(c.euid, c.nspid);
            let r = why_neither(
                &info,
                "bob",
                &candidate(c.maps_readable),
                Some(&c.file),
                forced.as_ref(),
            );
            for w in c.wanted {
                assert!(r.contains(w), "{w:?} not in {r:?}");
            }
        }
    }

    #[test]
    fn not_inspected_grouped_by_reason_most_first() {
        let n = |pid, reason: &str| NotInspected {
            pid,
            uid: None,
            reason: reason.into(),
        };
        let scan = Scan {
            not_inspected: vec![n(1, "a"), n(2, "b"), n(3, "b")],
            ..Scan::default()
        };
        assert_eq!(
            scan.not_inspected_by_reason(),
            vec![("b".to_string(), 2), ("a".to_string(), 1)]
        );
    }
}
