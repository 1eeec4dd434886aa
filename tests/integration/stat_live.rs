//! `inspect stat` on live JDK 17 JVMs: the views against jstat read just before and just after,
//! a `-XX:+PerfDisableSharedMem` JVM against jstat on the region the JVM dumped of itself, and
//! sampling (interval, count, `-t`, a JVM exiting mid-stream, a closed stdout, a reused pid).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

/// The options compared live: numbers only, string columns, and capacities.
const LIVE_OPTIONS: &[&str] = &["gcutil", "gc", "class", "compiler", "gccause", "gccapacity"];

/// A JDK 17 JVM running tests/java/Churn.java (it has collected, loaded classes and compiled
/// before it says READY), with `extra` flags.
fn churn_jvm(extra: &[&str]) -> Jvm {
    let mut cmd = Command::new(jdk17().join("bin/java"));
    cmd.args(["-Xmx64m", "-XX:+UseSerialGC", "-Xshare:auto"])
        .args(extra)
        .arg("-cp")
        .arg(test_classes())
        .arg("Churn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, &jdk17())
}

/// JDK 17's `jstat <args> [<target>]` (no target when it is empty).
fn jstat(args: &[&str], target: &str) -> String {
    let out = run_ok(
        Command::new(jdk17().join("bin/jstat"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .args(args)
            .args((!target.is_empty()).then_some(target)),
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `ours` against two jstat outputs taken just before and just after: the same header, and every
/// cell that did not change between the two equal to ours. Returns the cells compared.
fn assert_bracketed(ours: &str, before: &str, after: &str, what: &str) -> usize {
    let lines = |s: &str| s.lines().map(str::to_owned).collect::<Vec<_>>();
    let (o, b, a) = (lines(ours), lines(before), lines(after));
    assert_eq!(o.len(), 2, "{what}: header and one row: {ours}");
    assert_eq!(o[0], b[0], "{what}: header");
    assert_eq!(o[0], a[0], "{what}: header");
    if b[1] == a[1] {
        assert_eq!(o[1], b[1], "{what}: row (stable between the jstat reads)");
        return o[1].split_whitespace().count();
    }
    let cells = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let (oc, bc, ac) = (cells(&o[1]), cells(&b[1]), cells(&a[1]));
    assert_eq!(oc.len(), bc.len(), "{what}: {ours} vs {before}");
    let mut compared = 0;
    for i in 0..oc.len() {
        if bc.get(i) == ac.get(i) {
            assert_eq!(oc[i], bc[i], "{what}: cell {i}: ours {ours} jstat {before}");
            compared += 1;
        }
    }
    assert!(
        compared * 2 > oc.len(),
        "{what}: only {compared} stable cells"
    );
    compared
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn forced_and_file_views_match_jstat_bracketed() {
    let jvm = churn_jvm(&[]);
    let pid = jvm.pid.to_string();
    for option in LIVE_OPTIONS {
        let flag = format!("-{option}");
        for forced in [true, false] {
            let before = jstat(&[&flag], &pid);
            let ours = if forced {
                inspect_ok(&["stat", &flag, "-F", &pid])
            } else {
                inspect_ok(&["stat", &flag, &pid])
            };
            let after = jstat(&[&flag], &pid);
            assert_bracketed(&ours, &before, &after, &format!("{flag} forced={forced}"));
        }
    }
    let ours = inspect_ok(&["stat", "-gcutil", "-F", "--no-stop", &pid]);
    assert_bracketed(
        &ours,
        &jstat(&["-gcutil"], &pid),
        &jstat(&["-gcutil"], &pid),
        "--no-stop",
    );
    assert_left_alone(jvm.pid, false);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn perf_disable_shared_mem_jvm_matches_jstat_on_its_own_dump() {
    let jvm = churn_jvm(&["-XX:+PerfDisableSharedMem"]);
    let pid = jvm.pid.to_string();
    // jstat cannot see this JVM at all.
    let out = Command::new(jdk17().join("bin/jstat"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .args(["-gcutil", &pid])
        .output()
        .unwrap();
    assert!(
        !out.status.success() || out.stdout.is_empty(),
        "jstat saw a -XX:+PerfDisableSharedMem JVM"
    );
    let dir = scratch_dir("stat-perfdisable");
    let dump = |n: usize| {
        let path = dir.path().join(format!("dump{n}.hsperf"));
        // agent_counters loads PerfDumpAgent into the JVM, which writes the region to `path`.
        agent_counters(jvm.pid, &path);
        format!("file://{}", path.display())
    };
    for (i, option) in LIVE_OPTIONS.iter().enumerate() {
        let flag = format!("-{option}");
        let before = jstat(&[&flag], &dump(2 * i));
        let ours = inspect_ok(&["stat", &flag, "-F", &pid]);
        let after = jstat(&[&flag], &dump(2 * i + 1));
        assert_bracketed(&ours, &before, &after, &flag);
    }
}

#[test]
#[ignore = "requires root, binutils, JDK 17 (scripts/test.sh)"]
fn interval_count_and_timestamp_on_a_live_jvm() {
    let jvm = churn_jvm(&[]);
    let pid = jvm.pid.to_string();
    let uptime = || {
        let out = run_ok(
            Command::new(jdk17().join("bin/jcmd"))
                .arg(crate::support::TOOL_NO_PERFDATA)
                .args([&pid, "VM.uptime"]),
        );
        let text = String::from_utf8(out.stdout).unwrap();
        // "<pid>:\n12.345 s"
        text.lines()
            .nth(1)
            .and_then(|l| l.trim().strip_suffix(" s"))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("jcmd VM.uptime: {text}"))
    };
    let before = uptime();
    let began = Instant::now();
    let out = inspect_ok(&[
        "stat",
        "-gcutil",
        "-t",
        "-F",
        "--no-stop",
        &pid,
        "100ms",
        "5",
    ]);
    let took = began.elapsed();
    let after = uptime();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    assert!(took >= Duration::from_millis(400), "took {took:?}");
    assert!(took < Duration::from_millis(3000), "took {took:?}");
    let stamps: Vec<f64> = lines[1..]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    // The JVM's uptime at each sample: within the jcmd reads around the run, 0.1 s apart.
    assert!(stamps[0] >= before - 0.1, "{stamps:?} before {before}");
    assert!(stamps[4] <= after + 0.1, "{stamps:?} after {after}");
    // Printed to 0.1 s, so a step of 0.1 s shows as 0.0 to 0.2 (more when the machine is busy);
    // the four steps together span about 0.4 s.
    for w in stamps.windows(2) {
        assert!((0.0..=0.5).contains(&(w[1] - w[0])), "{stamps:?}");
    }
    let span = stamps[4] - stamps[0];
    assert!((0.25..=1.2).contains(&span), "{stamps:?}");
}

/// Spawns `inspect` with `args`, reads `rows` lines of its output, then calls `then`; returns the
/// finished run's status and stderr.
fn read_then(
    args: &[&str],
    rows: usize,
    then: impl FnOnce(),
) -> (std::process::ExitStatus, String) {
    let mut child = spawn_inspect(args);
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for _ in 0..rows {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "inspect {args:?} ended early"
        );
    }
    then();
    // Keep reading until the end, so only the JVM's exit can stop the run.
    let mut rest = String::new();
    while stdout.read_line(&mut rest).unwrap_or(0) > 0 {}
    let out = wait_bounded(child, Duration::from_secs(10), "inspect stat");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jvm_exiting_mid_stream_stops_sampling_with_one_line() {
    for forced in [true, false] {
        let mut jvm = Jvm::start(&[]);
        let pid = jvm.pid.to_string();
        let mut args = vec!["stat", "-gcutil", &pid, "50ms"];
        if forced {
            args.insert(2, "-F");
        }
        let stdin = jvm.child.stdin.take();
        let (status, stderr) = read_then(&args, 4, || {
            drop(stdin); // Target exits when its stdin closes.
            let _ = jvm.child.wait();
        });
        assert!(status.success(), "forced={forced}: {status} {stderr}");
        assert_eq!(stderr.lines().count(), 1, "forced={forced}: {stderr}");
        assert!(
            stderr.contains(&format!("JVM {pid} exited")),
            "forced={forced}: {stderr}"
        );
    }
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn closed_stdout_ends_quietly() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    // As a shell pipeline: `inspect stat ... | head -1`, endless sampling.
    let inspect = env!("CARGO_BIN_EXE_inspect");
    for forced in ["-F --no-stop", ""] {
        let began = Instant::now();
        let out = run_ok(Command::new("bash").arg("-c").arg(format!(
            "set -o pipefail; {inspect} stat -gcutil {forced} {pid} 10ms | head -1"
        )));
        assert!(began.elapsed() < Duration::from_secs(5));
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn listing_samples_at_an_interval() {
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let began = Instant::now();
    let out = inspect_ok(&[
        "-F",
        "--no-stop",
        &pid,
        "sun.gc.collector.0",
        "--interval",
        "100ms",
        "--count",
        "3",
    ]);
    let took = began.elapsed();
    let samples: Vec<&str> = out.split("\n\n").collect();
    assert_eq!(samples.len(), 3, "{out}");
    let single = inspect_ok(&["-F", &pid, "sun.gc.collector.0"]);
    for s in &samples {
        assert_eq!(
            counters(s).keys().collect::<Vec<_>>(),
            counters(&single).keys().collect::<Vec<_>>()
        );
    }
    assert!(took >= Duration::from_millis(200), "took {took:?}");
    assert!(took < Duration::from_millis(3000), "took {took:?}");
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn reused_pid_stops_sampling() {
    for how in ["-F --no-stop", ""] {
        reused_pid_stops_sampling_with(how);
    }
}

fn reused_pid_stops_sampling_with(how: &str) {
    // In a pid namespace of its own, a script makes a second JVM take the first one's pid
    // (ns_last_pid) while inspect is stopped between two samples; inspect must notice.
    // The namespace gets a private /tmp (so the JVMs' hsperfdata files are their own); the test
    // classes and the inspect binary may live under the host's /tmp (a clone checked out there),
    // so they are kept open as fds 7 and 8 before the mount hides them, and used through
    // /proc/self/fd. Every wait is bounded: a broken step fails the test instead of hanging it.
    let java = jdk17().join("bin/java");
    let script = format!(
        r#"
set -eu
wait_for() {{ for _ in $(seq 600); do if eval "$1"; then return 0; fi; sleep 0.05; done; echo "timed out waiting for: $1"; exit 4; }}
start() {{ {java} -Xmx16m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp /proc/self/fd/7 Target 0 < "$1" > "$1.out" & }}
mkfifo /tmp/in1 /tmp/in2 2>/dev/null || true
exec 3<>/tmp/in1 4<>/tmp/in2
start /tmp/in1; first=$!
wait_for 'grep -q READY /tmp/in1.out 2>/dev/null'
/proc/self/fd/8 stat -gcutil {how} $first 50ms > /tmp/stat.out 2> /tmp/stat.err & sampler=$!
wait_for '[ "$(wc -l < /tmp/stat.out)" -ge 3 ]'
kill -STOP $sampler
kill -KILL $first; wait $first 2>/dev/null || true
echo $((first - 1)) > /proc/sys/kernel/ns_last_pid
start /tmp/in2; second=$!
[ "$second" = "$first" ] || {{ echo "pid not reused: $first then $second"; kill -KILL $sampler; exit 3; }}
wait_for 'grep -q READY /tmp/in2.out 2>/dev/null'
kill -CONT $sampler
status=0; wait $sampler || status=$?
kill -KILL $second
echo "status=$status"
cat /tmp/stat.err
"#,
        java = java.display(),
    );
    let out = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "--mount", "bash", "-c"])
        .arg(format!(
            "exec 7<\"$HSINSPECT_CLASSES\" 8<\"$HSINSPECT_BIN\" && mount -t tmpfs tmpfs /tmp && {script}"
        ))
        .env("HSINSPECT_CLASSES", test_classes())
        .env("HSINSPECT_BIN", env!("CARGO_BIN_EXE_inspect"))
        .output()
        .expect("running unshare (util-linux)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pid-reuse script failed ({}): {stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("status=0"), "{how}: {stdout}");
    assert!(
        stdout.contains("its pid now names another process"),
        "{how}: {stdout}"
    );
}

#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn core_views_match_jstat_on_the_region_saved_from_the_core() {
    // A small JVM (a core of it is ~400 MB), dumped with gdb's gcore while it keeps running.
    let mut cmd = Command::new(jdk17().join("bin/java"));
    cmd.env("MALLOC_ARENA_MAX", "2")
        .args(target_args(
            &[
                "-XX:ReservedCodeCacheSize=16m",
                "-XX:CompressedClassSpaceSize=16m",
            ],
            0,
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let jvm = Jvm::spawn(cmd, &jdk17());
    let dir = tempfile::Builder::new()
        .prefix("hsinspect-stat-core")
        .tempdir()
        .unwrap();
    let prefix = dir.path().join("core");
    let gcore = Command::new("gcore")
        .arg("-o")
        .arg(&prefix)
        .arg(jvm.pid.to_string())
        .output()
        .unwrap_or_else(|e| panic!("running gcore ({e}): install gdb (`apt-get install gdb`)"));
    assert!(gcore.status.success(), "gcore failed: {gcore:?}");
    let core = format!("{}.{}", prefix.display(), jvm.pid);
    let region = dir.path().join("region.hsperf");
    inspect_ok(&[
        "--core",
        &core,
        "--save",
        region.to_str().unwrap(),
        "sun.os",
    ]);
    let region_url = format!("file://{}", region.display());
    for option in jstat(&["-options"], "").lines() {
        // -t: for a core, the region's own uptime, as jstat computes it from the same bytes.
        let ours = inspect_ok(&["stat", option, "-t", "--core", &core]);
        assert_eq!(ours, jstat(&[option, "-t"], &region_url), "{option}");
    }
    // A core is one sample.
    let out = inspect(&["stat", "-gcutil", "--core", &core, "1s"]);
    assert!(inspect_err(&out).contains("a core is one moment"));
}

#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn a_forced_stream_lives_through_other_readers_and_a_debugger() {
    let jvm = churn_jvm(&[]);
    let pid = jvm.pid.to_string();
    // Another `inspect -F` loops on the same JVM for the whole stream.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let other = {
        let (pid, stop) = (pid.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut failed = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let out = inspect(&["-F", &pid, "sun.gc.collector.0.invocations"]);
                if !out.status.success() {
                    failed.push(String::from_utf8_lossy(&out.stderr).into_owned());
                }
            }
            failed
        })
    };
    let stream = spawn_inspect(&["stat", "-F", "-gcutil", &pid, "500ms", "12"]);
    // Midway, a debugger holds the JVM for over two ticks: those ticks are skipped, not fatal.
    std::thread::sleep(Duration::from_millis(2000));
    // gdb's attach is refused while the looping reader holds the JVM (its threads are traced
    // by that inspect for a few milliseconds a read): it tries again, as a user would.
    let mut gdb_tries = Vec::new();
    for _ in 0..30 {
        let gdb = Command::new("gdb")
            .args([
                "-q",
                "-nx",
                "-batch",
                "-p",
                &pid,
                "-ex",
                "shell sleep 1.3",
                "-ex",
                "detach",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .expect("gdb (package gdb) runs: scripts/setup-test-deps.sh installs it");
        let ok = gdb.status.success();
        gdb_tries.push(gdb);
        if ok {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        gdb_tries.last().is_some_and(|g| g.status.success()),
        "gdb never attached: {gdb_tries:?}"
    );
    let out = wait_bounded(stream, Duration::from_secs(60), "the stat -F stream");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let failed = other.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the stream died: {stderr}");
    assert!(failed.is_empty(), "the looping reader failed: {failed:?}");
    let rows = stdout
        .lines()
        .filter(|l| !l.trim_start().starts_with("S0"))
        .count();
    assert_eq!(
        rows, 12,
        "every sample printed (skipped ticks are not samples): {stdout}"
    );
    assert!(
        stderr.contains("sample skipped") && stderr.contains("gdb"),
        "the debugger's ticks were not said to be skipped: {stderr}"
    );
    assert_left_alone(jvm.pid, false);
}
