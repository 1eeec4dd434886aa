//! `inspect histo` against `jcmd <pid> GC.class_histogram -all` of the same JVM: the HeapTarget
//! program fills its heap with known objects, collects once and then allocates nothing. jcmd's
//! histogram is taken before and after ours (or before and after the core is written); every
//! class whose row is the same in both of jcmd's must be the same in ours, those classes must
//! hold at least 90 % of the heap's bytes, and HeapTarget's own classes must be among them.
//!
//! Expected difference: jcmd first makes the heap parsable and counts each thread's unused TLAB
//! tail as a filler array (`[I` up to JDK 18, `[Ljdk.internal.vm.FillerElement;` from 21);
//! `inspect histo` skips those tails, so for the filler class ours may only be smaller.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{Jvm, assert_left_alone, gcore, inspect_ok, jdk, scratch_dir, test_classes};

/// How many of each known kind HeapTarget makes.
const COUNT: u64 = 20_000;

/// Rows of a histogram by `class name (module)` (the text after the bytes column): instances
/// and bytes, summed over classes of one name in several loaders; and the header lines.
fn parse(text: &str) -> (Vec<String>, BTreeMap<String, (u64, u64)>) {
    let mut rows = BTreeMap::new();
    let mut header = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        let Some((rank, rest)) = t.split_once(": ") else {
            if t.starts_with("num") || t.starts_with("---") {
                header.push(line.to_string());
            }
            continue;
        };
        if rank.parse::<u64>().is_err() {
            continue;
        }
        let mut parts = rest.trim_start().splitn(2, ' ');
        let instances: u64 = parts.next().unwrap().parse().unwrap();
        let rest = parts.next().unwrap().trim_start();
        let (bytes, name) = rest.split_once("  ").unwrap();
        let e = rows.entry(name.to_string()).or_insert((0, 0));
        e.0 += instances;
        e.1 += bytes.parse::<u64>().unwrap();
    }
    (header, rows)
}

fn jcmd_histogram(java_home: &Path, pid: i32) -> String {
    let out = Command::new(java_home.join("bin/jcmd"))
        .args([&pid.to_string(), "GC.class_histogram", "-all"])
        .output()
        .expect("running jcmd");
    assert!(out.status.success(), "jcmd GC.class_histogram failed");
    String::from_utf8(out.stdout).unwrap()
}

