//! `inspect list` against real JVMs of every kind a host has: root's and another user's, one in
//! its own pid + mount namespace, one with `-XX:+PerfDisableSharedMem`, one with
//! `-XX:-UsePerfData`, one embedded in a C launcher through `JNI_CreateJavaVM`, a process named
//! `java` that is no JVM, and a JVM that exits during the scan. The references are `jps -l` (pid
//! and main class, where jps can see the JVM), `jcmd VM.system_properties` (the version), `ps`
//! (uptime) and `/proc/<pid>/status` (NSpid, uid).
//!
//! Needs: JDK 17 (system), a C compiler (`cc`, for the JNI launcher), util-linux (unshare,
//! setpriv), root, and the test users of `scripts/setup-test-deps.sh`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::Value;

/// `inspect list` with `args` (as root, or as `user`), its JSON parsed; panics on a failure.
fn list_json_as(user: Option<&str>, args: &[&str]) -> (Vec<Value>, String) {
    let mut all = vec!["list", "--format", "json"];
    all.extend_from_slice(args);
    let out = match user {
        Some(u) => inspect_as(u, &all),
        None => inspect(&all),
    };
    let (stdout, stderr) = checked(&out, &all);
    let parsed: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("inspect list printed no JSON ({e}): {stdout}"));
    let Value::Array(jvms) = parsed else {
        panic!("inspect list --format json printed no array: {stdout}")
    };
    (jvms, stderr)
}

fn list_json(args: &[&str]) -> Vec<Value> {
    list_json_as(None, args).0
}

/// stdout and stderr of a successful run; panics with them otherwise.
fn checked(out: &Output, args: &[&str]) -> (String, String) {
    let stdout = String::from_utf8(out.stdout.clone()).expect("inspect prints UTF-8");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && !stderr.contains("panicked"),
        "inspect {args:?} failed ({}): {stderr}",
        out.status
    );
    (stdout, stderr)
}

/// The entry for `pid`, asserting there is exactly one.
fn entry(jvms: &[Value], pid: i32) -> &Value {
    let found: Vec<&Value> = jvms.iter().filter(|j| j["pid"] == pid).collect();
    assert_eq!(
        found.len(),
        1,
        "pid {pid} listed {} times: {jvms:#?}",
        found.len()
    );
    found[0]
}

fn listed(jvms: &[Value], pid: i32) -> bool {
    jvms.iter().any(|j| j["pid"] == pid)
}

/// `jps -l` of JDK 17: pid → main (empty for a JVM that names none).
fn jps_l() -> Vec<(i32, String)> {
    let out = run_ok(Command::new(jdk17().join("bin/jps")).arg("-l"));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (pid, main) = l.split_once(' ').unwrap_or((l, ""));
            Some((pid.parse().ok()?, main.to_string()))
        })
        .collect()
}

