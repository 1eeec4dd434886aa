//! `inspect threads --virtual` against `jcmd <pid> Thread.dump_to_file` of the same JVM (issue
//! 29 item 4): ManyVirtualThreads starts 10,000 virtual threads (parked on a latch, sleeping,
//! in an executor's container, and two pinned in `synchronized`); jcmd's dump is taken before
//! and after ours. Every virtual thread in both of jcmd's dumps must be in ours, mounted (under
//! its carrier) or unmounted (in the `--virtual` section), none that is in neither, with its
//! name, and, where jcmd printed the same frames twice, the same frames (jcmd's
//! `Thread.getStackTrace` leaves out `@Hidden` frames: the continuation's own and lambda
//! forms, which ours prints as `Thread.print` does).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::jcmd::{inspect_threads_with, jcmd_threads, parse};
use crate::support::{COMMAND_LIMIT, Jvm, gcore, jdk, output_within, scratch_dir, test_classes};

/// One virtual thread of a dump, as compared.
#[derive(Debug, Clone, PartialEq, Eq)]
struct VirtualThread {
    name: String,
    /// `java.lang.Thread.State` without its detail (`WAITING`), when the dump prints it.
    state: Option<String>,
    /// `class.method`, innermost first.
    frames: Vec<String>,
}

/// `java.base/java.lang.VirtualThread.park(Unknown Source)` → `java.lang.VirtualThread.park`.
fn method_of(frame: &str) -> String {
    let f = frame.trim().trim_start_matches("at ");
    let f = f.split('(').next().unwrap_or(f);
    // A module prefix (`java.base/`); a hidden class's name has a `/` too (`A$$Lambda/0x…`).
    match f.split_once('/') {
        Some((module, rest)) if !module.contains('$') => rest.to_string(),
        _ => f.to_string(),
    }
}

/// `Thread.dump_to_file`'s plain text: `#<tid> "<name>" virtual` (JDK 21) or `#<tid> "<name>"
/// virtual <STATE> <time>` (JDK 25), its frames indented below, lock lines (`- locked`) after
/// their frame. Only virtual threads are kept.
fn parse_dump_to_file(text: &str) -> BTreeMap<u64, VirtualThread> {
    let mut out = BTreeMap::new();
    let mut current: Option<(u64, VirtualThread)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('#') {
            if let Some((tid, t)) = current.take() {
                out.insert(tid, t);
            }
            let (Some(sp), Some(open), Some(close)) =
                (rest.find(' '), rest.find('"'), rest.rfind('"'))
            else {
                continue;
            };
            let tail = &rest[close + 1..];
            let Some(after) = tail.strip_prefix(" virtual") else {
                continue;
            };
            current = Some((
                rest[..sp].parse().expect("a thread id"),
                VirtualThread {
                    name: rest[open + 1..close].to_string(),
                    state: after.split_whitespace().next().map(str::to_string),
                    frames: Vec::new(),
                },
            ));
        } else if let Some((_, t)) = current.as_mut() {
            let l = line.trim();
            if !l.is_empty() && !l.starts_with('-') {
                t.frames.push(method_of(l));
            }
        }
    }
    if let Some((tid, t)) = current {
        out.insert(tid, t);
    }
    out
}

/// Ours: the mounted virtual threads' ids (`Carrying virtual thread #N`) and the unmounted ones
/// of the `--virtual` section (`"<name>" #<tid> virtual <STATE>`).
fn parse_ours(text: &str) -> (BTreeSet<u64>, BTreeMap<u64, VirtualThread>) {
    let (platform, section) = text
        .split_once("\nVirtual threads not mounted: ")
        .unwrap_or_else(|| panic!("no virtual thread section in ours:\n{text}"));
    let mounted = platform
        .lines()
        .filter_map(|l| l.strip_prefix("   Carrying virtual thread #"))
        .map(|n| n.trim().parse().expect("a thread id"))
        .collect();
    let mut unmounted = BTreeMap::new();
    let mut current: Option<(u64, VirtualThread)> = None;
    for line in section.lines() {
        if line.starts_with('"')
            && let Some(close) = line.rfind("\" #")
        {
            if let Some((tid, t)) = current.take() {
                unmounted.insert(tid, t);
            }
            let mut rest = line[close + 3..].split_whitespace();
            let tid = rest
                .next()
                .and_then(|n| n.parse().ok())
                .expect("a thread id");
            assert_eq!(rest.next(), Some("virtual"), "header {line}");
            current = Some((
                tid,
                VirtualThread {
                    name: line[1..close].to_string(),
                    state: None,
                    frames: Vec::new(),
                },
            ));
        } else if let Some((_, t)) = current.as_mut() {
            if let Some(s) = line.strip_prefix("   java.lang.Thread.State: ") {
                t.state = s.split_whitespace().next().map(str::to_string);
            } else if let Some(f) = line.strip_prefix("\tat ") {
                t.frames.push(method_of(f));
            }
        }
    }
    if let Some((tid, t)) = current {
        unmounted.insert(tid, t);
    }
    (mounted, unmounted)
}

