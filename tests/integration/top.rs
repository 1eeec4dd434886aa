//! `inspect top` as a person and a script use it, against real JVMs: Serial, G1 and ZGC ones, one
//! allocating hard (tests/java/Alloc.java), one with `-XX:+PerfDisableSharedMem`, one in its own
//! pid + mount namespace, one of another user. The references are `jstat` (GC time and the
//! allocation computed from `jstat -gc` lines), the allocating program's own count of its bytes
//! (`ThreadMXBean.getThreadAllocatedBytes`), `inspect stat` (the detail view), `inspect list`
//! (who each JVM is, and why one cannot be read) and `stty -a` (the terminal after `top`).
//! The full-screen view is driven in tmux (send-keys, capture-pane).
//!
//! Needs: JDK 17, tmux, util-linux (unshare, setpriv), root and the test users of
//! `scripts/setup-test-deps.sh`. The tests take turns (one lock): their rates must not be
//! measured while another test's JVM allocates.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::Value;

static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts `main` (a program of tests/java) on JDK 17 with a 64 MiB heap, `gc` and `extra` flags.
fn start(gc: &str, extra: &[&str], main: &str, args: &[&str]) -> Jvm {
    let mut cmd = Command::new(jdk17().join("bin/java"));
    cmd.args(["-Xmx64m", gc, "-Xshare:auto"])
        .args(extra)
        .arg("-cp")
        .arg(test_classes())
        .arg(main)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, &jdk17())
}

/// An idle JVM whose counters stay still (`-Xint`: no compiler threads allocating).
fn idle(gc: &str, extra: &[&str]) -> Jvm {
    let mut flags = vec!["-Xint"];
    flags.extend_from_slice(extra);
    start(gc, &flags, "Target", &[])
}

/// The allocating JVM (Serial, 150 MiB/s), writing its own count of its bytes to `report`.
fn allocating(report: &Path) -> Jvm {
    let _ = std::fs::remove_file(report);
    start(
        "-XX:+UseSerialGC",
        &[],
        "Alloc",
        &["150", report.to_str().unwrap()],
    )
}

