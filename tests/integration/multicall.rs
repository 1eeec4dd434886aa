//! `inspect links DIR` and the links it makes: called as `jinfo`, `jcmd`, `jstat`, `jstack`,
//! `jmap` and `jps`, inspect takes those tools' command lines and prints what the real tools
//! print for the same command lines, on the same JVM (JDK 17's tools, read before and after ours where a value
//! can move), and answer for a SIGSTOPped JVM; what they do not take they refuse with exit
//! status 2, saying why.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::{
    Jvm, assert_left_alone, inspect_ok, jdk17, scratch_dir, send_signal, test_classes,
};

fn run(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", program.display()))
}

fn stdout_ok(program: &Path, args: &[&str]) -> String {
    let out = run(program, args);
    assert!(
        out.status.success(),
        "{} {args:?} failed ({}): {}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The quoted names of a thread dump's Java threads (their line has ` #<id>`).
fn thread_names(dump: &str) -> BTreeSet<String> {
    dump.lines()
        .filter(|l| l.starts_with('"') && l.contains("\" #"))
        .filter_map(|l| l[1..].split('"').next().map(String::from))
        .collect()
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn links_print_what_jinfo_jcmd_jstat_jstack_jmap_and_jps_print() {
    let dir = scratch_dir("links");
    let made = inspect_ok(&["links", dir.path().to_str().unwrap()]);
    for tool in ["jstack", "jmap", "jinfo", "jstat", "jcmd", "jps"] {
        assert!(made.contains(tool), "{made}");
    }
    let link = |tool: &str| -> PathBuf { dir.path().join(tool) };
    let real = |tool: &str| -> PathBuf { jdk17().join("bin").join(tool) };

    let mut cmd = Command::new(jdk17().join("bin/java"));
    cmd.args([
        "-Xmx64m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-cp",
    ])
    .arg(test_classes())
    .args(["Target", "2"])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    let jvm = Jvm::spawn(cmd, &jdk17());
    let pid = jvm.pid.to_string();

    // Flags: nothing moves; byte for byte.
    for (tool, args) in [
        ("jinfo", vec!["-flags", pid.as_str()]),
        ("jcmd", vec![pid.as_str(), "VM.flags"]),
        ("jinfo", vec!["-flag", "MaxHeapSize", pid.as_str()]),
        ("jinfo", vec!["-flag", "UseSerialGC", pid.as_str()]),
        ("jinfo", vec!["-flag", "UseG1GC", pid.as_str()]),
        ("jinfo", vec!["-flag", "OnError", pid.as_str()]),
        ("jinfo", vec!["-flag", "NoSuchFlag", pid.as_str()]),
    ] {
        assert_eq!(
            stdout_ok(&link(tool), &args),
            stdout_ok(&real(tool), &args),
            "{tool} {args:?}"
        );
    }

    // `inspect jinfo ...`, busybox's form (the image's entrypoint is inspect): the same.
    assert_eq!(
        inspect_ok(&["jinfo", "-flags", &pid]),
        stdout_ok(&real("jinfo"), &["-flags", &pid]),
        "inspect jinfo -flags"
    );

    // jstat: byte for byte when the real one printed the same before and after.
    let args = ["-class", pid.as_str()];
    let before = stdout_ok(&real("jstat"), &args);
    let ours = stdout_ok(&link("jstat"), &args);
    let after = stdout_ok(&real("jstat"), &args);
    if before == after {
        assert_eq!(ours, after, "jstat -class");
    }
    let gcutil = stdout_ok(&link("jstat"), &["-gcutil", &pid]);
    assert_eq!(
        gcutil.lines().next(),
        stdout_ok(&real("jstat"), &["-gcutil", &pid]).lines().next(),
        "jstat -gcutil's header"
    );

    // Thread dumps: jcmd's `<pid>:` line, jstack's and jcmd's header line, and the same
    // threads as the real tools' dumps before and after ours.
    let dump_before = stdout_ok(&real("jcmd"), &[&pid, "Thread.print"]);
    let ours_jcmd = stdout_ok(&link("jcmd"), &[&pid, "Thread.print"]);
    let ours_jstack = stdout_ok(&link("jstack"), &[&pid]);
    let dump_after = stdout_ok(&real("jstack"), &[&pid]);
    assert_eq!(ours_jcmd.lines().next(), Some(format!("{pid}:").as_str()));
    let full = |d: &str| {
        d.lines()
            .find(|l| l.starts_with("Full thread dump"))
            .map(String::from)
    };
    assert_eq!(full(&ours_jstack), full(&dump_after));
    assert_eq!(full(&ours_jcmd), full(&dump_before));
    let stable: BTreeSet<String> = thread_names(&dump_before)
        .intersection(&thread_names(&dump_after))
        .cloned()
        .collect();
    assert!(stable.len() >= 5, "{stable:?}");
    for ours in [&ours_jcmd, &ours_jstack] {
        let names = thread_names(ours);
        let missing: Vec<_> = stable.difference(&names).collect();
        assert!(missing.is_empty(), "threads missing from ours: {missing:?}");
    }

    // Histograms: jmap's and jcmd's header lines and `<pid>:`.
    let ours_jmap = stdout_ok(&link("jmap"), &["-histo:all", &pid]);
    let real_jmap = stdout_ok(&real("jmap"), &["-histo:all", &pid]);
    assert_eq!(
        ours_jmap.lines().take(2).collect::<Vec<_>>(),
        real_jmap.lines().take(2).collect::<Vec<_>>()
    );
    let ours_jcmd_histo = stdout_ok(&link("jcmd"), &[&pid, "GC.class_histogram", "-all"]);
    assert_eq!(
        ours_jcmd_histo.lines().next(),
        Some(format!("{pid}:").as_str())
    );
    assert!(ours_jcmd_histo.contains("java.lang.String (java.base@"));

    // jcmd GC.heap_info: the same text, bracketed by the real jcmd's before and after.
    let heap_before = stdout_ok(&real("jcmd"), &[&pid, "GC.heap_info"]);
    let ours_heap = stdout_ok(&link("jcmd"), &[&pid, "GC.heap_info"]);
    let heap_after = stdout_ok(&real("jcmd"), &[&pid, "GC.heap_info"]);
    assert!(
        ours_heap == heap_before || ours_heap == heap_after,
        "ours:\n{ours_heap}\njcmd before:\n{heap_before}\nafter:\n{heap_after}"
    );

    // jcmd PerfCounter.print: `<pid>:` and the same counter names.
    let names = |t: &str| -> BTreeSet<String> {
        t.lines()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
            .collect()
    };
    // Counters may be made while the JVM runs: ours must hold every name jcmd printed before
    // and after, and only names one of them printed.
    let real_before = stdout_ok(&real("jcmd"), &[&pid, "PerfCounter.print"]);
    let ours_perf = stdout_ok(&link("jcmd"), &[&pid, "PerfCounter.print"]);
    let real_after = stdout_ok(&real("jcmd"), &[&pid, "PerfCounter.print"]);
    assert_eq!(ours_perf.lines().next(), real_after.lines().next());
    let (b, o, a) = (names(&real_before), names(&ours_perf), names(&real_after));
    let missing: Vec<_> = b.intersection(&a).filter(|n| !o.contains(*n)).collect();
    let extra: Vec<_> = o
        .iter()
        .filter(|n| !b.contains(*n) && !a.contains(*n))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "PerfCounter.print: missing {missing:?}, not jcmd's {extra:?}"
    );

    // jps and jcmd's listing: this JVM's line as the real tools print it.
    let line_of = |text: &str| -> Option<String> {
        text.lines()
            .find(|l| l.split(' ').next() == Some(pid.as_str()))
            .map(String::from)
    };
    for opts in [
        vec![],
        vec!["-l"],
        vec!["-m"],
        vec!["-lm"],
        vec!["-v"],
        vec!["-q"],
    ] {
        let ours = line_of(&stdout_ok(&link("jps"), &opts));
        assert!(ours.is_some(), "jps {opts:?}: this JVM not listed");
        assert_eq!(
            ours,
            line_of(&stdout_ok(&real("jps"), &opts)),
            "jps {opts:?}"
        );
    }
    assert_eq!(
        line_of(&stdout_ok(&link("jcmd"), &[])),
        line_of(&stdout_ok(&real("jcmd"), &[])),
        "jcmd's listing"
    );

    // What is not taken: exit status 2, the tool's name and why.
    for (tool, args, says) in [
        ("jmap", vec!["-histo:live", pid.as_str()], "full GC"),
        (
            "jmap",
            vec!["-dump:live,format=b,file=/tmp/x.hprof", pid.as_str()],
            "full GC",
        ),
        (
            "jinfo",
            vec!["-flag", "+UseG1GC", pid.as_str()],
            "never writes",
        ),
        (
            "jcmd",
            vec![pid.as_str(), "GC.heap_dump", "/tmp/x"],
            "full GC",
        ),
        ("jcmd", vec![pid.as_str(), "GC.run"], "answers Thread.print"),
    ] {
        let out = run(&link(tool), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tool} {args:?}: {err}");
        assert!(
            err.starts_with(&format!("{tool}: ")) && err.contains(says),
            "{err}"
        );
    }
    // Where the real tools cannot answer: the JVM SIGSTOPped. The links read it as before and
    // leave it stopped.
    // Threads come and go (a compiler thread the VM adds or retires): compared are those the
    // real jstack saw just before the stop and just after.
    let flags = stdout_ok(&real("jinfo"), &["-flags", &pid]);
    let before_stop = thread_names(&stdout_ok(&real("jstack"), &[&pid]));
    send_signal(jvm.pid, libc::SIGSTOP);
    let stopped_flags = stdout_ok(&link("jinfo"), &["-flags", &pid]);
    let stopped_dump = stdout_ok(&link("jstack"), &[&pid]);
    assert_left_alone(jvm.pid, true);
    send_signal(jvm.pid, libc::SIGCONT);
    let after_stop = thread_names(&stdout_ok(&real("jstack"), &[&pid]));
    assert_eq!(stopped_flags, flags, "jinfo -flags of the stopped JVM");
    let stable: BTreeSet<String> = before_stop.intersection(&after_stop).cloned().collect();
    assert!(stable.len() >= 5, "{stable:?}");
    let names = thread_names(&stopped_dump);
    let missing: Vec<_> = stable.difference(&names).collect();
    assert!(missing.is_empty(), "stopped: threads missing: {missing:?}");
    drop(jvm);
}
