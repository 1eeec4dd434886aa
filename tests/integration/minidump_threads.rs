//! `inspect threads --core <minidump>` on Linux against a full-memory minidump of a real Windows
//! JDK 21 JVM run under Wine: tests/java/ThreadsTarget.java (named threads in known states, two
//! deadlocks, a thread spinning in Java code), dumped with `MiniDumpWriteDump` between two
//! `jcmd.exe <pid> Thread.print -l`. Ours must agree with both as a live dump does
//! (`support::jcmd::agree`: same threads, ids, nids, states, top 10 frames where jcmd's
//! two dumps agree; `support::jcmd::agree_locks`: lock lines, ownable synchronizers, the
//! deadlock section; with `-l`, the heap walked for every ownable synchronizer:
//! `support::jcmd::agree_synchronizers`), and the spinning thread, which has no frame anchor, must be walked from
//! its registers (its `CONTEXT` in the dump's `ThreadListStream`). A dump without full memory
//! (`scripts/windows/minidump.py`'s `normal.mdmp`) is refused with how to write one.
//!
//! The dump is made once and cached by `scripts/windows/threads_minidump.py` (Wine, the Windows
//! JDK and mingw-w64, installed by `scripts/windows/setup.sh`; under a minute cold, then
//! instant).

use crate::support::*;

