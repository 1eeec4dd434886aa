//! HPROF heap dumps and the two readers that check them (support/hprof.rs): VisualVM's heap
//! library and the strict reader (jvm-hprof under our own checks). First the readers themselves,
//! on the dumps HotSpot writes with `jcmd <pid> GC.heap_dump -all`: what they must accept.
//!
//! The targets run with `-Xshare:off`: with CDS, jcmd's dumps hold references from the archived
//! heap to the mirrors of archived classes the VM has not loaded, which it writes no CLASS_DUMP
//! for (hundreds of them in a HeapTarget JVM on JDK 17): both readers count them as dangling.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::histo::COUNT;
use crate::support::hprof::{Query, Value, strict_check, visualvm_check};
use crate::support::{Jvm, jdk, run_ok, scratch_dir, test_classes};

/// Starts HeapTarget on the JDK `major` without CDS.
fn heap_target(major: u32) -> Jvm {
    let home = jdk(major);
    let mut cmd = Command::new(home.join("bin/java"));
    cmd.env("MALLOC_ARENA_MAX", "2")
        .args(["-Xmx64m", "-XX:ReservedCodeCacheSize=16m", "-Xshare:off"])
        .arg("-cp")
        .arg(test_classes())
        .args(["HeapTarget", &COUNT.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, &home)
}

/// `jcmd <pid> GC.heap_dump -all <dir>/jcmd-<major>.hprof` of the target's own JDK.
fn jcmd_dump(jvm: &Jvm, dir: &Path, major: u32) -> PathBuf {
    let file = dir.join(format!("jcmd-{major}.hprof"));
    run_ok(
        Command::new(jvm.java_home.join("bin/jcmd"))
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
            Query::RootsOf("java.lang.Thread"),
        ],
    );
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
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jcmd_dumps_pass_both_readers() {
    jcmd_dump_passes_both_readers(17);
}
