//! Finding every HotSpot JVM on the host (`inspect list`, `top`, and the JVMs `serve` exports):
//! one pass over the host's processes, then a look at each JVM found, without stopping it and
//! without writing to it.
//!
//! # The OS seam
//!
//! [`scan`] is written once per OS, in `linux.rs` (below: `/proc`, `libjvm.so` in `maps`) and
//! `windows.rs` (a toolhelp snapshot, `jvm.dll` in the module list, the token's user: see that
//! file). Both fill the same [`Scan`] of [`JvmInfo`]s with the shared code here (the PerfData
//! strings jps reads, [`java_version`], the thread pool); the JSON and the `serve` labels are the
//! same on both, but for `uid` (Linux only) and `container_pid` (Linux pid namespaces).
//!
//! # Linux
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
//! ([`crate::pipeline::read_live`] with `stop: false`), else from `/proc/<pid>/cmdline` and the JDK's
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

#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod os;
#[cfg(windows)]
#[path = "windows.rs"]
mod os;

/// Windows: every process of one toolhelp snapshot, with its thread count (what `top` watches
/// for new JVMs between scans).
#[cfg(windows)]
pub use crate::process::os::{ProcessEntry, processes};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;

use crate::container::ContainerIdentity;
use crate::error::Error;
use crate::perfdata::{Snapshot, Value};
use crate::pid::Pid;
use crate::pipeline::{LiveOptions, Reading, SymbolCacheUse};

/// How this inspector can read a JVM's PerfData.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Readable {
    /// Its hsperfdata file (`inspect <pid>`), not its memory.
    #[serde(rename = "file")]
    File,
    /// Its memory (`inspect -F <pid>`), not a file (e.g. `-XX:+PerfDisableSharedMem`).
    #[serde(rename = "-F")]
    Live,
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
            Readable::Live => "-F",
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
    /// `/proc/<pid>/cmdline` (a `java` launcher's) and the JDK's `release` file (Windows: the
    /// version alone, from the `release` file of the JDK whose `jvm.dll` is loaded).
    Cmdline,
    /// Nothing could be read: main and version are empty.
    None,
}

/// One HotSpot JVM. The JSON field names are a stable interface (`serve` uses the same as labels).
#[derive(Debug, Clone, Serialize)]
pub struct JvmInfo {
    /// The pid in this host's (the inspector's) pid namespace.
    pub pid: Pid,
    /// The pid in the JVM's own, innermost pid namespace (the last `NSpid` of
    /// `/proc/<pid>/status`: a container's pid), when it differs from `pid`.
    pub container_pid: Option<Pid>,
    /// The effective uid (Linux); `None` on Windows, which has no uids (and then left out of
    /// the JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// Who runs it. Linux: the user name of `uid` on this host (NSS), or the uid as a number.
    /// Windows: the account name (no domain) of the process token's user, the `<user>` of its
    /// `hsperfdata_<user>` names; `?` when the token cannot be opened (see [`JvmInfo::reason`]).
    pub user: String,
    /// The launcher's name. Linux: the kernel's command name (`comm`, up to 15 bytes). Windows:
    /// the executable's file name (`java.exe`, `prunsrv.exe`).
    pub comm: String,
    /// The main class, `<module>/<class>` or jar path, as `jps -l` prints it (the first word of
    /// `sun.rt.javaCommand`); empty for a JVM embedded through `JNI_CreateJavaVM`, which sets
    /// none, and when nothing could be read.
    pub main: String,
    /// The Java version ([`java_version`]): `java.vm.version` on JDK 9 and later (e.g.
    /// `17.0.15+6-Debian-1deb12u1`), `java.version` on JDK 8 (e.g. `1.8.0_504`); from a `release`
    /// file, its `JAVA_RUNTIME_VERSION`. Empty when unknown.
    pub jvm_version: String,
    /// Seconds since the process started (Linux: `starttime` of `/proc/<pid>/stat`; Windows:
    /// `GetProcessTimes`' creation time), to 10 ms.
    pub uptime_s: f64,
    /// When the process started, in the OS's own unit (Linux: `starttime` of
    /// `/proc/<pid>/stat`, clock ticks since boot; 0 where unknown): with `pid`, names this
    /// process and no later one that reuses the pid. Not serialized.
    #[serde(skip)]
    pub start_ticks: u64,
    /// How its PerfData can be read here.
    pub readable: Readable,
    /// With [`Readable::Neither`]: why, and what would fix it.
    pub reason: Option<String>,
    /// The container it runs in, and under Kubernetes its pod ([`crate::container`]: its cgroup
    /// and its runtime's files under [`ScanOptions::host_root`]); `None` on the host (and on
    /// Windows), and then left out of the JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<ContainerIdentity>,
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
    pub pid: Pid,
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
    /// Where the host's root file system is mounted, for the container runtimes' files
    /// (`/run/containerd`, `/var/lib/docker`, ...): `None` for `/`. A DaemonSet that mounts
    /// them under `/host` passes `/host`.
    pub host_root: Option<PathBuf>,
}

