//! What real servers showed (issue 23), on real JVMs: another user's JVM behind a 0750
//! hsperfdata directory (Tomcat's umask 0027), a pid that is not a JVM, a thread id, a stopped
//! JVM, and a root listing that warns only about processes that could be JVMs.

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::Value;

/// The service user of these tests (made by scripts/setup-test-deps.sh): its JVM runs with
/// umask 0027, as `catalina.sh` runs Tomcat.
const SERVICE_USER: &str = "hsinspect-svc";

/// Starts the test JVM as `user` with umask 0027, after removing that user's hsperfdata
/// directory so that HotSpot makes it anew (0750).
fn start_as_service_user(user: &str) -> Jvm {
    require_user(user);
    let _ = std::fs::remove_dir_all(format!("/tmp/hsperfdata_{user}"));
    start_as_user_with_umask(user, &[], Some(0o027))
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
#[ignore = "requires root, test users, JDK 17 (scripts/test.sh)"]
fn another_users_jvm_behind_a_0750_directory_is_listed_with_the_fix() {
    require_user("hsinspect-other");
    let jvm = start_as_service_user(SERVICE_USER);
    let dir = format!("/tmp/hsperfdata_{SERVICE_USER}");
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750, "HotSpot under umask 0027 makes {dir} 0750");

    // Listed by another unprivileged user: not readable, with who it belongs to and the fix.
    let out = inspect_as("hsinspect-other", &["list", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let jvms: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let e = jvms
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["pid"] == jvm.pid)
        .unwrap_or_else(|| panic!("JVM {} of {SERVICE_USER} not listed: {jvms}", jvm.pid));
    assert_eq!(e["readable"], "neither", "{e}");
    assert_eq!(e["user"], SERVICE_USER, "{e}");
    assert_eq!(e["main"], "Target", "main from /proc/<pid>/cmdline: {e}");
    let reason = e["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("another user") && reason.contains(SERVICE_USER),
        "{e}"
    );
    // Its version from the release file of the JDK its launcher belongs to, as root sees it.
    let root_view = list_entry_as_root(jvm.pid);
    assert_eq!(
        e["jvm_version"], root_view["jvm_version"],
        "{e} / {root_view}"
    );

    // -F refused: the owner by uid and name, and no fallback that fails too.
    let out = inspect_as("hsinspect-other", &["-F", &jvm.pid.to_string()]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let uid = user_ids(SERVICE_USER).0;
    assert!(
        err.contains(&format!("uid {uid} ({SERVICE_USER})")),
        "{err}"
    );
    assert!(
        !err.contains("Without it"),
        "suggests a read that fails too: {err}"
    );
    // The file path fails for this user too.
    let out = inspect_as("hsinspect-other", &[&jvm.pid.to_string()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));

    // Its owner may read the file: where -F is refused to the owner too (yama's ptrace_scope,
    // a container without CAP_SYS_PTRACE), the fallback is offered, since it works for them.
    require_user("hsinspect-jvm");
    let own = start_as_user("hsinspect-jvm", &[]);
    let out = inspect_as("hsinspect-jvm", &["-F", &own.pid.to_string()]);
    if !out.status.success() {
        assert!(
            stderr_of(&out).contains("Without it"),
            "{}",
            stderr_of(&out)
        );
    }
}

fn list_entry_as_root(pid: i32) -> Value {
    let out = inspect(&["list", "--format", "json"]);
    let jvms: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    jvms.as_array()
        .unwrap()
        .iter()
        .find(|j| j["pid"] == pid)
        .cloned()
        .unwrap_or_else(|| panic!("{pid} not in root's list: {jvms}"))
}

#[test]
#[ignore = "requires root (scripts/test.sh)"]
fn a_pid_that_is_not_a_jvm_is_said_to_be_none_on_both_paths() {
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = sleeper.id().to_string();
    for args in [vec![pid.as_str()], vec!["-F", pid.as_str()]] {
        let out = inspect(&args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "inspect {args:?}: {err}");
        assert!(
            err.contains(&format!("process {pid} (sleep) is not a HotSpot JVM")),
            "inspect {args:?}: {err}"
        );
        assert!(
            !err.contains("PerfDisableSharedMem"),
            "inspect {args:?}: {err}"
        );
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn a_thread_id_is_named_as_a_thread_of_its_jvm_on_both_paths() {
    let jvm = Jvm::start(&[]);
    let tid = std::fs::read_dir(format!("/proc/{}/task", jvm.pid))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .find(|t| *t != jvm.pid)
        .expect("a JVM has more than one thread");
    let tid = tid.to_string();
    for args in [vec![tid.as_str()], vec!["-F", tid.as_str()]] {
        let out = inspect(&args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "inspect {args:?}: {err}");
        assert!(
            err.contains(&format!(
                "{tid} is a thread of process {} (java), not a process",
                jvm.pid
            )),
            "inspect {args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "inspect {args:?} read something");
    }
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn a_stopped_jvm_is_read_by_forced_and_by_jcmd_perfcounter_but_not_by_jcmd_attach() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    // -v: both measures of the stop on a running JVM.
    let out = inspect(&["-v", "-F", &pid, "java.threads.live"]);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("each thread held at most")
            && (err.contains("a running thread at most") || err.contains("no thread was running")),
        "{err}"
    );

    send_signal(jvm.pid, libc::SIGSTOP);
    wait_for_state(jvm.pid, 'T');
    // inspect -F reads it, and leaves it stopped.
    let out = inspect(&["-F", &pid, "java.threads.live"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_left_alone(jvm.pid, true);
    // jcmd PerfCounter.print reads the hsperfdata file client-side: it answers too.
    let jcmd = jdk17().join("bin/jcmd");
    let out = Command::new(&jcmd)
        .args([&pid, "PerfCounter.print"])
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("java.threads.live="),
        "jcmd PerfCounter.print on a stopped JVM: {out:?}"
    );
    // An attach command needs the JVM's cooperation: it fails (times out) on a stopped JVM.
    let began = Instant::now();
    let mut child = Command::new(&jcmd)
        .args([&pid, "VM.uptime"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let attach = wait_bounded_output(&mut child, Duration::from_secs(60));
    // Still waiting after 60 s (`None`) is no answer either.
    if let Some(status) = attach {
        assert!(
            !status.success(),
            "jcmd VM.uptime answered on a stopped JVM after {:?}",
            began.elapsed()
        );
    }
    send_signal(jvm.pid, libc::SIGCONT);
}

/// Waits at most `limit` for `child`; kills it and returns `None` when it is still running.
fn wait_bounded_output(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
#[ignore = "requires root (scripts/test.sh)"]
fn a_root_listing_warns_only_about_processes_that_could_be_jvms() {
    // Processes whose mappings even root cannot read (a sandbox's or container runtime's init):
    // when their command line is readable and not a JVM's, they are not worth a warning.
    let unreadable: Vec<(i32, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/maps")).is_err())
        .filter_map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            Some((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")))
        })
        .filter(|(_, cmd)| !cmd.trim().is_empty())
        .collect();
    eprintln!("processes whose maps root cannot read: {unreadable:?}");
    let could_be_jvm = unreadable
        .iter()
        .any(|(_, cmd)| cmd.contains("java") || cmd.contains("-XX:") || cmd.contains("jsvc"));
    let out = inspect(&["list"]);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    if !could_be_jvm {
        assert!(!err.contains("not inspected"), "{err}");
    }
}