/// Runs `inspect top` with `args` (bounded), returning stdout; panics with stderr on failure.
fn top(args: &[&str]) -> String {
    let mut all = vec!["top"];
    all.extend_from_slice(args);
    let out = inspect_bounded(&all, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("panicked"),
        "inspect {all:?} failed ({}): {stderr}",
        out.status
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `inspect top -b --format json` output, grouped in frames (one timestamp each), each a map
/// pid → object.
fn json_frames(stdout: &str) -> Vec<Vec<Value>> {
    let mut frames: Vec<Vec<Value>> = Vec::new();
    let mut last = None;
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let ts = v["timestamp"].as_u64().expect("timestamp");
        if last != Some(ts) {
            frames.push(Vec::new());
            last = Some(ts);
        }
        frames.last_mut().unwrap().push(v);
    }
    frames
}

fn find(frame: &[Value], pid: i32) -> Option<&Value> {
    frame.iter().find(|v| v["pid"] == pid)
}

/// The text frames of `inspect top -b`: each a list of rows (whitespace-split cells) by pid,
/// with the header line and the summary line.
struct TextFrame {
    summary: String,
    header: String,
    rows: BTreeMap<i32, Vec<String>>,
    lines: BTreeMap<i32, String>,
}

fn text_frames(stdout: &str) -> Vec<TextFrame> {
    let mut frames = Vec::new();
    for chunk in stdout.split("\n\n") {
        let mut lines = chunk.lines();
        let summary = lines.next().unwrap_or_default().to_string();
        assert!(summary.starts_with("inspect top - "), "{chunk}");
        let header = lines.next().unwrap_or_default().to_string();
        let mut rows = BTreeMap::new();
        let mut texts = BTreeMap::new();
        for line in lines {
            let cells: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            let pid: i32 = cells[0].parse().unwrap_or_else(|_| panic!("{line}"));
            rows.insert(pid, cells);
            texts.insert(pid, line.to_string());
        }
        frames.push(TextFrame {
            summary,
            header,
            rows,
            lines: texts,
        });
    }
    frames
}

/// The cell indexes of a text row (MAIN last; the headers with spaces are one cell each).
const PID: usize = 0;
const USER: usize = 1;
const VERSION: usize = 2;
const CPU: usize = 4;
const RSS: usize = 5;
const GC: usize = 10;
const YGC: usize = 11;
const FGC: usize = 12;
const ALLOC: usize = 13;
const THREADS: usize = 15;
const BLOCKED: usize = 16;
const WAITING: usize = 17;
const CONTAINER: usize = 20;
const MAIN: usize = 21;

const HEADERS: [&str; 22] = [
    "PID",
    "USER",
    "VERSION",
    "UPTIME",
    "CPU%",
    "RSS",
    "HEAP",
    "HEAP%",
    "OLD%",
    "META",
    "GC%",
    "YGC/s",
    "FGC/s",
    "ALLOC MB/s",
    "SAFEPT%",
    "THREADS",
    "BLOCKED",
    "WAITING",
    "CLASSES",
    "JIT ms/s",
    "CONTAINER",
    "MAIN",
];

/// `inspect list --format json` (as root, or as `user`), by pid.
fn list_as(user: Option<&str>) -> BTreeMap<i64, Value> {
    let args = ["list", "--format", "json"];
    let out = match user {
        Some(u) => inspect_as(u, &args),
        None => inspect(&args),
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|j| (j["pid"].as_i64().unwrap(), j.clone()))
        .collect()
}

#[test]
#[ignore = "requires JDK 17, tmux (scripts/test.sh)"]
fn batch_frames_show_every_kind_of_jvm_as_list_names_it() {
    let _turn = turn();
    let dir = scratch_dir("top-batch");
    let serial = idle("-XX:+UseSerialGC", &[]);
    let g1 = idle("-XX:+UseG1GC", &[]);
    let zgc = idle("-XX:+UseZGC", &[]);
    let hidden = idle("-XX:+UseSerialGC", &["-XX:+PerfDisableSharedMem"]);
    let contained = start_in_own_namespaces(&[]);
    let other = start_as_user("hsinspect-jvm", &[]);
    let alloc = allocating(&dir.path().join("alloc.log"));
    let ours = [&serial, &g1, &zgc, &hidden, &contained, &other, &alloc];

    let stdout = top(&["-b", "-n", "3", "-d", "1"]);
    let frames = text_frames(&stdout);
    assert_eq!(frames.len(), 3, "{stdout}");
    let listed = list_as(None);
    for (i, frame) in frames.iter().enumerate() {
        // The header names every column, in order; the summary counts the JVMs.
        let mut rest = frame.header.as_str();
        for h in HEADERS {
            let at = rest
                .find(h)
                .unwrap_or_else(|| panic!("{h} in {}", frame.header));
            rest = &rest[at + h.len()..];
        }
        assert!(
            frame
                .summary
                .contains(&format!("JVMs: {}", frame.rows.len())),
            "{}",
            frame.summary
        );
        for jvm in ours {
            let row = frame
                .rows
                .get(&jvm.pid)
                .unwrap_or_else(|| panic!("pid {} not in frame {i}:\n{stdout}", jvm.pid));
            assert_eq!(row.len(), 22, "a live JVM's row has no note: {row:?}");
            // Root reads every JVM's memory: each has its threads by state.
            for c in [BLOCKED, WAITING] {
                assert!(row[c].parse::<u32>().is_ok(), "{row:?}");
            }
            // Who it is: as inspect list says.
            let l = &listed[&(jvm.pid as i64)];
            assert_eq!(row[PID], jvm.pid.to_string());
            assert_eq!(row[USER], l["user"].as_str().unwrap(), "{row:?}");
            assert_eq!(row[VERSION], l["jvm_version"].as_str().unwrap(), "{row:?}");
            assert_eq!(row[MAIN], l["main"].as_str().unwrap(), "{row:?}");
            // On the host: no container.
            assert_eq!(row[CONTAINER], "-", "{row:?}");
            assert!(row[GC].parse::<f64>().is_ok(), "{row:?}");
        }
        // ZGC has neither young nor full collections, nor an eden: jstat's `-`.
        let z = &frame.rows[&zgc.pid];
        assert_eq!((&*z[YGC], &*z[FGC], &*z[ALLOC]), ("-", "-", "-"), "{z:?}");
        for jvm in [&serial, &g1, &hidden, &alloc] {
            let r = &frame.rows[&jvm.pid];
            for c in [YGC, FGC, ALLOC] {
                assert!(r[c].parse::<f64>().is_ok(), "{r:?}");
            }
        }
        // The allocating JVM allocates (150 MiB/s asked; at least a third of it on a busy box),
        // from the second frame (the first has averages since start, and it has just started).
        let a: f64 = frame.rows[&alloc.pid][ALLOC].parse().unwrap();
        assert!(i == 0 || a > 50.0, "frame {i}: {}", frame.lines[&alloc.pid]);
    }
    // An idle JVM's threads: as its counters say.
    let threads = inspect_ok(&[&serial.pid.to_string(), "java.threads.live"]);
    let threads = threads.lines().next().unwrap().to_string() + "\n";
    let last = &frames[2].rows[&serial.pid];
    assert_eq!(
        format!("java.threads.live={}\n", last[THREADS]),
        threads,
        "{last:?}"
    );
}

#[test]
#[ignore = "requires JDK 17, tmux (scripts/test.sh)"]
fn another_users_view_shows_the_permission_gap_as_list_does() {
    let _turn = turn();
    require_user("hsinspect-jvm");
    let roots = idle("-XX:+UseSerialGC", &[]);
    let own = start_as_user("hsinspect-jvm", &[]);
    let out = inspect_as(
        "hsinspect-jvm",
        &["top", "-b", "-n", "1", "--format", "json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames = json_frames(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(frames.len(), 1);
    let listed = list_as(Some("hsinspect-jvm"));
    // Root's JVM: listed, not readable, with list's reason and fix; no PerfData figures.
    let r = find(&frames[0], roots.pid).expect("root's JVM is listed");
    assert_eq!(r["state"], "unreadable", "{r}");
    assert_eq!(r["readable"], "neither", "{r}");
    assert_eq!(r["reason"], listed[&(roots.pid as i64)]["reason"], "{r}");
    assert!(r["reason"].as_str().unwrap().contains("root"), "{r}");
    assert!(r["gc_percent"].is_null() && r["threads"].is_null(), "{r}");
    // But its CPU and RSS, which /proc/<pid>/stat gives every user, bracketed by that file read
    // before and after (the first frame's CPU% is the average since the process started).
    let (cpu0, up0, rss0) = proc_stat(roots.pid);
    let out = inspect_as(
        "hsinspect-jvm",
        &["top", "-b", "-n", "1", "--format", "json"],
    );
    let (cpu1, up1, rss1) = proc_stat(roots.pid);
    let frames = json_frames(&String::from_utf8(out.stdout).unwrap());
    let r = find(&frames[0], roots.pid).expect("root's JVM is listed");
    let cpu = r["cpu_percent"]
        .as_f64()
        .unwrap_or_else(|| panic!("no CPU%: {r}"));
    let rss = r["rss_bytes"]
        .as_f64()
        .unwrap_or_else(|| panic!("no RSS: {r}"));
    // CPU in clock ticks (10 ms), uptimes to 10 ms: a tick of slack each way.
    assert!(
        cpu >= (cpu0 - 0.01) / (up1 + 0.01) * 100.0 && cpu <= (cpu1 + 0.01) / (up0 - 0.01) * 100.0,
        "CPU {cpu}%: /proc says {cpu0}..{cpu1} s over {up0}..{up1} s"
    );
    assert!(
        rss >= rss0.min(rss1) && rss <= rss0.max(rss1),
        "RSS {rss}: /proc says {rss0}..{rss1}"
    );
    let out = inspect_as("hsinspect-jvm", &["top", "-b", "-n", "1"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let row = &text_frames(&text)[0].rows[&roots.pid];
    assert!(row[CPU] != "-" && row[RSS] != "-", "{row:?}");
    let frames = json_frames(&{
        let out = inspect_as(
            "hsinspect-jvm",
            &["top", "-b", "-n", "1", "--format", "json"],
        );
        String::from_utf8(out.stdout).unwrap()
    });
    // Its own JVM: read.
    let o = find(&frames[0], own.pid).expect("own JVM");
    assert_eq!(o["state"], "live", "{o}");
    assert!(o["threads"].as_i64().unwrap() > 0, "{o}");
    // The text frame: the reason after MAIN, as inspect list prints it.
    let out = inspect_as("hsinspect-jvm", &["top", "-b", "-n", "1"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let frame = &text_frames(&text)[0];
    let line = &frame.lines[&roots.pid];
    let reason = listed[&(roots.pid as i64)]["reason"].as_str().unwrap();
    assert!(line.ends_with(&format!("  ({reason})")), "{line}");
    assert_eq!(frame.rows[&roots.pid][MAIN], "Target", "{line}");
}

/// Process `pid`'s CPU time (`utime + stime`) and age in seconds, and its RSS in bytes, from
/// `/proc/<pid>/stat` and `/proc/uptime`.
fn proc_stat(pid: i32) -> (f64, f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let num = |i: usize| f[i - 3].parse::<f64>().unwrap();
    use nix::unistd::{SysconfVar, sysconf};
    let tick = sysconf(SysconfVar::CLK_TCK).unwrap().unwrap() as f64;
    let page = sysconf(SysconfVar::PAGE_SIZE).unwrap().unwrap() as f64;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (
        (num(14) + num(15)) / tick,
        uptime - num(22) / tick,
        num(24) * page,
    )
}

/// jstat -gc -t lines: (uptime s, EC, EU, YGC, FGC, GCT), sizes in KiB.
fn jstat_gc(stdout: &str) -> Vec<[f64; 6]> {
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let cols = [
        at("Timestamp"),
        at("EC"),
        at("EU"),
        at("YGC"),
        at("FGC"),
        at("GCT"),
    ];
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            cols.map(|c| cells[c].parse::<f64>().unwrap())
        })
        .collect()
}

fn epoch_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

/// The allocating program's own count at epoch millisecond `t` (interpolated).
fn reported_bytes(report: &Path, t: f64) -> f64 {
    let text = std::fs::read_to_string(report).unwrap();
    let points: Vec<(f64, f64)> = text
        .lines()
        .filter_map(|l| {
            let (a, b) = l.split_once(' ')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect();
    let i = points
        .windows(2)
        .position(|w| w[0].0 <= t && t <= w[1].0)
        .unwrap_or_else(|| panic!("{t} not within the report's {} points", points.len()));
    let ((t0, b0), (t1, b1)) = (points[i], points[i + 1]);
    b0 + (b1 - b0) * (t - t0) / (t1 - t0)
}

#[test]
#[ignore = "requires JDK 17, tmux (scripts/test.sh)"]
fn allocating_jvm_sorts_first_and_its_rates_agree_with_jstat() {
    let _turn = turn();
    let dir = scratch_dir("top-rates");
    let report = dir.path().join("alloc.log");
    let alloc = allocating(&report);
    let g1 = idle("-XX:+UseG1GC", &[]);
    let serial = idle("-XX:+UseSerialGC", &[]);
    std::thread::sleep(Duration::from_secs(2)); // past its start-up

    // jstat samples every second from before top starts until after it ends; each line's
    // arrival time (epoch ms) places it on top's clock (jstat's System.out flushes each line).
    let mut jstat = Command::new(jdk17().join("bin/jstat"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .args(["-gc", "-t", &alloc.pid.to_string(), "1000", "30"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let arrived = std::sync::Arc::new(Mutex::new(Vec::<(f64, String)>::new()));
    let reader = {
        let arrived = arrived.clone();
        let stdout = jstat.stdout.take().unwrap();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                arrived.lock().unwrap().push((epoch_ms(), line));
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while arrived.lock().unwrap().len() < 3 {
        assert!(Instant::now() < deadline, "jstat printed nothing");
        std::thread::sleep(Duration::from_millis(50));
    }
    let stdout = top(&[
        "-b", "-d", "1", "-n", "11", "--format", "json", "-o", "alloc",
    ]);
    let frames = json_frames(&stdout);
    assert_eq!(frames.len(), 11);
    let at = |k: usize| frames[k][0]["timestamp"].as_f64().unwrap();
    let (t1, t10) = (at(1), at(10));
    while arrived.lock().unwrap().last().unwrap().0 < t10 + 1500.0 {
        assert!(
            Instant::now() < deadline + Duration::from_secs(30),
            "jstat stopped"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = jstat.kill();
    let _ = jstat.wait();
    reader.join().unwrap();
    // Sorted by ALLOC, the allocating JVM comes before the idle ones (from the second frame:
    // the first one's rates are averages since each JVM started).
    for frame in &frames[1..] {
        let order: Vec<i64> = frame
            .iter()
            .map(|v| v["pid"].as_i64().unwrap())
            .filter(|p| [alloc.pid, g1.pid, serial.pid].contains(&(*p as i32)))
            .collect();
        assert_eq!(order[0], alloc.pid as i64, "{frame:?}");
    }
    // top over [frame 1, frame 10]: each frame's rate weighted by its interval.
    let window = (t10 - t1) / 1000.0;
    let over = |key: &str| {
        (2..=10)
            .map(|k| {
                let row = find(&frames[k], alloc.pid).unwrap();
                row[key].as_f64().unwrap() * (at(k) - at(k - 1)) / 1000.0
            })
            .sum::<f64>()
            / window
    };
    let (top_gc, top_alloc) = (over("gc_percent"), over("alloc_mib_per_s"));

    // jstat over the same window: GCT, and the allocation computed by hand from its EC, EU and
    // YGC, interpolated at the two frames' times.
    let arrived = arrived.lock().unwrap().clone();
    let text: String = arrived.iter().map(|(_, l)| format!("{l}\n")).collect();
    let lines = jstat_gc(&text);
    let times: Vec<f64> = arrived[1..].iter().map(|(t, _)| *t).collect();
    let mut allocated_kib = vec![0.0];
    for w in lines.windows(2) {
        let (a, b) = (w[0], w[1]);
        let young = b[3] - a[3];
        let kib = if young == 0.0 {
            (b[2] - a[2]).max(0.0)
        } else {
            (a[1] - a[2]) + (young - 1.0) * (a[1] + b[1]) / 2.0 + b[2]
        };
        allocated_kib.push(allocated_kib.last().unwrap() + kib);
    }
    let gct: Vec<f64> = lines.iter().map(|l| l[5]).collect();
    let interp = |ys: &[f64], t: f64| {
        let i = times
            .windows(2)
            .position(|w| w[0] <= t && t <= w[1])
            .unwrap_or_else(|| panic!("{t} outside jstat's {times:?}"));
        ys[i] + (ys[i + 1] - ys[i]) * (t - times[i]) / (times[i + 1] - times[i])
    };
    let jstat_gc = (interp(&gct, t10) - interp(&gct, t1)) / window * 100.0;
    let jstat_alloc = (interp(&allocated_kib, t10) - interp(&allocated_kib, t1)) / 1024.0 / window;
    // The program's own count over the same window.
    let own =
        (reported_bytes(&report, t10) - reported_bytes(&report, t1)) / window / (1024.0 * 1024.0);
    eprintln!(
        "over {window:.2} s: GC%: top {top_gc:.2}, jstat {jstat_gc:.2}; MiB/s: top {top_alloc:.1}, \
         jstat by hand {jstat_alloc:.1}, the program's own count {own:.1}"
    );
    // Tolerances: jstat's samples fall up to a second from top's, and are interpolated; the
    // machine is shared with builds.
    assert!(
        (top_gc - jstat_gc).abs() <= (0.15 * jstat_gc).max(0.5),
        "GC%: top {top_gc} vs jstat {jstat_gc}"
    );
    assert!(
        (top_alloc - jstat_alloc).abs() <= 0.10 * jstat_alloc,
        "alloc: top {top_alloc} vs jstat {jstat_alloc}"
    );
    assert!(
        (top_alloc - own).abs() <= 0.10 * own,
        "alloc: top {top_alloc} vs the program's count {own}"
    );

    // Sorted by GC%, it comes first too.
    let frames = json_frames(&top(&[
        "-b", "-d", "1", "-n", "3", "--format", "json", "-o", "gc",
    ]));
    for frame in &frames[1..] {
        let first = frame
            .iter()
            .find(|v| {
                [alloc.pid, g1.pid, serial.pid].contains(&(v["pid"].as_i64().unwrap() as i32))
            })
            .unwrap();
        assert_eq!(first["pid"], alloc.pid, "{frame:?}");
    }
}

#[test]
#[ignore = "requires JDK 17, tmux (scripts/test.sh)"]
fn a_jvm_killed_mid_run_is_marked_one_refresh_then_leaves() {
    let _turn = turn();
    let staying = idle("-XX:+UseSerialGC", &[]);
    let mut victim = idle("-XX:+UseSerialGC", &[]);
    let child = spawn_inspect(&["top", "-b", "-d", "1", "-n", "6", "--format", "json"]);
    std::thread::sleep(Duration::from_millis(2500));
    victim.child.kill().unwrap();
    victim.child.wait().unwrap();
    let out = wait_bounded(child, Duration::from_secs(60), "inspect top");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames = json_frames(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(frames.len(), 6);
    let states: Vec<Option<String>> = frames
        .iter()
        .map(|f| find(f, victim.pid).map(|v| v["state"].as_str().unwrap().to_string()))
        .collect();
    let exited = states
        .iter()
        .position(|s| s.as_deref() == Some("exited"))
        .unwrap_or_else(|| panic!("never marked exited: {states:?}"));
    assert!(exited > 0, "{states:?}");
    assert!(
        states[..exited]
            .iter()
            .all(|s| s.as_deref() == Some("live")),
        "{states:?}"
    );
    assert!(
        states[exited + 1..].iter().all(Option::is_none),
        "marked once, then gone: {states:?}"
    );
    let marked = find(&frames[exited], victim.pid).unwrap();
    assert!(marked["gc_percent"].is_null(), "{marked}");
    for f in &frames {
        assert_eq!(find(f, staying.pid).unwrap()["state"], "live");
    }
}

// ---- The full-screen view, in tmux. ----

/// A tmux server of its own (`-L`), one session running bash; killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new(width: u16, height: u16, env: &[(&str, &str)]) -> Tmux {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let t = Tmux {
            socket: format!("hsinspect-top-{}-{n}", std::process::id()),
        };
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &t.socket, "-f", "/dev/null", "new-session", "-d"]);
        cmd.args(["-x", &width.to_string(), "-y", &height.to_string()]);
        for (k, v) in env {
            cmd.args(["-e", &format!("{k}={v}")]);
        }
        cmd.args(["env", "PS1=$ ", "bash", "--norc", "--noprofile"]);
        let status = cmd.status().unwrap_or_else(|e| {
            panic!("tmux not found ({e}): install it with scripts/setup-test-deps.sh")
        });
        assert!(status.success(), "tmux new-session failed");
        t
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `text` and presses Enter.
    fn line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "0", "-l", text]);
        self.tmux(&["send-keys", "-t", "0", "Enter"]);
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"])
    }

    /// The screen with its attributes as escape sequences.
    fn screen_escaped(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-e", "-t", "0"])
    }

    /// Waits up to `limit` for the screen to satisfy `ok`; returns it.
    fn wait(&self, what: &str, limit: Duration, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "waited {limit:?} for {what}:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The pid of the program running in the pane's shell.
    fn foreground_pid(&self) -> i32 {
        let shell: i32 = self
            .tmux(&["display-message", "-p", "-t", "0", "#{pane_pid}"])
            .trim()
            .parse()
            .unwrap();
        child_of(shell)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// The screen line of the row of `pid` (its first cell), if shown.
fn row_of(screen: &str, pid: i32) -> Option<&str> {
    screen
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&pid.to_string()))
}

/// The order in which `pids` appear as rows on the screen.
fn order_on_screen(screen: &str, pids: &[i32]) -> Vec<i32> {
    screen
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse::<i32>().ok())
        .filter(|p| pids.contains(p))
        .collect()
}

/// Whether an SGR sequence in `s` sets a colour (30–37, 40–47, 90–97, 100–107, 38, 48).
fn has_color(s: &str) -> bool {
    s.split("\x1b[").skip(1).any(|seq| {
        let Some(end) = seq.find('m') else {
            return false;
        };
        seq[..end].split(';').any(|p| {
            p.parse::<u32>()
                .is_ok_and(|n| matches!(n, 30..=37 | 40..=47 | 90..=97 | 100..=107 | 38 | 48))
        })
    })
}

/// `inspect stat -<option> <pid>`'s two lines.
fn stat_lines(option: &str, pid: i32) -> Vec<String> {
    inspect_ok(&["stat", &format!("-{option}"), &pid.to_string()])
        .lines()
        .map(str::to_string)
        .collect()
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_inspect")
}

#[test]
#[ignore = "requires JDK 17, tmux (scripts/test.sh)"]
fn full_screen_view_as_a_person_uses_it() {
    let _turn = turn();
    let dir = scratch_dir("top-tui");
    let serial = idle("-XX:+UseSerialGC", &[]);
    let g1 = idle("-XX:+UseG1GC", &[]);
    let zgc = idle("-XX:+UseZGC", &[]);
    let mut hidden = idle("-XX:+UseSerialGC", &["-XX:+PerfDisableSharedMem"]);
    let alloc = allocating(&dir.path().join("alloc.log"));
    let ours = [serial.pid, g1.pid, zgc.pid, hidden.pid, alloc.pid];

    let tmux = Tmux::new(260, 50, &[]); // wide enough for -gccapacity on one line
    let (before, after) = (
        dir.path().join("stty.before"),
        dir.path().join("stty.after"),
    );
    tmux.line(&format!(
        "stty -a > {}; {} top -d 1; echo EXIT=$?; stty -a > {}",
        before.display(),
        bin(),
        after.display()
    ));
    // Every JVM shows.
    tmux.wait("every JVM", Duration::from_secs(30), |s| {
        ours.iter().all(|p| row_of(s, *p).is_some())
    });

    // Sorted by ALLOC (A), then by GC% (G): the allocating JVM first, after a refresh.
    for (key, header) in [("A", "ALLOC MB/sv"), ("G", "GC%v")] {
        tmux.keys(&[key]);
        tmux.wait(header, Duration::from_secs(5), |s| s.contains(header));
        std::thread::sleep(Duration::from_millis(1500));
        let s = tmux.screen();
        assert_eq!(
            order_on_screen(&s, &ours)[0],
            alloc.pid,
            "sorted by {header}:\n{s}"
        );
    }

    // Filter to the idle Serial JVM, open its details: jstat's figures, as `inspect stat`.
    tmux.keys(&["/"]);
    tmux.tmux(&["send-keys", "-t", "0", "-l", &serial.pid.to_string()]);
    tmux.keys(&["Enter"]);
    let s = tmux.wait("the filter", Duration::from_secs(5), |s| {
        order_on_screen(s, &ours) == [serial.pid]
    });
    assert!(s.contains(&format!("filter: {}", serial.pid)), "{s}");
    tmux.keys(&["Enter"]);
    tmux.wait("the detail view", Duration::from_secs(5), |s| {
        s.contains("jstat -gccause")
    });
    let mut matched = false;
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(1200));
        let s = tmux.screen();
        let lines: Vec<&str> = s.lines().map(str::trim_end).collect();
        let want: Vec<String> = ["gcutil", "gccapacity", "gccause"]
            .iter()
            .flat_map(|o| stat_lines(o, serial.pid))
            .collect();
        if want.iter().all(|w| lines.contains(&w.trim_end())) {
            matched = true;
            break;
        }
        eprintln!("detail view and inspect stat differ (a counter moved?), again:\n{s}\n{want:#?}");
    }
    assert!(
        matched,
        "the detail view never showed inspect stat's figures"
    );
    let s = tmux.screen();
    assert!(s.contains("last GC cause:"), "{s}");
    for label in ["heap ", "eden ", "old ", "GC% ", "alloc ", "threads "] {
        assert!(s.lines().any(|l| l.starts_with(label)), "{label}:\n{s}");
    }
    // t: its thread dump (inspect threads'), scrolled with the keys; Esc back to the details.
    tmux.keys(&["t"]);
    let s = tmux.wait("the thread dump", Duration::from_secs(10), |s| {
        s.contains("Full thread dump")
    });
    assert!(
        s.contains(&format!("thread dump of {}", serial.pid))
            && s.contains("\"Reference Handler\"")
            && s.contains("java.lang.Thread.State:"),
        "{s}"
    );
    tmux.keys(&["PageDown"]);
    tmux.wait("the dump scrolled", Duration::from_secs(5), |s| {
        !s.contains("Full thread dump") && s.contains("line 21 of")
    });
    tmux.keys(&["Escape"]);
    tmux.wait("the detail view again", Duration::from_secs(5), |s| {
        s.contains("jstat -gccause")
    });
    // Esc: back to the table; Esc again clears the filter.
    tmux.keys(&["Escape"]);
    tmux.wait("the table", Duration::from_secs(5), |s| s.contains("PID"));
    tmux.keys(&["Escape"]);
    tmux.wait("every JVM again", Duration::from_secs(5), |s| {
        ours.iter().all(|p| row_of(s, *p).is_some())
    });
    // Pause and help.
    tmux.keys(&["p"]);
    tmux.wait("PAUSED", Duration::from_secs(5), |s| s.contains("PAUSED"));
    tmux.keys(&["p"]);
    tmux.wait("not paused", Duration::from_secs(5), |s| {
        !s.contains("PAUSED")
    });
    tmux.keys(&["?"]);
    tmux.wait("help", Duration::from_secs(5), |s| {
        s.contains("sort by GC%")
    });
    tmux.keys(&["x"]);
    tmux.wait("help closed", Duration::from_secs(5), |s| {
        !s.contains("sort by GC%")
    });

    // A JVM killed mid-run: marked one refresh, then gone.
    hidden.child.kill().unwrap();
    hidden.child.wait().unwrap();
    let s = tmux.wait("the killed JVM marked", Duration::from_secs(5), |s| {
        row_of(s, hidden.pid).is_some_and(|l| l.contains("(exited)"))
    });
    assert!(row_of(&s, serial.pid).is_some());
    tmux.wait("the killed JVM gone", Duration::from_secs(5), |s| {
        row_of(s, hidden.pid).is_none() && row_of(s, serial.pid).is_some()
    });

    // q: quits with status 0, the terminal as it was.
    tmux.keys(&["q"]);
    tmux.wait("exit", Duration::from_secs(5), |s| s.contains("EXIT=0"));
    std::thread::sleep(Duration::from_millis(300));
    let (b, a) = (
        std::fs::read_to_string(&before).unwrap(),
        std::fs::read_to_string(&after).unwrap(),
    );
    assert!(!b.is_empty());
    assert_eq!(b, a, "stty -a before and after differ");
}

#[test]
#[ignore = "requires JDK 17, tmux (scripts/test.sh)"]
fn small_terminal_no_color_and_sigterm() {
    let _turn = turn();
    let dir = scratch_dir("top-tui-small");
    let serial = idle("-XX:+UseSerialGC", &[]);
    let (before, after) = (
        dir.path().join("stty.before"),
        dir.path().join("stty.after"),
    );
    let run = |tmux: &Tmux| {
        tmux.line(&format!(
            "stty -a > {}; {} top -d 0.5; echo EXIT=$?; stty -a > {}",
            before.display(),
            bin(),
            after.display()
        ));
        tmux.wait("the JVM", Duration::from_secs(30), |s| {
            row_of(s, serial.pid).is_some()
        })
    };

    // 80×24 with NO_COLOR: the most useful columns, no colour at all.
    let tmux = Tmux::new(80, 24, &[("NO_COLOR", "1")]);
    let s = run(&tmux);
    let header = s
        .lines()
        .find(|l| l.trim_start().starts_with("PID"))
        .unwrap();
    for h in ["PID", "CPU%", "GC%", "ALLOC MB/s", "HEAP%", "RSS", "MAIN"] {
        assert!(header.contains(h), "{h} at 80 columns: {header}");
    }
    assert!(!header.contains("VERSION"), "{header}");
    assert!(s.lines().all(|l| l.chars().count() <= 80), "{s}");
    let escaped = tmux.screen_escaped();
    assert!(!has_color(&escaped), "NO_COLOR, yet colours: {escaped:?}");
    assert!(
        escaped.contains("\x1b[7m"),
        "reverse video marks the header: {escaped:?}"
    );

    // SIGTERM: quits with status 0, the terminal as it was.
    send_signal(tmux.foreground_pid(), libc::SIGTERM);
    tmux.wait("exit", Duration::from_secs(5), |s| s.contains("EXIT=0"));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        std::fs::read_to_string(&before).unwrap(),
        std::fs::read_to_string(&after).unwrap(),
        "stty -a before and after SIGTERM differ"
    );

    // Without NO_COLOR there are colours (so the check above can fail).
    let tmux = Tmux::new(80, 24, &[]);
    run(&tmux);
    assert!(has_color(&tmux.screen_escaped()));
    tmux.keys(&["C-c"]);
    tmux.wait("exit", Duration::from_secs(5), |s| s.contains("EXIT=0"));
}

/// A terminal that goes away under `inspect top` (an SSH connection dropped, the tmux session
/// killed) ends it within a refresh: nothing is left spinning on the host.
#[test]
#[ignore = "requires JDK 17, tmux (scripts/test.sh)"]
fn a_lost_terminal_ends_it() {
    let _turn = turn();
    let serial = idle("-XX:+UseSerialGC", &[]);
    let tmux = Tmux::new(100, 30, &[]);
    tmux.line(&format!("{} top -d 0.5", bin()));
    tmux.wait("the JVM", Duration::from_secs(30), |s| {
        row_of(s, serial.pid).is_some()
    });
    let top = tmux.foreground_pid();
    drop(tmux); // kill-server: the pane's terminal is gone
    let deadline = Instant::now() + Duration::from_secs(10);
    while process_state(top).is_some_and(|s| s != 'Z') {
        assert!(
            Instant::now() < deadline,
            "inspect top ({top}) still runs 10 s after its terminal went away"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Needs nothing: no terminal is needed to be told to use `-b`.
#[test]
fn without_a_terminal_it_says_to_use_batch_mode() {
    let out = inspect_bounded(&["top"], Duration::from_secs(30));
    let err = inspect_err(&out);
    assert!(err.contains("inspect top -b"), "{err}");
    // A bad delay: clap's usage error (status 2), with the rule.
    let out = inspect_bounded(&["top", "-b", "-d", "0"], Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bad delay \"0\": give seconds"), "{err}");
}
