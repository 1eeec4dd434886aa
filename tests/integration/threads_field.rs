//! `inspect threads` where an operator needs it (issue 28): cores of the ThreadsTarget JVM (gdb's
//! `gcore` and the kernel's, on SIGABRT), JVMs jcmd cannot dump (SIGSTOPped, a safepoint that
//! never completes), a stripped libjvm, and damaged cores (cut at every segment boundary, random
//! bytes flipped in the heap and stack segments).
//!
//! The reference is `jcmd <pid> Thread.print -l` of the same JVM: two dumps taken around ours
//! (or both before it, where the JVM cannot answer after: a kernel core, a stuck safepoint). A
//! Java thread in both of jcmd's dumps must be in ours with the same Java id and nid; where jcmd's
//! two dumps agree on it, with the same `java.lang.Thread.State` and the same top 10 frames
//! (`crate::support::jcmd::parse`: module prefixes removed).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::cores::*;
use crate::support::jcmd::*;
use crate::support::jcmd::{NAMED, parse};
use crate::support::*;

/// How long jcmd is given where it is expected not to answer.
const JCMD_LIMIT: Duration = Duration::from_secs(10);

/// `jcmd <pid> Thread.print -l`, killed (with its process group) after `limit`: its output, or
/// why there is none (on a timeout, what jcmd and the JVM were doing).
fn jcmd_bounded(java_home: &Path, pid: i32, limit: Duration) -> Result<String, String> {
    let run = try_output_within(
        Command::new(java_home.join("bin/jcmd"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .args([&pid.to_string(), "Thread.print", "-l"]),
        &[],
        limit,
        Some(pid),
    )
    .expect("running jcmd");
    let out = run.map_err(|hang| {
        format!(
            "jcmd Thread.print gave no dump within {limit:?}\n{}",
            hang.report
        )
    })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() && text.contains("Full thread dump") {
        Ok(text)
    } else {
        Err(format!("jcmd Thread.print failed ({}): {text}", out.status))
    }
}

/// jcmd's dump, which must come (the JVM answers) within [`COMMAND_LIMIT`].
fn jcmd_ok(java_home: &Path, pid: i32) -> String {
    jcmd_bounded(java_home, pid, COMMAND_LIMIT)
        .unwrap_or_else(|e| panic!("reference dump of {pid}: {e}"))
}

/// Starts test program `class` on the JDK at `java_home` with `flags`, its working directory
/// `cwd` (where the kernel writes its core, and jcmd its attach file), `MALLOC_ARENA_MAX=2` and
/// `-Xmx64m` (smaller cores), and with `RLIMIT_CORE` unlimited when `kernel_core`.
fn start(java_home: &Path, flags: &[&str], class: &str, cwd: &Path, kernel_core: bool) -> Jvm {
    std::fs::create_dir_all(cwd).unwrap();
    let mut cmd = Command::new(java_home.join("bin/java"));
    cmd.env("MALLOC_ARENA_MAX", "2")
        .current_dir(cwd)
        .arg("-Xmx64m")
        .args(flags)
        .arg("-cp")
        .arg(test_classes())
        .arg(class)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if kernel_core {
        allow_core_dumps(&mut cmd);
    }
    Jvm::spawn(cmd, java_home)
}

// ---- Cores ----------------------------------------------------------------------------------

/// A sysroot holding the libjvm of `java_home` under its real path.
fn sysroot_with_libjvm(java_home: &Path, dir: &Path) -> PathBuf {
    let lib = std::fs::canonicalize(java_home.join("lib/server/libjvm.so")).unwrap();
    let root = dir.join("sysroot");
    let copy = root.join(lib.strip_prefix("/").unwrap());
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(&lib, &copy).unwrap();
    root
}

/// The ThreadsTarget JVM on JDK `major` with `flags`: a `gcore` between two jcmd dumps, read
/// by `inspect threads --core` (also with `--sysroot`, and with `--exe` once the core's NT_FILE
/// note is hidden: the same dump); then two jcmd dumps, SIGABRT, and the kernel's core read.
fn cores_match_jcmd(major: u32, flags: &[&str]) {
    let home = jdk(major);
    let dir = scratch_dir(&format!("threads-cores-{major}"));
    let cwd = dir.path().join("cwd");
    let mut jvm = start(&home, flags, "ThreadsTarget", &cwd, true);

    let gdir = dir.path().join("gcore");
    std::fs::create_dir_all(&gdir).unwrap();
    let before = jcmd_ok(&home, jvm.pid);
    let core = gcore(jvm.pid, &gdir);
    let after = jcmd_ok(&home, jvm.pid);
    let core_s = core.to_str().unwrap();
    let ours = threads_ok(&["--core", core_s]);
    let compared = agree(&before, &ours, &after, NAMED);
    assert!(compared >= 12, "gcore: only {compared} threads compared");
    eprintln!("JDK {major} {flags:?} gcore: {compared} threads' frames compared");
    assert!(
        !ours.contains("cpu="),
        "cpu= is not known from a core:\n{ours}"
    );

    let sysroot = sysroot_with_libjvm(&home, dir.path());
    let with_sysroot = threads_ok(&["--core", core_s, "--sysroot", sysroot.to_str().unwrap()]);
    assert_eq!(with_sysroot, ours, "--sysroot changed the dump");
    crate::support::cores::hide_nt_file(&core);
    let java = home.join("bin/java");
    let with_exe = threads_ok(&["--core", core_s, "--exe", java.to_str().unwrap()]);
    assert_eq!(with_exe, ours, "--exe (link_map walk) changed the dump");
    std::fs::remove_file(&core).unwrap();

    let first = jcmd_ok(&home, jvm.pid);
    let second = jcmd_ok(&home, jvm.pid);
    abort_with_core(&mut jvm);
    let kcore = kernel_core_in(&cwd);
    let ours = threads_ok(&["--core", kcore.to_str().unwrap()]);
    let compared = agree(&first, &ours, &second, NAMED);
    assert!(
        compared >= 12,
        "kernel core: only {compared} threads compared"
    );
    eprintln!("JDK {major} {flags:?} kernel core: {compared} threads' frames compared");
}

#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn jdk17_default_gcore_and_kernel_core_match_jcmd() {
    cores_match_jcmd(17, &[]);
}

#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn jdk17_xcomp_gcore_and_kernel_core_match_jcmd() {
    cores_match_jcmd(17, &["-Xcomp"]);
}

