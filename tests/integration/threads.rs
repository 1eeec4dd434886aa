//! `inspect threads` against `jcmd <pid> Thread.print -l` of the same JVM (issue 28): the
//! ThreadsTarget program parks named threads in known places; jcmd's dump is taken before and
//! after ours, and every thread whose state and frames are the same in both of jcmd's dumps must
//! be the same in ours: the same set of threads (name, Java id, nid), the same
//! `java.lang.Thread.State`, the same top 10 frames (`class.method(module@version/File:line)`,
//! the module read from the holder's mirror as `ModuleEntry` names it).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::jcmd::*;
use crate::support::{Jvm, gcore, inspect, jdk, jdk17, test_classes};

fn compare(java_home: &Path, flags: &[&str]) {
    let jvm = start_target(java_home, flags);
    compare_with(jvm.pid, &|pid| jcmd_threads(java_home, pid));
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_interpreted_frames_match_jcmd() {
    compare(&jdk17(), &["-Xint"]);
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_default_flags_match_jcmd() {
    compare(&jdk17(), &[]);
}

#[test]
fn frames_are_compared_with_their_module() {
    assert_eq!(
        normalize_frame("\tat java.lang.Object.wait(java.base@17.0.15/Object.java:338)"),
        "java.lang.Object.wait(java.base@17.0.15/Object.java:338)"
    );
    assert_eq!(
        normalize_frame("\tat X$$Lambda$1/0x00007f2a48000a08.run(Unknown Source)"),
        "X$$Lambda$1/0x00007f2a48000a08.run(Unknown Source)"
    );
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_xcomp_compiled_and_inlined_frames_match_jcmd() {
    compare(&jdk17(), &["-Xcomp"]);
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_without_compressed_oops_matches_jcmd() {
    compare(&jdk17(), &["-XX:-UseCompressedOops"]);
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_zgc_matches_jcmd() {
    compare(&jdk17(), &["-XX:+UseZGC"]);
}

#[test]
#[ignore = "requires JDK 11 (scripts/test.sh)"]
fn jdk11_interpreted_matches_jcmd() {
    compare(&jdk(11), &["-Xint"]);
}

#[test]
#[ignore = "requires JDK 11 (scripts/test.sh)"]
fn jdk11_default_flags_matches_jcmd() {
    compare(&jdk(11), &[]);
}

#[test]
#[ignore = "requires JDK 11 (scripts/test.sh)"]
fn jdk11_xcomp_matches_jcmd() {
    compare(&jdk(11), &["-Xcomp"]);
}

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn jdk21_interpreted_matches_jcmd() {
    compare(&jdk(21), &["-Xint"]);
}

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn jdk21_default_flags_matches_jcmd() {
    compare(&jdk(21), &[]);
}

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn jdk21_xcomp_matches_jcmd() {
    compare(&jdk(21), &["-Xcomp"]);
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_interpreted_matches_jcmd() {
    compare(&jdk(25), &["-Xint"]);
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_default_flags_matches_jcmd() {
    compare(&jdk(25), &[]);
}

// JDK 25 -Xcomp (JDK 23+ nmethod layout, `_immutable_data`): `jdk25_xcomp_matches_jcmd` below.

/// Compact object headers (JDK 24+, a product flag in 25): the narrow klass sits in the mark
/// word and its shift is 10, beyond any narrow oop's.
#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_compact_object_headers_matches_jcmd() {
    compare(&jdk(25), &["-XX:+UseCompactObjectHeaders"]);
}

// ---------------------------------------------------------------------------------------------
// Locks (issue 28 item 5): the lock lines under each frame, the ownable synchronizers and the
// Java-level deadlocks, against `jcmd <pid> Thread.print -l` taken before and after ours.

/// Runs the target on `java_home` with `flags`; jcmd before, ours, jcmd after. For every Java
/// thread whose top 10 frames and lock lines are the same in both of jcmd's dumps, ours must be
/// the same; our ownable synchronizers must be among jcmd's (only the ones other threads are
/// parked on are known from outside); the deadlock section must be jcmd's.
fn compare_locks(java_home: &Path, flags: &[&str]) {
    let jvm = start_target(java_home, flags);
    compare_locks_with(jvm.pid, &|pid| jcmd_threads(java_home, pid));
}

#[test]
#[ignore = "requires JDK 11 (scripts/test.sh)"]
fn jdk11_lock_lines_and_deadlocks_match_jcmd() {
    compare_locks(&jdk(11), &[]);
}

#[test]
#[ignore = "requires JDK 11 (scripts/test.sh)"]
fn jdk11_interpreted_lock_lines_match_jcmd() {
    compare_locks(&jdk(11), &["-Xint"]);
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_lock_lines_and_deadlocks_match_jcmd() {
    compare_locks(&jdk17(), &[]);
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_compiled_lock_lines_match_jcmd() {
    compare_locks(&jdk17(), &["-Xcomp"]);
}

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn jdk21_lock_lines_and_deadlocks_match_jcmd() {
    compare_locks(&jdk(21), &[]);
}

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn jdk21_compiled_lock_lines_match_jcmd() {
    compare_locks(&jdk(21), &["-Xcomp"]);
}

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn jdk21_lightweight_locking_lock_lines_match_jcmd() {
    compare_locks(
        &jdk(21),
        &["-XX:+UnlockExperimentalVMOptions", "-XX:LockingMode=2"],
    );
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_lock_lines_and_deadlocks_match_jcmd() {
    compare_locks(&jdk(25), &[]);
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_compact_object_headers_lock_lines_match_jcmd() {
    compare_locks(&jdk(25), &["-XX:+UseCompactObjectHeaders"]);
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_interpreted_lock_lines_match_jcmd() {
    compare_locks(&jdk(25), &["-Xint"]);
}

// `--locks` (`-l`): the heap walked for every ownable synchronizer, as `jcmd Thread.print -l`.

/// Runs the target on `java_home` with `flags`; jcmd before, `inspect threads -l`, jcmd after:
/// the lock lines as [`compare_locks`], and the ownable synchronizers exactly jcmd's
/// ([`agree_synchronizers`]).
fn compare_synchronizers(java_home: &Path, flags: &[&str]) {
    let jvm = start_target(java_home, flags);
    let before = jcmd_threads(java_home, jvm.pid);
    let ours = inspect_threads_with(&["-l", &jvm.pid.to_string()]);
    let after = jcmd_threads(java_home, jvm.pid);
    agree_locks(&before, &ours, &after);
    let traversed = flags
        .iter()
        .any(|f| *f == "-XX:+UseShenandoahGC" || *f == "-XX:+UseZGC");
    agree_synchronizers(&before, &ours, &after, !traversed);
}

#[test]
#[ignore = "requires JDK 11 (scripts/test.sh)"]
fn jdk11_locks_walks_the_heap_for_every_ownable_synchronizer() {
    compare_synchronizers(&jdk(11), &[]);
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_parallel_and_shenandoah_locks_list_every_ownable_synchronizer() {
    compare_synchronizers(&jdk17(), &["-XX:+UseParallelGC"]);
    compare_synchronizers(&jdk17(), &["-XX:+UseShenandoahGC"]);
}

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn jdk21_generational_zgc_locks_list_every_ownable_synchronizer() {
    compare_synchronizers(&jdk(21), &["-XX:+UseZGC", "-XX:+ZGenerational"]);
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_compact_headers_locks_list_every_ownable_synchronizer() {
    compare_synchronizers(&jdk(25), &["-XX:+UseCompactObjectHeaders"]);
}

/// From a gcore of the JVM (jcmd's dumps taken before and after it): the same synchronizers.
#[test]
#[ignore = "requires JDK 17, gdb (scripts/test.sh)"]
fn jdk17_locks_from_a_gcore_match_jcmd() {
    let home = jdk17();
    let jvm = start_target(&home, &[]);
    let dir = tempfile::tempdir().unwrap();
    let before = jcmd_threads(&home, jvm.pid);
    let core = gcore(jvm.pid, dir.path());
    let after = jcmd_threads(&home, jvm.pid);
    let out = inspect(&["threads", "-l", "--core", core.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = String::from_utf8_lossy(&out.stdout);
    agree_synchronizers(&before, &ours, &after, true);
}

#[test]
fn lock_lines_are_parsed_with_their_frames() {
    let text = "\"t\" #3 prio=5 tid=0x1 nid=0x2 waiting\n   java.lang.Thread.State: BLOCKED\n\tat A.b(java.base@17/A.java:1)\n\t- waiting to lock <0x10> (a java.lang.Object)\n\tat A.c(A.java:2)\n\n   Locked ownable synchronizers:\n\t- None\n\n";
    let (threads, deadlocks) = parse_locks(text);
    assert_eq!(
        threads["t"].stack,
        [
            "A.b(java.base@17/A.java:1)",
            "- waiting to lock <0x10> (a java.lang.Object)",
            "A.c(A.java:2)"
        ]
    );
    assert!(threads["t"].synchronizers.is_empty());
    assert_eq!(deadlocks, "");
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_xcomp_matches_jcmd() {
    compare(&jdk(25), &["-Xcomp"]);
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_compiled_lock_lines_match_jcmd() {
    compare_locks(&jdk(25), &["-Xcomp"]);
}

// ---- Mounted virtual threads (JDK 21+) ------------------------------------------------------

/// The frames of a mounted virtual thread as compared: its top frame (running Java code, so
/// stopped anywhere in its loop) without its line.
fn mounted_top(frames: &[String]) -> Vec<String> {
    let mut top: Vec<String> = frames.iter().take(10).cloned().collect();
    if let Some(first) = top.first_mut()
        && let Some(open) = first.find('(')
    {
        first.truncate(open);
    }
    top
}

/// VirtualThreadsTarget on JDK `major`: every carrier that carries the same virtual thread in
/// both of jcmd's dumps carries it in ours (`Carrying virtual thread #N`, no `nid=` or OS state
/// in its header), with the same carrier frames; the mounted virtual thread's own frames (jcmd
/// prints them from JDK 24 on) match jcmd's where it prints them, and otherwise run from the
/// virtual thread's code down to `Continuation.enter`. Unmounted virtual threads are in neither.
fn mounted_virtual_threads_match_jcmd(major: u32) {
    let home = jdk(major);
    let mut cmd = Command::new(home.join("bin/java"));
    cmd.args(["-Xmx64m", "-cp"])
        .arg(test_classes())
        .arg("VirtualThreadsTarget")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let jvm = Jvm::spawn(cmd, &home);
    let before_text = jcmd_threads(&home, jvm.pid);
    let ours_text = inspect_threads(jvm.pid);
    let after_text = jcmd_threads(&home, jvm.pid);
    let (before, after, ours) = (parse(&before_text), parse(&after_text), parse(&ours_text));
    assert!(
        !ours_text.contains("vt-sleep-"),
        "an unmounted virtual thread is in ours:\n{ours_text}"
    );
    let mut carriers = 0;
    let mut spin_seen = false;
    for (name, b) in &before {
        let (Some(a), Some(vt)) = (after.get(name), b.carrying) else {
            continue;
        };
        if a.carrying != Some(vt) || a.frames != b.frames {
            continue; // the carrier changed between jcmd's dumps
        }
        let o = ours
            .get(name)
            .unwrap_or_else(|| panic!("carrier {name} not in ours:\n{ours_text}"));
        assert_eq!(o.carrying, Some(vt), "{name}: carried thread\n{ours_text}");
        assert_eq!(
            o.nid, None,
            "{name}: a carrier's header has no nid\n{ours_text}"
        );
        assert_eq!(
            o.state, None,
            "{name}: a carrier has no State line\n{ours_text}"
        );
        let top = |f: &[String]| f.iter().take(10).cloned().collect::<Vec<_>>();
        assert_eq!(
            top(&o.frames),
            top(&b.frames),
            "{name}: carrier frames\n{ours_text}"
        );
        assert!(
            o.mounted
                .last()
                .is_some_and(|f| f.starts_with("jdk.internal.vm.Continuation.enter(")),
            "{name}: the mounted thread's frames end at Continuation.enter\n{ours_text}"
        );
        if !b.mounted.is_empty() && mounted_top(&b.mounted) == mounted_top(&a.mounted) {
            assert_eq!(
                mounted_top(&o.mounted),
                mounted_top(&b.mounted),
                "{name}: mounted virtual thread #{vt}'s frames\n{ours_text}"
            );
        }
        spin_seen |= o
            .mounted
            .first()
            .is_some_and(|f| f.starts_with("VirtualThreadsTarget.spin("));
        carriers += 1;
    }
    assert!(
        carriers >= 1 && spin_seen,
        "vt-spin's carrier was not compared ({carriers} carriers):\n{before_text}\n---\n{ours_text}"
    );
    if major >= 24 {
        assert!(
            before_text.contains("   Mounted virtual thread #"),
            "JDK {major}'s jcmd prints mounted virtual threads (JDK-8330846)"
        );
    }
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_mounted_virtual_threads_match_jcmd() {
    mounted_virtual_threads_match_jcmd(21);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_mounted_virtual_threads_match_jcmd() {
    mounted_virtual_threads_match_jcmd(25);
}

// ---- Generational ZGC (coloured pointers) and uncompressed oops on 21 and 25 ------------------

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn jdk21_generational_zgc_frames_and_lock_lines_match_jcmd() {
    let flags = ["-XX:+UseZGC", "-XX:+ZGenerational"];
    compare(&jdk(21), &flags);
    compare_locks(&jdk(21), &flags);
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn jdk25_zgc_frames_and_lock_lines_match_jcmd() {
    compare(&jdk(25), &["-XX:+UseZGC"]);
    compare_locks(&jdk(25), &["-XX:+UseZGC"]);
}

#[test]
#[ignore = "requires JDK 21, JDK 25 (scripts/test.sh)"]
fn jdk21_and_25_without_compressed_oops_match_jcmd() {
    compare(&jdk(21), &["-XX:-UseCompressedOops"]);
    compare(&jdk(25), &["-XX:-UseCompressedOops"]);
}

// ---- The header lines as jcmd prints them ---------------------------------------------------

/// Each thread's `os_prio=` and `cpu=` (ms) by name, from a dump's thread header lines.
fn header_fields(dump: &str) -> BTreeMap<String, (Option<String>, Option<f64>)> {
    let field = |line: &str, key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .map(str::to_string)
    };
    dump.lines()
        .filter(|l| l.starts_with('"'))
        .filter_map(|l| {
            let name = l[1..].split('"').next()?.to_string();
            let cpu = field(l, "cpu=").and_then(|c| c.trim_end_matches("ms").parse().ok());
            Some((name, (field(l, "os_prio="), cpu)))
        })
        .collect()
}

/// The timestamp line and the `Full thread dump` line of a dump (jcmd's after its `<pid>:`).
fn first_lines(dump: &str) -> (String, String) {
    let mut lines = dump
        .lines()
        .skip_while(|l| l.ends_with(':') && !l.contains(' '));
    let when = lines.next().unwrap_or_default().to_string();
    let title = lines.next().unwrap_or_default().to_string();
    (when, title)
}

/// jcmd before, ours, jcmd after: the timestamp line between jcmd's, the VM line equal, and every
/// thread in all three with jcmd's `os_prio=` and a `cpu=` between jcmd's two.
fn headers_agree(java_home: &Path, pid: i32) {
    let before = jcmd_threads(java_home, pid);
    let ours = inspect_threads(pid);
    let after = jcmd_threads(java_home, pid);
    let (when0, title0) = first_lines(&before);
    let (when, title) = first_lines(&ours);
    let (when1, _) = first_lines(&after);
    assert_eq!(title, title0, "the VM line");
    assert!(
        when.len() == 19 && when0 <= when && when <= when1,
        "timestamp {when:?} not between jcmd's {when0:?} and {when1:?}"
    );
    let (b, o, a) = (
        header_fields(&before),
        header_fields(&ours),
        header_fields(&after),
    );
    let mut compared = 0;
    for (name, (prio, cpu)) in &o {
        let (Some((prio0, Some(cpu0))), Some((_, Some(cpu1)))) = (b.get(name), a.get(name)) else {
            continue;
        };
        assert_eq!(prio, prio0, "{name}: os_prio");
        let cpu = cpu.unwrap_or_else(|| panic!("{name}: no cpu= in ours"));
        // jcmd prints two decimals: a thread that ran between the reads moves within them.
        assert!(
            *cpu0 - 0.01 <= cpu && cpu <= *cpu1 + 0.01,
            "{name}: cpu={cpu}ms not between jcmd's {cpu0}ms and {cpu1}ms"
        );
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} threads compared:\n{ours}");
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn header_lines_of_a_niced_jvm_match_jcmd() {
    // Tomcat's service runs niced: HotSpot's os_prio is 0 unless ThreadPriorityPolicy=1.
    let mut cmd = Command::new("nice");
    cmd.args(["-n", "19"])
        .arg(jdk17().join("bin/java"))
        .args(["-Xmx64m", "-cp"])
        .arg(test_classes())
        .arg("ThreadsTarget")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let jvm = Jvm::spawn(cmd, &jdk17());
    headers_agree(&jdk17(), jvm.pid);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn header_lines_in_a_pid_namespace_match_jcmd() {
    // The JVM's nids are its namespace's thread ids: cpu= and os_prio= come through NSpid.
    let jvm = crate::support::start_in_own_namespaces(&[]);
    headers_agree(&jdk17(), jvm.pid);
}

// ---- Readers at once ------------------------------------------------------------------------

/// Runs `inspect threads <pid>` `runs` times in a row on its own thread; the failures' stderr.
fn dump_loop(pid: i32, runs: usize) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        (0..runs)
            .filter_map(|_| {
                let out = Command::new(env!("CARGO_BIN_EXE_inspect"))
                    .args(["threads", &pid.to_string()])
                    .output()
                    .expect("running inspect");
                (!out.status.success()).then(|| String::from_utf8_lossy(&out.stderr).into_owned())
            })
            .collect()
    })
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn a_dump_beside_a_second_dump_loop_and_two_forced_streams_waits_its_turn() {
    // Every stop of a JVM waits for another reader's hold to end (`--wait`), as `-F` does:
    // two dump loops of 250 runs each (500 dumps) beside two `-F --interval 5ms` streams.
    let jvm = start_target(&jdk17(), &[]);
    let pid = jvm.pid.to_string();
    let streams: Vec<_> = (0..2)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_inspect"))
                .args(["-F", &pid, "--interval", "5ms"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("running inspect -F --interval")
        })
        .collect();
    let loops = [dump_loop(jvm.pid, 250), dump_loop(jvm.pid, 250)];
    let failures: Vec<String> = loops
        .into_iter()
        .flat_map(|l| l.join().expect("a dump loop panicked"))
        .collect();
    for mut s in streams {
        let still_running = s.try_wait().expect("waiting for -F").is_none();
        let _ = s.kill();
        let out = s.wait_with_output().unwrap();
        assert!(
            still_running,
            "an -F stream ended early: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        failures.is_empty(),
        "{} of 500 dumps failed beside a second reader; first: {}",
        failures.len(),
        failures[0]
    );
    crate::support::assert_left_alone(jvm.pid, false);
}

// ---------------------------------------------------------------------------------------------
// Holding only the threads that run (`--hold-threads running`, the default, which every other
// test here runs too): every thread walked with the JVM running, the threads that ran during
// the walk held and walked again.

/// The frame and lock comparisons with jcmd, holding only the threads that run; with
/// `allocate`, a thread allocating without end beside them, so that the collector's concurrent
/// cycles run during the dump.
fn compare_holding_running(java_home: &Path, flags: &[&str], allocate: bool) {
    let mut all = flags.to_vec();
    if allocate {
        all.push("-Dthreads.allocate=true");
    }
    let jvm = start_target(java_home, &all);
    let jcmd = |pid| jcmd_threads(java_home, pid);
    compare_with_args(jvm.pid, &["--hold-threads", "running"], &jcmd);
    compare_locks_with_args(jvm.pid, &["--hold-threads", "running"], &jcmd);
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_holding_only_running_threads_matches_jcmd() {
    compare_holding_running(&jdk17(), &[], false);
}

/// G1 with a thread allocating without end: young collections run during the dumps, and a
/// dump whose unheld walk saw one begin holds every thread instead (`-v` says which).
#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_g1_allocating_holding_only_running_threads_matches_jcmd() {
    compare_holding_running(&jdk17(), &["-XX:+UseG1GC"], true);
}

/// `--hold-threads all`: every thread held for the whole walk, as before it was the default.
#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_holding_every_thread_matches_jcmd() {
    let jvm = start_target(&jdk17(), &[]);
    let jcmd = |pid| jcmd_threads(&jdk17(), pid);
    compare_with_args(jvm.pid, &["--hold-threads", "all"], &jcmd);
    compare_locks_with_args(jvm.pid, &["--hold-threads", "all"], &jcmd);
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn jdk17_shenandoah_allocating_holding_only_running_threads_matches_jcmd() {
    compare_holding_running(&jdk17(), &["-XX:+UseShenandoahGC"], true);
}

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn jdk21_generational_zgc_allocating_holding_only_running_threads_matches_jcmd() {
    compare_holding_running(&jdk(21), &["-XX:+UseZGC", "-XX:+ZGenerational"], true);
}