impl ScanOptions {
    /// [`ScanOptions::host_root`], `/` when not given.
    pub fn host_root(&self) -> &Path {
        self.host_root.as_deref().unwrap_or(Path::new("/"))
    }
}

/// Finds every HotSpot JVM this user can see (see the module docs for how), in pid order.
///
/// # Errors
/// [`Error::Io`] only when the process list itself cannot be had (`/proc` cannot be listed; a
/// toolhelp snapshot fails); a process that cannot be read is counted in
/// [`Scan::not_inspected`], never an error.
pub fn scan(opts: &ScanOptions) -> Result<Scan, Error> {
    os::scan(opts)
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

/// What the first pass of a scan said of one process (`C`: the OS's JVM candidate).
enum Examined<C> {
    Jvm(C),
    NotAJvm,
    Vanished,
    NotInspected(NotInspected),
}

/// The scan from its two passes, the same on every OS: the first pass's verdicts, and `inspect`
/// run on the JVM candidates (`None`: exited or reused meanwhile). Counts what vanished, keeps
/// what could not be looked into, and sorts the JVMs by pid.
fn assemble<C>(
    examined: Vec<Examined<C>>,
    inspect: impl FnOnce(&[C]) -> Vec<Option<JvmInfo>>,
) -> Scan {
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
    for outcome in inspect(&candidates) {
        match outcome {
            Some(info) => result.jvms.push(info),
            None => result.vanished += 1,
        }
    }
    result.jvms.sort_by_key(|j| j.pid);
    result
}

/// How a scan or a scrape reads a JVM's memory: never stopping it, never waiting for a starting
/// JVM, and with the symbol cache read-only (or off, `--no-cache`).
pub(crate) fn no_stop_options(no_symbol_cache: bool) -> LiveOptions {
    LiveOptions {
        stop: false,
        wait_accessible: Duration::ZERO,
        symbol_cache: if no_symbol_cache {
            SymbolCacheUse::Off
        } else {
            SymbolCacheUse::ReadOnly
        },
        ..LiveOptions::default()
    }
}

/// One look at a JVM, the same on every OS: its shared PerfData (no waiting: a JVM still
/// starting is listed as such) and, when its memory may be read, its memory read without a stop.
struct Look {
    file: Result<Reading, Error>,
    /// `None` when the process's memory is known to be unreadable (so ptrace or
    /// `PROCESS_VM_READ` would be refused too).
    forced: Option<Result<Reading, Error>>,
}

impl Look {
    fn take(pid: Pid, memory_readable: bool, opts: &ScanOptions) -> Look {
        Look {
            file: crate::pipeline::read_hsperfdata(pid, Duration::ZERO),
            forced: memory_readable
                .then(|| crate::pipeline::read_live(pid, &no_stop_options(opts.no_symbol_cache))),
        }
    }

    /// Whether a read failed because the process is gone or is another process now.
    fn saw_it_vanish(&self) -> bool {
        self.file.as_ref().err().is_some_and(vanished)
            || self
                .forced
                .as_ref()
                .is_some_and(|f| f.as_ref().err().is_some_and(vanished))
    }

    fn readable(&self) -> Readable {
        match (
            self.file.is_ok(),
            self.forced.as_ref().is_some_and(|f| f.is_ok()),
        ) {
            (true, true) => Readable::Both,
            (true, false) => Readable::File,
            (false, true) => Readable::Live,
            (false, false) => Readable::Neither,
        }
    }

    /// What the PerfData read says of the JVM (the file's first), and where it came from.
    fn described(&self) -> Option<(Described, InfoSource)> {
        match (&self.file, &self.forced) {
            (Ok(r), _) => Some((from_perfdata(&r.snapshot), InfoSource::File)),
            (_, Some(Ok(r))) => Some((from_perfdata(&r.snapshot), InfoSource::Memory)),
            _ => None,
        }
    }

    /// The reading to keep (`ScanOptions::keep_readings`): the file's, else the memory's.
    fn into_reading(self) -> Option<Reading> {
        self.file.ok().or_else(|| self.forced.and_then(Result::ok))
    }
}

/// Whether an error means the process is gone or is another process now.
fn vanished(e: &Error) -> bool {
    matches!(
        e,
        Error::NoSuchProcess(_) | Error::ProcessExited(_) | Error::PidReused(_)
    )
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

#[cfg(test)]
mod tests {
    use super::*;

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
            Readable::Live,
            Readable::Both,
            Readable::Neither,
        ] {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
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