#[test]
#[ignore = "requires root, gdb, JDK 21 runtime (scripts/test.sh)"]
fn jdk21_default_gcore_and_kernel_core_match_jcmd() {
    cores_match_jcmd(21, &[]);
}

#[test]
#[ignore = "requires root, gdb, JDK 21 runtime (scripts/test.sh)"]
fn jdk21_xcomp_gcore_and_kernel_core_match_jcmd() {
    cores_match_jcmd(21, &["-Xcomp"]);
}

#[test]
#[ignore = "requires root, gdb, JDK 11 runtime (scripts/test.sh)"]
fn jdk11_default_gcore_and_kernel_core_match_jcmd() {
    cores_match_jcmd(11, &[]);
}

#[test]
#[ignore = "requires root, gdb, JDK 11 runtime (scripts/test.sh)"]
fn jdk11_xcomp_gcore_and_kernel_core_match_jcmd() {
    cores_match_jcmd(11, &["-Xcomp"]);
}

#[test]
#[ignore = "requires root, gdb, JDK 25 runtime (scripts/test.sh)"]
fn jdk25_default_gcore_and_kernel_core_match_jcmd() {
    cores_match_jcmd(25, &[]);
}

#[test]
#[ignore = "requires root, gdb, JDK 25 runtime (scripts/test.sh)"]
fn jdk25_compact_object_headers_gcore_and_kernel_core_match_jcmd() {
    cores_match_jcmd(25, &["-XX:+UseCompactObjectHeaders"]);
}