/// `java.vm.version` as the JVM itself reports it (`jcmd <pid> VM.system_properties`).
fn vm_version_by_jcmd(pid: i32) -> String {
    let out = run_ok(
        Command::new(jdk17().join("bin/jcmd"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .args([&pid.to_string(), "VM.system_properties"]),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("java.vm.version="))
        .expect("jcmd VM.system_properties has java.vm.version")
        .to_string()
}

/// Waits until `pid` is older than the 2 s during which a JVM without a region may still be
/// starting (after that, no region means -XX:-UsePerfData).
fn wait_past_startup(pid: i32) {
    while ps_etimes(pid) < 3.0 {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Seconds since `pid` started, as `ps` says.
fn ps_etimes(pid: i32) -> f64 {
    let out = run_ok(Command::new("ps").args(["-o", "etimes=", "-p", &pid.to_string()]));
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// The C launcher of tests/native/jni_launcher.c, compiled once against JDK 17's libjvm.
fn jni_launcher() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let home = jdk17();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("native");
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("jni_launcher");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/native/jni_launcher.c");
        let status = Command::new("cc")
            .arg("-O")
            .arg(format!("-I{}", home.join("include").display()))
            .arg(format!("-I{}", home.join("include/linux").display()))
            .arg(&src)
            .arg(format!("-L{}", home.join("lib/server").display()))
            .arg("-ljvm")
            .arg(format!("-Wl,-rpath,{}", home.join("lib/server").display()))
            .arg("-o")
            .arg(&exe)
            .status()
            .unwrap_or_else(|e| {
                panic!("running cc ({e}): install a C compiler with scripts/setup-test-deps.sh (apt-get install gcc libc6-dev)")
            });
        assert!(status.success(), "cc failed on {}", src.display());
        exe
    })
}

/// A JVM started by the C launcher through `JNI_CreateJavaVM`, from a copy of it named `name`
/// in `dir`.
fn start_jni_launcher(dir: &Path, name: &str) -> Jvm {
    let exe = dir.join(name);
    std::fs::copy(jni_launcher(), &exe).expect("copying the launcher");
    let mut cmd = Command::new(&exe);
    cmd.arg(test_classes())
        .args(["-Xmx32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, &jdk17())
}

/// A process named `java` that is no JVM: a copy of `sleep` called `java`.
struct FakeJava {
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

impl FakeJava {
    fn start() -> FakeJava {
        let dir = scratch_dir("fake-java");
        let exe = dir.path().join("java");
        std::fs::copy("/bin/sleep", &exe).expect("copying /bin/sleep");
        let child = Command::new(&exe).arg("600").spawn().unwrap();
        let comm = format!("/proc/{}/comm", child.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::fs::read_to_string(&comm).unwrap_or_default().trim() != "java" {
            assert!(Instant::now() < deadline, "the fake java did not start");
            std::thread::sleep(Duration::from_millis(5));
        }
        FakeJava { child, _dir: dir }
    }
}

impl Drop for FakeJava {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "requires root, JDK 17, C compiler, test users (scripts/test.sh)"]
fn every_kind_of_jvm_is_listed_and_agrees_with_jps() {
    let plain = Jvm::start(&[]);
    let other = start_as_user("hsinspect-jvm", &[]);
    let contained = start_in_own_namespaces(&[]);
    let no_file = Jvm::start(&["-XX:+PerfDisableSharedMem"]);
    let no_perf = Jvm::start(&["-XX:-UsePerfData"]);
    // Its name has a newline and a space: escaped in text, exact in JSON.
    let launcher_dir = scratch_dir("launcher");
    let embedded = start_jni_launcher(launcher_dir.path(), "jni\nlaunch er");
    let fake = FakeJava::start();
    let fake_pid = fake.child.id() as i32;

    wait_past_startup(no_perf.pid);
    let jps = jps_l();
    let jvms = list_json(&[]);
    let version = vm_version_by_jcmd(plain.pid);

    // The process named java that is no JVM is not listed.
    assert!(
        !listed(&jvms, fake_pid),
        "a copy of sleep named java was listed"
    );
    // Secrets stay out of JSON unless -m/-v asked.
    for j in &jvms {
        assert!(
            j.get("main_args").is_none() && j.get("jvm_flags").is_none(),
            "{j}"
        );
    }

    let ours = [&plain, &other, &contained, &no_file, &no_perf, &embedded];
    for jvm in ours {
        let e = entry(&jvms, jvm.pid);
        for field in [
            "pid",
            "container_pid",
            "user",
            "main",
            "jvm_version",
            "uptime_s",
            "readable",
        ] {
            assert!(e.get(field).is_some(), "no {field} in {e}");
        }
        // The JVM's own version, also where it came from the command line and release file.
        assert_eq!(e["jvm_version"], version.as_str(), "{e}");
        let age = ps_etimes(jvm.pid);
        let uptime = e["uptime_s"].as_f64().unwrap();
        assert!(
            (uptime - age).abs() <= 2.0,
            "uptime {uptime} s, ps says {age} s: {e}"
        );
        let uid = status_field(jvm.pid, "Uid");
        assert_eq!(
            e["uid"].to_string(),
            uid.split_whitespace().nth(1).unwrap(),
            "{e}"
        );
        // The pid inside the JVM's own namespace, only when it differs.
        let nspid = status_field(jvm.pid, "NSpid");
        let inner: i32 = nspid.split_whitespace().last().unwrap().parse().unwrap();
        if inner == jvm.pid {
            assert_eq!(e["container_pid"], Value::Null, "{e}");
        } else {
            assert_eq!(e["container_pid"], inner, "{e}");
        }
        // Where jps sees the JVM, pid and main agree with `jps -l`.
        if let Some((_, main)) = jps.iter().find(|(p, _)| *p == jvm.pid) {
            assert_eq!(e["main"], main.as_str(), "jps -l says {main:?}: {e}");
        }
    }
    // jps sees those with a file in this /tmp (not the one in its own /tmp, nor without a file).
    for jvm in [&plain, &other, &embedded] {
        assert!(
            jps.iter().any(|(p, _)| *p == jvm.pid),
            "jps -l did not list {}: {jps:?}",
            jvm.pid
        );
    }

    let e = entry(&jvms, plain.pid);
    assert_eq!(
        (e["readable"].as_str(), e["main"].as_str()),
        (Some("both"), Some("Target")),
        "{e}"
    );
    assert_eq!(e["user"], "root");

    let e = entry(&jvms, other.pid);
    assert_eq!(e["user"], "hsinspect-jvm");
    assert_eq!(
        e["readable"], "both",
        "root reads another user's JVM both ways: {e}"
    );

    let e = entry(&jvms, contained.pid);
    assert_ne!(e["container_pid"], Value::Null, "{e}");
    assert_eq!(
        (e["readable"].as_str(), e["main"].as_str()),
        (Some("both"), Some("Target")),
        "{e}"
    );

    let e = entry(&jvms, no_file.pid);
    assert_eq!(e["readable"], "-F", "no file, memory readable: {e}");
    assert_eq!(e["main"], "Target", "{e}");
    assert_eq!(e["info_from"], "memory", "{e}");

    let e = entry(&jvms, no_perf.pid);
    assert_eq!(e["readable"], "neither", "{e}");
    assert!(
        e["reason"].as_str().unwrap().contains("-XX:-UsePerfData"),
        "{e}"
    );
    assert_eq!(e["main"], "Target", "main from the command line: {e}");
    assert_eq!(e["info_from"], "cmdline", "{e}");

    let e = entry(&jvms, embedded.pid);
    assert_eq!(e["readable"], "both", "{e}");
    assert_eq!(
        e["main"], "",
        "a JNI launcher sets no sun.java.command: {e}"
    );
    assert_eq!(e["comm"], "jni\nlaunch er", "{e}");

    // Text: one line per JVM, starting with its pid; the reason on the line of the one that cannot
    // be read; the short main; the launcher's name where there is no main.
    let (text, _) = checked(&inspect(&["list"]), &["list"]);
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("PID "), "{text}");
    let line_of = |pid: i32| -> String {
        let found: Vec<&str> = text
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(&pid.to_string()))
            .collect();
        assert_eq!(found.len(), 1, "pid {pid} in text: {text}");
        found[0].to_string()
    };
    assert!(
        line_of(no_perf.pid).contains("neither")
            && line_of(no_perf.pid).contains("-XX:-UsePerfData")
    );
    assert!(line_of(plain.pid).contains(" both ") && line_of(plain.pid).ends_with("Target"));
    assert!(
        line_of(embedded.pid).ends_with("[jni\\nlaunch er]"),
        "{text}"
    );
    let inner = entry(&jvms, contained.pid)["container_pid"].to_string();
    assert_eq!(
        line_of(contained.pid).split_whitespace().nth(1),
        Some(inner.as_str())
    );
    // `inspect` with no target is `inspect list`.
    let (bare, _) = checked(&inspect(&[]), &[]);
    assert!(
        bare.lines()
            .any(|l| l.starts_with(&format!("{} ", plain.pid))),
        "{bare}"
    );

    for jvm in ours {
        assert_left_alone(jvm.pid, false);
    }
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn main_args_and_flags_only_on_request_never_in_json_escaped_in_text() {
    let odd = "a b\nc\t\u{1b}[31m\\";
    let mut cmd = Command::new(jdk17().join("bin/java"));
    cmd.args(target_args(&["-Dhsinspect.secret=s3cret"], 0))
        .arg(odd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let jvm = Jvm::spawn(cmd, &jdk17());

    let e = entry(&list_json(&[]), jvm.pid).clone();
    assert!(
        e.get("main_args").is_none() && e.get("jvm_flags").is_none(),
        "{e}"
    );
    assert!(!e.to_string().contains("s3cret"), "{e}");

    // Asked for in a machine format: refused, with why, and nothing on stdout.
    for flag in ["-m", "-v"] {
        let out = inspect(&["list", "--format", "json", flag]);
        assert!(!out.status.success(), "{flag}: {out:?}");
        assert!(out.stdout.is_empty(), "{flag}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("secrets") && err.contains("text"), "{err}");
    }

    let (text, _) = checked(&inspect(&["list", "-m", "-v", "-l"]), &["list"]);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\t'),
        "raw control characters: {text:?}"
    );
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{} ", jvm.pid)))
        .unwrap_or_else(|| panic!("pid {} not in {text}", jvm.pid));
    assert!(line.contains("Target 0 a b\\nc\\t\\x1b[31m\\\\ "), "{line}");
    assert!(line.contains("-Dhsinspect.secret=s3cret"), "{line}");
}

#[test]
#[ignore = "requires root, JDK 17, test users (scripts/test.sh)"]
fn unprivileged_user_lists_what_it_can_see_and_recognizes_the_rest() {
    require_user("hsinspect-jvm");
    let root_jvm = Jvm::start(&[]);
    let root_hidden = Jvm::start(&["-XX:+PerfDisableSharedMem"]);
    let own = start_as_user("hsinspect-jvm", &[]);
    let (jvms, stderr) = list_json_as(Some("hsinspect-jvm"), &[]);

    // Its own JVM: the file, and the memory when ptrace between its processes is allowed.
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").unwrap_or("0".into());
    let e = entry(&jvms, own.pid);
    let expected = if scope.trim() == "0" { "both" } else { "file" };
    assert_eq!(e["readable"], expected, "ptrace_scope {scope}: {e}");
    assert_eq!(e["main"], "Target", "{e}");
    assert_eq!(e["user"], "hsinspect-jvm");

    // Root's JVM with a file in /tmp: listed (the directory is world-listable) but not readable,
    // with the cause and the fix.
    let e = entry(&jvms, root_jvm.pid);
    assert_eq!(e["readable"], "neither", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.contains("another user") && reason.contains("root"),
        "{e}"
    );
    assert_eq!(e["main"], "Target", "main from /proc/<pid>/cmdline: {e}");

    // Root's JVM without a file: its maps are closed to this user, but its command line (open
    // to everyone) is a java launcher's: listed, not readable, with the cause and the fix.
    let e = entry(&jvms, root_hidden.pid);
    assert_eq!(e["readable"], "neither", "{e}");
    assert_eq!(e["main"], "Target", "main from /proc/<pid>/cmdline: {e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.contains("another user") && reason.contains("root"),
        "{e}"
    );
    // Root's processes that are not JVMs (their command lines say so) are not warned about.
    assert!(
        !stderr.contains("another user's process"),
        "processes that cannot be JVMs counted: {stderr}"
    );
}

#[test]
#[ignore = "requires root, Debian's JDK 17, test users (scripts/test.sh)"]
fn another_users_jvm_started_by_a_link_or_a_bare_name_has_its_version() {
    require_user("hsinspect-other");
    // Debian's alternatives: /usr/bin/java -> /etc/alternatives/java -> the JDK's bin/java.
    let link = Path::new("/usr/bin/java");
    let target = std::fs::canonicalize(link).unwrap_or_else(|e| {
        panic!(
            "no /usr/bin/java ({e}): install openjdk-17-jdk-headless (scripts/setup-test-deps.sh)"
        )
    });
    assert!(
        std::fs::symlink_metadata(link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "/usr/bin/java is not a link here"
    );
    let home = target.parent().unwrap().parent().unwrap().to_path_buf();
    let spawn = |exe: &str| {
        let mut cmd = Command::new(exe);
        cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .args(target_args(&[], 0))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        Jvm::spawn(cmd, &home)
    };
    let by_link = spawn("/usr/bin/java");
    let bare = spawn("java");
    for jvm in [&by_link, &bare] {
        let argv0 = std::fs::read(format!("/proc/{}/cmdline", jvm.pid)).unwrap();
        assert!(argv0.starts_with(b"/usr/bin/java\0") || argv0.starts_with(b"java\0"));
    }
    // Root's JVMs, listed by another user: from their command lines only (maps, environ and
    // root are closed to it); the version from the release file of the JDK the links lead to.
    let (jvms, _) = list_json_as(Some("hsinspect-other"), &[]);
    for jvm in [&by_link, &bare] {
        let e = entry(&jvms, jvm.pid);
        assert_eq!(e["readable"], "neither", "{e}");
        assert_eq!(
            e["jvm_version"],
            vm_version_by_jcmd(jvm.pid).as_str(),
            "{e}"
        );
    }
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jvm_exiting_during_the_scan_is_listed_whole_or_not_at_all() {
    let staying = Jvm::start(&[]);
    let leaving = Jvm::start(&[]);
    let pid = leaving.pid;
    let lister = std::thread::spawn(move || {
        let mut runs = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
            runs.push(inspect(&["list", "--format", "json"]));
        }
        runs.push(inspect(&["list", "--format", "json"]));
        runs
    });
    std::thread::sleep(Duration::from_millis(200));
    drop(leaving);
    let runs = lister.join().unwrap();
    assert!(runs.len() >= 2);
    for out in &runs {
        let (stdout, _) = checked(out, &["list"]);
        let jvms: Vec<Value> = serde_json::from_str(&stdout).unwrap();
        let e = entry(&jvms, staying.pid);
        assert_eq!(e["readable"], "both", "{e}");
        // The leaving JVM: absent, or a whole record.
        if let Some(e) = jvms.iter().find(|j| j["pid"] == pid) {
            assert!(e["uptime_s"].is_f64() && e["readable"].is_string(), "{e}");
        }
    }
    let (last, _) = checked(runs.last().unwrap(), &["list"]);
    let jvms: Vec<Value> = serde_json::from_str(&last).unwrap();
    assert!(!listed(&jvms, pid), "a JVM that exited is still listed");
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn a_zombie_jvm_is_not_listed() {
    // Killed but not yet reaped by its parent (this test): a zombie, with no mappings left.
    let mut jvm = Jvm::start(&[]);
    send_signal(jvm.pid, libc::SIGKILL);
    wait_for_state(jvm.pid, 'Z');
    let jvms = list_json(&[]);
    assert!(
        !listed(&jvms, jvm.pid),
        "zombie {} listed: {jvms:?}",
        jvm.pid
    );
    assert_eq!(process_state(jvm.pid), Some('Z'));
    let _ = jvm.child.wait();
}
