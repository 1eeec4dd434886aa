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

/// Runs the `inspect` binary with an empty symbol cache of its own, so every run exercises the
/// real symbol lookup (the cache has its own tests).
pub fn inspect(args: &[&str]) -> Output {
    let cache = tempfile::tempdir().unwrap();
    inspect_with_cache(args, cache.path())
}

/// Runs the `inspect` binary with the symbol cache in `cache_dir`.
pub fn inspect_with_cache(args: &[&str], cache_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_inspect"))
        .args(args)
        .env("HSINSPECT_CACHE_DIR", cache_dir)
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
