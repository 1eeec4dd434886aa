//! `inspect -F <pid>` and `inspect <pid>` against real JDK 17 JVMs, with jcmd as the reference.

mod common;

use common::*;

#[test]
fn forced_read_matches_jcmd() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&jvm.java_home, jvm.pid);
    let ours = counters(&inspect_ok(&["-F", &pid]));
    let after = jcmd_counters(&jvm.java_home, jvm.pid);
    let compared = assert_matches_reference(&ours, &before, &after);
    assert!(compared > 100, "compared {compared}");
    assert_left_alone(jvm.pid, false);
}

#[test]
fn shared_file_read_matches_jcmd() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&jvm.java_home, jvm.pid);
    let ours = counters(&inspect_ok(&[&pid]));
    let after = jcmd_counters(&jvm.java_home, jvm.pid);
    assert_matches_reference(&ours, &before, &after);
}

#[test]
fn output_is_byte_identical_to_jcmd_for_constants() {
    // Counters that never change must print exactly as jcmd prints them, quoting included.
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let ours = inspect_ok(&["-F", &pid, "java.property", "sun.rt.javaCommand"]);
    let out = std::process::Command::new(jvm.java_home.join("bin/jcmd"))
        .args([&pid, "PerfCounter.print"])
        .output()
        .unwrap();
    let jcmd = String::from_utf8(out.stdout).unwrap();
    let expected: String = jcmd
        .lines()
        .filter(|l| l.starts_with("java.property") || l.starts_with("sun.rt.javaCommand"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(ours, expected);
}

#[test]
fn symbol_cache_is_used_and_gives_the_same_counters() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let cache = tempfile::tempdir().unwrap();
    let first = inspect_with_cache(&["-F", "-v", &pid, "java.property"], cache.path());
    assert!(first.status.success());
    let first_err = String::from_utf8_lossy(&first.stderr);
    assert!(first_err.contains("symbols: .symtab of"), "{first_err}");
    let entries: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "one cache entry per build: {entries:?}");
    let second = inspect_with_cache(&["-F", "-v", &pid, "java.property"], cache.path());
    let second_err = String::from_utf8_lossy(&second.stderr);
    assert!(
        second_err.contains("symbols: symbol cache for build-id"),
        "{second_err}"
    );
    assert_eq!(first.stdout, second.stdout);

    // An entry others could have written is not trusted.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&entries[0], std::fs::Permissions::from_mode(0o666)).unwrap();
    let third = inspect_with_cache(&["-F", "-v", &pid, "java.property"], cache.path());
    let third_err = String::from_utf8_lossy(&third.stderr);
    assert!(third_err.contains("symbols: .symtab of"), "{third_err}");
    assert_eq!(first.stdout, third.stdout);
}
