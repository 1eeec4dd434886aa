//! `inspect hot` and `inspect record` on `tests/java/HotTarget.java`: "burner" spends 75% of its
//! work in `a()` and 25% in `b()` (three calls and one of the same out-of-line `work`), "looper"
//! runs a C2-compiled counted loop (no safepoint poll: a safepoint-biased sampler would never see
//! it inside `counted`), 500 threads are parked. `hot`'s busiest threads and CPU shares against
//! `/proc`'s read around it; `record`'s a/b split within 5 points of 75/25 (more where fewer
//! samples were taken) and the counted loop seen; its SVG (parsed as XML by Python's
//! `xml.etree`), speedscope and collapsed files checked; the parked threads never held.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{Jvm, inspect, inspect_ok, jdk, scratch_dir, test_classes};

/// HotTarget's flags before `-cp`: `work` kept out of line, so a() and b() are 3:1 whatever the
/// JIT did to them.
pub const HOT_TARGET_FLAGS: &[&str] = &[
    "-Xmx64m",
    "-XX:CompileCommand=quiet",
    "-XX:CompileCommand=dontinline,HotTarget::work",
];

fn start(major: u32) -> Jvm {
    let home = jdk(major);
    let mut cmd = Command::new(home.join("bin/java"));
    cmd.args(HOT_TARGET_FLAGS)
        .arg("-cp")
        .arg(test_classes())
        .args(["HotTarget", "500"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, &home)
}

/// The host ids of the threads named `names` (their OS names, which HotSpot sets to the Java
/// names).
fn tids(pid: i32, names: &[&str]) -> HashMap<String, i32> {
    let mut out = HashMap::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let tid: i32 = e.unwrap().file_name().to_str().unwrap().parse().unwrap();
        let comm =
            std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).unwrap_or_default();
        if names.contains(&comm.trim()) {
            out.insert(comm.trim().to_string(), tid);
        }
    }
    assert_eq!(
        out.len(),
        names.len(),
        "threads {names:?} of {pid}: {out:?}"
    );
    out
}

/// A thread's CPU time in milliseconds (`schedstat`'s run time).
fn cpu_ms(pid: i32, tid: i32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).unwrap();
    s.split_whitespace().next().unwrap().parse::<f64>().unwrap() / 1e6
}

fn hot(major: u32) {
    hot_on(&start(major), &format!("JDK {major}"));
}

