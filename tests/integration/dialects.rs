//! The metric dialects (`--names micrometer|client_java|client_java_0|otel`) against the JVM's own
//! `java.lang.management` values: a test JVM (tests/java/MxReport.java) reports its MXBeans right
//! before and right after our read, at a quiet point (after `System.gc()`), for every collector of
//! JDK 8, 11, 17, 21 and 25. Every value that moves (GC counts and times, threads, classes, CPU,
//! descriptors, sizes) must lie between the two reports, never equal one of them: a concurrent
//! collector (ZGC, Shenandoah) runs cycles of its own between the reads. Max sizes must be equal;
//! used sizes may lag by what the README documents ("Metric dialects": PerfData's used sizes of
//! some spaces are refreshed only by a GC or by the 50 ms sampler), and Metaspace and Compressed
//! Class Space are as of the last GC, so they lie between a report taken before that GC and
//! the one after our read.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;

use crate::support::*;
use serde_json::Value;

const JAVA_HOME8: &str = "/usr/lib/jvm/java-8-openjdk-amd64";

/// MxReport compiled for JDK 8 and up, once per test binary.
fn classes() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mx-classes");
        std::fs::create_dir_all(&out).unwrap();
        run_ok(
            Command::new(jdk17().join("bin/javac"))
                .args(["--release", "8", "-nowarn", "-d"])
                .arg(&out)
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/MxReport.java")),
        );
        out
    })
}

/// A running MxReport; killed on drop.
struct MxJvm {
    child: Child,
    pid: i32,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl MxJvm {
    /// Starts MxReport on JDK `major` with `flags` (JDK 8 inside the JDK 8 root).
    fn start(major: u32, flags: &[&str]) -> MxJvm {
        let mut cmd = if major == 8 {
            let root = std::env::var_os("HSINSPECT_JDK8_ROOT")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").unwrap())
                        .join(".cache/hsinspect/jdk8-root")
                });
            assert!(
                root.join(".complete").exists(),
                "no JDK 8 root at {}: run scripts/jdk8-root.sh (or scripts/setup-test-deps.sh)",
                root.display()
            );
            let mut c =
                Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/jdk8-run.sh"));
            c.env("HSINSPECT_JDK8_ROOT", root)
                .env("HSINSPECT_JDK8_FD3", classes())
                .arg(format!("{JAVA_HOME8}/bin/java"));
            c
        } else {
            Command::new(jdk(major).join("bin/java"))
        };
        let cp = if major == 8 {
            "/proc/self/fd/3".to_string()
        } else {
            classes().display().to_string()
        };
        cmd.args(["-Xmx64m"])
            .args(flags)
            .args(["-cp", &cp, "MxReport", "4"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        let input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "READY", "MxReport did not start: {cmd:?}");
        let pid = child.id() as i32;
        MxJvm {
            child,
            pid,
            input,
            output,
        }
    }

    fn ask(&mut self, command: &str) -> String {
        writeln!(self.input, "{command}").unwrap();
        self.input.flush().unwrap();
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        assert!(!line.starts_with("ERROR"), "{line}");
        line
    }

    fn report(&mut self) -> Value {
        serde_json::from_str(&self.ask("report")).unwrap()
    }
}

