//! Thread dumps compared with jcmd's: the parser of `Thread.print -l`'s text (ours and jcmd's),
//! the targets, and the agreement checks the thread tests share (`threads`, `threads_field`,
//! `jdk8`, `foreign_core`, `minidump_threads`, `virtual_threads`, `thread_states`, `otlp`).

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::*;

/// One thread of a dump, as compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    pub name: String,
    pub id: Option<u64>,
    pub nid: Option<String>,
    pub state: Option<String>,
    pub frames: Vec<String>,
    /// `Carrying virtual thread #N`: the id of the virtual thread mounted on this carrier.
    pub carrying: Option<u64>,
    /// The frames under `Mounted virtual thread #N` (JDK 24+ jcmd, and ours).
    pub mounted: Vec<String>,
}

/// `\tat java.lang.Object.wait(java.base@17.0.15/Object.java:338)` →
/// `java.lang.Object.wait(java.base@17.0.15/Object.java:338)`: the frame as printed, module
/// prefix and all (ours prints it as jcmd does).
pub fn normalize_frame(line: &str) -> String {
    line.trim_start().trim_start_matches("at ").to_string()
}

/// The Java threads of a jcmd `Thread.print` dump (or ours), by name.
pub fn parse(text: &str) -> BTreeMap<String, Thread> {
    let mut out = BTreeMap::new();
    let mut current: Option<Thread> = None;
    let mut in_mounted = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('"') {
            if let Some(t) = current.take() {
                out.insert(t.name.clone(), t);
            }
            let Some(end) = rest.find("\" ") else {
                continue;
            };
            let name = rest[..end].to_string();
            let after = &rest[end + 2..];
            // Only Java threads have `#<id>`: the VM's own threads are left out.
            let Some(id) = after
                .strip_prefix('#')
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse().ok())
            else {
                continue;
            };
            let nid = after
                .split_whitespace()
                .find_map(|w| w.strip_prefix("nid="))
                .map(str::to_string);
            current = Some(Thread {
                name,
                id: Some(id),
                nid,
                state: None,
                frames: Vec::new(),
                carrying: None,
                mounted: Vec::new(),
            });
            in_mounted = false;
        } else if let Some(t) = current.as_mut() {
            if let Some(s) = line.strip_prefix("   java.lang.Thread.State: ") {
                t.state = Some(s.to_string());
            } else if let Some(n) = line.strip_prefix("   Carrying virtual thread #") {
                t.carrying = n.trim().parse().ok();
            } else if line.starts_with("   Mounted virtual thread #") {
                in_mounted = true;
            } else if line.starts_with("\tat ") {
                if in_mounted {
                    t.mounted.push(normalize_frame(line));
                } else {
                    t.frames.push(normalize_frame(line));
                }
            }
        }
    }
    if let Some(t) = current.take() {
        out.insert(t.name.clone(), t);
    }
    out
}