#[test]
#[ignore = "requires Wine, Windows JDK (scripts/test.sh)"]
fn windows_minidump_thread_dump_read_on_linux_matches_jcmd_exe() {
    let dir = threads_minidump();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let (before, after) = (
        read("threads-jcmd-before.txt"),
        read("threads-jcmd-after.txt"),
    );
    let dump = dir.join("threads.mdmp");
    let ours = crate::support::jcmd::threads_ok(&["--core", dump.to_str().unwrap()]);
    let compared = crate::support::jcmd::agree(&before, &ours, &after, crate::support::jcmd::NAMED);
    // As many as the JDK 8 kernel core test requires.
    assert!(
        compared >= 12,
        "Windows minidump: only {compared} threads compared\n{ours}"
    );
    let locks = crate::support::jcmd::agree_locks(&before, &ours, &after);
    // The thread running Java code at dump time: walked from its registers, down to its start.
    let spin = crate::support::jcmd::parse(&ours);
    let frames = &spin["t-spin"].frames;
    assert!(
        frames
            .first()
            .is_some_and(|f| f.starts_with("ThreadsTarget.spin("))
            && frames
                .last()
                .is_some_and(|f| f.starts_with("java.lang.Thread.run(")),
        "t-spin not walked from its registers: {frames:?}\n{ours}"
    );
    // `-l`: the heap in the dump walked for every ownable synchronizer, as jcmd.exe's `-l`.
    let with_locks = crate::support::jcmd::threads_ok(&["-l", "--core", dump.to_str().unwrap()]);
    let synchronizers =
        crate::support::jcmd::agree_synchronizers(&before, &with_locks, &after, true);
    assert!(
        synchronizers >= 12,
        "only {synchronizers} threads' synchronizers compared"
    );
    // -v names the dump and its streams.
    let out = inspect(&["threads", "-v", "--core", dump.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for says in [
        "path: minidump ",
        "(java.exe)",
        "ThreadListStream",
        "Memory64ListStream",
        "VM model: 21.",
    ] {
        assert!(stderr.contains(says), "-v lacks {says:?}: {stderr}");
    }
    // --exe and --sysroot are for ELF cores.
    let out = inspect(&[
        "threads",
        "--core",
        dump.to_str().unwrap(),
        "--sysroot",
        "/",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--exe and --sysroot are for ELF cores"));
    // A MiniDumpNormal dump (stacks only) is refused with the kind that would do and how to write it.
    let normal = minidumps().join("normal.mdmp");
    let out = inspect(&["threads", "--core", normal.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for says in [
        "written without full memory (MiniDumpNormal",
        "only in a minidump with full memory",
        "procdump -ma",
    ] {
        assert!(stderr.contains(says), "{says:?} not in {stderr}");
    }
    println!(
        "{compared} threads' frames and {} threads' lock lines agree with jcmd.exe",
        locks.len()
    );
}

/// `inspect info --core <minidump>` on Linux: the flags line byte for byte with the
/// `jcmd.exe <pid> VM.flags` taken before the dump, and the `jvm_args:`/`java_command:` lines as
/// its `VM.command_line` printed them.
#[test]
#[ignore = "requires Wine, Windows JDK (scripts/test.sh)"]
fn windows_minidump_flags_and_command_line_match_jcmd_exe() {
    let dir = threads_minidump();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let after_pid_line = |t: String| t.split_once('\n').map(|(_, r)| r.to_string()).unwrap();
    let flags = after_pid_line(read("vmflags-jcmd.txt"));
    let command_line = after_pid_line(read("command-line-jcmd.txt"));
    let dump = dir.join("threads.mdmp");
    let ours = inspect_ok(&["info", "--core", dump.to_str().unwrap()]);
    // `jinfo <pid>`'s three parts: the properties (read from the dump's heap), the flags, the
    // arguments (with the class path and launcher lines, from the properties).
    let (props, flags_and_args) = ours.split_once("\n\n").expect("three parts");
    assert!(
        props.starts_with("Java System Properties:\n")
            && props.contains("\njava.vm.name=OpenJDK 64-Bit Server VM\n")
            && props.contains("\nos.name=Windows"),
        "{props}"
    );
    let (our_flags, our_args) = flags_and_args.split_once("\n\n").expect("three parts");
    assert_eq!(format!("{our_flags}\n"), format!("VM Flags:\n{flags}"));
    let mut lines = our_args.lines();
    assert_eq!(lines.next(), Some("VM Arguments:"));
    for line in lines {
        assert!(
            command_line.lines().any(|l| l == line),
            "{line:?} is not in jcmd.exe's VM.command_line:\n{command_line}"
        );
    }
    assert!(our_args.contains("jvm_args: ") && our_args.contains("java_command: ThreadsTarget"));
}

/// The heap in the minidump (Windows JDK 21, Serial): `inspect histo --core` agrees with
/// `jcmd.exe GC.class_histogram -all` taken just before and just after the dump (every class
/// whose row is the same in both, at least 90 % of the bytes); `inspect heap --core` prints
/// jcmd.exe's `GC.heap_info` byte for byte up to its Metaspace lines (read through a libjvm's
/// `.symtab`, which `jvm.dll` lacks: left out with a warning); `inspect heapdump --core` writes a
/// file both HPROF readers read with no reference to nothing, with jcmd's instance counts of the
/// stable classes and the threads' names.
#[test]
#[ignore = "requires Wine, Windows JDK, JDK 17 (scripts/test.sh)"]
fn windows_minidump_histogram_heap_info_and_heap_dump_match_jcmd_exe() {
    use crate::support::hprof::{Query, Value, strict_check, visualvm_check};
    let dir = threads_minidump();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let after_pid_line = |t: String| t.split_once('\n').map(|(_, r)| r.to_string()).unwrap();
    let dump = dir.join("threads.mdmp");
    let core = dump.to_str().unwrap();
    let (histo_before, histo_after) = (read("histo-jcmd-before.txt"), read("histo-jcmd-after.txt"));
    let ours = inspect_ok(&["histo", "--core", core]);
    let rows = crate::support::histo::agree_rows(&histo_before, &ours, &histo_after, false);
    assert!(
        rows.keys().any(|n| n.starts_with("ThreadsTarget")),
        "no ThreadsTarget class in ours:\n{ours}"
    );

    let out = inspect(&["heap", "--core", core]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = String::from_utf8_lossy(&out.stdout).to_string();
    let without_metaspace = |t: &str| -> String {
        t.lines()
            .take_while(|l| !l.trim_start().starts_with("Metaspace"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let (info_before, info_after) = (
        without_metaspace(&after_pid_line(read("heap-info-jcmd-before.txt"))),
        without_metaspace(&after_pid_line(read("heap-info-jcmd-after.txt"))),
    );
    assert!(
        ours == info_before || ours == info_after,
        "inspect heap --core:\n{ours}\njcmd.exe GC.heap_info before:\n{info_before}\nafter:\n{info_after}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the Metaspace lines are left out"),
        "no warning of the Metaspace lines"
    );

    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("minidump.hprof");
    inspect_ok(&["heapdump", "--core", core, "-o", file.to_str().unwrap()]);
    let strict = strict_check(&file);
    assert!(strict.violations.is_empty(), "{:#?}", strict.violations);
    assert_eq!(
        (
            strict.dangling,
            strict.dangling_static,
            strict.unresolved_roots
        ),
        (0, 0, 0),
        "references to nothing, e.g. {:#?}",
        strict.examples
    );
    let vv = visualvm_check(&file, &[Query::Field("java.lang.Thread", "name")]);
    assert_eq!(
        (vv.dangling, vv.unresolved_roots),
        (0, 0),
        "{:#?}",
        vv.examples
    );
    let (_, before) = crate::support::histo::parse(&histo_before);
    let (_, after) = crate::support::histo::parse(&histo_after);
    let mut compared = 0;
    for (name, b) in &before {
        let class = name.split(" (").next().unwrap_or(name);
        // java.lang.Class: its instances are the classes in a dump.
        if after.get(name) != Some(b)
            || class.starts_with('[')
            || class.contains('/')
            || class == "java.lang.Class"
        {
            continue;
        }
        if let Some(c) = vv.classes.get(class) {
            assert_eq!(
                c.instances, b.0,
                "{class}: VisualVM counts {c:?}, jcmd.exe {b:?}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 100, "only {compared} classes compared");
    let names: Vec<&Value> = vv.fields.iter().map(|f| &f.value).collect();
    assert!(
        names
            .iter()
            .any(|v| matches!(v, Value::Str(s) if s == "t-juc-held")),
        "no thread named t-juc-held in the dump: {names:?}"
    );
}