#[test]
#[ignore = "requires root, gdb, JDK 25 runtime (scripts/test.sh)"]
fn jdk25_xcomp_gcore_and_kernel_core_match_jcmd() {
    cores_match_jcmd(25, &["-Xcomp"]);
}

// ---- Where jcmd fails -----------------------------------------------------------------------

/// `SigPnd` and `ShdPnd` of `/proc/<pid>/status`: the signals pending for the thread and the
/// process.
fn pending_signals(pid: i32) -> (String, String) {
    (status_field(pid, "SigPnd"), status_field(pid, "ShdPnd"))
}

/// A SIGSTOPped ThreadsTarget JVM: jcmd's dump before the stop; ours while stopped (the JVM left
/// stopped, no signal added or taken); jcmd then gets no answer within 10 s; after SIGCONT,
/// jcmd's second dump.
fn sigstopped_full_dump(major: u32) {
    let home = jdk(major);
    let dir = scratch_dir(&format!("threads-stopped-{major}"));
    let jvm = start(&home, &[], "ThreadsTarget", dir.path(), false);
    let before = jcmd_ok(&home, jvm.pid);
    send_signal(jvm.pid, libc::SIGSTOP);
    wait_for_state(jvm.pid, 'T');
    let pending = pending_signals(jvm.pid);
    let began = Instant::now();
    let ours = threads_ok(&[&jvm.pid.to_string()]);
    let took = began.elapsed();
    assert_left_alone(jvm.pid, true);
    assert_eq!(pending_signals(jvm.pid), pending, "pending signals changed");
    let jcmd = jcmd_bounded(&home, jvm.pid, JCMD_LIMIT);
    assert!(jcmd.is_err(), "jcmd dumped a stopped JVM");
    send_signal(jvm.pid, libc::SIGCONT);
    let after = jcmd_ok(&home, jvm.pid);
    let compared = agree(&before, &ours, &after, NAMED);
    assert!(compared >= 12, "only {compared} threads compared");
    eprintln!(
        "JDK {major} SIGSTOPped: inspect threads {took:?}; jcmd: {}",
        jcmd.unwrap_err()
    );
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_sigstopped_jvm_full_dump_while_jcmd_times_out() {
    sigstopped_full_dump(17);
}

#[test]
#[ignore = "requires root, JDK 21 runtime (scripts/test.sh)"]
fn jdk21_sigstopped_jvm_full_dump_while_jcmd_times_out() {
    sigstopped_full_dump(21);
}

/// The StuckSafepoint JVM: jcmd's two dumps before; "stick" starts `t-counted` (C2-compiled
/// nested counted loops without a poll, `-XX:-UseCountedLoopSafepoints`) and `t-gc`
/// (`System.gc()`), so the safepoint never completes: ours is a full dump (t-gc in
/// `Runtime.gc`, t-counted running) while jcmd gets no answer within 10 s, the collection never
/// ends, and the JVM is left running.
fn stuck_safepoint_full_dump(major: u32) {
    let home = jdk(major);
    let dir = scratch_dir(&format!("threads-stuck-{major}"));
    let mut cmd = Command::new(home.join("bin/java"));
    cmd.current_dir(dir.path())
        .args([
            "-Xmx64m",
            "-XX:-TieredCompilation",
            "-Xbatch",
            "-XX:-UseCountedLoopSafepoints",
            "-cp",
        ])
        .arg(test_classes())
        .arg("StuckSafepoint")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = cmd.spawn().expect("starting java");
    let pid = child.id() as i32;
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let jvm = Jvm {
        child,
        pid,
        java_home: home.clone(),
    };
    let ready = rx.recv_timeout(Duration::from_secs(120));
    assert_eq!(
        ready.as_deref(),
        Ok("READY"),
        "StuckSafepoint did not start"
    );

    let first = jcmd_ok(&home, pid);
    let second = jcmd_ok(&home, pid);
    writeln!(stdin, "stick").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let began = Instant::now();
    let ours = threads_ok(&[&pid.to_string()]);
    let took = began.elapsed();
    assert_left_alone(pid, false);
    let jcmd = jcmd_bounded(&home, pid, JCMD_LIMIT);
    assert!(jcmd.is_err(), "jcmd dumped a JVM stuck in a safepoint");
    assert!(
        rx.try_recv().is_err(),
        "the collection ended: the safepoint was not stuck (counted() not compiled?)"
    );

    let named = [
        "main",
        "t-sleep",
        "t-park",
        "t-object-wait",
        "t-counted",
        "t-gc",
    ];
    let compared = agree(&first, &ours, &second, &named);
    assert!(compared >= 4, "only {compared} threads compared");
    let dump = parse(&ours);
    let gc = &dump["t-gc"];
    assert_eq!(gc.state.as_deref(), Some("RUNNABLE"), "t-gc:\n{ours}");
    assert!(
        gc.frames
            .first()
            .is_some_and(|f| f.starts_with("java.lang.Runtime.gc(java.base@")
                && f.ends_with("/Native Method)"))
            && gc
                .frames
                .iter()
                .any(|f| f.starts_with("java.lang.System.gc(")),
        "t-gc is not in System.gc:\n{ours}"
    );
    // t-counted runs compiled code with no poll and no anchor: walked from its registers.
    let counted = &dump["t-counted"];
    assert_eq!(
        counted.state.as_deref(),
        Some("RUNNABLE"),
        "t-counted:\n{ours}"
    );
    assert!(
        counted
            .frames
            .first()
            .is_some_and(|f| f.starts_with("StuckSafepoint.counted(StuckSafepoint.java:"))
            && counted
                .frames
                .iter()
                .any(|f| f.starts_with("java.lang.Thread.run(")),
        "t-counted's frames are not walked from its registers:\n{ours}"
    );
    eprintln!(
        "JDK {major} stuck safepoint: inspect threads {took:?}; jcmd: {}",
        jcmd.unwrap_err()
    );
    drop(stdin);
    drop(jvm); // SIGKILL: a JVM stuck in a safepoint cannot exit by itself
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_stuck_safepoint_full_dump_while_jcmd_times_out() {
    stuck_safepoint_full_dump(17);
}

#[test]
#[ignore = "requires root, JDK 21 runtime (scripts/test.sh)"]
fn jdk21_stuck_safepoint_full_dump_while_jcmd_times_out() {
    stuck_safepoint_full_dump(21);
}

/// A copy of JDK `major` whose libjvm keeps only `.dynsym` (`strip --strip-all`, no
/// `.gnu_debuglink`, as tests/integration/matrix.rs makes it): the same agreement with jcmd.
fn stripped_libjvm_same_dump(major: u32) {
    let dir = scratch_dir(&format!("threads-stripped-{major}"));
    let home = jdk_copy(&jdk(major), dir.path());
    let lib = home.join("lib/server/libjvm.so");
    let new = home.join("lib/server/libjvm.so.new");
    run_ok(
        Command::new("strip")
            .args(["--strip-all", "--remove-section=.gnu_debuglink", "-o"])
            .arg(&new)
            .arg(&lib),
    );
    std::fs::rename(&new, &lib).unwrap();
    let sections = run_ok(Command::new("readelf").arg("-S").arg(&lib));
    assert!(
        !String::from_utf8_lossy(&sections.stdout).contains(" .symtab "),
        "strip left .symtab"
    );
    let jvm = start(&home, &[], "ThreadsTarget", &dir.path().join("cwd"), false);
    let before = jcmd_ok(&home, jvm.pid);
    let ours = threads_ok(&[&jvm.pid.to_string()]);
    let after = jcmd_ok(&home, jvm.pid);
    let compared = agree(&before, &ours, &after, NAMED);
    assert!(compared >= 12, "only {compared} threads compared");
    assert_left_alone(jvm.pid, false);
}

#[test]
#[ignore = "requires root, binutils, JDK 17 (scripts/test.sh)"]
fn jdk17_stripped_libjvm_matches_jcmd() {
    stripped_libjvm_same_dump(17);
}

#[test]
#[ignore = "requires root, binutils, JDK 21 runtime (scripts/test.sh)"]
fn jdk21_stripped_libjvm_matches_jcmd() {
    stripped_libjvm_same_dump(21);
}

// ---- Damaged cores --------------------------------------------------------------------------

/// A loadable segment of an ELF core: where its bytes are in the file and in the process.
#[derive(Debug, Clone, Copy)]
struct Segment {
    vaddr: u64,
    offset: u64,
    filesz: u64,
}

/// The PT_LOAD segments of a 64-bit little-endian ELF core (the ELF header's `e_phoff` and
/// `e_phnum`, then each 56-byte program header; `PN_XNUM` cores are not made here).
fn segments(core: &Path) -> Vec<Segment> {
    let f = std::fs::File::open(core).unwrap();
    let mut h = [0u8; 64];
    f.read_exact_at(&mut h, 0).unwrap();
    let le64 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let phoff = le64(&h, 32);
    let phnum = u16::from_le_bytes(h[56..58].try_into().unwrap()) as usize;
    assert!(phnum > 0 && phnum < 0xffff, "phnum {phnum}");
    let mut ph = vec![0u8; 56 * phnum];
    f.read_exact_at(&mut ph, phoff).unwrap();
    ph.chunks_exact(56)
        .filter(|p| u32::from_le_bytes(p[0..4].try_into().unwrap()) == 1)
        .map(|p| Segment {
            offset: le64(p, 8),
            vaddr: le64(p, 16),
            filesz: le64(p, 32),
        })
        .collect()
}

/// A core of the ThreadsTarget JVM on JDK 17 (default flags) in `dir`: gdb's `gcore` (notes
/// written last) or the kernel's on SIGABRT (notes first); and our dump of it.
fn recorded_core(dir: &Path, kernel: bool) -> (PathBuf, String) {
    let home = jdk17();
    let cwd = dir.join("cwd");
    let mut jvm = start(&home, &[], "ThreadsTarget", &cwd, kernel);
    let core = if kernel {
        abort_with_core(&mut jvm);
        kernel_core_in(&cwd)
    } else {
        gcore(jvm.pid, dir)
    };
    drop(jvm);
    let full = threads_ok(&["--core", core.to_str().unwrap()]);
    assert!(parse(&full).len() >= NAMED.len(), "{full}");
    (core, full)
}

/// What a run on a damaged core may do: print a dump (possibly with per-thread notes, exit 0)
/// or fail with a message (exit 1) — never panic, crash, hang or grow without bound.
/// `inspect histo --core` on a damaged core: within the memory bound and no panic; a histogram
/// (exit 0, or 1 with the spaces it could not walk to their top named on stderr) or a clear
/// error (exit 1, nothing on stdout). Returns whether a histogram was printed.
fn assert_clean_histogram(core: &str, what: &str) -> bool {
    let (out, took, rss) = inspect_measured(&["histo", "--core", core]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        rss <= INSPECT_RSS_KIB && !stderr.contains("panicked"),
        "histo, {what}: peak RSS {rss} KiB, took {took:?}: {stderr}"
    );
    match out.status.code() {
        Some(0) => {
            assert!(stdout.starts_with(" num "), "histo, {what}: {stdout}");
            true
        }
        Some(1) if stdout.starts_with(" num ") => {
            assert!(stderr.contains("walk stopped"), "histo, {what}: {stderr}");
            true
        }
        Some(1) => {
            assert!(
                stderr.contains("inspect: ") && stdout.is_empty(),
                "histo, {what}: unclear failure: {stderr}"
            );
            false
        }
        other => panic!("histo, {what}: exit {other:?}: {stderr}"),
    }
}

/// `inspect heapdump --core` on a damaged core: within the memory bound and no panic; a file the
/// strict HPROF reader reads without a violation (exit 0, or 1 with the spaces it could not walk
/// named on stderr), or a clear error and no file (exit 1).
fn assert_clean_heapdump(core: &str, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("heap.hprof");
    let (out, took, rss) =
        inspect_measured(&["heapdump", "--core", core, "-o", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        rss <= INSPECT_RSS_KIB && !stderr.contains("panicked"),
        "heapdump, {what}: peak RSS {rss} KiB, took {took:?}: {stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    match out.status.code() {
        Some(0 | 1) if file.exists() => {
            let strict = crate::support::hprof::strict_check(&file);
            assert!(
                strict.violations.is_empty(),
                "heapdump, {what}: the file breaks the format: {:#?}",
                strict.violations
            );
            assert_eq!(left.len(), 1, "heapdump, {what}: files left: {left:?}");
        }
        Some(1) => {
            assert!(
                stderr.contains("inspect: ") && left.is_empty(),
                "heapdump, {what}: unclear failure, or files left ({left:?}): {stderr}"
            );
        }
        other => panic!("heapdump, {what}: exit {other:?}: {stderr}"),
    }
}

fn assert_clean_outcome(out: &Output, took: Duration, rss: u64, what: &str) -> bool {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "{what}: inspect panicked: {stderr}"
    );
    assert!(
        rss <= INSPECT_RSS_KIB,
        "{what}: peak RSS {rss} KiB (took {took:?})"
    );
    match out.status.code() {
        Some(0) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                stdout
                    .lines()
                    .take(2)
                    .any(|l| l.starts_with("Full thread dump")),
                "{what}: exit 0 without a dump: {stdout}"
            );
            true
        }
        Some(1) => {
            assert!(
                stderr.starts_with("inspect: ") && out.stdout.is_empty(),
                "{what}: unclear failure: {stderr}"
            );
            false
        }
        _ => panic!("{what}: inspect ended with {} ({stderr})", out.status),
    }
}

