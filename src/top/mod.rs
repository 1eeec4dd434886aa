//! `inspect top`: every HotSpot JVM on the host, one row each, refreshed every `-d` seconds, with
//! rates (GC%, collections and allocation per second, safepoint and JIT time) computed from two
//! samples of PerfData, and CPU% and RSS from `/proc/<pid>`.
//!
//! - [`metrics`]: the arithmetic, pure functions of two samples (unit-tested).
//! - [`model`]: the JVMs (found by `discover::scan`, re-read by a [`hsinspect::Sampler`] each
//!   without stopping them) and their history.
//! - [`table`]: columns, cells, sort order, the summary line.
//! - Batch mode (`-b`: text frames as `top -b`, or JSON Lines) here; the full-screen view in
//!   [`tui`].

mod metrics;
mod model;
mod os;
mod table;
mod tui;

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};

use hsinspect::threads::states::{ThreadState, ThreadStates};
use model::{Host, HostOptions, Tracked};

/// The WAITING column: threads waiting with or without a timeout (`WAITING` and
/// `TIMED_WAITING`: parked, in `Object.wait`, sleeping).
pub fn waiting(s: &ThreadStates) -> u32 {
    s.in_state(ThreadState::Waiting) + s.in_state(ThreadState::TimedWaiting)
}
use table::{ALL, Column, Sort};

/// Output formats of `inspect top -b`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TopFormat {
    /// Text frames as `top -b`: a summary line, a header, one line per JVM; an empty line
    /// between frames.
    #[default]
    Text,
    /// JSON Lines: one object per JVM per refresh.
    Json,
}

/// The arguments of `inspect top`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect top                    full screen; keys: P (CPU), M (RSS), H (heap %), G (GC%), ? (help), q\n  \
    inspect top -b -n 3 -d 1       three text frames, one second apart\n  \
    inspect top -b -n 1 --format json -o gc")]
pub struct TopArgs {
    /// Batch mode: plain text frames on stdout (or `--format json`), no terminal needed.
    #[arg(short = 'b', long)]
    pub batch: bool,

    /// Stop after this many refreshes (default: until quit; in batch mode, until killed).
    #[arg(short = 'n', long = "iterations", value_name = "N", value_parser = crate::sampling::parse_count)]
    pub iterations: Option<u64>,

    /// Seconds between refreshes (`1`, `0.5`, `2s`, `500ms`; at least 0.1 s).
    #[arg(short = 'd', long = "delay", value_name = "SECS", default_value = "1", value_parser = parse_delay)]
    pub delay: Duration,

    /// Batch output format.
    #[arg(long, value_enum, default_value_t, requires = "batch")]
    pub format: TopFormat,

    /// Sort by this column (largest first; pid and text columns A to Z).
    #[arg(
        short = 'o',
        long = "sort",
        value_enum,
        default_value = "cpu",
        value_name = "COLUMN"
    )]
    pub sort: Column,

    /// Reverse the sort order.
    #[arg(short = 'R', long)]
    pub reverse: bool,

    /// Look for new JVMs (a scan of the processes) at most this often, in seconds; known JVMs are
    /// re-read every refresh.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_delay)]
    pub rescan: Duration,

    /// Do not read the per-build symbol cache (~/.cache/hsinspect).
    #[arg(long)]
    pub no_cache: bool,

    /// Do not count each JVM's threads by state (the BLOCKED and WAITING columns, read from the
    /// JVMs' memory without stopping them; about 0.1 ms a JVM a refresh).
    #[arg(long)]
    pub no_thread_states: bool,

    #[command(flatten)]
    pub pods: crate::pods::PodArgs,

    #[command(flatten)]
    pub host_root: crate::pods::HostRootArg,
}

/// Parses `-d`: seconds, fractional allowed, or with an `s`/`ms` suffix; at least 0.1 s.
fn parse_delay(s: &str) -> anyhow::Result<Duration> {
    let (digits, scale) = if let Some(d) = s.strip_suffix("ms") {
        (d, 0.001)
    } else if let Some(d) = s.strip_suffix('s') {
        (d, 1.0)
    } else {
        (s, 1.0)
    };
    match digits.parse::<f64>() {
        Ok(x) if x.is_finite() && !digits.starts_with(['+', '-']) && x * scale >= 0.1 => {
            Ok(Duration::from_secs_f64((x * scale).min(86_400.0)))
        }
        _ => bail!("bad delay {s:?}: give seconds (at least 0.1), e.g. 1, 0.5, 2s or 500ms"),
    }
}

/// Runs `inspect top`.
pub fn run(args: &TopArgs) -> anyhow::Result<ExitCode> {
    // Each scan's worker threads would otherwise each get a glibc malloc arena of their own,
    // which keeps freed pages (as in `serve`).
    os::limit_malloc_arenas();
    let host = Host::new(HostOptions {
        rescan: args.rescan,
        no_cache: args.no_cache,
        pods: args.pods.filter()?,
        host_root: args.host_root.host_root.clone(),
        thread_states: !args.no_thread_states,
    });
    let sort = Sort {
        column: args.sort,
        reverse: args.reverse,
    };
    if args.batch {
        return batch(host, args, sort);
    }
    if !io::stdout().is_terminal() || !io::stdin().is_terminal() {
        bail!("the full-screen view needs a terminal: use `inspect top -b` for plain text frames");
    }
    tui::run(host, args, sort)
}

