//! Faults around a forced read (`inspect -F`), against real JDK 17 JVMs: inspect interrupted or
//! killed while it holds the target's threads, a target already traced or already stopped, a
//! target that exits during reads, and pids that name no JVM. In every case inspect ends (no
//! hang), says what happened, and the target is left as it was: running (or stopped, if it was),
//! traced by nobody, and still answering.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::*;
use nix::sys::ptrace;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// Longest any single inspect run may take here before it counts as a hang.
const LIMIT: Duration = Duration::from_secs(10);

/// Idle threads in the targets of the signal tests: the more threads, the longer inspect holds
/// them, and the more signals land while it does.
const THREADS: usize = 200;

/// A small xorshift generator; the seed is printed so a failing sequence can be replayed
/// (`HSINSPECT_FAULT_SEED`).
struct Rng(u64);

impl Rng {
    fn new(test: &str) -> Rng {
        let seed = std::env::var("HSINSPECT_FAULT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("{test}: HSINSPECT_FAULT_SEED={seed}");
        Rng(seed)
    }

    /// A duration in `[0, max)`.
    fn below(&mut self, max: Duration) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let nanos = max.as_nanos().max(1) as u64;
        Duration::from_nanos(self.0 % nanos)
    }
}

/// The median wall time of a forced read of `pid` (inspect's whole run, process start included).
fn forced_read_time(pid: &str) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let began = Instant::now();
            inspect_ok(&["-F", pid]);
            began.elapsed()
        })
        .collect();
    times.sort();
    times[2]
}

