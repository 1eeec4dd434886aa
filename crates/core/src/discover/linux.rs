//! The Linux side of [`super::scan`]: one pass over `/proc` (see the module docs).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use procfs::ProcError;
use procfs::process::{Process, StatFlags};

use super::{
    Described, Examined, InfoSource, JvmInfo, Look, NotInspected, Readable, Scan, ScanOptions,
    assemble, launcher, parallel_map,
};
use crate::error::Error;
use crate::pid::Pid;
use crate::pipeline::Reading;
use crate::process::os::{self as process, ProcessInfo};

pub(super) fn scan(opts: &ScanOptions) -> Result<Scan, Error> {
    let me = std::process::id() as Pid;
    // Pids first, each process opened only while it is looked at: holding a descriptor per
    // process would run out of them on a host with thousands.
    let pids: Vec<Pid> = std::fs::read_dir("/proc")
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
    let clock = Clock::now();
    let users = Users::default();
    Ok(assemble(examined, |candidates| {
        // Container identities are remembered per process: forget those of processes gone.
        crate::container::forget_others(|pid, start| {
            candidates
                .iter()
                .any(|c| c.pid == pid && c.start_time == start)
        });
        inspect_all(candidates, opts, &clock, &users)
    }))
}

/// A process found to be a JVM by the first pass.
#[derive(Debug)]
struct Candidate {
    pid: Pid,
    start_time: u64,
    comm: String,
    /// libjvm's path from `maps`; `None` when `maps` was unreadable (known by its file).
    libjvm: Option<PathBuf>,
}

