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
use crate::support::{Jvm, jdk, jdk17};

/// A thread of a jcmd dump: its state's first word (`TIMED_WAITING`) and whether it is a daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    state: String,
    daemon: bool,
}

/// The Java threads of a `Thread.print` dump with a `java.lang.Thread.State` line, by name and
/// Java id.
fn jcmd_states(text: &str) -> BTreeMap<(String, u64), Seen> {
    let mut out = BTreeMap::new();
    let mut current: Option<((String, u64), bool)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('"') {
            current = None;
            let Some(end) = rest.rfind("\" #") else {
                continue;
            };
            let name = rest[..end].to_string();
            let after = &rest[end + 3..];
            let mut words = after.split_whitespace();
            let Some(id) = words.next().and_then(|n| n.parse().ok()) else {
                continue;
            };
            let daemon = words
                .take_while(|w| !w.starts_with("prio="))
                .any(|w| w == "daemon");
            current = Some(((name, id), daemon));
        } else if let Some(s) = line.strip_prefix("   java.lang.Thread.State: ")
            && let Some((key, daemon)) = current.take()
        {
            let state = s.split_whitespace().next().unwrap_or("").to_string();
            out.insert(key, Seen { state, daemon });
        }
    }
    out
}

fn jcmd_of(java_home: &Path, pid: i32) -> String {
    let out = Command::new(java_home.join("bin/jcmd"))
        .args([&pid.to_string(), "Thread.print"])
        .output()
        .expect("running jcmd");
    assert!(out.status.success(), "jcmd Thread.print failed");
    String::from_utf8(out.stdout).unwrap()
}

/// A jcmd dump of `pid` (JDK at `java_home`) and its counts by (state, daemon).
pub(crate) type Tally = (BTreeMap<(String, u64), Seen>, BTreeMap<(String, bool), u64>);

/// `jcmd <pid> Thread.print`'s threads and their counts by (state, daemon).
pub(crate) fn jcmd_tally(java_home: &Path, pid: i32) -> Tally {
    let dump = jcmd_states(&jcmd_of(java_home, pid));
    let counts = tally(&dump);
    (dump, counts)
}

/// Asserts that `ours` (counts by `Thread.State` name and daemon status) is, for every key, within
/// the threads that changed between the dumps `before` and `after` of both their counts.
pub(crate) fn within(ours: &BTreeMap<(String, bool), f64>, before: &Tally, after: &Tally) {
    let slack = changed(&before.0, &after.0);
    let keys: std::collections::BTreeSet<_> = ours
        .keys()
        .chain(before.1.keys())
        .chain(after.1.keys())
        .collect();
    for k in keys {
        let o = ours.get(k).copied().unwrap_or(0.0) as u64;
        let (b, a) = (
            before.1.get(k).copied().unwrap_or(0),
            after.1.get(k).copied().unwrap_or(0),
        );
        assert!(
            o.abs_diff(b) <= slack && o.abs_diff(a) <= slack,
            "{k:?}: ours {o}, jcmd {b} before and {a} after ({slack} threads changed between)"
        );
    }
}

/// Counts by (state, daemon) of a dump.
fn tally(dump: &BTreeMap<(String, u64), Seen>) -> BTreeMap<(String, bool), u64> {
    let mut out = BTreeMap::new();
    for s in dump.values() {
        *out.entry((s.state.clone(), s.daemon)).or_default() += 1;
    }
    out
}

/// How many threads differ (in state, daemon status or presence) between two dumps.
fn changed(before: &BTreeMap<(String, u64), Seen>, after: &BTreeMap<(String, u64), Seen>) -> u64 {
    let mut n = 0;
    for (k, b) in before {
        if after.get(k) != Some(b) {
            n += 1;
        }
    }
    n + after.keys().filter(|k| !before.contains_key(*k)).count() as u64
}

const STATES: [&str; 6] = [
    "NEW",
    "RUNNABLE",
    "BLOCKED",
    "WAITING",
    "TIMED_WAITING",
    "TERMINATED",
];

/// One dialect's reading of a page: counts by (`Thread.State` name, daemon), daemon `None`
/// where the family has no daemon label.
type Counts = BTreeMap<(String, Option<bool>), u64>;

fn from_page(page: &str, pid: i32, names: &str) -> Counts {
    let (samples, _) = prom::parse(page);
    let pid = pid.to_string();
    let mut out = Counts::new();
    for s in samples.iter().filter(|s| s.labels.get("pid") == Some(&pid)) {
        let (state, daemon) = match (names, s.name.as_str()) {
            ("hotspot", "hotspot_threads_state") => (
                s.labels["state"].clone(),
                Some(s.labels["daemon"] == "true"),
            ),
            ("micrometer", "jvm_threads_states_threads") => {
                (s.labels["state"].to_uppercase().replace('-', "_"), None)
            }
            ("client_java" | "client_java_0", "jvm_threads_state") => {
                (s.labels["state"].clone(), None)
            }
            ("otel", "jvm_thread_count") => (
                s.labels["jvm_thread_state"].to_uppercase(),
                Some(s.labels["jvm_thread_daemon"] == "true"),
            ),
            _ => continue,
        };
        *out.entry((state, daemon)).or_default() += s.value as u64;
    }
    out
}

