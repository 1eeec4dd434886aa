//! `serve --thread-states` (issue 29 item 5): each dialect's thread-state family against the
//! states `jcmd <pid> Thread.print` prints for the same JVM. jcmd's dump is taken before and
//! after the scrape; a thread whose state (or presence) differs between the two may be counted
//! in either state, so each count must be within that many threads of jcmd's, before and after.
//! Daemon status is compared through the `hotspot` family's `daemon` label and OpenTelemetry's
//! `jvm_thread_daemon`. Every page passes `promtool check metrics`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::support::prom;
use crate::support::states::*;
use crate::support::{Jvm, jdk, jdk17};

fn every_dialect(java_home: &Path, flags: &[&str]) {
    let jvm: Jvm = crate::support::jcmd::start_target(java_home, flags);
    for names in [
        "hotspot",
        "micrometer",
        "client_java",
        "client_java_0",
        "otel",
    ] {
        agree(jvm.pid, &|pid| jcmd_of(java_home, pid), names);
    }
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_thread_states_in_every_dialect_match_jcmd() {
    every_dialect(&jdk17(), &[]);
}

#[test]
#[ignore = "requires root, JDK 11 (scripts/test.sh)"]
fn jdk11_thread_states_match_jcmd() {
    every_dialect(&jdk(11), &["-XX:+UseParallelGC"]);
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_generational_zgc_thread_states_match_jcmd() {
    every_dialect(&jdk(21), &["-XX:+UseZGC", "-XX:+ZGenerational"]);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_thread_states_without_compressed_oops_and_with_compact_headers_match_jcmd() {
    every_dialect(&jdk(25), &["-XX:-UseCompressedOops"]);
    every_dialect(&jdk(25), &["-XX:+UseCompactObjectHeaders"]);
}

#[test]
fn jcmd_dumps_are_read_by_name_id_and_daemon() {
    let text = "\"main\" #1 [7] prio=5 os_prio=0 cpu=1ms elapsed=1s tid=0x1 nid=7 waiting on condition  [0x1]\n   java.lang.Thread.State: TIMED_WAITING (sleeping)\n\n\"Reference Handler\" #9 daemon prio=10 os_prio=0 tid=0x2 nid=8 waiting on condition [0x0]\n   java.lang.Thread.State: RUNNABLE\n\n\"VM Thread\" os_prio=0 tid=0x3 nid=9 runnable\n";
    let s = jcmd_states(text);
    assert_eq!(s.len(), 2);
    assert_eq!(
        s[&("main".to_string(), 1)],
        Seen {
            state: "TIMED_WAITING".into(),
            daemon: false
        }
    );
    assert!(s[&("Reference Handler".to_string(), 9)].daemon);
}

/// `inspect top -b --format json`'s `threads_blocked` and `threads_waiting` (the BLOCKED and
/// WAITING columns) of ThreadsTarget, between two jcmd dumps: within the threads that changed.
#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn top_blocked_and_waiting_columns_match_jcmd() {
    let java_home = jdk17();
    let jvm = crate::support::jcmd::start_target(&java_home, &[]);
    let before = jcmd_states(&jcmd_of(&java_home, jvm.pid));
    let out = crate::support::inspect_bounded(
        &["top", "-b", "-n", "1", "--format", "json", "--rescan", "60"],
        std::time::Duration::from_secs(120),
    );
    let after = jcmd_states(&jcmd_of(&java_home, jvm.pid));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row: serde_json::Value = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["pid"] == jvm.pid)
        .expect("ThreadsTarget in top's frame");
    let slack = changed(&before, &after);
    let count = |dump: &BTreeMap<(String, u64), Seen>, states: &[&str]| {
        dump.values()
            .filter(|s| states.contains(&s.state.as_str()))
            .count() as u64
    };
    for (key, states) in [
        ("threads_blocked", &["BLOCKED"][..]),
        ("threads_waiting", &["WAITING", "TIMED_WAITING"][..]),
    ] {
        let ours = row[key]
            .as_u64()
            .unwrap_or_else(|| panic!("no {key}: {row}"));
        let (b, a) = (count(&before, states), count(&after, states));
        assert!(
            ours.abs_diff(b) <= slack && ours.abs_diff(a) <= slack,
            "{key}: ours {ours}, jcmd {b} before and {a} after ({slack} changed)"
        );
    }
    // ThreadsTarget's two deadlocked threads and its monitor waiter stay BLOCKED.
    assert!(row["threads_blocked"].as_u64().unwrap() >= 2, "{row}");
}

/// A JVM starting thousands of threads a second (tests/java/ThreadChurn.java: short threads that
/// end after 1 ms, a churning heap) read by 100 scrapes: the states are on (nearly) every page,
/// the threads that stay are counted, no read fails for a torn thread list.
#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn states_of_a_jvm_starting_thousands_of_threads_a_second_are_read() {
    let java_home = jdk17();
    let mut cmd = Command::new(java_home.join("bin/java"));
    cmd.args(["-Xmx64m", "-XX:+UseSerialGC", "-cp"])
        .arg(crate::support::test_classes())
        .arg("ThreadChurn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    let jvm = Jvm::spawn(cmd, &java_home);
    let pid = jvm.pid.to_string();
    let serve = crate::support::serve::Serve::start(&["--pid", &pid, "--thread-states"]);
    let started = |page: &str| -> f64 {
        let (samples, _) = prom::parse(page);
        samples
            .iter()
            .find(|s| s.name == "hotspot_java_threads_started_total" && s.labels["pid"] == pid)
            .unwrap_or_else(|| panic!("no hotspot_java_threads_started_total:\n{page}"))
            .value
    };
    let first = serve.metrics();
    let mut with_states = 0;
    let mut last = String::new();
    for _ in 0..100 {
        let page = serve.metrics();
        let counts = from_page(&page, jvm.pid, "hotspot");
        let n = |state: &str| -> u64 {
            counts
                .iter()
                .filter(|(k, _)| k.0 == state)
                .map(|(_, v)| v)
                .sum()
        };
        if !counts.is_empty() {
            with_states += 1;
            // The three sleepers and two parked threads that stay.
            assert!(n("TIMED_WAITING") >= 3 && n("WAITING") >= 2, "{counts:?}");
        }
        last = page;
    }
    let churned = started(&last) - started(&first);
    assert!(
        churned > 1000.0,
        "only {churned} threads started during the scrapes"
    );
    assert!(
        with_states >= 95,
        "thread states on only {with_states} of 100 pages while {churned} threads started:\n{last}"
    );
    eprintln!("{with_states} of 100 pages had the states; {churned} threads started meanwhile");
}