/// Whether `process` is a JVM. `maps` is read first: for most processes it is all that is read
/// (a kernel thread's and a zombie's are empty); `stat` only for a JVM or an unreadable `maps`.
fn examine(process: &Process, host_files: &OnceLock<HostHsperfFiles>) -> Examined<Candidate> {
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

    fn has(&self, pid: Pid, uid: u32) -> bool {
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

/// Everything about one JVM; `None` when it exited or its pid was reused meanwhile.
fn inspect_one(c: &Candidate, opts: &ScanOptions, clock: &Clock, users: &Users) -> Option<JvmInfo> {
    let info = ProcessInfo::read(c.pid).ok()?;
    if info.start_time != c.start_time {
        return None;
    }
    // Memory only when the mappings were readable: otherwise ptrace is refused too.
    let look = Look::take(c.pid, c.libjvm.is_some(), opts);
    if look.saw_it_vanish() && process::check_same_process(&info).is_err() {
        return None;
    }
    let readable = look.readable();
    let user = users.name(info.euid);
    let reason = (readable == Readable::Neither).then(|| {
        why_neither(
            &info,
            &user,
            c,
            look.file.as_ref().err(),
            look.forced.as_ref(),
        )
    });
    let (described, info_from) =
        look.described()
            .unwrap_or_else(|| match from_cmdline(c, info.nspid == c.pid) {
                Some(d) => (d, InfoSource::Cmdline),
                None => (Described::default(), InfoSource::None),
            });
    // A pid reused during the look: what was read may be another process's.
    process::check_same_process(&info).ok()?;
    let reading = if opts.keep_readings {
        look.into_reading()
    } else {
        None
    };
    Some(JvmInfo {
        pid: c.pid,
        container_pid: (info.nspid != c.pid).then_some(info.nspid),
        uid: Some(info.euid),
        user,
        comm: c.comm.clone(),
        main: described.main,
        jvm_version: described.version,
        uptime_s: clock.age_s(c.start_time),
        start_ticks: c.start_time,
        readable,
        reason,
        container: crate::container::identify_cached(c.pid, c.start_time, opts.host_root()),
        info_from,
        main_args: opts.main_args.then_some(described.main_args).flatten(),
        jvm_flags: opts.jvm_flags.then_some(described.jvm_flags).flatten(),
        reading,
    })
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
    let root = PathBuf::from(format!("/proc/{}/root", c.pid));
    // The launcher as it was run may be a link (`/usr/bin/java`, Debian's alternatives) or a bare
    // name: the JDK is where the links end.
    let launcher = argv
        .first()
        .and_then(|exe| resolve_launcher(c.pid, &root, host_ns, exe));
    let launcher_home = || {
        launcher
            .as_deref()
            .and_then(launcher::java_home_of_launcher)
            .map(Path::to_path_buf)
    };
    let version = c
        .libjvm
        .as_deref()
        .and_then(launcher::java_home_of)
        .map(Path::to_path_buf)
        .or_else(launcher_home)
        .and_then(|home| {
            let rel = home.strip_prefix("/").unwrap_or(&home);
            std::fs::read_to_string(root.join(rel).join("release"))
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

/// The launcher `exe` (`argv[0]` of process `pid`) with every symbolic link on its way resolved,
/// as far as they can be read: in the process's own root (`/proc/<pid>/root`), else, for a
/// process in this pid namespace (`host_ns`; another user's root is closed), in ours. A bare
/// name (`java`) is looked up in the process's `PATH` (`/proc/<pid>/environ`, readable for its
/// own user and root), else, in this pid namespace, in inspect's own `PATH`. `None` when nothing
/// is found.
fn resolve_launcher(pid: Pid, root: &Path, host_ns: bool, exe: &str) -> Option<PathBuf> {
    let roots: Vec<&Path> = if host_ns {
        vec![root, Path::new("/")]
    } else {
        vec![root]
    };
    let candidates: Vec<PathBuf> = if exe.contains('/') {
        vec![PathBuf::from(exe)]
    } else {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).ok();
        let path = environ
            .as_deref()
            .and_then(|e| {
                e.split(|b| *b == 0)
                    .find_map(|v| v.strip_prefix(b"PATH="))
                    .map(|p| String::from_utf8_lossy(p).into_owned())
            })
            .or_else(|| host_ns.then(|| std::env::var("PATH").ok()).flatten())?;
        path.split(':')
            .filter(|d| d.starts_with('/'))
            .map(|d| Path::new(d).join(exe))
            .collect()
    };
    roots.iter().find_map(|root| {
        candidates.iter().find_map(|c| {
            let resolved = resolve_in_root(root, c, &|p| std::fs::read_link(p).ok())?;
            root.join(resolved.strip_prefix("/").unwrap_or(&resolved))
                .is_file()
                .then_some(resolved)
        })
    })
}

/// `path` (absolute, as the process sees it) with every symbolic link resolved inside `root`:
/// each component is looked at under `root` with `read_link`, an absolute target starts again
/// from `root` (so a container's links stay in the container), a relative one from the link's
/// directory; `..` never climbs above `/`. The result is absolute as the process sees it.
/// `None` after 40 links (a loop), as the kernel's `ELOOP`.
fn resolve_in_root(
    root: &Path,
    path: &Path,
    read_link: &dyn Fn(&Path) -> Option<PathBuf>,
) -> Option<PathBuf> {
    use std::path::Component;
    let mut todo: Vec<std::ffi::OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut done = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = todo.pop() {
        if part == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&part);
        let under_root = root.join(next.strip_prefix("/").unwrap_or(&next));
        match read_link(&under_root) {
            Some(target) => {
                links += 1;
                if links > 40 {
                    return None;
                }
                if target.is_absolute() {
                    done = PathBuf::from("/");
                }
                todo.extend(target.components().rev().filter_map(|c| match c {
                    Component::Normal(n) => Some(n.to_owned()),
                    Component::ParentDir => Some("..".into()),
                    _ => None,
                }));
            }
            None => done = next,
        }
    }
    Some(done)
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
        // A file HotSpot has created but not sized: UsePerfData is on (whatever an early read of
        // the memory said), the JVM is starting.
        (Some(Error::HsperfdataFileNotSized { .. }), _) => {
            "the JVM is still starting (its hsperfdata file is not sized yet): list again".into()
        }
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

    fn info(euid: u32, nspid: Pid) -> ProcessInfo {
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

    /// A JVM neither path could read: who it is, what each path said, what the reason must say.
    struct Case {
        euid: u32,
        nspid: Pid,
        maps_readable: bool,
        file: Error,
        forced: Option<Error>,
        wanted: &'static [&'static str],
    }

    #[test]
    fn launcher_links_resolve_inside_the_processs_root() {
        // A fake file system: links by path under the root.
        let links = |root: &'static str| {
            move |p: &Path| -> Option<PathBuf> {
                let rel = p.strip_prefix(root).ok()?;
                let to = match rel.to_str()? {
                    "usr/bin/java" => "/etc/alternatives/java",
                    "etc/alternatives/java" => "/usr/lib/jvm/java-17-openjdk-amd64/bin/java",
                    "usr/lib/jvm/default-java" => "java-17-openjdk-amd64",
                    "opt/loop" => "/opt/loop",
                    "opt/up" => "../../usr/bin/java",
                    _ => return None,
                };
                Some(PathBuf::from(to))
            }
        };
        let r = |root: &'static str, path: &str| {
            resolve_in_root(Path::new(root), Path::new(path), &links(root))
        };
        let jdk = Some(PathBuf::from("/usr/lib/jvm/java-17-openjdk-amd64/bin/java"));
        // Debian's alternatives, in our root and in a container's: absolute targets stay inside.
        assert_eq!(r("/", "/usr/bin/java"), jdk);
        assert_eq!(r("/proc/42/root", "/usr/bin/java"), jdk);
        // A link in a directory on the way, relative.
        assert_eq!(r("/", "/usr/lib/jvm/default-java/bin/java"), jdk);
        // `..` in a relative target never climbs above the root.
        assert_eq!(r("/", "/opt/up"), jdk);
        assert_eq!(
            r("/", "/../../usr/./lib/jvm/x/bin/java"),
            Some(PathBuf::from("/usr/lib/jvm/x/bin/java"))
        );
        // No link: the path itself. A loop: nothing.
        assert_eq!(
            r("/", "/opt/jdk/bin/java"),
            Some(PathBuf::from("/opt/jdk/bin/java"))
        );
        assert_eq!(r("/", "/opt/loop"), None);
    }

    #[test]
    fn every_neither_has_a_cause_and_a_fix() {
        let no_file = || Error::NoHsperfdataFile {
            pid: 4242,
            tried: vec![],
            why: String::new(),
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
            // A file created and not sized: starting, whatever an early read of memory said.
            case(
                me,
                true,
                Error::HsperfdataFileNotSized {
                    pid: 4242,
                    path: "/tmp/hsperfdata_u/4242".into(),
                    size: 0,
                    waited_ms: 0,
                },
                Some(Error::PerfDataDisabled(4242)),
                &["still starting"],
            ),
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
}