fn start(java_home: &Path, flags: &[&str]) -> Jvm {
    let mut cmd = Command::new(java_home.join("bin/java"));
    cmd.env("MALLOC_ARENA_MAX", "2")
        .args(["-Xmx64m", "-XX:ReservedCodeCacheSize=16m"])
        .args(flags)
        .arg("-cp")
        .arg(test_classes())
        .args(["HeapTarget", &COUNT.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let jvm = Jvm::spawn(cmd, java_home);
    // The first attach starts the Attach Listener: let it happen before the first histogram.
    let _ = Command::new(java_home.join("bin/jcmd"))
        .args([&jvm.pid.to_string(), "VM.version"])
        .output();
    jvm
}

/// Compares ours with jcmd's `before` and `after`.
fn compare(before: &str, ours: &str, after: &str) {
    let (jcmd_header, before) = parse(before);
    let (_, after) = parse(after);
    let (header, ours) = parse(ours);
    assert_eq!(header, jcmd_header, "header lines");
    let fillers = [
        "[I",
        "[Ljdk.internal.vm.FillerElement;",
        "jdk.internal.vm.FillerArray",
    ];
    let is_filler = |name: &str| {
        let class = name.split(" (").next().unwrap_or(name);
        fillers.contains(&class)
    };
    let total: u64 = after
        .iter()
        .filter(|(n, _)| !is_filler(n))
        .map(|(_, r)| r.1)
        .sum();
    let mut stable_bytes = 0;
    let mut wrong = Vec::new();
    let names: std::collections::BTreeSet<&String> = before
        .keys()
        .chain(after.keys())
        .chain(ours.keys())
        .collect();
    for name in names {
        let b = before.get(name).copied().unwrap_or_default();
        let a = after.get(name).copied().unwrap_or_default();
        let o = ours.get(name).copied().unwrap_or_default();
        if b != a {
            continue;
        }
        if is_filler(name) {
            if o.0 > a.0 || o.1 > a.1 {
                wrong.push(format!(
                    "{name}: jcmd {a:?}, ours {o:?} (a filler class: ours may only be smaller)"
                ));
            }
            continue;
        }
        stable_bytes += a.1;
        if o != a {
            wrong.push(format!("{name}: jcmd {a:?}, ours {o:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "rows differ from jcmd's:\n{}",
        wrong.join("\n")
    );
    assert!(
        stable_bytes * 10 >= total * 9,
        "the stable classes hold {stable_bytes} of {total} bytes: too few to judge"
    );
    let row = |prefix: &str| {
        ours.iter()
            .find(|(n, _)| n.starts_with(prefix))
            .map(|(_, r)| *r)
            .unwrap_or_else(|| panic!("no row {prefix} in ours"))
    };
    assert_eq!(row("HeapTarget$Node").0, COUNT);
    assert!(row("[B (java.base@").0 >= COUNT / 10);
    assert!(row("java.lang.String (java.base@").0 >= COUNT);
    assert!(row("[J (java.base@").0 >= COUNT / 100);
    assert!(row("[Ljava.lang.Object; (java.base@").0 >= COUNT / 100);
    // A hidden class (the capturing lambda), named as jcmd names it.
    let lambda = ours
        .iter()
        .find(|(n, _)| n.starts_with("HeapTarget$$Lambda") && n.contains("/0x"))
        .unwrap_or_else(|| panic!("no lambda row in ours"));
    assert_eq!(lambda.1.0, COUNT / 100, "{}", lambda.0);
}

fn live(major: u32, flags: &[&str]) {
    let home = jdk(major);
    let jvm = start(&home, flags);
    let before = jcmd_histogram(&home, jvm.pid);
    let ours = inspect_ok(&["histo", &jvm.pid.to_string()]);
    assert_left_alone(jvm.pid, false);
    let after = jcmd_histogram(&home, jvm.pid);
    compare(&before, &ours, &after);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_serial_live() {
    live(17, &["-XX:+UseSerialGC"]);
}

/// Also C1 only: no C2, so no allocation-prefetch reserve (`_reserve_for_allocation_prefetch`
/// is 0) and a TLAB's hard end is its `_end` plus room for the smallest filler.
#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_serial_uncompressed_oops_and_class_pointers() {
    live(
        17,
        &[
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-XX:-UseCompressedOops",
            "-XX:-UseCompressedClassPointers",
        ],
    );
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_parallel_live() {
    live(17, &["-XX:+UseParallelGC"]);
}

/// CDS off: with JDK 17's G1 the archived heap objects are mapped into open-archive regions and
/// jcmd leaves out those the last marking found unreachable (`HeapRegion::is_obj_dead` with the
/// previous mark bitmap, which vmStructs does not export); a linear walk counts them.
#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_g1_live_without_cds() {
    live(17, &["-XX:+UseG1GC", "-Xshare:off"]);
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_serial_live() {
    live(21, &["-XX:+UseSerialGC"]);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_serial_compact_headers() {
    live(25, &["-XX:+UseSerialGC", "-XX:+UseCompactObjectHeaders"]);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_serial_uncompressed_oops() {
    live(25, &["-XX:+UseSerialGC", "-XX:-UseCompressedOops"]);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_parallel_live() {
    live(25, &["-XX:+UseParallelGC"]);
}

/// G1 with 1 MiB regions: HeapTarget's `int[300000]` is humongous.
#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_g1_live() {
    live(25, &["-XX:+UseG1GC", "-XX:G1HeapRegionSize=1m"]);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_g1_compact_headers() {
    live(
        25,
        &[
            "-XX:+UseG1GC",
            "-XX:G1HeapRegionSize=1m",
            "-XX:+UseCompactObjectHeaders",
        ],
    );
}

/// A gcore of a running JVM, read after the JVM is gone: jcmd before and after the core is
/// written bracket it.
#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn jdk17_serial_gcore() {
    let home = jdk(17);
    let dir = scratch_dir("heap-core");
    let jvm = start(
        &home,
        &["-XX:+UseSerialGC", "-XX:CompressedClassSpaceSize=16m"],
    );
    let before = jcmd_histogram(&home, jvm.pid);
    let core = gcore(jvm.pid, dir.path());
    let after = jcmd_histogram(&home, jvm.pid);
    drop(jvm);
    let ours = inspect_ok(&["histo", "--core", core.to_str().unwrap()]);
    compare(&before, &ours, &after);
}