/// The message of a failed run with the core's path and the numbers in it left out, so equal
/// causes count together.
fn message_kind(stderr: &str, core: &Path) -> String {
    let first = stderr.lines().next().unwrap_or("");
    let first = first.replace(core.to_str().unwrap(), "<core>");
    let mut out = String::new();
    for c in first.chars() {
        if c.is_ascii_hexdigit() && out.ends_with('#') {
            continue;
        }
        out.push(if c.is_ascii_digit() { '#' } else { c });
    }
    out
}

/// Cuts `core` at every segment boundary (the start and end of each PT_LOAD's bytes in the
/// file), from the end down: each cut is read within the time and memory bounds, and gives a
/// dump (with the truncation reported) or a clear error; `inspect info` likewise gives the
/// flags or a clear error, saying the core is truncated. Returns (cuts, dumps).
fn cut_at_every_segment_boundary(core: &Path) -> (usize, usize) {
    let len = std::fs::metadata(core).unwrap().len();
    let mut cuts: Vec<u64> = segments(core)
        .iter()
        .flat_map(|s| [s.offset, s.offset + s.filesz])
        .filter(|&c| c > 0 && c < len)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let file = std::fs::OpenOptions::new().write(true).open(core).unwrap();
    let core_s = core.to_str().unwrap();
    let (mut dumps, mut notes, mut histograms) = (0, 0, 0);
    let (mut slowest, mut largest) = (Duration::ZERO, 0);
    let mut messages = BTreeMap::new();
    for &at in cuts.iter().rev() {
        file.set_len(at).unwrap();
        let (out, took, rss) = inspect_measured(&["threads", "--core", core_s]);
        slowest = slowest.max(took);
        largest = largest.max(rss);
        if assert_clean_outcome(&out, took, rss, &format!("cut at {at}")) {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("truncated"),
                "cut at {at}: a dump without the truncation reported: {stderr}"
            );
            dumps += 1;
            if String::from_utf8_lossy(&out.stdout).contains("\t<inspect: ") {
                notes += 1;
            }
        } else {
            // Every cut core is truncated, and its error says so first of all.
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("truncated"),
                "cut at {at}: an error that does not say the core is truncated: {stderr}"
            );
            let kind = message_kind(&stderr, core);
            *messages.entry(kind).or_insert(0) += 1;
        }
        // `inspect info` on the same cut: its properties, flags and arguments, or a clear error;
        // either says the core is truncated.
        let (out, took, rss) = inspect_measured(&["info", "--core", core_s]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            rss <= INSPECT_RSS_KIB && !stderr.contains("panicked"),
            "info, cut at {at}: peak RSS {rss} KiB, took {took:?}: {stderr}"
        );
        // Or the flags and arguments without the properties, and an exit status that says so.
        match out.status.code() {
            Some(0) => assert!(
                stdout.starts_with("Java System Properties:\n") && stdout.contains("\nVM Flags:\n"),
                "info, cut at {at}: {stdout}"
            ),
            Some(1) if stdout.is_empty() => assert!(
                stderr.starts_with("inspect: "),
                "info, cut at {at}: unclear failure: {stderr}"
            ),
            Some(1) => assert!(
                stdout.starts_with("VM Flags:\n")
                    && stderr.contains("the system properties could not be read"),
                "info, cut at {at}: a partial answer not said: {stderr}\n{stdout}"
            ),
            other => panic!("info, cut at {at}: exit {other:?}: {stderr}"),
        }
        assert!(
            stderr.contains("truncated"),
            "info, cut at {at}: the truncation not said: {stderr}"
        );
        // `inspect histo` on the same cut: a histogram with notes, or a clear error.
        assert_clean_heapdump(core_s, &format!("cut at {at}"));
        if assert_clean_histogram(core_s, &format!("cut at {at}")) {
            histograms += 1;
        }
    }
    eprintln!(
        "{}: {} cuts: {dumps} dumps ({notes} with per-thread notes), {} errors, {histograms} \
         histograms; slowest {slowest:?}, largest peak RSS {largest} KiB; errors: {messages:#?}",
        core.display(),
        cuts.len(),
        cuts.len() - dumps
    );
    assert!(cuts.len() > 50, "only {} cuts", cuts.len());
    (cuts.len(), dumps)
}