/// The frames `Thread.getStackTrace` hides (`@Hidden` methods, hidden lambda forms), left out
/// of ours before comparing.
fn visible(frames: &[String]) -> Vec<String> {
    const HIDDEN: &[&str] = &[
        "jdk.internal.vm.Continuation.yield0",
        "jdk.internal.vm.Continuation.yield",
        "java.lang.VirtualThread.yieldContinuation",
        "java.lang.Thread.runWith",
        "java.lang.VirtualThread$VThreadContinuation$1.run",
        "jdk.internal.vm.Continuation.enter0",
        "jdk.internal.vm.Continuation.enter",
    ];
    frames
        .iter()
        .filter(|f| !HIDDEN.contains(&f.as_str()) && !f.contains("$$Lambda"))
        .cloned()
        .collect()
}

fn dump_to_file(java_home: &Path, pid: i32, dir: &Path, label: &str) -> String {
    let file = dir.join(format!("{label}.txt"));
    let out = output_within(
        Command::new(java_home.join("bin/jcmd"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .arg(pid.to_string())
            .arg("Thread.dump_to_file")
            .arg("-overwrite")
            .arg(&file),
        COMMAND_LIMIT,
        Some(pid),
    );
    assert!(
        out.status.success() && file.exists(),
        "jcmd Thread.dump_to_file failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::read_to_string(&file).unwrap()
}

/// Compares ours with jcmd's two dumps; returns how many unmounted threads' frames were
/// compared.
fn agree(before_text: &str, ours_text: &str, after_text: &str, total: usize) -> usize {
    let (before, after) = (
        parse_dump_to_file(before_text),
        parse_dump_to_file(after_text),
    );
    let (mounted, unmounted) = parse_ours(ours_text);
    assert!(
        before.len() >= total && after.len() >= total,
        "jcmd lists {} and {} virtual threads, the program started {total}",
        before.len(),
        after.len()
    );
    // In both of jcmd's dumps → in ours; in ours → in one of jcmd's.
    for tid in before.keys().filter(|t| after.contains_key(t)) {
        assert!(
            mounted.contains(tid) || unmounted.contains_key(tid),
            "virtual thread #{tid} ({:?}) is in both of jcmd's dumps, not in ours",
            before[tid].name
        );
    }
    for tid in mounted.iter().chain(unmounted.keys()) {
        assert!(
            before.contains_key(tid) || after.contains_key(tid),
            "virtual thread #{tid} of ours is in neither of jcmd's dumps"
        );
    }
    assert!(
        mounted.is_disjoint(&unmounted.keys().copied().collect()),
        "a thread both mounted and unmounted"
    );
    let mut compared = 0;
    for (tid, o) in &unmounted {
        let (Some(b), Some(a)) = (before.get(tid), after.get(tid)) else {
            continue;
        };
        assert_eq!(o.name, b.name, "#{tid}: name");
        if let (Some(bs), Some(os)) = (&b.state, &o.state)
            && a.state == b.state
        {
            assert_eq!(os, bs, "#{tid} {:?}: state", o.name);
        }
        if a.frames == b.frames && !b.frames.is_empty() {
            assert_eq!(
                visible(&o.frames),
                b.frames,
                "#{tid} {:?}: frames (ours in full: {:?})",
                o.name,
                o.frames
            );
            compared += 1;
        }
    }
    compared
}

/// The mounted virtual threads against `jcmd Thread.print` (JDK 21-23: the pinned ones): every
/// carrier that carries the same virtual thread with the same frames in both of jcmd's dumps
/// carries it in ours, with those frames (top 10). Returns how many were compared.
fn carriers_agree(before_text: &str, ours_text: &str, after_text: &str) -> usize {
    let platform = ours_text
        .split_once("\nVirtual threads not mounted: ")
        .map_or(ours_text, |(p, _)| p);
    let (before, after, ours) = (parse(before_text), parse(after_text), parse(platform));
    let mut compared = 0;
    for (name, b) in &before {
        let (Some(a), Some(vt)) = (after.get(name), b.carrying) else {
            continue;
        };
        if a.carrying != Some(vt) || a.frames != b.frames {
            continue;
        }
        let o = ours
            .get(name)
            .unwrap_or_else(|| panic!("carrier {name} not in ours"));
        assert_eq!(o.carrying, Some(vt), "{name}: carried thread");
        let top = |f: &[String]| f.iter().take(10).cloned().collect::<Vec<_>>();
        assert_eq!(top(&o.frames), top(&b.frames), "{name}: carrier frames");
        compared += 1;
    }
    compared
}

/// ManyVirtualThreads on JDK `major` with `flags`: live, then (`core`) from a gcore of it.
fn virtual_threads_match_dump_to_file(major: u32, flags: &[&str], core: bool) {
    const TOTAL: usize = 10_000;
    const PINNED: usize = 2;
    let home = jdk(major);
    let mut cmd = Command::new(home.join("bin/java"));
    cmd.args(["-Xmx256m", "-Djdk.virtualThreadScheduler.parallelism=4"])
        .args(flags)
        .arg(format!("-Dvthreads={TOTAL}"))
        .arg(format!("-Dpinned={PINNED}"))
        .arg("-cp")
        .arg(test_classes())
        .arg("ManyVirtualThreads")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let jvm = Jvm::spawn(cmd, &home);
    let dir = scratch_dir("vthreads");
    let before = dump_to_file(&home, jvm.pid, dir.path(), "before");
    let print_before = jcmd_threads(&home, jvm.pid);
    let ours = inspect_threads_with(&["--virtual", &jvm.pid.to_string()]);
    let print_after = jcmd_threads(&home, jvm.pid);
    let after = dump_to_file(&home, jvm.pid, dir.path(), "after");
    let compared = agree(&before, &ours, &after, TOTAL);
    let carriers = carriers_agree(&print_before, &ours, &print_after);
    if major < 24 {
        assert!(
            carriers >= PINNED,
            "{carriers} carriers of pinned virtual threads compared, {PINNED} pinned"
        );
    }
    assert!(
        compared >= TOTAL * 9 / 10,
        "only {compared} unmounted threads' frames compared"
    );
    if core {
        let path = gcore(jvm.pid, dir.path());
        let after_core = dump_to_file(&home, jvm.pid, dir.path(), "after-core");
        let from_core = inspect_threads_with(&["--virtual", "--core", path.to_str().unwrap()]);
        let compared = agree(&after, &from_core, &after_core, TOTAL);
        assert!(
            compared >= TOTAL * 9 / 10,
            "core: only {compared} unmounted threads' frames compared"
        );
    }
}

#[test]
#[ignore = "requires root, gdb, JDK 21 (scripts/test.sh)"]
fn jdk21_virtual_threads_match_dump_to_file_live_and_from_a_core() {
    virtual_threads_match_dump_to_file(21, &[], true);
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_interpreted_and_compiled_stack_chunks_match_dump_to_file() {
    virtual_threads_match_dump_to_file(21, &["-Xint"], false);
    virtual_threads_match_dump_to_file(21, &["-Xcomp", "-XX:+UseZGC", "-XX:+ZGenerational"], false);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_virtual_threads_match_dump_to_file() {
    virtual_threads_match_dump_to_file(25, &[], false);
    virtual_threads_match_dump_to_file(25, &["-XX:-UseCompressedOops"], false);
    virtual_threads_match_dump_to_file(25, &["-XX:+UseCompactObjectHeaders"], false);
}

#[test]
fn dump_to_file_and_ours_are_parsed() {
    let jdk21 = "1\n2026\n21\n\n#22 \"\" virtual\n      java.base/java.lang.VirtualThread.park(Unknown Source)\n      A.b(A.java:1)\n\n#1 \"main\"\n      A.main(A.java:2)\n";
    let d = parse_dump_to_file(jdk21);
    assert_eq!(d.len(), 1);
    assert_eq!(d[&22].frames, ["java.lang.VirtualThread.park", "A.b"]);
    let jdk25 = "#21 \"vt-pinned-0\" virtual TIMED_WAITING 2026-11-26T15:10:25Z\n    at java.base/java.lang.Thread.sleep(Unknown Source)\n    - locked <java.lang.Object@526de931>\n";
    let d = parse_dump_to_file(jdk25);
    assert_eq!(d[&21].state.as_deref(), Some("TIMED_WAITING"));
    assert_eq!(d[&21].frames, ["java.lang.Thread.sleep"]);
    let ours = "\"c\" #30 daemon\n   Carrying virtual thread #40\n\nVirtual threads not mounted: 1 (1 mounted):\n\n\"vt\" #22 virtual PARKED\n   java.lang.Thread.State: WAITING (parking)\n\tat jdk.internal.vm.Continuation.yield0(Unknown Source)\n\tat A.b(A.java:1)\n\n";
    let (m, u) = parse_ours(ours);
    assert_eq!(m.into_iter().collect::<Vec<_>>(), [40]);
    assert_eq!(u[&22].state.as_deref(), Some("WAITING"));
    assert_eq!(visible(&u[&22].frames), ["A.b"]);
}