/// Asserts the JVM still answers: a forced read works and jcmd (which needs the JVM's threads
/// to run: the attach listener) gets a reply.
fn assert_answers(jvm: &Jvm) {
    let pid = jvm.pid.to_string();
    let out = inspect_ok(&["-F", &pid, "sun.rt.javaCommand"]);
    assert!(out.contains("Target"), "{out}");
    let jcmd = Command::new(jvm.java_home.join("bin/jcmd"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .args([&pid, "VM.uptime"])
        .output()
        .expect("running jcmd");
    assert!(
        jcmd.status.success(),
        "jcmd {pid} VM.uptime failed after the faults: {}",
        String::from_utf8_lossy(&jcmd.stdout)
    );
}

/// Starts `inspect -F <pid>`, sends it `signal` after `delay`, and returns how it ended.
fn signal_during_read(pid: &str, signal: i32, delay: Duration) -> Output {
    let child = spawn_inspect(&["-F", pid]);
    let inspect_pid = child.id() as i32;
    std::thread::sleep(delay);
    send_signal(inspect_pid, signal);
    wait_bounded(
        child,
        LIMIT,
        &format!("inspect -F {pid} sent signal {signal}"),
    )
}

/// Asserts inspect either finished its read or died by `signal`: nothing else (no panic, no
/// other error, no other signal).
fn assert_finished_or_killed(out: &Output, signal: i32) -> bool {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "inspect panicked: {stderr}");
    match out.status.signal() {
        Some(s) => {
            assert_eq!(s, signal, "inspect died by another signal: {stderr}");
            true
        }
        None => {
            assert!(
                out.status.success(),
                "inspect failed ({}): {stderr}",
                out.status
            );
            false
        }
    }
}

fn interrupted_reads_leave_target_running(signal: i32, name: &str) {
    let jvm = Jvm::start_with(&jdk17(), &[], THREADS);
    let pid = jvm.pid.to_string();
    let took = forced_read_time(&pid);
    let mut rng = Rng::new(name);
    let mut killed = 0;
    let mut runs = 0;
    // 30 runs, and up to 60 more while none was interrupted: on a loaded machine the sleep
    // before the signal can overshoot the whole read, so the later runs signal sooner.
    while runs < 30 || (killed == 0 && runs < 90) {
        // Anywhere from before inspect starts to after it would have finished.
        let window = if runs < 30 { took + took / 2 } else { took / 4 };
        let out = signal_during_read(&pid, signal, rng.below(window));
        killed += usize::from(assert_finished_or_killed(&out, signal));
        assert_left_alone(jvm.pid, false);
        runs += 1;
    }
    eprintln!("{name}: a forced read takes {took:?}; {killed} of {runs} runs ended by {name}");
    assert!(
        killed > 0,
        "no run was interrupted: the test proves nothing"
    );
    assert_answers(&jvm);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn sigint_during_forced_reads_leaves_target_running() {
    interrupted_reads_leave_target_running(libc::SIGINT, "SIGINT");
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn sigterm_during_forced_reads_leaves_target_running() {
    interrupted_reads_leave_target_running(libc::SIGTERM, "SIGTERM");
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn sigkill_at_random_points_never_leaves_target_stopped_or_traced() {
    let jvm = Jvm::start_with(&jdk17(), &[], THREADS);
    let pid = jvm.pid.to_string();
    let took = forced_read_time(&pid);
    let mut rng = Rng::new("SIGKILL");
    let mut killed = 0;
    let runs = 60;
    for _ in 0..runs {
        let out = signal_during_read(&pid, libc::SIGKILL, rng.below(took + took / 2));
        killed += usize::from(assert_finished_or_killed(&out, libc::SIGKILL));
        // The kernel detaches a dead tracer's tracees; they must run again.
        assert_left_alone(jvm.pid, false);
    }
    eprintln!("SIGKILL: a forced read takes {took:?}; {killed} of {runs} runs killed");
    assert!(killed > 0, "no run was killed: the test proves nothing");
    assert_answers(&jvm);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn sigtstp_during_forced_reads_never_stops_inspect_while_it_holds_the_target() {
    // Ctrl-Z (SIGTSTP) stops inspect; if that happened while it held the JVM's threads, the JVM
    // would stay frozen for as long as inspect stays stopped. It must stop only after the release.
    let jvm = Jvm::start_with(&jdk17(), &[], THREADS);
    let pid = jvm.pid.to_string();
    let took = forced_read_time(&pid);
    let mut rng = Rng::new("SIGTSTP");
    let mut stopped = 0;
    let runs = 30;
    for _ in 0..runs {
        // Killed if an assertion fails while it is stopped, so the JVM is released then too.
        let mut guard = KillOnDrop(Some(spawn_inspect(&["-F", &pid])));
        let child = guard.0.as_mut().unwrap();
        let inspect_pid = child.id() as i32;
        std::thread::sleep(rng.below(took + took / 2));
        send_signal(inspect_pid, libc::SIGTSTP);
        // Either inspect stops (state T) or it had already finished.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if process_state(inspect_pid) == Some('T') {
                stopped += 1;
                // inspect is stopped now: the JVM must be running, traced by nobody.
                assert_left_alone(jvm.pid, false);
                send_signal(inspect_pid, libc::SIGCONT);
                break;
            }
            assert!(
                Instant::now() < deadline,
                "inspect neither stopped nor ended"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let child = guard.0.take().unwrap();
        let out = wait_bounded(child, LIMIT, "inspect -F after SIGTSTP and SIGCONT");
        assert!(
            out.status.success(),
            "inspect -F stopped and continued failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_left_alone(jvm.pid, false);
    }
    eprintln!("SIGTSTP: a forced read takes {took:?}; {stopped} of {runs} runs stopped");
    assert!(
        stopped > 0,
        "inspect was never stopped: the test proves nothing"
    );
    assert_answers(&jvm);
}

#[test]
#[ignore = "requires root, gdb, JDK 17 (scripts/test.sh)"]
fn target_traced_by_a_debugger_is_refused_naming_the_tracer() {
    // As gdb would: the main thread.
    traced_target_is_refused(|jvm| jvm.pid);
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn target_with_one_traced_thread_is_refused_naming_the_tracer() {
    // As `strace -p <tid>` would: one thread only, not the main one. One of Target's own idle
    // threads (its comm is the thread's name): a JIT compiler thread, the newest otherwise, can
    // exit while traced (JDK 17 stops idle compiler threads), and a traced thread that exited
    // is refused by ptrace without a tracer to name.
    traced_target_is_refused(|jvm| {
        let mut tids: Vec<i32> = task_tracers(jvm.pid)
            .iter()
            .map(|(tid, _)| tid.parse().unwrap())
            .filter(|tid| {
                std::fs::read_to_string(format!("/proc/{}/task/{tid}/comm", jvm.pid))
                    .is_ok_and(|c| c.starts_with("idle-"))
            })
            .collect();
        tids.sort();
        *tids.last().expect("one of Target's idle threads")
    });
}

/// Traces the thread `which` picks, runs `inspect -F`, releases the thread, then checks the
/// refusal and that the JVM is unharmed.
fn traced_target_is_refused(which: impl FnOnce(&Jvm) -> i32) {
    let jvm = Jvm::start_with(&jdk17(), &[], 20);
    let traced = which(&jvm);
    let thread = Pid::from_raw(traced);
    // This test thread becomes the tracer, as a debugger would (without stopping the thread).
    ptrace::seize(thread, ptrace::Options::empty()).expect("PTRACE_SEIZE of a test JVM thread");
    let tracer = nix::unistd::gettid().as_raw();
    let out = inspect_bounded(&["-F", &jvm.pid.to_string()], LIMIT);
    // Let the JVM go before asserting, so a failed assertion leaves nothing traced.
    let tracer_pids: Vec<(String, String)> = task_tracers(jvm.pid);
    ptrace::interrupt(thread).unwrap();
    match waitpid(thread, Some(WaitPidFlag::__WALL)).unwrap() {
        WaitStatus::PtraceEvent(..) | WaitStatus::Stopped(..) => {}
        other => panic!("unexpected wait status of the traced JVM thread: {other:?}"),
    }
    ptrace::detach(thread, None).unwrap();

    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}: {stderr}", out.status);
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains(&format!(
            "process {} is traced by process {tracer} (",
            jvm.pid
        )) && stderr.contains(&format!("inspect -F --no-stop {}", jvm.pid))
            && stderr.contains(&format!("detach process {tracer} first")),
        "message does not name the tracer {tracer} and the fixes: {stderr}"
    );
    // While traced: only our thread's trace, nothing left by inspect.
    for (tid, tracer_pid) in &tracer_pids {
        let expected = if *tid == traced.to_string() {
            tracer.to_string()
        } else {
            "0".to_string()
        };
        assert_eq!(
            tracer_pid, &expected,
            "thread {tid} traced by {tracer_pid} after the refused read"
        );
    }
    assert_left_alone(jvm.pid, false);
    assert_answers(&jvm);
}

/// `(tid, TracerPid)` of every thread of `pid`.
fn task_tracers(pid: i32) -> Vec<(String, String)> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| {
            let tid = t.ok()?.file_name().to_string_lossy().into_owned();
            let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
            let tracer = status
                .lines()
                .find_map(|l| l.strip_prefix("TracerPid:"))?
                .trim()
                .to_string();
            Some((tid, tracer))
        })
        .collect()
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn stopped_target_is_read_promptly_and_stays_stopped() {
    let jvm = Jvm::start_with(&jdk17(), &[], 20);
    let pid = jvm.pid.to_string();
    send_signal(jvm.pid, libc::SIGSTOP);
    wait_for_state(jvm.pid, 'T');
    assert_left_alone(jvm.pid, true);

    let began = Instant::now();
    let out = inspect_bounded(&["-F", &pid], LIMIT);
    let took = began.elapsed();
    let forced = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "forced read of a stopped JVM failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        took < Duration::from_secs(2),
        "forced read of a stopped JVM took {took:?}"
    );
    // Still stopped (not resumed by the detach), and traced by nobody; a moment later too.
    assert_left_alone(jvm.pid, true);
    std::thread::sleep(Duration::from_millis(200));
    assert_left_alone(jvm.pid, true);

    // Nothing can change the region of a stopped JVM: its hsperfdata file (the same memory,
    // shared) reads exactly the same.
    let shared = inspect_ok(&[&pid]);
    assert_eq!(
        forced, shared,
        "forced and shared reads of a stopped JVM differ"
    );
    assert!(counters(&forced).len() > 100, "{forced}");

    // inspect killed at any point while it holds the stopped JVM: still stopped, untraced.
    let mut rng = Rng::new("SIGKILL of a stopped target's reader");
    for _ in 0..15 {
        let out = signal_during_read(&pid, libc::SIGKILL, rng.below(took));
        assert_finished_or_killed(&out, libc::SIGKILL);
        assert_left_alone(jvm.pid, true);
    }

    send_signal(jvm.pid, libc::SIGCONT);
    assert_left_alone(jvm.pid, false);
    assert_answers(&jvm);
}

/// Messages that say the target went away.
const GONE: [&str; 3] = ["exited", "no process with pid", "no such process"];

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn target_exiting_during_reads_gives_results_or_clear_errors() {
    let mut rng = Rng::new("exit during reads");
    let (mut ok, mut gone) = (0, 0);
    for round in 0..4 {
        let jvm = Jvm::start_with(&jdk17(), &[], 50);
        let pid = jvm.pid.to_string();
        let lifetime = Duration::from_millis(30) + rng.below(Duration::from_millis(120));
        // Half the rounds kill the JVM; the others let it exit normally (stdin closed: its
        // shutdown deletes the hsperfdata file and unmaps the region).
        let killer = std::thread::spawn(move || {
            let mut jvm = jvm;
            std::thread::sleep(lifetime);
            if round % 2 == 0 {
                let _ = jvm.child.kill();
            } else {
                drop(jvm.child.stdin.take());
            }
            let _ = jvm.child.wait();
            drop(jvm);
        });
        let mut after_exit = 0;
        let began = Instant::now();
        while after_exit < 5 {
            let exited = killer.is_finished();
            for args in [vec!["-F", pid.as_str()], vec![pid.as_str()]] {
                let out = inspect_bounded(&args, LIMIT);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    out.status.signal().is_none() && !stderr.contains("panicked"),
                    "inspect {args:?} crashed ({}): {stderr}",
                    out.status
                );
                if out.status.success() {
                    assert!(!out.stdout.is_empty(), "success without counters");
                    ok += 1;
                } else {
                    assert_eq!(out.status.code(), Some(1), "{stderr}");
                    let lower = stderr.to_lowercase();
                    assert!(
                        GONE.iter().any(|g| lower.contains(g))
                            // The JVM's shutdown removed its file just before the process ended.
                            || (args.len() == 1 && lower.contains("no hsperfdata file")),
                        "inspect {args:?} on an exiting JVM: unclear error: {stderr}"
                    );
                    gone += 1;
                }
            }
            if exited {
                after_exit += 1;
            }
            assert!(
                began.elapsed() < Duration::from_secs(30),
                "JVM did not exit"
            );
        }
        killer.join().unwrap();
    }
    eprintln!("exit during reads: {ok} reads succeeded, {gone} said the process was gone");
    assert!(ok > 0 && gone > 0, "{ok} succeeded, {gone} failed");
}

/// A pid no process has now.
fn unused_pid() -> i32 {
    let max: i32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (2..max)
        .rev()
        .find(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
        .expect("a free pid")
}

/// Asserts a bounded run of inspect fails with exit code `code` and says every one of `says`.
fn assert_fails_saying(args: &[&str], code: i32, says: &[&str]) {
    let out = inspect_bounded(args, LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "inspect {args:?}: {}: {stderr}",
        out.status
    );
    assert!(out.stdout.is_empty(), "inspect {args:?} printed counters");
    assert!(
        !stderr.contains("panicked"),
        "inspect {args:?} panicked: {stderr}"
    );
    for s in says {
        assert!(
            stderr.contains(s),
            "inspect {args:?}: message lacks {s:?}: {stderr}"
        );
    }
}

#[test]
fn pid_of_no_process_is_a_clear_error() {
    let pid = unused_pid().to_string();
    let says = format!("no process with pid {pid}");
    assert_fails_saying(&["-F", &pid], 1, &[&says]);
    assert_fails_saying(&[&pid], 1, &[&says]);
}

#[test]
fn zero_and_negative_pids_are_clear_errors() {
    for args in [
        vec!["0"],
        vec!["-F", "0"],
        vec!["--", "-5"],
        vec!["-F", "--", "-5"],
    ] {
        let pid = args.last().unwrap();
        assert_fails_saying(
            &args,
            1,
            &[&format!("{pid} is not a process id"), "positive"],
        );
    }
    // Without `--`, a negative number is an unknown option; clap says how to pass it.
    assert_fails_saying(&["-F", "-5"], 2, &["unexpected argument '-5'", "-- -5"]);
}

#[test]
fn process_that_is_not_a_jvm_is_a_clear_error() {
    let sleeper = Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("running sleep");
    let pid = sleeper.id().to_string();
    let _sleeper = KillOnDrop(Some(sleeper));
    assert_fails_saying(
        &["-F", &pid],
        1,
        &[
            &format!("process {pid} (sleep) is not a HotSpot JVM"),
            "libjvm",
        ],
    );
    // The file path says the same (not "no hsperfdata file ... use -F": issue 23).
    assert_fails_saying(
        &[&pid],
        1,
        &[&format!("process {pid} (sleep) is not a HotSpot JVM")],
    );
}

/// Kills and reaps a child (if still held) when dropped.
struct KillOnDrop(Option<std::process::Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