impl Drop for MxJvm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How one dialect names what the test compares.
struct View {
    names: &'static str,
    pool_used: &'static str,
    pool_committed: &'static str,
    /// `None`: the dialect has no max with -1 (OpenTelemetry's limit leaves undefined ones out).
    pool_max: &'static str,
    pool_label: &'static str,
    max_minus_one: bool,
    gc_count: &'static [&'static str],
    gc_sum: &'static [&'static str],
    gc_label: &'static str,
    threads: [Option<&'static str>; 4],
    classes: [&'static str; 3],
    info: Option<&'static str>,
    cpu: (&'static str, f64),
    start_time: Option<&'static str>,
    open_fds: Option<&'static str>,
}

const VIEWS: &[View] = &[
    View {
        names: "client_java",
        pool_used: "jvm_memory_pool_used_bytes",
        pool_committed: "jvm_memory_pool_committed_bytes",
        pool_max: "jvm_memory_pool_max_bytes",
        pool_label: "pool",
        max_minus_one: true,
        gc_count: &["jvm_gc_collection_seconds_count"],
        gc_sum: &["jvm_gc_collection_seconds_sum"],
        gc_label: "gc",
        threads: [
            Some("jvm_threads_current"),
            Some("jvm_threads_daemon"),
            Some("jvm_threads_peak"),
            Some("jvm_threads_started_total"),
        ],
        classes: [
            "jvm_classes_currently_loaded",
            "jvm_classes_loaded_total",
            "jvm_classes_unloaded_total",
        ],
        info: Some("jvm_runtime_info"),
        cpu: ("process_cpu_seconds_total", 1.0),
        start_time: Some("process_start_time_seconds"),
        open_fds: Some("process_open_fds"),
    },
    View {
        names: "client_java_0",
        pool_used: "jvm_memory_pool_bytes_used",
        pool_committed: "jvm_memory_pool_bytes_committed",
        pool_max: "jvm_memory_pool_bytes_max",
        pool_label: "pool",
        max_minus_one: true,
        gc_count: &["jvm_gc_collection_seconds_count"],
        gc_sum: &["jvm_gc_collection_seconds_sum"],
        gc_label: "gc",
        threads: [
            Some("jvm_threads_current"),
            Some("jvm_threads_daemon"),
            Some("jvm_threads_peak"),
            Some("jvm_threads_started_total"),
        ],
        classes: [
            "jvm_classes_currently_loaded",
            "jvm_classes_loaded_total",
            "jvm_classes_unloaded_total",
        ],
        info: Some("jvm_info"),
        cpu: ("process_cpu_seconds_total", 1.0),
        start_time: Some("process_start_time_seconds"),
        open_fds: Some("process_open_fds"),
    },
    View {
        names: "micrometer",
        pool_used: "jvm_memory_used_bytes",
        pool_committed: "jvm_memory_committed_bytes",
        pool_max: "jvm_memory_max_bytes",
        pool_label: "id",
        max_minus_one: true,
        gc_count: &[
            "jvm_gc_pause_seconds_count",
            "jvm_gc_concurrent_phase_time_seconds_count",
        ],
        gc_sum: &[
            "jvm_gc_pause_seconds_sum",
            "jvm_gc_concurrent_phase_time_seconds_sum",
        ],
        gc_label: "gc",
        threads: [
            Some("jvm_threads_live_threads"),
            Some("jvm_threads_daemon_threads"),
            Some("jvm_threads_peak_threads"),
            Some("jvm_threads_started_threads_total"),
        ],
        classes: [
            "jvm_classes_loaded_classes",
            "jvm_classes_loaded_count_classes_total",
            "jvm_classes_unloaded_classes_total",
        ],
        info: Some("jvm_info"),
        cpu: ("process_cpu_time_ns_total", 1e-9),
        start_time: Some("process_start_time_seconds"),
        open_fds: Some("process_files_open_files"),
    },
    View {
        names: "otel",
        pool_used: "jvm_memory_used_bytes",
        pool_committed: "jvm_memory_committed_bytes",
        pool_max: "jvm_memory_limit_bytes",
        pool_label: "jvm_memory_pool_name",
        max_minus_one: false,
        gc_count: &["jvm_gc_duration_seconds_count"],
        gc_sum: &["jvm_gc_duration_seconds_sum"],
        gc_label: "jvm_gc_name",
        threads: [None, None, None, None],
        classes: [
            "jvm_class_count",
            "jvm_class_loaded_total",
            "jvm_class_unloaded_total",
        ],
        info: None,
        cpu: ("jvm_cpu_time_seconds_total", 1.0),
        start_time: None,
        open_fds: None,
    },
];

/// `family{label=key}` → value, for every sample of the family.
fn by_label(
    samples: &[crate::support::prom::Sample],
    family: &str,
    label: &str,
) -> BTreeMap<String, f64> {
    samples
        .iter()
        .filter(|s| s.name == family)
        .map(|s| (s.labels.get(label).cloned().unwrap_or_default(), s.value))
        .collect()
}

fn one(samples: &[crate::support::prom::Sample], family: &str) -> f64 {
    let found: Vec<f64> = samples
        .iter()
        .filter(|s| s.name == family)
        .map(|s| s.value)
        .collect();
    assert_eq!(found.len(), 1, "{family}: {found:?}");
    found[0]
}

fn n(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The lag a pool's used size may show against JMX (see the module docs): spaces whose
/// PerfData `used` only a GC or the 50 ms sampler refreshes. Bytes.
fn used_lag(pool: &str) -> f64 {
    match pool {
        // Allocation goes on here between a sample and the read (TLABs, ZGC pages).
        "Eden Space" | "PS Eden Space" | "Par Eden Space" | "G1 Eden Space" => 8.0 * 1048576.0,
        "ZHeap" | "ZGC Young Generation" | "ZGC Old Generation" | "Shenandoah" => 8.0 * 1048576.0,
        // Metaspace's counters are as of the last GC: bracketed by a report before it instead.
        _ => 0.0,
    }
}

/// JMX's usage of pool `name` when the latest collection of `report` ended (each collector's
/// `GcInfo`): where PerfData's Metaspace counters stand until the next one.
fn after_last_gc(report: &Value, name: &str) -> Value {
    report["collectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["after_last"][name].is_object())
        .max_by_key(|g| g["last_end_ms"].as_i64().unwrap_or(-1))
        .map(|g| g["after_last"][name].clone())
        .unwrap_or_else(|| panic!("no collection has ended with {name} in {report}"))
}

/// The lag a pool's committed size may show: generational ZGC moves pages between its
/// generations between two refreshes of their counters (the sum is exact). Bytes.
fn committed_lag(pool: &str) -> f64 {
    match pool {
        "ZGC Young Generation" | "ZGC Old Generation" => 8.0 * 1048576.0,
        _ => 0.0,
    }
}

/// One JVM: warm up, GC, report, read in every dialect, report; compare.
fn check(major: u32, gc: &str, flags: &[&str]) -> Vec<String> {
    let mut jvm = MxJvm::start(major, flags);
    jvm.report(); // loads the reporting classes
    jvm.ask("gc");
    let before = jvm.report();
    let pid = jvm.pid.to_string();
    let pages: Vec<(&View, String)> = VIEWS
        .iter()
        .map(|v| {
            (
                v,
                inspect_ok(&[&pid, "--format", "prometheus", "--names", v.names]),
            )
        })
        .collect();
    let after = jvm.report();
    let mut problems = Vec::new();
    let what = format!("JDK {major} {gc}");
    let mut complain = |s: String| problems.push(format!("{what}: {s}"));

    // The JMX twins: heap and non-heap pools with PerfData, collectors with a PerfData twin.
    let jmx_pools: Vec<&Value> = after["pools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            let name = p["name"].as_str().unwrap();
            !name.starts_with("CodeHeap") && name != "Code Cache"
        })
        .collect();
    let pool_in = |report: &Value, name: &str| {
        report["pools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
            .unwrap()
    };
    let gc_before = |name: &str| {
        before["collectors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no collector {name} in the report before: {before}"))
    };
    let jmx_gcs: Vec<&Value> = after["collectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| {
            let name = g["name"].as_str().unwrap();
            // The beans of whole cycles have no PerfData twin (JDK 11 to 16 call ZGC's "ZGC").
            !name.ends_with("Cycles") && !name.starts_with("Shenandoah") && name != "ZGC"
        })
        .collect();

    for (view, page) in &pages {
        let (samples, _types) = crate::support::prom::parse(page);
        let v = view.names;
        // Pools: the same names, committed and max equal, used within the lag.
        let used = by_label(&samples, view.pool_used, view.pool_label);
        let committed = by_label(&samples, view.pool_committed, view.pool_label);
        let max = by_label(&samples, view.pool_max, view.pool_label);
        let ours: BTreeSet<&String> = used.keys().collect();
        let theirs: BTreeSet<String> = jmx_pools
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect();
        if ours.iter().map(|s| s.as_str()).collect::<BTreeSet<_>>()
            != theirs.iter().map(|s| s.as_str()).collect()
        {
            complain(format!("{v}: pools {ours:?}, JMX {theirs:?}"));
        }
        for p in &jmx_pools {
            let name = p["name"].as_str().unwrap();
            let b = pool_in(&before, name);
            let (mut u0, u1) = (n(&b["usage"]["used"]), n(&p["usage"]["used"]));
            let (mut c0, c1) = (n(&b["usage"]["committed"]), n(&p["usage"]["committed"]));
            // As of the last GC: between JMX's usage when the last collection before our read
            // ended (a GC may unload classes) and its usage after the read.
            if matches!(name, "Metaspace" | "Compressed Class Space") {
                let at_gc = after_last_gc(&before, name);
                u0 = u0.min(n(&at_gc["used"]));
                c0 = c0.min(n(&at_gc["committed"]));
            }
            let jmax = n(&p["usage"]["max"]);
            let lag = used_lag(name);
            if let Some(&u) = used.get(name) {
                let off = (u - u0.clamp(u0.min(u1), u0.max(u1)))
                    .abs()
                    .min((u - u1).abs());
                let mut seen = LAG_SEEN.lock().unwrap();
                let e = seen
                    .entry(format!("JDK {major} {gc} {name}"))
                    .or_insert(0.0);
                *e = e.max(off);
            }
            if let Some(&u) = used.get(name)
                && (u < u0.min(u1) - lag || u > u0.max(u1) + lag)
            {
                complain(format!(
                    "{v}: {name} used {u}, JMX {u0}..{u1} (lag allowed {lag})"
                ));
            }
            let clag = committed_lag(name);
            if let Some(&c) = committed.get(name)
                && (c < c0.min(c1) - clag || c > c0.max(c1) + clag)
            {
                complain(format!(
                    "{v}: {name} committed {c}, JMX {c0}..{c1} (lag allowed {clag})"
                ));
            }
            match (max.get(name), jmax) {
                (Some(&m), j) if m == j => {}
                (None, j) if j < 0.0 && !view.max_minus_one => {}
                (m, j) => complain(format!("{v}: {name} max {m:?}, JMX {j}")),
            }
        }
        // Collectors: the same beans, counts between the two reports (a concurrent collector
        // runs cycles between them), times between them within 2 ms + 5% (JMX truncates to
        // milliseconds; the two timers start and stop apart). PerfData's timer
        // (`TraceCollectorStats`) encloses JMX's (`TraceMemoryManagerStats`) and also counts the
        // end-of-collection bookkeeping, which a loaded machine can stretch (21.5 ms against
        // JMX's 5 ms for one full GC): for the collections System.gc() asked for, that much more
        // is allowed as those calls took, the bound on what they ran.
        let mut counts = BTreeMap::new();
        let mut sums = BTreeMap::new();
        for f in view.gc_count {
            counts.extend(by_label(&samples, f, view.gc_label));
        }
        for f in view.gc_sum {
            sums.extend(by_label(&samples, f, view.gc_label));
        }
        let theirs: BTreeSet<&str> = jmx_gcs
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        if counts.keys().map(|s| s.as_str()).collect::<BTreeSet<_>>() != theirs {
            complain(format!(
                "{v}: collectors {:?}, JMX {theirs:?}",
                counts.keys()
            ));
        }
        for g in &jmx_gcs {
            let name = g["name"].as_str().unwrap();
            let (Some(c), Some(s)) = (counts.get(name), sums.get(name)) else {
                continue;
            };
            let b = gc_before(name);
            let (c0, c1) = (n(&b["count"]), n(&g["count"]));
            if *c < c0 || *c > c1 {
                complain(format!("{v}: {name} count {c}, JMX {c0}..{c1}"));
            }
            let (ms0, ms1) = (n(&b["time_ms"]), n(&g["time_ms"]));
            let ms = s * 1e3;
            let asked = n(&after["gc_calls_ms"]);
            if ms < ms0 - (2.0 + ms0 * 0.05) || ms > ms1 + 2.0 + ms1 * 0.05 + asked {
                complain(format!(
                    "{v}: {name} time {s} s, JMX {ms0}..{ms1} ms (System.gc() calls took {asked} ms)"
                ));
            }
        }
        // Threads and classes: between the two reports.
        let between =
            |ours: f64, a: &Value, b: &Value| ours >= n(a).min(n(b)) && ours <= n(a).max(n(b));
        for (family, key) in view
            .threads
            .iter()
            .zip(["live", "daemon", "peak", "started"])
        {
            if let Some(family) = family {
                let ours = one(&samples, family);
                if !between(ours, &before["threads"][key], &after["threads"][key]) {
                    complain(format!(
                        "{v}: {family} {ours}, JMX {}",
                        after["threads"][key]
                    ));
                }
            }
        }
        if view.names == "otel" {
            let t = by_label(&samples, "jvm_thread_count", "jvm_thread_daemon");
            let live = t.values().sum::<f64>();
            let daemon = t.get("true").copied().unwrap_or(-1.0);
            if !between(live, &before["threads"]["live"], &after["threads"]["live"])
                || !between(
                    daemon,
                    &before["threads"]["daemon"],
                    &after["threads"]["daemon"],
                )
            {
                complain(format!(
                    "{v}: jvm_thread_count {t:?}, JMX {}",
                    after["threads"]
                ));
            }
        }
        for (family, key) in view
            .classes
            .iter()
            .zip(["loaded", "total_loaded", "unloaded"])
        {
            let ours = one(&samples, family);
            if !between(ours, &before["classes"][key], &after["classes"][key]) {
                complain(format!(
                    "{v}: {family} {ours}, JMX {}",
                    after["classes"][key]
                ));
            }
        }
        // Identity, start time, CPU and descriptors.
        let rt = &after["runtime"];
        if let Some(info) = view.info {
            let s = samples.iter().find(|s| s.name == info).unwrap();
            let want_version = if major == 8 {
                None
            } else {
                rt["runtime_version"].as_str()
            };
            if s.labels["vendor"] != rt["vm_vendor"].as_str().unwrap()
                || s.labels["runtime"] != rt["runtime_name"].as_str().unwrap()
                || want_version.is_some_and(|w| s.labels["version"] != w)
            {
                complain(format!("{v}: {info} {:?}, JMX {rt}", s.labels));
            }
        }
        if let Some(family) = view.start_time {
            let ours = one(&samples, family) * 1e3;
            if (ours - n(&rt["start_time_ms"])).abs() > 1.0 {
                complain(format!(
                    "{v}: {family} {ours} ms, JMX {}",
                    rt["start_time_ms"]
                ));
            }
        }
        let (cpu_family, scale) = view.cpu;
        let cpu = one(&samples, cpu_family) * scale;
        let (cpu0, cpu1) = (
            n(&before["os"]["process_cpu_ns"]) / 1e9,
            n(&after["os"]["process_cpu_ns"]) / 1e9,
        );
        // /proc counts CPU in clock ticks (10 ms); the JVM's clock in nanoseconds.
        if cpu < cpu0 - 0.02 || cpu > cpu1 + 0.02 {
            complain(format!("{v}: {cpu_family} {cpu} s, JMX {cpu0}..{cpu1} s"));
        }
        if let Some(family) = view.open_fds {
            let ours = one(&samples, family);
            // The JVM counts its descriptors with one more open (the /proc/self/fd it reads).
            let (f0, f1) = (n(&before["os"]["open_fds"]), n(&after["os"]["open_fds"]));
            if ours < f0.min(f1) - 2.0 || ours > f0.max(f1) + 2.0 {
                complain(format!(
                    "{v}: {family} {ours}, JMX {}",
                    after["os"]["open_fds"]
                ));
            }
        }
    }
    problems
}

/// The largest used-size lag seen per JDK, collector and pool (printed for the README's table).
static LAG_SEEN: std::sync::Mutex<BTreeMap<String, f64>> = std::sync::Mutex::new(BTreeMap::new());

fn check_all(major: u32, collectors: &[(&str, &[&str])]) {
    let mut problems = Vec::new();
    for (gc, flags) in collectors {
        problems.extend(check(major, gc, flags));
    }
    for (pool, lag) in LAG_SEEN.lock().unwrap().iter() {
        if *lag > 0.0 && pool.starts_with(&format!("JDK {major} ")) {
            eprintln!("measured used lag: {pool}: {lag} bytes");
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

const SERIAL: (&str, &[&str]) = ("serial", &["-XX:+UseSerialGC"]);
const PARALLEL: (&str, &[&str]) = ("parallel", &["-XX:+UseParallelGC"]);
const G1: (&str, &[&str]) = ("g1", &["-XX:+UseG1GC"]);
const SHENANDOAH: (&str, &[&str]) = ("shenandoah", &["-XX:+UseShenandoahGC"]);
const ZGC: (&str, &[&str]) = ("zgc", &["-XX:+UseZGC"]);

#[test]
#[ignore = "requires JDK 8 root (scripts/test.sh)"]
fn dialects_equal_jmx_on_jdk8() {
    check_all(
        8,
        &[SERIAL, PARALLEL, G1, ("cms", &["-XX:+UseConcMarkSweepGC"])],
    );
}

#[test]
#[ignore = "requires JDK 11 (scripts/test.sh)"]
fn dialects_equal_jmx_on_jdk11() {
    check_all(
        11,
        &[
            SERIAL,
            PARALLEL,
            G1,
            SHENANDOAH,
            ("zgc", &["-XX:+UnlockExperimentalVMOptions", "-XX:+UseZGC"]),
        ],
    );
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn dialects_equal_jmx_on_jdk17() {
    check_all(17, &[SERIAL, PARALLEL, G1, SHENANDOAH, ZGC]);
}

#[test]
#[ignore = "requires JDK 21 (scripts/test.sh)"]
fn dialects_equal_jmx_on_jdk21() {
    check_all(
        21,
        &[
            SERIAL,
            PARALLEL,
            G1,
            SHENANDOAH,
            ZGC,
            ("zgc-generational", &["-XX:+UseZGC", "-XX:+ZGenerational"]),
        ],
    );
}

#[test]
#[ignore = "requires JDK 25 (scripts/test.sh)"]
fn dialects_equal_jmx_on_jdk25() {
    check_all(25, &[SERIAL, PARALLEL, G1, SHENANDOAH, ZGC]);
}
