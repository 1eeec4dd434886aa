//! `inspect histo` against `jcmd <pid> GC.class_histogram -all` of the same JVM: the HeapTarget
//! program fills its heap with known objects, collects once and then allocates nothing. jcmd's
//! histogram is taken before and after ours (or before and after the core is written); every
//! class whose row is the same in both of jcmd's must be the same in ours, those classes must
//! hold at least 90 % of the heap's bytes, and HeapTarget's own classes must be among them.
//!
//! Expected difference: jcmd first makes the heap parsable and counts each thread's unused TLAB
//! tail as a filler array (`[I` up to JDK 18, `[Ljdk.internal.vm.FillerElement;` from 21);
//! `inspect histo` skips those tails, so for the filler class ours may only be smaller.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::histo::{COUNT, compare, compare_as};
use crate::support::{Jvm, assert_left_alone, gcore, inspect_ok, jdk, scratch_dir, test_classes};

pub(crate) fn jcmd_histogram(java_home: &Path, pid: i32) -> String {
    let out = Command::new(java_home.join("bin/jcmd"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .args([&pid.to_string(), "GC.class_histogram", "-all"])
        .output()
        .expect("running jcmd");
    assert!(out.status.success(), "jcmd GC.class_histogram failed");
    String::from_utf8(out.stdout).unwrap()
}

pub(crate) fn start(java_home: &Path, flags: &[&str]) -> Jvm {
    start_with(java_home, &[&["-Xmx64m"], flags].concat(), COUNT)
}

/// HeapTarget with `count` objects of each kind and `flags` (which give its `-Xmx`).
pub(crate) fn start_with(java_home: &Path, flags: &[&str], count: u64) -> Jvm {
    let mut cmd = Command::new(java_home.join("bin/java"));
    cmd.env("MALLOC_ARENA_MAX", "2")
        .args(["-XX:ReservedCodeCacheSize=16m"])
        .args(flags)
        .arg("-cp")
        .arg(test_classes())
        .args(["HeapTarget", &count.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let jvm = Jvm::spawn(cmd, java_home);
    // The first attach starts the Attach Listener: let it happen before the first histogram.
    let _ = Command::new(java_home.join("bin/jcmd"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .args([&jvm.pid.to_string(), "VM.version"])
        .output();
    jvm
}

/// HeapTarget thrashing (`-Dheap.thrash=true`: its old generation refilled again and again, so
/// that back-to-back full collections take most of its time) under `flags`; no jcmd attach
/// first (on such a JVM jcmd often fails: "doesn't respond within 10500ms").
pub(crate) fn start_thrashing(java_home: &Path, flags: &[&str]) -> Jvm {
    let mut cmd = Command::new(java_home.join("bin/java"));
    cmd.env("MALLOC_ARENA_MAX", "2")
        .args([
            "-Xmx64m",
            "-XX:ReservedCodeCacheSize=16m",
            "-Dheap.thrash=true",
        ])
        .args(flags)
        .arg("-cp")
        .arg(test_classes())
        .args(["HeapTarget", &COUNT.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, java_home)
}

/// A JVM thrashing in full collections, where jcmd is late or fails: `inspect histo` waits,
/// with the JVM running, for a stop-the-world collection to end (`CollectedHeap::_is_gc_active`,
/// `_is_stw_gc_active` from JDK 21) and holds the JVM between two. Its histogram counts
/// HeapTarget's objects exactly and never warns of a read inside a collection; under Serial
/// and Parallel, where a full collection runs most of the time, at least one of five reads
/// says it waited one out.
#[test]
#[ignore = "requires root, JDK 17, JDK 21 (scripts/test.sh)"]
fn thrashing_jvm_gets_a_histogram_between_its_collections() {
    for (major, gc) in [
        (17, "-XX:+UseParallelGC"),
        (21, "-XX:+UseSerialGC"),
        (21, "-XX:+UseG1GC"),
        // CMS: concurrent cycles sweep the old generation into free chunks between objects.
        (11, "-XX:+UseConcMarkSweepGC"),
    ] {
        let jvm = start_thrashing(&jdk(major), &[gc]);
        let mut waited = 0;
        for _ in 0..5 {
            let out = crate::support::inspect(&["histo", &jvm.pid.to_string(), "-v"]);
            let err = String::from_utf8_lossy(&out.stderr);
            // A thread held between taking memory for a new TLAB from its region and recording
            // it in its TLAB leaves stale bytes where objects will be: the walk of that space
            // ends there with a warning naming it, and the exit status is 1.
            let notes_only = out.status.code() == Some(1)
                && err
                    .lines()
                    .filter(|l| l.starts_with("warning: "))
                    .all(|l| l.contains(": walk stopped at "));
            assert!(
                out.status.success() || notes_only,
                "JDK {major} {gc}: {err}"
            );
            assert!(
                !err.contains("inside a stop-the-world"),
                "JDK {major} {gc}: read inside a collection: {err}"
            );
            waited += usize::from(err.contains("stop-the-world collections waited out"));
            let (_, rows) = crate::support::histo::parse(&String::from_utf8_lossy(&out.stdout));
            assert_eq!(
                rows.get("HeapTarget$Node").map(|r| r.0),
                Some(COUNT),
                "JDK {major} {gc}: HeapTarget$Node"
            );
            let blobs: u64 = rows
                .iter()
                .filter(|(k, _)| k.starts_with("[B "))
                .map(|(_, r)| r.0)
                .sum();
            assert!(
                blobs > 20_000,
                "JDK {major} {gc}: {blobs} byte[] (the ballast)"
            );
        }
        assert_left_alone(jvm.pid, false);
        if gc != "-XX:+UseG1GC" && gc != "-XX:+UseConcMarkSweepGC" {
            assert!(
                waited > 0,
                "JDK {major} {gc}: no read waited for a collection"
            );
        }
    }
}

fn live(major: u32, flags: &[&str]) {
    let home = jdk(major);
    let jvm = start(&home, flags);
    let before = jcmd_histogram(&home, jvm.pid);
    let ours = inspect_ok(&["histo", &jvm.pid.to_string()]);
    assert_left_alone(jvm.pid, false);
    let after = jcmd_histogram(&home, jvm.pid);
    let reachable_only = flags.contains(&"-XX:+UseShenandoahGC") || flags.contains(&"-XX:+UseZGC");
    compare_as(&before, &ours, &after, reachable_only);
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

#[test]
#[ignore = "requires root, JDK 11 (scripts/test.sh)"]
fn jdk11_serial_parallel_and_g1_live() {
    live(11, &["-XX:+UseSerialGC"]);
    live(11, &["-XX:+UseParallelGC"]);
    live(11, &["-XX:+UseG1GC"]);
}

/// CMS (JDK 11, `-XX:+UseConcMarkSweepGC`): its old generation is a free-list space, objects
/// and free chunks interleaved. Compacted by a full collection (HeapTarget's `System.gc()`), and
/// swept by a concurrent cycle (`-XX:+ExplicitGCInvokesConcurrent`, every young survivor
/// promoted: `-XX:MaxTenuringThreshold=0`), which leaves free chunks between the objects. The
/// histogram, and the summary (`inspect heap`) against jcmd's.
#[test]
#[ignore = "requires root, JDK 11 (scripts/test.sh)"]
fn jdk11_cms_compacted_and_swept_live() {
    let swept = [
        "-XX:+UseConcMarkSweepGC",
        "-XX:+ExplicitGCInvokesConcurrent",
        "-XX:MaxTenuringThreshold=0",
    ];
    live(11, &["-XX:+UseConcMarkSweepGC"]);
    live(11, &swept);
    // The summary too: the old generation's used bytes are its capacity less the free lists.
    heap_info_live_left_out(11, &["-XX:+UseConcMarkSweepGC"], "ConcMarkSweep", &[]);
    heap_info_live_left_out(11, &swept, "ConcMarkSweep", &[]);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_shenandoah_live() {
    live(17, &["-XX:+UseShenandoahGC"]);
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_shenandoah_live() {
    live(21, &["-XX:+UseShenandoahGC"]);
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_epsilon_live() {
    live(
        21,
        &["-XX:+UnlockExperimentalVMOptions", "-XX:+UseEpsilonGC"],
    );
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_shenandoah_compact_headers_live() {
    live(
        25,
        &["-XX:+UseShenandoahGC", "-XX:+UseCompactObjectHeaders"],
    );
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_zgc_live() {
    live(17, &["-XX:+UseZGC"]);
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_zgc_single_and_generational_live() {
    live(21, &["-XX:+UseZGC", "-XX:-ZGenerational"]);
    live(21, &["-XX:+UseZGC", "-XX:+ZGenerational"]);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_generational_zgc_live_and_compact_headers() {
    live(25, &["-XX:+UseZGC"]);
    live(25, &["-XX:+UseZGC", "-XX:+UseCompactObjectHeaders"]);
}

/// Medium pages (a 2 GiB heap gives 32 MiB pages whose objects are 4 KiB aligned): HeapTarget's
/// humongous `int[]` lands in one.
#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_generational_zgc_medium_pages() {
    live(25, &["-XX:+UseZGC", "-Xmx2g"]);
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

/// `jcmd <pid> GC.heap_info` without its `<pid>:` line.
fn jcmd_heap_info(java_home: &Path, pid: i32) -> String {
    let out = Command::new(java_home.join("bin/jcmd"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .args([&pid.to_string(), "GC.heap_info"])
        .output()
        .expect("running jcmd");
    assert!(out.status.success(), "jcmd GC.heap_info failed");
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_once('\n')
        .map_or(text.clone(), |(_, rest)| rest.to_string())
}

/// `inspect heap` equals jcmd's `GC.heap_info` taken just before or just after it, byte for
/// byte (the target allocates nothing once filled; the bracket covers what jcmd's own attach
/// may move), and its JSON names the collector.
fn heap_info_live(major: u32, flags: &[&str], collector: &str) {
    let home = jdk(major);
    let jvm = start(&home, flags);
    let before = jcmd_heap_info(&home, jvm.pid);
    let ours = inspect_ok(&["heap", &jvm.pid.to_string()]);
    assert_left_alone(jvm.pid, false);
    let after = jcmd_heap_info(&home, jvm.pid);
    assert!(
        ours == before || ours == after,
        "inspect heap:\n{ours}\njcmd GC.heap_info before:\n{before}\nafter:\n{after}"
    );
    assert_json_names(jvm.pid, collector, major);
}

/// `inspect heap --format json` names the collector and the JDK.
fn assert_json_names(pid: i32, collector: &str, major: u32) {
    let json: serde_json::Value =
        serde_json::from_str(&inspect_ok(&["heap", "--format", "json", &pid.to_string()])).unwrap();
    assert_eq!(json["heap"]["collector"], collector, "{json}");
    assert_eq!(json["jdk"], major, "{json}");
}

/// jcmd's `GC.heap_info` without the lines `inspect heap` leaves out, and says so: Shenandoah's
/// `Status:` and `Collection set:` (with its two map lines), JDK 25 ZGC's `Cache` and `size
/// classes`. Their values are not exported by vmStructs.
fn without_left_out(jcmd: &str) -> String {
    let mut out = String::new();
    let mut in_cset = false;
    for l in jcmd.lines() {
        if l.starts_with("Collection set:") {
            in_cset = true;
            continue;
        }
        if in_cset && l.starts_with(" - map (") {
            continue;
        }
        in_cset = false;
        if l.starts_with("Status: ") || l.starts_with(" Cache ") || l.starts_with("  size classes ")
        {
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// As [`heap_info_live`], for a collector whose summary leaves lines out: ours equals jcmd's
/// (before or after) without them, the warning names each, and nothing else differs.
fn heap_info_live_left_out(major: u32, flags: &[&str], collector: &str, left_out: &[&str]) {
    let home = jdk(major);
    let jvm = start(&home, flags);
    // A bracket jcmd's own two reads moved across (CMS still sweeping, a collector's concurrent
    // cycle) is taken again, up to four times; a stable one must hold ours.
    for attempt in 1..=4 {
        let before = jcmd_heap_info(&home, jvm.pid);
        let out = crate::support::inspect(&["heap", &jvm.pid.to_string()]);
        assert_left_alone(jvm.pid, false);
        let after = jcmd_heap_info(&home, jvm.pid);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{collector}: inspect heap failed: {stderr}"
        );
        let ours = String::from_utf8(out.stdout).unwrap();
        let (b, a) = (without_left_out(&before), without_left_out(&after));
        if ours != b && ours != a && b != a && attempt < 4 {
            continue;
        }
        assert!(
            ours == b || ours == a,
            "{collector} on JDK {major}: inspect heap:\n{ours}\njcmd GC.heap_info before:\n{before}\nafter:\n{after}"
        );
        assert!(
            !stderr.contains("Metaspace lines are left out"),
            "{collector} on JDK {major}: Metaspace not read: {stderr}"
        );
        for line in left_out {
            assert!(
                before.contains(line),
                "{collector}: jcmd printed no {line:?} line:\n{before}"
            );
            assert!(
                stderr.contains(&format!("\"{line}\"")),
                "{collector}: no warning names {line:?}: {stderr}"
            );
        }
        break;
    }
    assert_json_names(jvm.pid, collector, major);
}

const EPSILON: [&str; 3] = [
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+UseEpsilonGC",
    "-Xlog:disable",
];

/// Shenandoah and Epsilon on JDK 11, 17, 21 and 25; generational ZGC on 21 and 25 (JDK 25's
/// summary reads its per-NUMA partitions). Epsilon and JDK 21's generational ZGC are byte for
/// byte; Shenandoah's status and collection-set map and JDK 25 ZGC's cache lines are left out
/// with a warning.
#[test]
#[ignore = "requires root, JDK 11, JDK 17, JDK 21, JDK 25 (scripts/test.sh)"]
fn heap_info_shenandoah_epsilon_and_generational_zgc() {
    let shenandoah = ["Status", "Collection set"];
    for major in [11, 17, 21, 25] {
        heap_info_live_left_out(major, &["-XX:+UseShenandoahGC"], "Shenandoah", &shenandoah);
        if major >= 16 {
            heap_info_live(major, &EPSILON, "Epsilon");
        } else {
            heap_info_live_left_out(major, &EPSILON, "Epsilon", &[]);
        }
    }
    heap_info_live(21, &["-XX:+UseZGC", "-XX:+ZGenerational"], "Z");
    heap_info_live_left_out(25, &["-XX:+UseZGC"], "Z", &["Cache", "size classes"]);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_heap_info_serial_parallel_g1_z() {
    heap_info_live(17, &["-XX:+UseSerialGC"], "Serial");
    heap_info_live(17, &["-XX:+UseParallelGC"], "Parallel");
    heap_info_live(17, &["-XX:+UseG1GC"], "G1");
    heap_info_live(17, &["-XX:+UseZGC"], "Z");
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_heap_info_serial_parallel_g1_z() {
    heap_info_live(21, &["-XX:+UseSerialGC"], "Serial");
    heap_info_live(21, &["-XX:+UseParallelGC"], "Parallel");
    heap_info_live(21, &["-XX:+UseG1GC"], "G1");
    heap_info_live(21, &["-XX:+UseZGC"], "Z");
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_heap_info_serial_parallel_g1() {
    heap_info_live(25, &["-XX:+UseSerialGC"], "Serial");
    heap_info_live(25, &["-XX:+UseParallelGC"], "Parallel");
    heap_info_live(25, &["-XX:+UseG1GC", "-XX:+UseCompactObjectHeaders"], "G1");
}

/// JDK 11 (Serial, Parallel, G1; G1 also without compressed class pointers, so without a
/// class space): byte for byte with jcmd's, JDK 11's Metaspace lines (used, capacity,
/// committed, reserved) read through libjvm's `.symtab`.
#[test]
#[ignore = "requires root, JDK 11 (scripts/test.sh)"]
fn jdk11_heap_info_serial_parallel_g1() {
    heap_info_live(11, &["-XX:+UseSerialGC"], "Serial");
    heap_info_live(11, &["-XX:+UseParallelGC"], "Parallel");
    heap_info_live(11, &["-XX:+UseG1GC"], "G1");
    heap_info_live(
        11,
        &["-XX:+UseG1GC", "-XX:-UseCompressedClassPointers"],
        "G1",
    );
}

/// A gcore of a JDK 21 G1 JVM, and of a JDK 11 one (its older Metaspace lines), read after the
/// JVM is gone, equals jcmd's `GC.heap_info` before or after the core was written.
#[test]
#[ignore = "requires root, gdb, JDK 11, JDK 21 (scripts/test.sh)"]
fn jdk21_and_11_g1_heap_info_from_gcore() {
    for major in [21, 11] {
        let home = jdk(major);
        let dir = scratch_dir("heap-info-core");
        let jvm = start(&home, &["-XX:+UseG1GC"]);
        let before = jcmd_heap_info(&home, jvm.pid);
        let core = gcore(jvm.pid, dir.path());
        let after = jcmd_heap_info(&home, jvm.pid);
        drop(jvm);
        let ours = inspect_ok(&["heap", "--core", core.to_str().unwrap()]);
        assert!(
            ours == before || ours == after,
            "JDK {major}: inspect heap --core:\n{ours}\njcmd before:\n{before}\nafter:\n{after}"
        );
    }
}

/// A SIGSTOPped JVM (jcmd cannot answer it): `inspect histo` and `inspect heap` read it, it is
/// left stopped, and both agree with jcmd's answers before the stop and after the SIGCONT.
#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_g1_stopped_jvm_histo_and_heap_info() {
    let home = jdk(21);
    let jvm = start(&home, &["-XX:+UseG1GC"]);
    let pid = jvm.pid.to_string();
    let before = jcmd_histogram(&home, jvm.pid);
    let info_before = jcmd_heap_info(&home, jvm.pid);
    crate::support::send_signal(jvm.pid, libc::SIGSTOP);
    let ours = inspect_ok(&["histo", &pid]);
    let info = inspect_ok(&["heap", &pid]);
    assert_left_alone(jvm.pid, true);
    crate::support::send_signal(jvm.pid, libc::SIGCONT);
    let after = jcmd_histogram(&home, jvm.pid);
    let info_after = jcmd_heap_info(&home, jvm.pid);
    compare(&before, &ours, &after);
    assert!(
        info == info_before || info == info_after,
        "inspect heap:\n{info}\njcmd before:\n{info_before}\nafter:\n{info_after}"
    );
}