/// Batch mode: `-n` frames (or until killed or stdout closes), one every `-d`.
fn batch(mut host: Host, args: &TopArgs, sort: Sort) -> anyhow::Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let start = Instant::now();
    let mut frame: u64 = 0;
    loop {
        host.refresh()?;
        if frame == 0 {
            for (reason, count) in &host.not_inspected {
                let s = if *count == 1 { "" } else { "es" };
                eprintln!("inspect: {count} process{s} not inspected: {reason}");
            }
        }
        let written = match args.format {
            TopFormat::Text => write_text(&mut out, &host, sort, frame),
            TopFormat::Json => write_json(&mut out, &host, sort),
        }
        .and_then(|()| out.flush());
        match written {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
            Err(e) => return Err(e).context("writing the frame"),
        }
        frame += 1;
        if args.iterations.is_some_and(|n| frame >= n) {
            return Ok(ExitCode::SUCCESS);
        }
        // Frame k at start + k × delay, skipping ticks a slow refresh overran.
        let step = args.delay.as_secs_f64();
        let next = ((start.elapsed().as_secs_f64() / step).floor() + 1.0).max(frame as f64);
        if let Some(wait) = Duration::from_secs_f64(next * step).checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
}

/// The local time of day, `HH:MM:SS` (jiff: the system's time zone, `TZ` or `/etc/localtime`;
/// Windows' own zone there).
fn clock() -> String {
    jiff::Zoned::now().strftime("%H:%M:%S").to_string()
}

/// The first line of a frame.
fn title(host: &Host) -> String {
    format!("inspect top - {}, {}", clock(), table::summary(host))
}

/// One text frame: the summary line, a header, one line per JVM (the note of a JVM that is not
/// live after MAIN); an empty line before every frame but the first.
fn write_text(out: &mut impl Write, host: &Host, sort: Sort, frame: u64) -> io::Result<()> {
    if frame > 0 {
        writeln!(out)?;
    }
    writeln!(out, "{}", title(host))?;
    let now = host.now();
    let rows = table::rows(host, sort, "");
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|j| ALL.iter().map(|c| table::cell(*c, j, now)).collect())
        .collect();
    let mut widths: Vec<usize> = ALL.iter().map(|c| c.header().len()).collect();
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut dyn Write, cells: &[&str], note: Option<String>| -> io::Result<()> {
        let mut text = String::new();
        for ((column, cell), w) in ALL.iter().zip(cells).zip(&widths) {
            if !text.is_empty() {
                text.push_str("  ");
            }
            if column.is_text() {
                text.push_str(&format!("{cell:<w$}"));
            } else {
                text.push_str(&format!("{cell:>w$}"));
            }
        }
        if let Some(note) = note {
            text.push_str("  ");
            text.push_str(&note);
        }
        writeln!(out, "{}", text.trim_end())
    };
    let headers: Vec<&str> = ALL.iter().map(|c| c.header()).collect();
    line(out, &headers, None)?;
    for (jvm, row) in rows.iter().zip(&cells) {
        let row: Vec<&str> = row.iter().map(String::as_str).collect();
        line(out, &row, table::note(jvm))?;
    }
    Ok(())
}

/// One JSON object per JVM: who it is, its state, and [`metrics::Figures`] (`null` for jstat's
/// `-`). Never main arguments or JVM flags.
fn json_row(jvm: &Tracked, now: f64, timestamp_ms: u128) -> serde_json::Value {
    let mut object = serde_json::json!({
        "timestamp": timestamp_ms,
        "pid": jvm.info.pid,
        "container_pid": jvm.info.container_pid,
        "user": jvm.info.user,
        "main": jvm.info.main,
        "jvm_version": jvm.info.jvm_version,
        "uptime_s": (jvm.uptime_s(now) * 100.0).round() / 100.0,
        "readable": jvm.info.readable,
        "container": jvm.info.container,
        "state": jvm.state.name(),
        "reason": jvm.state.reason(),
        "threads_blocked": jvm.states.map(|s| s.in_state(ThreadState::Blocked)),
        "threads_waiting": jvm.states.map(|s| waiting(&s)),
    });
    // A JVM gone has no figures; an unreadable one has its process's (CPU, RSS) and no others
    // (its sampler never ran: they are `None`).
    let gone = matches!(jvm.state, model::State::Gone(_));
    if let (serde_json::Value::Object(o), Ok(serde_json::Value::Object(figures))) =
        (&mut object, serde_json::to_value(&jvm.figures))
    {
        for (k, v) in figures {
            o.insert(k, if gone { serde_json::Value::Null } else { v });
        }
    }
    object
}

fn write_json(out: &mut impl Write, host: &Host, sort: Sort) -> io::Result<()> {
    let now = host.now();
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    for jvm in table::rows(host, sort, "") {
        serde_json::to_writer(&mut *out, &json_row(jvm, now, timestamp))?;
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_in_seconds() {
        assert_eq!(parse_delay("1").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_delay("0.5").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_delay("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_delay("250ms").unwrap(), Duration::from_millis(250));
        for bad in ["", "0", "0.05", "-1", "+1", "x", "1m", "nan", "inf"] {
            assert!(parse_delay(bad).is_err(), "{bad}");
        }
    }
}
