//! `inspect -F <pid>` and `inspect <pid>` against real JDK 17 JVMs, with jcmd as the reference.

use crate::support::*;

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
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
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn shared_file_read_matches_jcmd() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&jvm.java_home, jvm.pid);
    let ours = counters(&inspect_ok(&[&pid]));
    let after = jcmd_counters(&jvm.java_home, jvm.pid);
    assert_matches_reference(&ours, &before, &after);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn output_is_byte_identical_to_jcmd_for_constants() {
    // Counters that never change must print exactly as jcmd prints them, quoting included.
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let ours = inspect_ok(&["-F", &pid, "java.property", "sun.rt.javaCommand"]);
    let out = std::process::Command::new(jvm.java_home.join("bin/jcmd"))
        .arg(crate::support::TOOL_NO_PERFDATA)
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
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
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

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn no_stop_read_matches_jcmd_and_never_stops_the_target() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&jvm.java_home, jvm.pid);
    let out = inspect(&["-F", "--no-stop", "-v", &pid]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = jcmd_counters(&jvm.java_home, jvm.pid);
    assert_matches_reference(
        &counters(&String::from_utf8(out.stdout).unwrap()),
        &before,
        &after,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("stopped"),
        "--no-stop must not stop threads: {err}"
    );
    assert_left_alone(jvm.pid, false);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn patterns_select_by_prefix_and_glob() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let all = counters(&inspect_ok(&["-F", &pid]));
    let some = counters(&inspect_ok(&[
        "-F",
        &pid,
        "sun.gc.collector",
        "java.threads.*",
        "*.hrt.frequency",
    ]));
    let expected: Vec<&String> = all
        .keys()
        .filter(|n| {
            n.starts_with("sun.gc.collector")
                || n.starts_with("java.threads.")
                || n.ends_with(".hrt.frequency")
        })
        .collect();
    assert!(expected.len() > 5);
    assert_eq!(some.keys().collect::<Vec<_>>(), expected);

    let none = inspect(&["-F", &pid, "no.such.counter"]);
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("no counter matches no.such.counter"));
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn saved_region_reads_back_identically() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("region.hsperf");
    let file = file.to_str().unwrap();
    let live = inspect_ok(&["-F", "--save", file, &pid]);
    assert_eq!(
        inspect_ok(&[file]),
        live,
        "the saved region prints what the live read printed"
    );
    // --save never overwrites.
    let again = inspect(&["-F", "--save", file, &pid]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--save"));
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn verbose_names_the_path_symbols_region_and_stop() {
    let jvm = Jvm::start(&[]);
    let out = inspect(&["-F", "-v", &jvm.pid.to_string(), "java.threads.live"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "path: forced read of process",
        "libjvm: ",
        "load bias 0x",
        "symbols: .symtab of",
        "region: 32768 bytes at 0x",
        "stopped ",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in {err}");
    }
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn threads_that_miss_the_stop_timeout_are_read_anyway_with_a_warning() {
    // With a zero bound some of 60 threads are still on their way to the stop when the region is
    // read: the read goes on, says so, and every thread is released.
    let jvm = Jvm::start_with(&jdk17(), &[], 50);
    let pid = jvm.pid.to_string();
    let mut warned = 0;
    for _ in 0..20 {
        let out = inspect(&["-F", "--stop-timeout", "0", &pid, "java.threads"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let names = counters(&String::from_utf8(out.stdout).unwrap());
        assert!(names.contains_key("java.threads.live"), "{names:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("did not stop within 0 ms") {
            warned += 1;
        }
        assert_left_alone(jvm.pid, false);
    }
    assert!(
        warned > 0,
        "no run had a thread miss a zero bound: the test proves nothing"
    );
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn two_forced_readers_at_once_both_read() {
    // Each `inspect -F` holds the JVM for its read; a second one that finds it held waits for the
    // hold to end (bounded by --wait) instead of failing on "already traced".
    let jvm = Jvm::start_with(&jdk17(), &[], 50);
    let pid = jvm.pid.to_string();
    let before = jcmd_counters(&jvm.java_home, jvm.pid);
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let pid = pid.clone();
            std::thread::spawn(move || (0..15).map(|_| inspect(&["-F", &pid])).collect::<Vec<_>>())
        })
        .collect();
    let outs: Vec<_> = readers
        .into_iter()
        .flat_map(|r| r.join().unwrap())
        .collect();
    let after = jcmd_counters(&jvm.java_home, jvm.pid);
    for out in &outs {
        assert!(
            out.status.success(),
            "a concurrent -F read failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ours = counters(&String::from_utf8_lossy(&out.stdout));
        assert_matches_reference(&ours, &before, &after);
    }
    assert_left_alone(jvm.pid, false);
}

/// Holds `pid` under gdb (attached, so its tracer) for `seconds`; gdb detaches and exits after.
fn held_by_gdb(pid: i32, seconds: f64) -> std::process::Child {
    let gdb = std::process::Command::new("gdb")
        .args(["-q", "-nx", "-batch", "-p", &pid.to_string()])
        .args(["-ex", &format!("shell sleep {seconds}"), "-ex", "detach"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("gdb (package gdb) runs: scripts/setup-test-deps.sh installs it");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while status_field(pid, "TracerPid") != gdb.id().to_string() {
        assert!(std::time::Instant::now() < deadline, "gdb never attached");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    gdb
}

#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn a_jvm_held_by_a_debugger_names_it_and_offers_no_stop() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let mut gdb = held_by_gdb(jvm.pid, 20.0);
    // Waited for (here 300 ms), then the tracer is named with its command, and --no-stop offered.
    let began = std::time::Instant::now();
    let err = inspect_err(&inspect(&["-F", "--wait", "300", &pid]));
    let took = began.elapsed();
    assert!(
        err.contains(&format!("traced by process {}", gdb.id()))
            && err.contains("gdb -q -nx -batch -p")
            && err.contains(&format!("inspect -F --no-stop {pid}")),
        "{err}"
    );
    assert!(
        took >= std::time::Duration::from_millis(300) && took < std::time::Duration::from_secs(5),
        "waited {took:?}"
    );
    // What it offers works while the debugger holds the JVM.
    let ours = counters(&inspect_ok(&["-F", "--no-stop", &pid]));
    assert_plausible(&ours);
    let _ = gdb.kill();
    let _ = gdb.wait();
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn stop_timeout_bounds_the_whole_stop_of_a_many_threaded_jvm() {
    // Seizing 3,000 threads takes longer than 5 ms (about 28 µs a thread on a quiet machine):
    // --stop-timeout 5 bounds the whole stop, so most threads are read running, with a warning
    // saying how many; a bound long enough for them all stops every one, without a warning.
    let jvm = Jvm::start_with(&jdk17(), &["-Xss256k"], 3000);
    let pid = jvm.pid.to_string();
    let tasks = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .count()
    };
    let stopped = |err: &str| -> usize {
        let at = err
            .find("stopped ")
            .unwrap_or_else(|| panic!("no stop in -v: {err}"));
        err[at + 8..].split(' ').next().unwrap().parse().unwrap()
    };
    let out = inspect(&["-F", "-v", "--stop-timeout", "5", &pid, "java.threads.live"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("did not stop within 5 ms (--stop-timeout") && err.contains("more"),
        "{err}"
    );
    assert!(stopped(&err) < tasks(), "{err}");
    assert_left_alone(jvm.pid, false);
    let out = inspect(&[
        "-F",
        "-v",
        "--stop-timeout",
        "60000",
        &pid,
        "java.threads.live",
    ]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("did not stop"), "{err}");
    assert!(stopped(&err) >= 3000, "{err}");
    assert_left_alone(jvm.pid, false);
}
