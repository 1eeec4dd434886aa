//! External commands with a deadline: a jcmd, gcore or inspect that hangs fails its test with a
//! message naming the command and what it and the target JVM were doing, instead of holding the
//! whole suite until the CI's own timeout (which names nothing).
//!
//! The command runs in a process group of its own (gcore runs gdb, GNU time runs inspect), so
//! the whole group is killed when the deadline passes.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The deadline of one jcmd, gcore or inspect run: far beyond what any takes alone (seconds),
/// generous for a loaded two-core CI machine running the suite's JVMs at once; only a hang
/// reaches it.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(300);

/// The deadline of a caching script of the project (Wine, qemu: minutes when cold).
pub const SCRIPT_LIMIT: Duration = Duration::from_secs(1800);

/// A command that was still running at its deadline: what was seen of it (and of the target)
/// before and after it was killed, and what it wrote until then.
#[derive(Debug)]
pub struct TimedOut {
    pub report: String,
}

/// Runs `cmd` as [`Command::output`] does (stdin empty, stdout and stderr collected), in a
/// process group of its own, and panics when it is still running after `limit`: its group is
/// killed and the message names the command, the deadline, the state of every process of the
/// group and of `target` (the JVM the command works on, when there is one), and what the command
/// wrote to stderr until then. A command that cannot be started panics too.
pub fn output_within(cmd: &mut Command, limit: Duration, target: Option<i32>) -> Output {
    match try_output_within(cmd, &[], limit, target) {
        Ok(Ok(out)) => out,
        Ok(Err(t)) => panic!("{}", t.report),
        Err(e) => panic!("running {cmd:?}: {e}"),
    }
}

/// [`output_within`] with `input` written to the command's stdin (then closed); the error of a
/// command that cannot be started, and the timeout ([`TimedOut`], the group killed) returned,
/// not panicked on.
pub fn try_output_within(
    cmd: &mut Command,
    input: &[u8],
    limit: Duration,
    target: Option<i32>,
) -> std::io::Result<Result<Output, TimedOut>> {
    let child = cmd
        .process_group(0)
        .stdin(if input.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    Ok(wait_within(
        child,
        input,
        limit,
        &format!("{cmd:?}"),
        target,
    ))
}

/// Waits up to `limit` for `child` (started in a process group of its own, its stdout and stderr
/// piped, or not) and collects its output, its pipes drained while it runs (a child that fills a
/// pipe must not look hung); at the deadline, kills its group and returns what was seen (see
/// [`output_within`]). `what` names the command.
pub fn wait_within(
    mut child: Child,
    input: &[u8],
    limit: Duration,
    what: &str,
    target: Option<i32>,
) -> Result<Output, TimedOut> {
    let began = Instant::now();
    let deadline = began + limit;
    let writer = child.stdin.take().map(|mut stdin| {
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    });
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                // A grandchild left holding a pipe must not hang the test either.
                let grace = deadline.max(Instant::now() + Duration::from_secs(10));
                let (out, err) = (join_by(stdout, grace), join_by(stderr, grace));
                drop(writer);
                return Ok(Output {
                    status,
                    stdout: out.unwrap_or_else(|| {
                        panic!(
                            "{what} exited ({status}) but its stdout stayed open (a child of it?)"
                        )
                    }),
                    stderr: err.unwrap_or_default(),
                });
            }
            Ok(None) if Instant::now() >= deadline => break,
            Ok(None) => {}
            Err(e) => panic!("waiting for {what}: {e}"),
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    // The deadline passed: look before killing (what it waits on), kill the group, look again
    // (a killed debugger may leave its target stopped).
    let pgid = child.id() as i32;
    let mut report = format!(
        "{what} still running after {:?} (deadline {limit:?}); its process group is killed.\n\
         Before the kill:\n",
        began.elapsed()
    );
    for pid in group_members(pgid) {
        report.push_str(&describe(pid, "  command's"));
    }
    if let Some(t) = target {
        report.push_str(&describe(t, "  target"));
    }
    // SAFETY: kill(2) with a negative pid signals the group this test started.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let _ = child.kill();
    let _ = child.wait();
    if let Some(t) = target {
        std::thread::sleep(Duration::from_millis(200));
        report.push_str("After the kill:\n");
        report.push_str(&describe(t, "  target"));
    }
    let grace = Instant::now() + Duration::from_secs(5);
    let (out, err) = (join_by(stdout, grace), join_by(stderr, grace));
    let tail = |b: Option<Vec<u8>>| {
        let text = String::from_utf8_lossy(&b.unwrap_or_default()).into_owned();
        let cut = text.len().saturating_sub(4000);
        let cut = (cut..=text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text[cut..].to_string()
    };
    let _ = write!(
        report,
        "Its stderr (last 4000 bytes):\n{}\nIts stdout (last 4000 bytes):\n{}",
        tail(err),
        tail(out)
    );
    Err(TimedOut { report })
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> Option<JoinHandle<Vec<u8>>> {
    pipe.map(|mut p| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = p.read_to_end(&mut buf);
            buf
        })
    })
}