/// `inspect hot` on a running HotTarget (`what`: the JDK's name in messages).
pub fn hot_on(jvm: &Jvm, what: &str) {
    let pid = jvm.pid;
    let ids = tids(pid, &["burner", "looper"]);
    let began = std::time::Instant::now();
    let before: HashMap<&String, f64> = ids.iter().map(|(n, t)| (n, cpu_ms(pid, *t))).collect();
    let out = inspect(&[
        "hot",
        "--format",
        "json",
        "-v",
        "--interval",
        "2s",
        // Grouped as Elasticsearch groups them, ten snapshots of which the first is the only
        // one in b() (0.25 × 0.75⁹: one run in fifty) form one group of the three frames every
        // stack shares, naming neither a() nor b(); of twenty, one run in a thousand.
        "--snapshots",
        "20",
        &pid.to_string(),
    ]);
    let after: HashMap<&String, f64> = ids.iter().map(|(n, t)| (n, cpu_ms(pid, *t))).collect();
    let wall_ms = began.elapsed().as_secs_f64() * 1e3;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hot: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let threads = hot["threads"].as_array().unwrap();
    let top: Vec<&str> = threads[..2]
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        top.contains(&"burner") && top.contains(&"looper"),
        "{what}: the busiest threads are {top:?}: {hot:#}"
    );
    for t in &threads[..2] {
        let name = t["name"].as_str().unwrap();
        let ours = t["percent"].as_f64().unwrap();
        let proc_share = (after[&name.to_string()] - before[&name.to_string()]) * 100.0 / wall_ms;
        assert!(
            (ours - proc_share).abs() <= 10.0,
            "{what}: {name}: inspect says {ours:.1}%, /proc {proc_share:.1}% around it"
        );
        let frames: Vec<&str> = t["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["frames"].as_array().unwrap())
            .map(|f| f.as_str().unwrap())
            .collect();
        let expected: &[&str] = if name == "burner" {
            &["HotTarget.a(", "HotTarget.b("]
        } else {
            &["HotTarget.counted("]
        };
        assert!(
            expected
                .iter()
                .any(|e| frames.iter().any(|f| f.starts_with(e))),
            "{what}: {name}'s snapshots: {frames:?}"
        );
    }
    // The parked threads never walked, never held: only threads that ran are.
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in stderr.lines().filter(|l| l.starts_with("snapshot ")) {
        let walked: usize = line
            .split(": ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(walked < 50, "{what}: parked threads walked: {line}");
    }
}

fn record(major: u32) {
    record_on(&start(major), &format!("JDK {major}"));
}

/// `inspect record` on a running HotTarget (`what`: the JDK's name in messages).
pub fn record_on(jvm: &Jvm, what: &str) {
    let pid = jvm.pid.to_string();
    let dir = scratch_dir("record");
    let collapsed = dir.path().join("stacks.txt");
    let out = inspect(&[
        "record",
        &pid,
        "--duration",
        "8s",
        "--rate",
        "199",
        "--threads",
        "-o",
        collapsed.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&collapsed).unwrap();
    let count = |thread: &str, frame: &str| -> u64 {
        text.lines()
            .filter(|l| l.starts_with(&format!("{thread};")))
            .filter(|l| {
                frame.is_empty() || l.split(';').any(|f| f.split(' ').next() == Some(frame))
            })
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    let (a, b) = (
        count("burner", "HotTarget.a"),
        count("burner", "HotTarget.b"),
    );
    assert!(
        a + b >= 300,
        "{what}: too few burner samples ({a} + {b}):\n{text}"
    );
    // A share of n samples scatters by sqrt(p(1-p)/n) (2.2 points at 49 a second for 8 s: ±5
    // failed one run in fifty); at 199 a second (about 1,500 samples) 5 points are 4.6 of those,
    // and a loaded machine's fewer samples widen the bound to 4.5 of them.
    let share = a as f64 * 100.0 / (a + b) as f64;
    let bound = (4.5 * (0.75 * 0.25 / (a + b) as f64).sqrt() * 100.0).max(5.0);
    assert!(
        (share - 75.0).abs() <= bound,
        "{what}: a() has {share:.1}% of a()+b() ({a}/{b}), not 75 ± {bound:.1}:\n{text}"
    );
    let (in_loop, looper) = (count("looper", "HotTarget.counted"), count("looper", ""));
    assert!(
        looper >= 50 && in_loop * 10 >= looper * 9,
        "{what}: the counted loop in {in_loop} of looper's {looper} samples:\n{text}"
    );
    assert!(
        !text.contains("parked-"),
        "a parked thread was sampled:\n{text}"
    );

    // The other two formats, by the file's name.
    let svg = dir.path().join("profile.svg");
    let speedscope = dir.path().join("profile.json");
    for file in [&svg, &speedscope] {
        inspect_ok(&[
            "record",
            &pid,
            "--duration",
            "2s",
            "-o",
            file.to_str().unwrap(),
        ]);
    }
    check_svg(&svg);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&speedscope).unwrap()).unwrap();
    assert_eq!(
        doc["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    let frames = doc["shared"]["frames"].as_array().unwrap();
    assert!(
        frames.iter().any(|f| f["name"] == "HotTarget.counted"),
        "{doc}"
    );
    for p in doc["profiles"].as_array().unwrap() {
        assert_eq!(p["type"], "sampled");
        let samples = p["samples"].as_array().unwrap();
        assert_eq!(samples.len(), p["weights"].as_array().unwrap().len());
        for s in samples {
            for i in s.as_array().unwrap() {
                assert!((i.as_u64().unwrap() as usize) < frames.len());
            }
        }
    }
    // Never overwritten.
    let again = inspect(&[
        "record",
        &pid,
        "--duration",
        "1s",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(!again.status.success());
}

/// The SVG parses as XML (Python's `xml.etree`) and names the sampled methods.
fn check_svg(svg: &Path) {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); \
             print(r.tag); print(' '.join(t.text or '' for t in r.iter('{http://www.w3.org/2000/svg}title')))",
        ])
        .arg(svg)
        .output()
        .expect("python3 (scripts/test.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("{http://www.w3.org/2000/svg}svg"),
        "{text}"
    );
    assert!(text.contains("HotTarget.counted"), "{text}");
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_hot_threads_rank_the_busy_threads_with_their_cpu_and_methods() {
    hot(17);
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_hot_threads_rank_the_busy_threads_with_their_cpu_and_methods() {
    hot(21);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_record_splits_a_and_b_and_sees_the_counted_loop() {
    record(17);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_record_splits_a_and_b_and_sees_the_counted_loop() {
    record(25);
}

#[test]
#[ignore = "requires root, JDK 11 (scripts/test.sh)"]
fn jdk11_hot_threads_rank_the_busy_threads_with_their_cpu_and_methods() {
    hot(11);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_hot_threads_rank_the_busy_threads_with_their_cpu_and_methods() {
    hot(25);
}

#[test]
#[ignore = "requires root, JDK 11 (scripts/test.sh)"]
fn jdk11_record_splits_a_and_b_and_sees_the_counted_loop() {
    record(11);
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_record_splits_a_and_b_and_sees_the_counted_loop() {
    record(21);
}
