//! Repeated samples for every command that prints counters (`inspect stat <target> <interval>
//! [<count>]`, `inspect <target> --interval <dur> [--count <n>]`).
//!
//! - Ticks are scheduled against a monotonic clock: sample `k` is due at `start + k × interval`,
//!   so the time a sample takes does not add up to drift (jstat sleeps a full interval after each
//!   sample, and drifts). A sample that overruns skips the ticks it missed rather than bursting;
//!   a later sample waits for a starting JVM or another tracer no longer than one interval, and
//!   a tick on which another tracer held the JVM throughout is skipped with a warning.
//! - Each sample of a live target checks the pid still names the first sample's process
//!   ([`Sampler`]). When the JVM exits (or its pid is reused), sampling stops with a one-line
//!   message on stderr and exit status 0, as jstat stops when its target terminates.
//! - A closed stdout (`inspect stat ... | head -1`) ends sampling quietly with status 0.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use hsinspect::format::{self, Filter};
use hsinspect::{Error, Reading, Sampler};

use crate::output::{self, OutputFormat};

/// How often and how many times to sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Time between the starts of two samples.
    pub interval: Duration,
    /// How many samples; `None`: until the JVM exits or the output is closed.
    pub count: Option<u64>,
}

impl Schedule {
    /// One sample.
    pub const ONCE: Schedule = Schedule {
        interval: Duration::ZERO,
        count: Some(1),
    };
}

/// Parses an interval as jstat does (`Arguments.toMillis`): an integer of milliseconds, or with a
/// `ms` or `s` suffix (`250`, `250ms`, `5s`).
///
/// # Errors
/// A message naming the value for anything else (negative numbers included).
pub fn parse_interval(s: &str) -> anyhow::Result<Duration> {
    let (digits, scale) = if let Some(d) = s.strip_suffix("ms") {
        (d, 1)
    } else if let Some(d) = s.strip_suffix('s') {
        (d, 1000)
    } else {
        (s, 1)
    };
    match digits.parse::<u64>() {
        Ok(n) if !digits.starts_with('+') => Ok(Duration::from_millis(n.saturating_mul(scale))),
        _ => bail!("bad interval {s:?}: give milliseconds, e.g. 250, 250ms or 5s"),
    }
}

/// Parses a sample count (a positive integer).
///
/// # Errors
/// A message naming the value.
pub fn parse_count(s: &str) -> anyhow::Result<u64> {
    match s.parse::<u64>() {
        Ok(n) if n > 0 && !s.starts_with('+') => Ok(n),
        _ => bail!("bad count {s:?}: give a positive number of samples"),
    }
}

/// What one sample gives the printer: the reading and the wall-clock time it was taken.
pub struct Sample<'a> {
    /// The reading.
    pub reading: &'a Reading,
    /// When the reading completed.
    pub taken: SystemTime,
    /// 0 for the first sample.
    pub index: u64,
}

/// Takes samples on `schedule` and hands each to `emit`, which writes to `out`. Returns the exit
/// status: success when the count is reached, the JVM exited after the first sample, or `out`
/// was closed; the error when the first sample (or a later one, for another reason) fails.
pub fn run<W: Write>(
    sampler: &mut Sampler,
    schedule: Schedule,
    out: &mut W,
    mut emit: impl FnMut(&mut W, &Sample) -> io::Result<()>,
) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let mut tick: u64 = 0;
    let mut index: u64 = 0;
    loop {
        // After the first sample, a sample waits (for another tracer's hold, a thread's stop) no
        // longer than one interval: it would miss its tick anyway.
        let sampled = if index > 0 && !schedule.interval.is_zero() {
            sampler.sample_until(Instant::now() + schedule.interval)
        } else {
            sampler.sample()
        };
        let reading = match sampled {
            Ok(r) => r,
            // Another tracer held the JVM for the whole tick (another `inspect -F` reading it, a
            // debugger): skip the tick, as an overrun does.
            Err(e @ Error::AlreadyTraced { .. }) if index > 0 => {
                eprintln!("inspect: warning: sample skipped: {e}");
                tick = next_tick(start, schedule.interval, tick);
                continue;
            }
            Err(e @ (Error::ProcessExited(_) | Error::NoSuchProcess(_) | Error::PidReused(_)))
                if index > 0 =>
            {
                let _ = out.flush();
                eprintln!(
                    "inspect: {}; sampling stopped after {index} samples",
                    ended(&e)
                );
                return Ok(ExitCode::SUCCESS);
            }
            Err(e) => return Err(e.into()),
        };
        if let (0, Some(refused)) = (index, &reading.fallback) {
            eprintln!("inspect: {refused}");
        }
        for w in &reading.warnings {
            eprintln!("inspect: warning: {w}");
        }
        let sample = Sample {
            reading: &reading,
            taken: SystemTime::now(),
            index,
        };
        match emit(out, &sample).and_then(|()| out.flush()) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
            Err(e) => return Err(e).context("writing the output"),
        }
        sampler.recycle(reading);
        index += 1;
        if schedule.count.is_some_and(|n| index >= n) {
            return Ok(ExitCode::SUCCESS);
        }
        tick = next_tick(start, schedule.interval, tick);
    }
}

/// Sleeps until the next tick after `tick` still in the future (skipping any a sample overran)
/// and returns it; no sleep with a zero interval.
fn next_tick(start: Instant, interval: Duration, tick: u64) -> u64 {
    let mut tick = tick + 1;
    if !interval.is_zero() {
        let step = interval.as_nanos();
        let passed = (start.elapsed().as_nanos() / step) as u64;
        tick = tick.max(passed + 1);
        let due = Duration::from_nanos(u64::try_from(step * u128::from(tick)).unwrap_or(u64::MAX));
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    tick
}

/// The one-line reason sampling ended.
fn ended(e: &Error) -> String {
    match e {
        Error::ProcessExited(pid) | Error::NoSuchProcess(pid) => format!("JVM {pid} exited"),
        Error::PidReused(pid) => format!("JVM {pid} exited (its pid now names another process)"),
        e => e.to_string(),
    }
}

/// `inspect <target> [patterns] --interval <dur> [--count <n>] [--format <fmt>]`: the listing
/// of every sample in `fmt`; text and Prometheus pages separated by an empty line, JSON one line
/// a sample.
pub fn run_listing(
    sampler: &mut Sampler,
    filter: &Filter,
    schedule: Schedule,
    fmt: OutputFormat,
    dialects: &output::DialectArgs,
) -> anyhow::Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let pid = sampler.source().pid();
    run(sampler, schedule, &mut out, |out, sample| {
        if sample.index > 0 && fmt != OutputFormat::Json {
            writeln!(out)?;
        }
        let snapshot = &sample.reading.snapshot;
        let counters = format::sorted(snapshot, filter);
        output::write(out, fmt, dialects, pid, sample.taken, snapshot, &counters).map(|_skipped| ())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_as_jstat() {
        assert_eq!(parse_interval("250").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_interval("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_interval("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_interval("0").unwrap(), Duration::ZERO);
        for bad in ["", "ms", "s", "-5", "+5", "1.5s", "5m", "5 s"] {
            assert!(parse_interval(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_count("3").unwrap(), 3);
        assert!(parse_count("0").is_err());
        assert!(parse_count("x").is_err());
    }
}