pub fn jcmd_threads(java_home: &Path, pid: i32) -> String {
    let out = output_within(
        Command::new(java_home.join("bin/jcmd"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .args([&pid.to_string(), "Thread.print", "-l"]),
        COMMAND_LIMIT,
        Some(pid),
    );
    assert!(out.status.success(), "jcmd Thread.print failed");
    String::from_utf8(out.stdout).unwrap()
}

/// `inspect threads <pid>`'s output; panics with its stderr when it fails.
pub fn inspect_threads(pid: i32) -> String {
    inspect_threads_with(&[&pid.to_string()])
}

/// `inspect threads <args>`'s output; panics with its stderr when it fails (or is still running
/// after [`COMMAND_LIMIT`]).
pub fn inspect_threads_with(args: &[&str]) -> String {
    let out = output_within(
        Command::new(env!("CARGO_BIN_EXE_inspect"))
            .arg("threads")
            .args(args),
        COMMAND_LIMIT,
        target_of(args),
    );
    assert!(
        out.status.success(),
        "inspect threads {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn start_target(java_home: &Path, flags: &[&str]) -> Jvm {
    let mut cmd = Command::new(java_home.join("bin/java"));
    cmd.args(["-Xmx64m"])
        .args(flags)
        .arg("-cp")
        .arg(test_classes())
        .arg("ThreadsTarget")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, java_home)
}

/// Threads running Java code (no anchor): walked from their registers. Their top frame is
/// wherever the thread was stopped (jcmd's is at a safepoint poll), so its line is not compared,
/// only its `class.method`.
pub const RUNNING_JAVA: &[&str] = &["t-spin", "t-allocate"];

/// The top 10 frames of `t` as compared with jcmd's; for a thread running Java code
/// ([`RUNNING_JAVA`]) the first frame without its `(File:line)`.
pub fn top_frames(name: &str, t: &Thread) -> Vec<String> {
    let mut top: Vec<String> = t.frames.iter().take(10).cloned().collect();
    if RUNNING_JAVA.contains(&name)
        && let Some(first) = top.first_mut()
        && let Some(open) = first.find('(')
    {
        first.truncate(open);
    }
    top
}

/// The named test threads that must be in every dump.
pub const NAMED: &[&str] = &[
    "main",
    "t-object-wait",
    "t-deadlock-1",
    "t-deadlock-2",
    "t-juc-deadlock-1",
    "t-juc-deadlock-2",
    "t-sleep",
    "t-park",
    "t-juc-held",
    "t-park-on-class",
    "t-accept",
    "t-clinit-owner",
    "t-clinit-waiter",
    "t-reflective",
    "t-recursion",
    "t-spin",
];

/// [`compare`] on the running ThreadsTarget JVM `pid`, whose `jcmd <pid> Thread.print -l` is
/// `jcmd` (JDK 8's runs inside its root).
pub fn compare_with(pid: i32, jcmd: &dyn Fn(i32) -> String) {
    compare_with_args(pid, &[], jcmd);
}

/// [`compare_with`], `inspect threads` given `extra` arguments before the pid.
pub fn compare_with_args(pid: i32, extra: &[&str], jcmd: &dyn Fn(i32) -> String) {
    let before = parse(&jcmd(pid));
    let pid_text = pid.to_string();
    let mut args = extra.to_vec();
    args.push(&pid_text);
    let ours_text = inspect_threads_settled(&args);
    let after = parse(&jcmd(pid));
    let ours = parse(&ours_text);
    for name in NAMED {
        assert!(
            ours.contains_key(*name),
            "{name} missing from ours:\n{ours_text}"
        );
    }
    let mut compared = 0;
    for (name, b) in &before {
        let Some(a) = after.get(name) else { continue };
        if name == "Attach Listener" {
            continue; // started by jcmd itself, after or during our dump
        }
        let o = ours.get(name).unwrap_or_else(|| {
            panic!("thread {name} in both jcmd dumps, not in ours:\n{ours_text}")
        });
        assert_eq!(o.id, b.id, "{name}: Java thread id");
        assert_eq!(o.nid, b.nid, "{name}: nid");
        if b.state == a.state {
            assert_eq!(o.state, b.state, "{name}: java.lang.Thread.State");
        }
        let top = |t: &Thread| top_frames(name, t);
        if top(b) == top(a) {
            assert_eq!(
                top(o),
                top(b),
                "{name}: top 10 frames differ from jcmd's\nours:\n{ours_text}"
            );
            compared += 1;
        }
    }
    assert!(
        compared >= 12,
        "only {compared} threads were stable enough to compare"
    );
}

/// A thread's frames with their lock lines (`at …` normalized as [`normalize_frame`], `- …`
/// as printed) and its `Locked ownable synchronizers:` entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockedThread {
    pub stack: Vec<String>,
    pub synchronizers: Vec<String>,
}

/// The lock-relevant part of a dump: per thread name, and the deadlock section (the text after
/// the first `Found one Java-level deadlock:`, frames as printed).
pub fn parse_locks(text: &str) -> (BTreeMap<String, LockedThread>, String) {
    let (threads, deadlocks) = match text.find("Found one Java-level deadlock:") {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let mut out = BTreeMap::new();
    let mut current: Option<(String, LockedThread)> = None;
    let mut in_synchronizers = false;
    for line in threads.lines() {
        if let Some(rest) = line.strip_prefix('"') {
            if let Some((n, t)) = current.take() {
                out.insert(n, t);
            }
            in_synchronizers = false;
            let Some(end) = rest.find("\" ") else {
                continue;
            };
            if rest[end + 2..].starts_with('#') {
                current = Some((rest[..end].to_string(), LockedThread::default()));
            }
        } else if let Some((_, t)) = current.as_mut() {
            if line.trim() == "Locked ownable synchronizers:" {
                in_synchronizers = true;
            } else if line.starts_with("\tat ") {
                t.stack.push(normalize_frame(line));
            } else if let Some(l) = line.strip_prefix("\t- ") {
                if in_synchronizers {
                    if l != "None" {
                        t.synchronizers.push(l.to_string());
                    }
                } else {
                    t.stack.push(format!("- {l}"));
                }
            }
        }
    }
    if let Some((n, t)) = current.take() {
        out.insert(n, t);
    }
    let deadlocks = deadlocks
        .lines()
        .map(|l| {
            if l.starts_with("\tat ") {
                format!("\tat {}", normalize_frame(l))
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    (out, deadlocks.trim_end().to_string())
}

/// The top `n` frames of a stack with the lock lines under them.
pub fn top_with_locks(stack: &[String], n: usize) -> Vec<String> {
    let mut frames = 0;
    let mut out = Vec::new();
    for l in stack {
        if !l.starts_with('-') {
            frames += 1;
            if frames > n {
                break;
            }
        }
        out.push(l.clone());
    }
    out
}

/// [`compare_locks`] on the running ThreadsTarget JVM `pid`, whose `jcmd <pid> Thread.print -l`
/// is `jcmd`.
pub fn compare_locks_with(pid: i32, jcmd: &dyn Fn(i32) -> String) {
    compare_locks_with_args(pid, &[], jcmd);
}

/// [`compare_locks_with`], `inspect threads` given `extra` arguments before the pid.
pub fn compare_locks_with_args(pid: i32, extra: &[&str], jcmd: &dyn Fn(i32) -> String) {
    let before_text = jcmd(pid);
    let pid_text = pid.to_string();
    let mut args = extra.to_vec();
    args.push(&pid_text);
    let ours_text = inspect_threads_settled(&args);
    let after_text = jcmd(pid);
    // Under a collector that moves objects while the JVM runs (ZGC, Shenandoah) and allocates,
    // a lock's address may change between jcmd's two dumps: that bracket cannot judge, and
    // another is taken (each with ours between), up to four.
    let mut texts = (before_text, ours_text, after_text);
    for attempt in 1.. {
        match try_agree_locks(&texts.0, &texts.1, &texts.2) {
            Ok(_) => return,
            Err(why) if attempt < 4 => {
                eprintln!("jcmd's dumps moved (attempt {attempt}): {why}; again");
                let before = jcmd(pid);
                let ours = inspect_threads_settled(&args);
                texts = (before, ours, jcmd(pid));
            }
            Err(why) => panic!("{why}"),
        }
    }
}

/// `inspect threads` with `args`, taken again (up to ten times, 500 ms apart) while a thread's
/// `java.lang.Thread` could not be read. Generational ZGC relocates objects while the JVM runs
/// and remaps the roots that still point at an old copy only in its next cycle; a
/// `JavaThread`'s handle read in between leads to the old copy, whose memory may be reused
/// (reading through ZGC's forwarding tables is not done yet): the dump says so per thread
/// (`<inspect: java.lang.Thread fields: …>`), and a later one reads them. Seen with a thread
/// allocating, in about one test run in three, right after the JVM started.
pub fn inspect_threads_settled(args: &[&str]) -> String {
    let mut out = inspect_threads_with(args);
    for attempt in 1..10 {
        if !out.contains("<inspect: java.lang.Thread fields: ") {
            break;
        }
        eprintln!("a thread's java.lang.Thread was not read (attempt {attempt}); again");
        std::thread::sleep(std::time::Duration::from_millis(500));
        out = inspect_threads_with(args);
    }
    out
}

/// The checks of [`compare_locks_with`] on jcmd's dumps before and after ours (texts); returns
/// the names of the threads whose frames and lock lines were compared.
pub fn agree_locks(before_text: &str, ours_text: &str, after_text: &str) -> Vec<String> {
    try_agree_locks(before_text, ours_text, after_text).unwrap_or_else(|why| panic!("{why}"))
}

/// [`agree_locks`], but a bracket too unstable to judge (a locking thread or the deadlock
/// section not the same in jcmd's two dumps) is an `Err` saying so; a difference between ours
/// and jcmd's stable dumps still panics.
pub fn try_agree_locks(
    before_text: &str,
    ours_text: &str,
    after_text: &str,
) -> Result<Vec<String>, String> {
    let (before, dl_before) = parse_locks(before_text);
    let (after, dl_after) = parse_locks(after_text);
    let (ours, dl_ours) = parse_locks(ours_text);
    let mut compared = Vec::new();
    for (name, b) in &before {
        let Some(a) = after.get(name) else { continue };
        if name == "Attach Listener" || RUNNING_JAVA.contains(&name.as_str()) {
            continue;
        }
        let o = ours
            .get(name)
            .unwrap_or_else(|| panic!("{name} not in ours:\n{ours_text}"));
        let (tb, ta) = (top_with_locks(&b.stack, 10), top_with_locks(&a.stack, 10));
        if tb == ta {
            assert_eq!(
                top_with_locks(&o.stack, 10),
                tb,
                "{name}: frames and lock lines differ from jcmd's\nours:\n{ours_text}\njcmd:\n{before_text}"
            );
            compared.push(name.clone());
        }
        for s in &o.synchronizers {
            assert!(
                b.synchronizers.contains(s) || a.synchronizers.contains(s),
                "{name}: ownable synchronizer {s} not in jcmd's {:?}",
                b.synchronizers
            );
        }
    }
    for name in LOCKING {
        if !compared.iter().any(|c| c == name) {
            return Err(format!(
                "{name} was not compared (not stable in jcmd's dumps)\n{before_text}\n{after_text}"
            ));
        }
    }
    // Each ReentrantLock deadlock thread owns the lock the other is parked on: known.
    for name in ["t-juc-deadlock-1", "t-juc-deadlock-2"] {
        assert_eq!(
            ours[name].synchronizers.len(),
            1,
            "{name}: its ReentrantLock should be listed\n{ours_text}"
        );
    }
    if dl_before != dl_after {
        return Err(format!(
            "jcmd's deadlock sections differ\n{dl_before}\n{dl_after}"
        ));
    }
    assert!(
        dl_before.contains("Found 2 deadlocks."),
        "jcmd found no deadlocks?\n{dl_before}"
    );
    assert_eq!(dl_ours, dl_before, "deadlock section\nours:\n{ours_text}");
    Ok(compared)
}

/// `inspect threads -l` (the heap walked for the ownable synchronizers) against jcmd's
/// `Thread.print -l` before and after it: every Java thread whose `Locked ownable
/// synchronizers` are the same in both of jcmd's has the same in ours, in jcmd's order; every
/// Java thread of ours prints the section (`- None` when it owns none); `t-juc-held` owns its
/// `ReentrantLock` and its `ReentrantReadWriteLock`, which no thread waits on. `ordered`: in
/// jcmd's order too (the heap's address order; Shenandoah's and ZGC's `object_iterate`, which
/// jcmd's walk uses, follows references instead, so there a thread's list is compared as a
/// set). Returns how many threads were compared.
pub fn agree_synchronizers(
    before_text: &str,
    ours_text: &str,
    after_text: &str,
    ordered: bool,
) -> usize {
    let (before, _) = parse_locks(before_text);
    let (after, _) = parse_locks(after_text);
    let (ours, _) = parse_locks(ours_text);
    let mut compared = 0;
    for (name, b) in &before {
        let Some(a) = after.get(name) else { continue };
        if name == "Attach Listener" || a.synchronizers != b.synchronizers {
            continue;
        }
        let o = ours
            .get(name)
            .unwrap_or_else(|| panic!("{name} not in ours:\n{ours_text}"));
        let sorted = |v: &[String]| {
            let mut v = v.to_vec();
            if !ordered {
                v.sort();
            }
            v
        };
        assert_eq!(
            sorted(&o.synchronizers),
            sorted(&b.synchronizers),
            "{name}: ownable synchronizers differ from jcmd's\nours:\n{ours_text}\njcmd:\n{before_text}"
        );
        compared += 1;
    }
    let sections = ours_text
        .lines()
        .filter(|l| *l == "   Locked ownable synchronizers:")
        .count();
    assert_eq!(
        sections,
        ours.len(),
        "every Java thread prints its ownable synchronizers\n{ours_text}"
    );
    let held = &ours["t-juc-held"].synchronizers;
    let owns = |class: &str| held.iter().any(|h| h.ends_with(&format!("(a {class})")));
    assert!(
        held.len() == 2
            && owns("java.util.concurrent.locks.ReentrantLock$NonfairSync")
            && owns("java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync"),
        "t-juc-held: {held:?}\n{ours_text}"
    );
    assert!(
        compared + 2 >= before.len(),
        "only {compared} of {} threads compared",
        before.len()
    );
    compared
}

/// The bound on one `inspect threads` run, generous for a loaded CI machine.
pub const INSPECT_LIMIT: Duration = Duration::from_secs(20);

/// The bound on its peak RSS, damaged cores included (a clean dump of these JVMs needs far
/// less; the page cache of the walk holds at most 64 MiB).
pub const INSPECT_RSS_KIB: u64 = 200 * 1024;

/// `inspect` with `args`, bounded by [`INSPECT_LIMIT`] (a hang fails the test) and measured
/// under GNU time: its output, wall time and peak RSS in KiB.
pub fn inspect_measured(args: &[&str]) -> (Output, Duration, u64) {
    assert!(
        Path::new("/usr/bin/time").exists(),
        "/usr/bin/time (GNU time) is missing: apt-get install -y time (scripts/setup-test-deps.sh)"
    );
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("rss");
    let (out, err) = (
        std::fs::File::create(dir.path().join("out")).unwrap(),
        std::fs::File::create(dir.path().join("err")).unwrap(),
    );
    let began = Instant::now();
    let mut child = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_inspect"))
        .args(args)
        .env("HSINSPECT_CACHE_DIR", dir.path())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .expect("running /usr/bin/time inspect");
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if began.elapsed() > INSPECT_LIMIT {
            // What GNU time, inspect and the target were doing, then the group started here
            // killed.
            let mut seen = String::new();
            for pid in deadline::group_members(child.id() as i32) {
                seen.push_str(&deadline::describe(pid, "command's"));
            }
            if let Some(t) = target_of(args) {
                seen.push_str(&deadline::describe(t, "target"));
            }
            send_signal(-(child.id() as i32), libc::SIGKILL);
            let _ = child.wait();
            panic!("inspect {args:?} still running after {INSPECT_LIMIT:?} (hang)\n{seen}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = began.elapsed();
    let rss = std::fs::read_to_string(&report)
        .unwrap_or_default()
        .split_whitespace()
        .last()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS from GNU time for inspect {args:?}"));
    let output = Output {
        // GNU time exits with its child's status (or 128+signal when it was killed by one).
        status,
        stdout: std::fs::read(dir.path().join("out")).unwrap(),
        stderr: std::fs::read(dir.path().join("err")).unwrap(),
    };
    (output, took, rss)
}

/// `inspect threads` with `args`, which must succeed within the bounds; its dump.
pub fn threads_ok(args: &[&str]) -> String {
    let mut all = vec!["threads"];
    all.extend_from_slice(args);
    let (out, took, rss) = inspect_measured(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "inspect {all:?} failed ({}): {stderr}",
        out.status
    );
    assert!(
        rss <= INSPECT_RSS_KIB,
        "inspect {all:?}: peak RSS {rss} KiB (took {took:?})"
    );
    eprintln!("inspect {all:?}: {took:?}, peak RSS {rss} KiB");
    String::from_utf8(out.stdout).expect("UTF-8 dump")
}

/// Checks our dump against jcmd's `first` and `second` (see the module's doc); every thread in
/// `named` must be in ours. Returns how many threads' frames were compared.
pub fn agree(first: &str, ours_text: &str, second: &str, named: &[&str]) -> usize {
    let (a, b, ours) = (parse(first), parse(second), parse(ours_text));
    for name in named {
        assert!(
            ours.contains_key(*name),
            "{name} missing from ours:\n{ours_text}"
        );
    }
    let mut compared = 0;
    for (name, x) in &a {
        let top = |t: &Thread| top_frames(name, t);
        let Some(y) = b.get(name) else { continue };
        if name == "Attach Listener" {
            continue; // started by jcmd itself
        }
        let o = ours.get(name).unwrap_or_else(|| {
            panic!("thread {name} in both jcmd dumps, not in ours:\n{ours_text}")
        });
        assert_eq!(o.id, x.id, "{name}: Java thread id\n{ours_text}");
        assert_eq!(o.nid, x.nid, "{name}: nid\n{ours_text}");
        if x.state == y.state {
            assert_eq!(
                o.state, x.state,
                "{name}: java.lang.Thread.State\n{ours_text}"
            );
        }
        if top(x) != top(y) {
            continue;
        }
        assert_eq!(
            top(o),
            top(x),
            "{name}: top 10 frames differ from jcmd's\nours:\n{ours_text}"
        );
        compared += 1;
    }
    compared
}
/// Threads whose lock lines must be compared in every configuration.
pub const LOCKING: &[&str] = &[
    "t-object-wait",
    "t-deadlock-1",
    "t-deadlock-2",
    "t-juc-deadlock-1",
    "t-juc-deadlock-2",
    "t-park",
    // `- parking to wait for <0x…> (a java.lang.Class)`: a Class blocker is named by its klass.
    "t-park-on-class",
    // JDK 17+: `- waiting on the Class initialization monitor for ThreadsTarget$SlowInit`.
    "t-clinit-waiter",
];
