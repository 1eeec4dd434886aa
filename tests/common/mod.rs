//! Shared helpers for the integration tests: real JVMs, jcmd as the reference, the `inspect`
//! binary, and checks on the target's state.
#![allow(dead_code)]

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

/// The compiled test classes (tests/java/*.java, built once per test binary with `--release 11`
/// so every JDK from 11 up can run them).
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
            .collect();
        let status = Command::new(jdk17().join("bin/javac"))
            .args(["--release", "11", "-d"])
            .arg(&out)
            .args(&sources)
            .status()
            .expect("running javac");
        assert!(status.success(), "javac failed on {}", src.display());
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

    /// Spawns a prepared command running the test program, and waits for READY.
    pub fn spawn(mut cmd: Command, java_home: &Path) -> Jvm {
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "READY", "test JVM did not start: {cmd:?}");
        let pid = child.id() as i32;
        Jvm {
            child,
            pid,
            java_home: java_home.to_owned(),
        }
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        // A stopped JVM must be continued for SIGKILL to be reaped promptly.
        let _ = Command::new("kill")
            .args(["-CONT", &self.pid.to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the `inspect` binary.
pub fn inspect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_inspect"))
        .args(args)
        .output()
        .expect("running inspect")
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

/// `jcmd <pid> PerfCounter.print` of the given JDK, parsed.
pub fn jcmd_counters(java_home: &Path, pid: i32) -> BTreeMap<String, String> {
    let out = Command::new(java_home.join("bin/jcmd"))
        .args([&pid.to_string(), "PerfCounter.print"])
        .output()
        .expect("running jcmd");
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

// ---- Helpers for the hostile-file and fault tests (tests/hostile_files.rs, tests/faults.rs). ----

/// Starts the `inspect` binary with `args`, its output piped.
pub fn spawn_inspect(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_inspect"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting inspect")
}

/// Waits up to `limit` for `child` and collects its output; kills it and panics if it is still
/// running then (a hang is a failure).
pub fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> Output {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait().expect("waiting for a child") {
            Some(_) => return child.wait_with_output().expect("collecting output"),
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let out = child.wait_with_output();
                panic!(
                    "{what} still running after {limit:?} (hang); killed. stderr: {}",
                    out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                        .unwrap_or_default()
                );
            }
            None => std::thread::sleep(Duration::from_millis(2)),
        }
    }
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

/// The uid and gid of the local user `name`, created (as a system user without a home) when
/// absent. Needs root, as CI has; the panic says so otherwise.
pub fn ensure_user(name: &str) -> (u32, u32) {
    let lookup = || nix::unistd::User::from_name(name).ok().flatten();
    if lookup().is_none() {
        assert!(
            nix::unistd::geteuid().is_root(),
            "the test needs a user {name}: run the tests as root (as CI does), or create it with \
             `useradd --system --no-create-home {name}`"
        );
        let out = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                name,
            ])
            .output()
            .expect("running useradd (package passwd)");
        // Exit 9: created meanwhile by a test running in parallel.
        assert!(
            out.status.success() || out.status.code() == Some(9),
            "useradd {name} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let user = lookup().unwrap_or_else(|| panic!("user {name} missing after useradd"));
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
