//! HPROF heap dumps and the two readers that check them (support/hprof.rs): VisualVM's heap
//! library and the strict reader (jvm-hprof under our own checks). First the readers themselves,
//! on the dumps HotSpot writes with `jcmd <pid> GC.heap_dump -all`: what they must accept.
//!
//! The targets run with `-Xshare:off`: with CDS, jcmd's dumps hold references from the archived
//! heap to the mirrors of archived classes the VM has not loaded, which it writes no CLASS_DUMP
//! for (hundreds of them in a HeapTarget JVM on JDK 17): both readers count them as dangling.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::histo::COUNT;
use crate::support::hprof::{Query, Value, strict_check, visualvm_check};
use crate::support::{Jvm, assert_left_alone, gcore, inspect_ok, jdk, run_ok, scratch_dir};

/// Starts HeapTarget on the JDK `major` without CDS.
fn heap_target(major: u32) -> Jvm {
    crate::heap::start(&jdk(major), &["-Xshare:off"])
}

/// `jcmd <pid> GC.heap_dump -all <dir>/jcmd-<major>.hprof` of the target's own JDK.
fn jcmd_dump(jvm: &Jvm, dir: &Path, major: u32) -> PathBuf {
    let file = dir.join(format!("jcmd-{major}.hprof"));
    run_ok(
        Command::new(jvm.java_home.join("bin/jcmd"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .arg(jvm.pid.to_string())
            .args(["GC.heap_dump", "-all"])
            .arg(&file),
    );
    assert!(file.is_file(), "jcmd wrote no {}", file.display());
    file
}

/// Both readers accept jcmd's dump and agree on it: the roots VisualVM finds of each kind HotSpot
/// writes, no reference to nothing, the same instances of every class; HeapTarget's own objects
/// and fields read back.
fn jcmd_dump_passes_both_readers(major: u32) {
    let dir = scratch_dir("heapdump");
    let jvm = heap_target(major);
    let file = jcmd_dump(&jvm, dir.path(), major);
    drop(jvm);

    let strict = strict_check(&file);
    assert!(
        strict.violations.is_empty(),
        "JDK {major}: the strict reader on jcmd's dump: {:#?}",
        strict.violations
    );
    assert_eq!(strict.label, "JAVA PROFILE 1.0.2");
    assert_eq!(strict.id_size, 8);
    for tag in ["UTF8", "LOAD_CLASS", "HEAP_DUMP_SEGMENT", "HEAP_DUMP_END"] {
        assert!(
            strict.records.contains_key(tag),
            "JDK {major}: no {tag}: {:?}",
            strict.records
        );
    }
    assert_eq!(
        (strict.dangling, strict.dangling_static),
        (0, 0),
        "JDK {major}: the strict reader: references to nothing, e.g. {:#?}",
        strict.examples
    );
    assert_eq!(strict.unresolved_roots, 0);

    let vv = visualvm_check(
        &file,
        &[
            Query::Field("java.lang.Thread", "name"),
            Query::Static("HeapTarget", "nodes"),
            Query::Static("HeapTarget", "strings"),
            Query::Static("HeapTarget", "<resolved_references>"),
            Query::RootsOf("java.lang.Thread"),
            Query::RootsOf("HeapTarget$Local"),
        ],
    );
    assert_frame_root(&vv, &format!("jcmd's dump of JDK {major}"));
    for kind in ["THREAD_OBJECT", "STICKY_CLASS", "JAVA_FRAME", "JNI_GLOBAL"] {
        assert!(
            vv.roots.get(kind).is_some_and(|&n| n > 0),
            "JDK {major}: VisualVM finds no {kind} root: {:?}",
            vv.roots
        );
    }
    assert_eq!(
        (vv.dangling, vv.dangling_static, vv.unresolved_roots),
        (0, 0, 0),
        "JDK {major}: VisualVM: references to nothing, e.g. {:#?}",
        vv.examples
    );
    assert_eq!(vv.classes["HeapTarget$Node"].instances, COUNT);
    assert_eq!(vv.classes["HeapTarget$Node"].instance_size, 24);

    // The same instances of every class (VisualVM lists classes without instances too).
    let ours: std::collections::BTreeMap<_, _> = vv
        .instance_counts()
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect();
    assert_eq!(
        ours, strict.instances,
        "JDK {major}: VisualVM's instance counts (left) and the strict reader's (right) differ"
    );
    assert_eq!(vv.instances, strict.instances.values().sum::<u64>());
    // and the same roots of every kind
    assert_eq!(vv.roots, strict.roots, "JDK {major}: roots by kind differ");

    // The queries: the main thread by name, a GC root of kind THREAD_OBJECT; the statics.
    let names: Vec<&str> = vv
        .field_values("java.lang.Thread", "name")
        .into_iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        names.contains(&"main"),
        "JDK {major}: thread names {names:?}"
    );
    let main = vv
        .fields
        .iter()
        .find(|a| a.value.as_str() == Some("main"))
        .unwrap();
    assert!(
        vv.roots_of[&("java.lang.Thread".to_string(), main.instance)]
            .contains(&"THREAD_OBJECT".to_string()),
        "JDK {major}: the main thread is no THREAD_OBJECT root: {:?}",
        vv.roots_of
    );
    assert!(matches!(
        vv.static_value("HeapTarget", "nodes"),
        Some(Value::Object { class, .. }) if class == "HeapTarget$Node"
    ));
    assert!(matches!(
        vv.static_value("HeapTarget", "strings"),
        Some(Value::Object { class, .. }) if class == "java.lang.String[]"
    ));
    // The static our dumps write for a class's resolved references, named as HotSpot names it.
    assert!(
        matches!(
            vv.static_value("HeapTarget", "<resolved_references>"),
            Some(Value::Object { class, .. }) if class == "java.lang.Object[]"
        ),
        "JDK {major}: jcmd's HeapTarget.<resolved_references>: {:?}",
        vv.static_value("HeapTarget", "<resolved_references>")
    );
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jcmd_dumps_pass_both_readers() {
    jcmd_dump_passes_both_readers(17);
}

// ---- inspect heapdump, checked by both readers against jcmd's histograms ----

/// jcmd's histogram class name as VisualVM names the class: the module column dropped, array
/// descriptors spelled out (`[B` → `byte[]`), a hidden class's `/0x` suffix as its `+0x`
/// (JDK 8's lambdas' `/<hash>` dropped).
fn visualvm_name(histogram_name: &str, major: u32) -> String {
    let class = histogram_name.split(" (").next().unwrap_or(histogram_name);
    // JDK 9-14's VM-anonymous classes: `Name/0x<Klass*>` in jcmd's histogram, `Name` itself;
    // JDK 8's: `Name/<identity hash>` in jmap's.
    let class = match class.split_once("/0x") {
        Some((name, _)) if major < 15 => name.to_string(),
        _ if major == 8 => class.split('/').next().unwrap_or(class).to_string(),
        _ => class.replacen("/0x", "+0x", 1),
    };
    crate::support::hprof::java_name(&class)
}

/// What a dump of ours must hold, read by both readers: no violation and no reference to
/// nothing; every class whose instances jcmd counted the same before and after ours has that
/// many in the file (java.lang.Class aside: its instances are the classes; the filler classes
/// aside: jcmd counts the TLABs' unused tails as fillers); HeapTarget's objects with their
/// values; thread objects and sticky classes as roots; stack traces.
pub(crate) fn check_ours(file: &Path, before: &str, after: &str, major: u32, what: &str) {
    check_dump(file, Some((before, after)), major, what);
}

/// As [`check_ours`], with jcmd's histograms before and after when there are some (`None`: a
/// JVM jcmd cannot attach to, whose HeapTarget objects alone are compared).
fn check_dump(file: &Path, jcmd: Option<(&str, &str)>, major: u32, what: &str) {
    // Shenandoah's and ZGC's `object_iterate` (jcmd's count) visits only reachable objects; a
    // walk from outside also meets the unreachable ones not collected yet. So does a dump taken
    // between two jcmd calls of a JVM that then cannot run (SIGSTOPped, or held by gdb for its
    // core): the garbage the first call's attach left (its `byte[]` buffers, strings) is still
    // there, where a collection before the second call may have freed it. The known objects
    // (`HeapTarget`'s classes) are compared exactly in every case.
    let reachable_only = what.contains("Shenandoah")
        || what.contains("ZGC")
        || what.contains("SIGSTOPped")
        || what.contains("gcore");
    let strict = strict_check(file);
    assert!(
        strict.violations.is_empty(),
        "{what}: the strict reader: {:#?}",
        strict.violations
    );
    assert_eq!(
        (
            strict.dangling,
            strict.dangling_static,
            strict.unresolved_roots
        ),
        (0, 0, 0),
        "{what}: the strict reader: references to nothing, e.g. {:#?}",
        strict.examples
    );
    for tag in [
        "UTF8",
        "LOAD_CLASS",
        "STACK_FRAME",
        "STACK_TRACE",
        "HEAP_DUMP_SEGMENT",
        "HEAP_DUMP_END",
    ] {
        assert!(
            strict.records.contains_key(tag),
            "{what}: no {tag} record: {:?}",
            strict.records
        );
    }
    let vv = visualvm_check(
        file,
        &[
            Query::Field("java.lang.Thread", "name"),
            Query::Field("HeapTarget$Node", "value"),
            Query::Static("HeapTarget", "nodes"),
            Query::Static("HeapTarget", "big"),
            Query::Static("HeapTarget", "<resolved_references>"),
            Query::RootsOf("java.lang.Thread"),
            Query::RootsOf("HeapTarget$Local"),
        ],
    );
    assert_frame_root(&vv, what);
    // As HotSpot writes it: the constant pool's resolved references (HeapTarget's string
    // literals among them) as one more static of the class.
    assert!(
        matches!(
            vv.static_value("HeapTarget", "<resolved_references>"),
            Some(Value::Object { class, .. }) if class == "java.lang.Object[]"
        ),
        "{what}: HeapTarget.<resolved_references>: {:?}",
        vv.static_value("HeapTarget", "<resolved_references>")
    );
    assert_eq!(
        (vv.dangling, vv.dangling_static, vv.unresolved_roots),
        (0, 0, 0),
        "{what}: VisualVM: references to nothing, e.g. {:#?}",
        vv.examples
    );
    for kind in ["THREAD_OBJECT", "STICKY_CLASS"] {
        assert!(
            vv.roots.get(kind).is_some_and(|&n| n > 0),
            "{what}: VisualVM finds no {kind} root: {:?}",
            vv.roots
        );
    }
    let counts: std::collections::BTreeMap<String, u64> = vv
        .instance_counts()
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect();
    assert_eq!(
        counts, strict.instances,
        "{what}: VisualVM's instance counts (left) and the strict reader's (right) differ"
    );
    if let Some((before, after)) = jcmd {
        compare_with_jcmd(&counts, before, after, major, what, reachable_only);
    }
    assert_eq!(vv.classes["HeapTarget$Node"].instances, COUNT);
    // The values: every Node's int, a thread's name, the statics.
    let mut values: Vec<i64> = vv
        .field_values("HeapTarget$Node", "value")
        .into_iter()
        .filter_map(|v| match v {
            Value::Prim(p) => p.parse().ok(),
            _ => None,
        })
        .collect();
    values.sort_unstable();
    assert_eq!(
        values,
        (0..COUNT as i64).collect::<Vec<_>>(),
        "{what}: HeapTarget$Node.value"
    );
    let names: Vec<&str> = vv
        .field_values("java.lang.Thread", "name")
        .into_iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(names.contains(&"main"), "{what}: thread names {names:?}");
    let main = vv
        .fields
        .iter()
        .find(|a| a.class == "java.lang.Thread" && a.value.as_str() == Some("main"))
        .unwrap();
    assert!(
        vv.roots_of[&("java.lang.Thread".to_string(), main.instance)]
            .contains(&"THREAD_OBJECT".to_string()),
        "{what}: the main thread is no THREAD_OBJECT root: {:?}",
        vv.roots_of
    );
    assert!(matches!(
        vv.static_value("HeapTarget", "nodes"),
        Some(Value::Object { class, .. }) if class == "HeapTarget$Node"
    ));
    assert!(matches!(
        vv.static_value("HeapTarget", "big"),
        Some(Value::Object { class, .. }) if class == "int[]"
    ));
}

/// HeapTarget's one `Local`, which only a local variable of its main thread's frame holds, is
/// a `JAVA_FRAME` root (and so kept by MAT's default view, which drops unreachable objects).
fn assert_frame_root(vv: &crate::support::hprof::HprofReport, what: &str) {
    let local: Vec<_> = vv
        .roots_of
        .iter()
        .filter(|((class, _), _)| class == "HeapTarget$Local")
        .collect();
    assert_eq!(
        local.len(),
        1,
        "{what}: HeapTarget$Local instances: {local:?}"
    );
    assert!(
        local[0].1.contains(&"JAVA_FRAME".to_string()),
        "{what}: HeapTarget$Local, held by main's frame only, is no JAVA_FRAME root: {local:?}"
    );
}

/// Every class whose instances jcmd counted the same `before` and `after` has that many in the
/// file's `counts` (at least that many for the JDK's classes when `reachable_only`).
fn compare_with_jcmd(
    counts: &std::collections::BTreeMap<String, u64>,
    before: &str,
    after: &str,
    major: u32,
    what: &str,
    reachable_only: bool,
) {
    let (_, before) = crate::support::histo::parse(before);
    let (_, after) = crate::support::histo::parse(after);
    let skip = [
        "java.lang.Class",
        "int[]",
        "jdk.internal.vm.FillerElement[]",
        "jdk.internal.vm.FillerArray",
    ];
    let mut stable: std::collections::BTreeMap<String, u64> = Default::default();
    let mut moving = std::collections::BTreeSet::new();
    for (name, (n, _)) in &before {
        let key = visualvm_name(name, major);
        if after.get(name).map(|a| a.0) == Some(*n) {
            *stable.entry(key).or_default() += n;
        } else {
            moving.insert(key);
        }
    }
    let mut compared = 0;
    for (class, n) in &stable {
        if skip.contains(&class.as_str()) || moving.contains(class) {
            continue;
        }
        let ours = counts.get(class).copied().unwrap_or(0);
        if reachable_only && !class.starts_with("HeapTarget") {
            assert!(
                ours >= *n,
                "{what}: instances of {class}: ours {ours}, jcmd's before and after {n}"
            );
        } else {
            assert_eq!(
                ours, *n,
                "{what}: instances of {class}: ours (left), jcmd's before and after (right)"
            );
        }
        compared += 1;
    }
    assert!(compared > 100, "{what}: only {compared} classes compared");
}

/// `inspect heapdump` of a live HeapTarget on JDK `major` with `flags`, bracketed by jcmd's
/// histograms, checked by both readers; the JVM is left running.
fn ours_live(major: u32, flags: &[&str]) {
    let home = jdk(major);
    let jvm = crate::heap::start(&home, flags);
    let dir = scratch_dir("heapdump");
    let file = dir.path().join("ours.hprof");
    let before = crate::heap::jcmd_histogram(&home, jvm.pid);
    inspect_ok(&[
        "heapdump",
        &jvm.pid.to_string(),
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_left_alone(jvm.pid, false);
    let after = crate::heap::jcmd_histogram(&home, jvm.pid);
    check_ours(
        &file,
        &before,
        &after,
        major,
        &format!("JDK {major} {flags:?}"),
    );
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_g1_and_parallel_live_dumps_pass_both_readers() {
    // JDK 17's G1 maps CDS's archived heap into closed archive regions, which jcmd's histogram
    // does not count and the dump does (their objects are referred to): without CDS here, as in
    // heap::jdk17_g1_without_cds; JDK 21's G1 below loads the archived heap into ordinary
    // regions, with the mirrors of classes not loaded yet.
    ours_live(17, &["-XX:+UseG1GC", "-Xshare:off"]);
    ours_live(17, &["-XX:+UseParallelGC"]);
}

#[test]
#[ignore = "requires root, JDK 11, JDK 21 (scripts/test.sh)"]
fn jdk11_and_21_live_dumps_pass_both_readers() {
    ours_live(11, &["-XX:+UseG1GC"]);
    // CMS's old generation swept into free chunks between the objects.
    ours_live(
        11,
        &[
            "-XX:+UseConcMarkSweepGC",
            "-XX:+ExplicitGCInvokesConcurrent",
            "-XX:MaxTenuringThreshold=0",
        ],
    );
    ours_live(21, &["-XX:+UseSerialGC"]);
    ours_live(21, &["-XX:+UseG1GC", "-XX:-UseCompressedOops"]);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_compact_headers_and_shenandoah_dumps_pass_both_readers() {
    ours_live(25, &["-XX:+UseCompactObjectHeaders"]);
    ours_live(25, &["-XX:+UseShenandoahGC"]);
}

/// Every object jcmd's dump roots in a frame (`ROOT_JAVA_FRAME`) or a JNI local handle
/// (`ROOT_JNI_LOCAL`) of a thread other than its own Attach Listener, ours roots so in the
/// same thread, and every object it roots as a JNI global, ours does too (threads matched by their
/// `java.lang.Thread`'s id; HeapTarget allocates nothing, so no object moves between the two
/// dumps). Ours scans the stacks conservatively, so it may root more: counted, not compared.
fn frame_roots_cover_jcmds(major: u32, flags: &[&str]) {
    let what = format!("JDK {major} {flags:?}");
    let dir = scratch_dir("heapdump-frames");
    let jvm = crate::heap::start(&jdk(major), flags);
    let theirs_file = jcmd_dump(&jvm, dir.path(), major);
    let ours_file = dir.path().join("ours.hprof");
    inspect_ok(&[
        "heapdump",
        &jvm.pid.to_string(),
        "-o",
        ours_file.to_str().unwrap(),
    ]);
    drop(jvm);
    assert_roots_cover(&what, &theirs_file, &ours_file, true);
}

/// The roots of `ours_file` hold those of `theirs_file` (HotSpot's dump of the same JVM): every
/// frame and JNI local root of a thread other than its Attach Listener, and, when
/// `every_global`, every JNI global root (else those that are there must be HotSpot's).
pub(crate) fn assert_roots_cover(
    what: &str,
    theirs_file: &Path,
    ours_file: &Path,
    every_global: bool,
) {
    let theirs = strict_check(theirs_file);
    let ours = strict_check(ours_file);
    let names = visualvm_check(theirs_file, &[Query::Field("java.lang.Thread", "name")]);
    let listener: BTreeSet<u64> = names
        .fields
        .iter()
        .filter(|a| a.class == "java.lang.Thread" && a.value.as_str() == Some("Attach Listener"))
        .map(|a| a.instance)
        .collect();
    let by_thread = |r: &crate::support::hprof::StrictReport,
                     roots: &BTreeSet<(u64, u32)>|
     -> BTreeSet<(u64, u64)> {
        roots
            .iter()
            .filter_map(|&(object, serial)| Some((object, *r.thread_objects.get(&serial)?)))
            .collect()
    };
    let (theirs_roots, ours_roots) = (
        by_thread(&theirs, &theirs.frame_roots),
        by_thread(&ours, &ours.frame_roots),
    );
    // JNI local handles: main reads its standard input in a native method.
    let (theirs_jni, ours_jni) = (
        by_thread(&theirs, &theirs.jni_local_roots),
        by_thread(&ours, &ours.jni_local_roots),
    );
    let expected_jni: BTreeSet<(u64, u64)> = theirs_jni
        .iter()
        .copied()
        .filter(|(_, thread)| !listener.contains(thread))
        .collect();
    assert!(
        !expected_jni.is_empty(),
        "{what}: jcmd's dump has no JNI local root: {:?}",
        theirs.jni_local_roots
    );
    // JNI global handles (and, from JDK 16, the VM's own global handles, which HotSpot's
    // dumper writes as JNI globals too).
    let missing_globals: Vec<_> = theirs
        .jni_global_roots
        .difference(&ours.jni_global_roots)
        .collect();
    assert!(
        !theirs.jni_global_roots.is_empty() && (missing_globals.is_empty() || !every_global),
        "{what}: {} of jcmd's {} JNI global roots are none of ours: {missing_globals:x?}",
        missing_globals.len(),
        theirs.jni_global_roots.len()
    );
    assert!(
        !ours.jni_global_roots.is_empty()
            && ours.jni_global_roots.is_subset(&theirs.jni_global_roots),
        "{what}: our JNI global roots {:x?} are not among jcmd's",
        ours.jni_global_roots
    );
    let missing_jni: Vec<_> = expected_jni.difference(&ours_jni).collect();
    assert!(
        missing_jni.is_empty(),
        "{what}: jcmd's JNI local roots (object, thread) not among ours: {missing_jni:x?} (ours: {ours_jni:x?})"
    );
    let expected: BTreeSet<(u64, u64)> = theirs_roots
        .iter()
        .copied()
        .filter(|(_, thread)| !listener.contains(thread))
        .collect();
    assert!(
        expected.len() >= 3,
        "{what}: jcmd's dump has only {} frame roots: {:?}",
        expected.len(),
        theirs.frame_roots
    );
    let missing: Vec<_> = expected.difference(&ours_roots).collect();
    assert!(
        missing.is_empty(),
        "{what}: {} of jcmd's {} frame roots (object, thread) are no frame root of ours: {missing:x?}",
        missing.len(),
        expected.len()
    );
    eprintln!(
        "{what}: jcmd {} frame roots ({} outside its Attach Listener), ours {}; JNI locals: jcmd {}, ours {}; JNI globals: jcmd {}, ours {}",
        theirs_roots.len(),
        expected.len(),
        ours_roots.len(),
        theirs_jni.len(),
        ours_jni.len(),
        theirs.jni_global_roots.len(),
        ours.jni_global_roots.len()
    );
}

/// [`frame_roots_cover_jcmds`] on JDK 11 (G1), 17 (G1, Parallel; without compressed oops),
/// 21 (generational ZGC's coloured pointers) and 25 (compact object headers).
#[test]
#[ignore = "requires root, JDK 11, JDK 17, JDK 21, JDK 25 (scripts/test.sh)"]
fn frame_roots_cover_jcmds_on_every_jdk() {
    frame_roots_cover_jcmds(11, &["-Xshare:off", "-XX:+UseG1GC"]);
    frame_roots_cover_jcmds(17, &["-Xshare:off", "-XX:+UseG1GC"]);
    frame_roots_cover_jcmds(
        17,
        &[
            "-Xshare:off",
            "-XX:+UseParallelGC",
            "-XX:-UseCompressedOops",
        ],
    );
    frame_roots_cover_jcmds(21, &["-Xshare:off", "-XX:+UseZGC", "-XX:+ZGenerational"]);
    frame_roots_cover_jcmds(25, &["-Xshare:off", "-XX:+UseCompactObjectHeaders"]);
}

/// From a gcore of a JDK 21 G1 JVM, and gzipped from a SIGSTOPped JDK 17 one (left stopped).
#[test]
#[ignore = "requires root, gdb, JDK 17, JDK 21 (scripts/test.sh)"]
fn gcore_and_stopped_jvm_dumps_pass_both_readers() {
    let home = jdk(21);
    let jvm = crate::heap::start(&home, &["-XX:+UseG1GC"]);
    let dir = scratch_dir("heapdump");
    let before = crate::heap::jcmd_histogram(&home, jvm.pid);
    let core = gcore(jvm.pid, dir.path());
    let after = crate::heap::jcmd_histogram(&home, jvm.pid);
    drop(jvm);
    let file = dir.path().join("core.hprof");
    inspect_ok(&[
        "heapdump",
        "--core",
        core.to_str().unwrap(),
        "-o",
        file.to_str().unwrap(),
    ]);
    check_ours(&file, &before, &after, 21, "a JDK 21 gcore");

    let home = jdk(17);
    let jvm = crate::heap::start(&home, &["-XX:+UseG1GC"]);
    let before = crate::heap::jcmd_histogram(&home, jvm.pid);
    crate::support::send_signal(jvm.pid, libc::SIGSTOP);
    crate::support::wait_for_state(jvm.pid, 'T');
    let gz = dir.path().join("stopped.hprof.gz");
    inspect_ok(&[
        "heapdump",
        &jvm.pid.to_string(),
        "--gz",
        "-o",
        gz.to_str().unwrap(),
    ]);
    assert_left_alone(jvm.pid, true);
    crate::support::send_signal(jvm.pid, libc::SIGCONT);
    let after = crate::heap::jcmd_histogram(&home, jvm.pid);
    let file = dir.path().join("stopped.hprof");
    let mut plain = std::fs::File::create(&file).unwrap();
    std::io::copy(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap()),
        &mut plain,
    )
    .expect("the --gz file is not gzip");
    check_ours(&file, &before, &after, 17, "a SIGSTOPped JDK 17");
}

/// An existing file is never overwritten; a full disk (a 1 MiB tmpfs) gives an error, no file
/// under the name and no partial file left, and the JVM running.
#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn existing_files_and_a_full_disk_leave_no_dump_that_looks_complete() {
    let home = jdk(17);
    let jvm = crate::heap::start(&home, &["-XX:+UseG1GC"]);
    let dir = scratch_dir("heapdump");
    let existing = dir.path().join("there.hprof");
    std::fs::write(&existing, b"keep me").unwrap();
    let out = crate::support::inspect(&[
        "heapdump",
        &jvm.pid.to_string(),
        "-o",
        existing.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        crate::support::inspect_err(&out).contains("exists"),
        "{}",
        crate::support::inspect_err(&out)
    );
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep me");

    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    run_ok(
        Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(&small),
    );
    let file = small.join("heap.hprof");
    let out = crate::support::inspect(&[
        "heapdump",
        &jvm.pid.to_string(),
        "-o",
        file.to_str().unwrap(),
    ]);
    let left: Vec<_> = std::fs::read_dir(&small).unwrap().collect();
    let _ = Command::new("umount").arg(&small).status();
    assert!(!out.status.success(), "a dump into 1 MiB succeeded");
    assert!(
        crate::support::inspect_err(&out).contains("writing the heap dump"),
        "{}",
        crate::support::inspect_err(&out)
    );
    assert!(left.is_empty(), "files left in the full tmpfs: {left:?}");
    assert_left_alone(jvm.pid, false);
}

/// ZGC, the single generation (JDK 17: references of any colour seen through the good one) and
/// the generational one (JDK 21: coloured references uncoloured), which the Serviceability
/// Agent cannot walk. A dead object's field may hold the old address of an object ZGC has
/// relocated since, in a page allocated again: the dump writes it as null (it is no object
/// start the first walk found), so that no reference dangles.
/// `inspect heapdump` killed in the middle of its dump leaves no file under the name asked for
/// (only its hidden `.NAME.inspect-<pid>.partial`) and the JVM running, no thread stopped or
/// traced; a JVM killed in the middle of the dump makes `inspect heapdump` fail and remove its
/// partial file. "The middle": once the partial file has grown past 1 MiB (HeapTarget 1,000,000:
/// a heap of about 150 MB).
#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn a_dump_killed_or_whose_jvm_is_killed_leaves_no_file_and_no_stopped_jvm() {
    let home = jdk(17);
    let dir = scratch_dir("heapdump");
    let grown = |out: &Path| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let partial = std::fs::read_dir(out.parent().unwrap())
                .unwrap()
                .filter_map(Result::ok)
                .find(|e| e.file_name().to_string_lossy().ends_with(".partial"));
            if let Some(p) = &partial
                && p.metadata().is_ok_and(|m| m.len() > 1 << 20)
            {
                return p.path();
            }
            assert!(std::time::Instant::now() < deadline, "no partial dump grew");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    };
    // inspect killed.
    let jvm = crate::heap::start_with(&home, &["-Xmx1g", "-XX:+UseParallelGC"], 1_000_000);
    let out = dir.path().join("killed.hprof");
    let mut child = crate::support::spawn_inspect(&[
        "heapdump",
        &jvm.pid.to_string(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let partial = grown(&out);
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "inspect was not killed mid-dump: {status}"
    );
    assert!(!out.exists(), "a killed dump left {}", out.display());
    assert!(
        partial.exists(),
        "the partial file is where a reader sees it is partial"
    );
    assert_left_alone(jvm.pid, false);
    // The JVM killed.
    let out = dir.path().join("jvm-killed.hprof");
    let child = crate::support::spawn_inspect(&[
        "heapdump",
        &jvm.pid.to_string(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let second = {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let found = std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| {
                    p != &partial
                        && p.to_string_lossy().ends_with(".partial")
                        && std::fs::metadata(p).is_ok_and(|m| m.len() > 1 << 20)
                });
            if let Some(p) = found {
                break p;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no second partial dump grew"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    };
    let pid = jvm.pid;
    drop(jvm);
    let result = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(
        !result.status.success(),
        "inspect heapdump of a JVM killed mid-dump succeeded: {err}"
    );
    assert!(
        err.contains(&pid.to_string()),
        "the error names the process: {err}"
    );
    assert!(
        !out.exists(),
        "a dump of a killed JVM left {}",
        out.display()
    );
    assert!(
        !second.exists(),
        "the partial file of the failed dump is left"
    );
}

/// A JVM thrashing in full collections (Parallel), where jcmd often cannot attach: the dump is
/// taken between two collections and passes both readers, HeapTarget's objects all in it.
#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn thrashing_jvm_dump_passes_both_readers() {
    let jvm = crate::heap::start_thrashing(&jdk(17), &["-XX:+UseParallelGC"]);
    let dir = scratch_dir("heapdump");
    let file = dir.path().join("thrashing.hprof");
    let out = crate::support::inspect(&[
        "heapdump",
        &jvm.pid.to_string(),
        "-o",
        file.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "inspect heapdump: {err}");
    assert!(!err.contains("inside a stop-the-world"), "{err}");
    assert_left_alone(jvm.pid, false);
    check_dump(&file, None, 17, "a thrashing JDK 17 (Parallel)");
}

#[test]
#[ignore = "requires root, JDK 17, JDK 21 (scripts/test.sh)"]
fn zgc_single_and_generational_dumps_pass_both_readers() {
    ours_live(17, &["-XX:+UseZGC"]);
    ours_live(21, &["-XX:+UseZGC", "-XX:+ZGenerational"]);
}

/// The JDK tools' command lines for a heap dump, through `inspect links`: `jmap
/// -dump:format=b,file=F <pid>` and `jcmd <pid> GC.heap_dump -all -gz=1 F` write files the
/// strict reader reads with HeapTarget's nodes in them.
#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jmap_and_jcmd_links_write_heap_dumps() {
    let jvm = crate::heap::start(&jdk(17), &["-XX:+UseParallelGC"]);
    let dir = scratch_dir("heapdump-links");
    inspect_ok(&["links", dir.path().to_str().unwrap()]);
    let pid = jvm.pid.to_string();
    let plain = dir.path().join("jmap.hprof");
    run_ok(
        Command::new(dir.path().join("jmap"))
            .arg(format!("-dump:format=b,file={}", plain.display()))
            .arg(&pid),
    );
    let gz = dir.path().join("jcmd.hprof.gz");
    run_ok(
        Command::new(dir.path().join("jcmd"))
            .args([&pid, "GC.heap_dump", "-all", "-gz=1"])
            .arg(&gz),
    );
    let unzipped = dir.path().join("jcmd.hprof");
    std::io::copy(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap()),
        &mut std::fs::File::create(&unzipped).unwrap(),
    )
    .expect("jcmd GC.heap_dump -gz=1 through the link wrote no gzip");
    for file in [&plain, &unzipped] {
        let strict = strict_check(file);
        assert!(
            strict.violations.is_empty(),
            "{}: {:#?}",
            file.display(),
            strict.violations
        );
        assert_eq!(
            strict.instances.get("HeapTarget$Node").copied(),
            Some(COUNT),
            "{}",
            file.display()
        );
    }
}