/// `jcmd`'s counts in the shape `ours` has (by daemon or not).
fn expect(tally: &BTreeMap<(String, bool), u64>, by_daemon: bool) -> Counts {
    let mut out = Counts::new();
    for ((state, daemon), n) in tally {
        *out.entry((state.clone(), by_daemon.then_some(*daemon)))
            .or_default() += n;
    }
    out
}

/// Scrapes `serve --thread-states --names <names> --pid <pid>` between two dumps `jcmd` gives
/// (`jcmd <pid> Thread.print`; JDK 8's runs in its root) and checks every count against both;
/// returns the page.
pub(crate) fn agree(pid: i32, jcmd: &dyn Fn(i32) -> String, names: &str) -> String {
    let serve = crate::serve::Serve::start(&[
        "--pid",
        &pid.to_string(),
        "--thread-states",
        "--names",
        names,
    ]);
    // One scrape first: the VM model is read at the first (the scrapes compared are the
    // exporter's steady state).
    let _ = serve.metrics();
    let before = jcmd_states(&jcmd(pid));
    let page = serve.metrics();
    let after = jcmd_states(&jcmd(pid));
    // Names of other libraries' own that promtool's lint flags (as in serve.rs's dialect test).
    prom::check_metrics_allowing(
        &page,
        &format!("serve --thread-states --names {names}"),
        &[
            "jvm_compilation_time_ms_total",
            "process_cpu_time_ns_total",
            "jvm_class_count",
            "jvm_thread_count",
            "process_thread_count",
            "process_unix_file_descriptor_count",
        ],
    );
    let slack = changed(&before, &after);
    let ours = from_page(&page, pid, names);
    let by_daemon = matches!(names, "hotspot" | "otel");
    let (b, a) = (
        expect(&tally(&before), by_daemon),
        expect(&tally(&after), by_daemon),
    );
    let keys: std::collections::BTreeSet<_> = ours.keys().chain(b.keys()).chain(a.keys()).collect();
    for k in keys {
        if !STATES.contains(&k.0.as_str()) && k.0 != "UNKNOWN" {
            panic!("{names}: unknown state {k:?}\n{page}");
        }
        let o = ours.get(k).copied().unwrap_or(0);
        let (bn, an) = (
            b.get(k).copied().unwrap_or(0),
            a.get(k).copied().unwrap_or(0),
        );
        assert!(
            o.abs_diff(bn) <= slack && o.abs_diff(an) <= slack,
            "{names}: {k:?}: ours {o}, jcmd {bn} before and {an} after ({slack} threads changed between)\n{page}"
        );
    }
    let total: u64 = ours
        .iter()
        .filter(|(k, _)| k.0 != "UNKNOWN")
        .map(|(_, n)| n)
        .sum();
    assert!(
        total.abs_diff(before.len() as u64) <= slack,
        "{names}: {total} threads against jcmd's {}",
        before.len()
    );
    if names.starts_with("client_java") {
        assert_eq!(
            ours.get(&("UNKNOWN".to_string(), None)).copied(),
            Some(0),
            "{names}: threads not read\n{page}"
        );
    }
    page
}

fn every_dialect(java_home: &Path, flags: &[&str]) {
    let jvm: Jvm = crate::threads::start_target(java_home, flags);
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
#[ignore = "needs root and JDK 17: run scripts/test.sh"]
fn jdk17_thread_states_in_every_dialect_match_jcmd() {
    every_dialect(&jdk17(), &[]);
}

#[test]
#[ignore = "needs root and JDK 11: run scripts/test.sh"]
fn jdk11_thread_states_match_jcmd() {
    every_dialect(&jdk(11), &["-XX:+UseParallelGC"]);
}

#[test]
#[ignore = "needs root and JDK 21: run scripts/test.sh"]
fn jdk21_generational_zgc_thread_states_match_jcmd() {
    every_dialect(&jdk(21), &["-XX:+UseZGC", "-XX:+ZGenerational"]);
}

#[test]
#[ignore = "needs root and JDK 25: run scripts/test.sh"]
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
#[ignore = "needs root and JDK 17: run scripts/test.sh"]
fn top_blocked_and_waiting_columns_match_jcmd() {
    let java_home = jdk17();
    let jvm = crate::threads::start_target(&java_home, &[]);
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
#[ignore = "needs root and JDK 17: run scripts/test.sh"]
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
    let serve = crate::serve::Serve::start(&["--pid", &pid, "--thread-states"]);
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