/// What `handle` read, if it finished by `deadline` (an absent pipe: empty).
fn join_by(handle: Option<JoinHandle<Vec<u8>>>, deadline: Instant) -> Option<Vec<u8>> {
    let Some(handle) = handle else {
        return Some(Vec::new());
    };
    while !handle.is_finished() {
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    handle.join().ok()
}

/// The processes of process group `pgid` (the leader first).
pub fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = vec![pgid];
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid != pgid && stat_fields(&format!("/proc/{pid}/stat")).is_some_and(|f| f.2 == pgid) {
            out.push(pid);
        }
    }
    out
}

/// `(comm, state, pgrp)` of a `stat` file.
fn stat_fields(path: &str) -> Option<(String, char, i32)> {
    let text = std::fs::read_to_string(path).ok()?;
    let (open, close) = (text.find('(')?, text.rfind(')')?);
    let mut rest = text[close + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let _ppid = rest.next()?;
    let pgrp = rest.next()?.parse().ok()?;
    Some((text[open + 1..close].to_string(), state, pgrp))
}

fn status_line(status: &str, field: &str) -> String {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| "?".to_string())
}

/// Counts, most frequent first, as `a×3 b×1`.
fn tally(items: impl Iterator<Item = String>) -> String {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for i in items {
        *counts.entry(i).or_default() += 1;
    }
    let mut v: Vec<_> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.iter()
        .take(8)
        .map(|(k, n)| format!("{k}×{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One line about process `pid` (`role`: whose it is): its `State`, `wchan`, `TracerPid` and
/// command line, then its threads: how many in each state, where they wait (`wchan`), and how
/// many are traced, by whom.
pub fn describe(pid: i32, role: &str) -> String {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return format!("{role} process {pid}: gone\n");
    };
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            let s = String::from_utf8_lossy(&b).replace('\0', " ");
            s.chars().take(300).collect::<String>()
        })
        .unwrap_or_default();
    let (mut states, mut wchans, mut tracers) = (Vec::new(), Vec::new(), Vec::new());
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let dir = task.path();
        if let Some((_, state, _)) = stat_fields(&format!("{}/stat", dir.display())) {
            states.push(state.to_string());
        }
        let w = std::fs::read_to_string(dir.join("wchan")).unwrap_or_default();
        wchans.push(if w.is_empty() || w == "0" {
            "-".to_string()
        } else {
            w
        });
        let tracer = std::fs::read_to_string(dir.join("status"))
            .map(|s| status_line(&s, "TracerPid:"))
            .unwrap_or_default();
        if !tracer.is_empty() && tracer != "0" {
            tracers.push(tracer);
        }
    }
    format!(
        "{role} process {pid} ({}): State {}, wchan {}, TracerPid {}, `{}`\n    {} threads by \
         state: {}; by wchan: {}; traced: {}\n",
        status_line(&status, "Name:"),
        status_line(&status, "State:"),
        if wchan.is_empty() { "-" } else { &wchan },
        status_line(&status, "TracerPid:"),
        cmdline.trim_end(),
        states.len(),
        tally(states.into_iter()),
        tally(wchans.into_iter()),
        if tracers.is_empty() {
            "none".to_string()
        } else {
            format!("{} (by {})", tracers.len(), tally(tracers.into_iter()))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_within_its_deadline_gives_its_output() {
        let out = output_within(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(60),
            None,
        );
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
        let out = try_output_within(
            &mut Command::new("cat"),
            b"in",
            Duration::from_secs(60),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(out.stdout, b"in");
    }

    #[test]
    fn a_hang_is_killed_with_its_group_and_described() {
        let me = std::process::id() as i32;
        let began = Instant::now();
        // sh and its child sleep, which would hold the pipes open if only sh were killed.
        let t = try_output_within(
            Command::new("sh").args(["-c", "echo started >&2; sleep 600; true"]),
            &[],
            Duration::from_millis(500),
            Some(me),
        )
        .unwrap()
        .unwrap_err();
        eprintln!("{}", t.report);
        assert!(began.elapsed() < Duration::from_secs(30), "{}", t.report);
        for part in [
            "still running after",
            "deadline 500ms",
            "sleep 600",
            "command's process",
            "target process",
            "threads by state",
            "started",
        ] {
            assert!(t.report.contains(part), "no {part:?} in {}", t.report);
        }
    }
}