/// A gcore and a kernel core of the same program, each cut at every segment boundary
/// ([`cut_at_every_segment_boundary`]). gdb writes the notes last, so every cut of its core
/// loses them (a clear error); the kernel writes them first, so most cuts of its core leave a
/// readable core with memory missing: dumps with per-thread notes, or errors.
#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn core_cut_at_every_segment_boundary() {
    let dir = scratch_dir("threads-cut");
    let (gcore, _) = recorded_core(&dir.path().join("g"), false);
    cut_at_every_segment_boundary(&gcore);
    std::fs::remove_file(&gcore).unwrap();
    let (kcore, _) = recorded_core(&dir.path().join("k"), true);
    let (_, dumps) = cut_at_every_segment_boundary(&kcore);
    assert!(dumps > 0, "no cut of the kernel core gave a dump");
}

/// Random bytes flipped in the heap and stack segments of a real core (proptest, 128 cases,
/// restored after each): near the `java.lang.Thread` objects, in the used part of each
/// thread's stack, and anywhere in those segments. Each damaged core is read within the time
/// and memory bounds and gives a dump (per-thread notes) or a clear error.
#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn flipped_bytes_in_heap_and_stack_segments() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let dir = scratch_dir("threads-flip");
    let (core, full) = recorded_core(dir.path(), true);
    let core_s = core.to_str().unwrap().to_string();
    let json: serde_json::Value =
        serde_json::from_str(&threads_ok(&["--core", &core_s, "--format", "json"])).unwrap();
    let segs = segments(&core);
    let file_range = |lo: u64, hi: u64| -> Option<(u64, u64)> {
        let s = segs
            .iter()
            .find(|s| lo >= s.vaddr && lo < s.vaddr + s.filesz)?;
        let hi = hi.min(s.vaddr + s.filesz);
        Some((s.offset + (lo - s.vaddr), s.offset + (hi - s.vaddr)))
    };
    let segment_of = |addr: u64| -> Option<(u64, u64)> {
        let s = segs
            .iter()
            .find(|s| addr >= s.vaddr && addr < s.vaddr + s.filesz)?;
        Some((s.offset, s.offset + s.filesz))
    };
    // File ranges to flip in: (a) the used stack of each thread, (b) 4 KiB around each thread
    // object, (c) each whole segment holding one of those.
    let mut ranges = Vec::new();
    for t in json["threads"].as_array().unwrap() {
        let vm = &t["vm"];
        let sp = vm["anchor"]["sp"].as_u64().unwrap_or(0);
        let base = vm["stack"][0].as_u64().unwrap_or(0);
        let obj = vm["thread_obj"].as_u64().unwrap_or(0);
        if sp != 0 && base > sp {
            ranges.extend(file_range(sp, base));
            ranges.extend(segment_of(sp));
        }
        if obj != 0 {
            ranges.extend(file_range(obj.saturating_sub(2048), obj + 2048));
            ranges.extend(segment_of(obj));
        }
    }
    ranges.retain(|(lo, hi)| hi > lo);
    ranges.sort_unstable();
    ranges.dedup();
    assert!(ranges.len() > 20, "only {} ranges: {json}", ranges.len());

    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&core)
        .unwrap();
    let flips = prop::collection::vec((0..ranges.len(), 0.0f64..1.0, 1u8..=255), 1..32);
    let mut runner = TestRunner::new(Config {
        cases: 128,
        failure_persistence: None,
        ..Config::default()
    });
    // (dumps, dumps unlike the clean one, errors, slowest, largest peak RSS): the runner takes
    // an Fn.
    let stats = std::cell::Cell::new((0u32, 0u32, 0u32, Duration::ZERO, 0u64));
    let result = runner.run(&flips, |flips| {
        let mut saved = Vec::new();
        for &(r, at, xor) in &flips {
            let (lo, hi) = ranges[r];
            let off = lo + ((hi - lo - 1) as f64 * at) as u64;
            let mut b = [0u8];
            file.read_exact_at(&mut b, off).unwrap();
            saved.push((off, b[0]));
            file.write_all_at(&[b[0] ^ xor], off).unwrap();
        }
        let run = inspect_measured(&["threads", "--core", &core_s]);
        assert_clean_histogram(&core_s, &format!("flips {flips:?}"));
        if flips.len() % 4 == 0 {
            assert_clean_heapdump(&core_s, &format!("flips {flips:?}"));
        }
        for &(off, b) in saved.iter().rev() {
            file.write_all_at(&[b], off).unwrap();
        }
        let (out, took, rss) = run;
        let (mut dumps, mut changed, mut errors, slowest, largest) = stats.get();
        if assert_clean_outcome(&out, took, rss, &format!("flips {flips:?}")) {
            dumps += 1;
            if out.stdout != full.as_bytes() {
                changed += 1;
            }
        } else {
            errors += 1;
        }
        stats.set((dumps, changed, errors, slowest.max(took), largest.max(rss)));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The core is whole again.
    assert_eq!(threads_ok(&["--core", &core_s]), full);
    let (dumps, changed, errors, slowest, largest) = stats.get();
    eprintln!(
        "128 damaged cores: {dumps} dumps ({changed} unlike the clean one), {errors} errors; \
         slowest {slowest:?}, largest peak RSS {largest} KiB"
    );
    assert!(
        changed + errors >= 8,
        "the flips hardly changed anything ({changed} dumps changed, {errors} errors): they miss \
         what the walk reads"
    );
}
