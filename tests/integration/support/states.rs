//! Thread states counted from jcmd's dumps, and the checks of ours against them (`serve
//! --thread-states`, `top`, the OTLP push, JDK 8).

use std::collections::BTreeMap;
use std::path::Path;

use super::*;

/// A thread of a jcmd dump: its state's first word (`TIMED_WAITING`) and whether it is a daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub state: String,
    pub daemon: bool,
}

/// The Java threads of a `Thread.print` dump with a `java.lang.Thread.State` line, by name and
/// Java id.
pub fn jcmd_states(text: &str) -> BTreeMap<(String, u64), Seen> {
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

pub fn jcmd_of(java_home: &Path, pid: i32) -> String {
    let out = super::output_within(
        Command::new(java_home.join("bin/jcmd"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .args([&pid.to_string(), "Thread.print"]),
        super::COMMAND_LIMIT,
        Some(pid),
    );
    assert!(out.status.success(), "jcmd Thread.print failed");
    String::from_utf8(out.stdout).unwrap()
}

/// A jcmd dump of `pid` (JDK at `java_home`) and its counts by (state, daemon).
pub type Tally = (BTreeMap<(String, u64), Seen>, BTreeMap<(String, bool), u64>);

/// `jcmd <pid> Thread.print`'s threads and their counts by (state, daemon).
pub fn jcmd_tally(java_home: &Path, pid: i32) -> Tally {
    let dump = jcmd_states(&jcmd_of(java_home, pid));
    let counts = tally(&dump);
    (dump, counts)
}

/// Asserts that `ours` (counts by `Thread.State` name and daemon status) is, for every key, within
/// the threads that changed between the dumps `before` and `after` of both their counts.
pub fn within(ours: &BTreeMap<(String, bool), f64>, before: &Tally, after: &Tally) {
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
pub fn tally(dump: &BTreeMap<(String, u64), Seen>) -> BTreeMap<(String, bool), u64> {
    let mut out = BTreeMap::new();
    for s in dump.values() {
        *out.entry((s.state.clone(), s.daemon)).or_default() += 1;
    }
    out
}

/// How many threads differ (in state, daemon status or presence) between two dumps.
pub fn changed(
    before: &BTreeMap<(String, u64), Seen>,
    after: &BTreeMap<(String, u64), Seen>,
) -> u64 {
    let mut n = 0;
    for (k, b) in before {
        if after.get(k) != Some(b) {
            n += 1;
        }
    }
    n + after.keys().filter(|k| !before.contains_key(*k)).count() as u64
}

pub const STATES: [&str; 6] = [
    "NEW",
    "RUNNABLE",
    "BLOCKED",
    "WAITING",
    "TIMED_WAITING",
    "TERMINATED",
];

/// One dialect's reading of a page: counts by (`Thread.State` name, daemon), daemon `None`
/// where the family has no daemon label.
pub type Counts = BTreeMap<(String, Option<bool>), u64>;

pub fn from_page(page: &str, pid: i32, names: &str) -> Counts {
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
pub fn expect(tally: &BTreeMap<(String, bool), u64>, by_daemon: bool) -> Counts {
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
pub fn agree(pid: i32, jcmd: &dyn Fn(i32) -> String, names: &str) -> String {
    let serve = super::serve::Serve::start(&[
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
