//! `inspect hot <pid>` and `inspect record <pid>`: what burns the CPU, from outside the JVM (no
//! agent, no attach, no safepoint; Linux). Per-thread CPU from `/proc`; stacks of the threads that run,
//! each held (ptrace, that thread alone) only for its own walk; parked threads never held.
//! `hot` prints the busiest threads as Elasticsearch's hot threads do; `record` samples at a
//! rate and writes a flame graph (SVG), a speedscope file or collapsed stacks.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

/// `inspect hot` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect hot 4242                          the 3 busiest threads over 1 s, 10 snapshots each\n  \
    inspect hot --threads 5 --interval 5s 4242\n  \
    inspect hot --format json 4242")]
pub struct HotArgs {
    /// The JVM's pid.
    #[arg(value_name = "PID")]
    pid: i32,
    /// How long to measure each thread's CPU (`500ms`, `1s`, `2m`).
    #[arg(long, default_value = "1s", value_parser = parse_span)]
    interval: Duration,
    /// How many of the busiest threads to print.
    #[arg(long, default_value_t = 3)]
    threads: usize,
    /// How many stack snapshots to take, spread over the interval.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    snapshots: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = HotFormat::Text)]
    format: HotFormat,
    /// Per snapshot, the threads walked and held, and for how long, on stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// How `inspect hot` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HotFormat {
    /// As Elasticsearch's hot threads.
    Text,
    /// One JSON document.
    Json,
}

/// `inspect record` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect record 4242 --duration 30s -o profile.svg     a flame graph\n  \
    inspect record 4242 -o profile.speedscope.json        for speedscope.app\n  \
    inspect record 4242 -o stacks.txt --format collapsed --threads")]
pub struct RecordArgs {
    /// The JVM's pid.
    #[arg(value_name = "PID")]
    pid: i32,
    /// How long to record (`30s`, `2m`); Ctrl-C ends early and still writes the file.
    #[arg(long, default_value = "10s", value_parser = parse_span)]
    duration: Duration,
    /// Samples a second, on average (each interval is drawn at random from half to one and a half
    /// of `1/rate`, so a periodic workload is not sampled at one phase).
    #[arg(long, default_value_t = 49, value_parser = clap::value_parser!(u32).range(1..=1000))]
    rate: u32,
    /// The file to write (never overwritten).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// The file's format; by default from its name: `.svg` a flame graph, `.json` speedscope,
    /// anything else collapsed stacks.
    #[arg(long, value_enum)]
    format: Option<RecordFormat>,
    /// Each stack's root is its thread's name.
    #[arg(long)]
    threads: bool,
    /// Per sample, the threads held and for how long, on stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// What `inspect record` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordFormat {
    /// An SVG flame graph.
    Svg,
    /// A speedscope file (JSON).
    Speedscope,
    /// Collapsed stacks (`frame;frame count`), as flamegraph.pl reads them.
    Collapsed,
}

/// Runs `inspect hot` (Linux: elsewhere the library's sampler says it is not supported).
pub fn run_hot(args: &HotArgs) -> anyhow::Result<ExitCode> {
    use hsinspect::cpu::{HotThread, HotThreads, group_snapshots, snapshot_lines};
    use std::collections::HashMap;
    use std::io::Write;
    use std::time::Instant;
    let pid = args.pid;
    let sampler = hsinspect::pipeline::ThreadSampler::open(pid)
        .with_context(|| format!("threads of process {pid}"))?;
    let java: HashMap<i32, String> = sampler.java_threads().into_iter().collect();
    let java_tids: Vec<i32> = java.keys().copied().collect();
    let began = Instant::now();
    let start = sampler.task_stats()?;
    let mut snapshots: HashMap<i32, Vec<Vec<String>>> = HashMap::new();
    let step = args.interval / args.snapshots;
    // Per snapshot, only the Java threads that ran since the last one (or run now) are walked:
    // a parked thread costs one `stat` read a snapshot and is never held.
    let mut last = start.clone();
    for k in 0..args.snapshots {
        let due = began + step * k + step / 2;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let now = sampler.task_stats()?;
        let ran: Vec<i32> = java_tids
            .iter()
            .copied()
            .filter(|tid| {
                now.get(tid).is_some_and(|n| {
                    n.state == b'R' || last.get(tid).is_none_or(|b| b.cpu_ms != n.cpu_ms)
                })
            })
            .collect();
        last = now;
        let (stacks, cost) = sampler.stacks(&ran)?;
        if args.verbose {
            eprintln!(
                "snapshot {}: {} threads ran and were walked, {} held for {:.3} ms",
                k + 1,
                cost.walked,
                cost.held,
                cost.hold.as_secs_f64() * 1e3
            );
        }
        for s in stacks {
            snapshots.entry(s.tid).or_default().push(snapshot_lines(&s));
        }
    }
    if let Some(wait) = (began + args.interval).checked_duration_since(Instant::now()) {
        std::thread::sleep(wait);
    }
    let end = sampler.task_stats()?;
    let interval_ms = began.elapsed().as_secs_f64() * 1e3;
    let mut used: Vec<(i32, f64)> = end
        .iter()
        .map(|(tid, e)| {
            let before = start.get(tid).map_or(0.0, |s| s.cpu_ms);
            (*tid, (e.cpu_ms - before).max(0.0))
        })
        .collect();
    used.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let threads = used
        .into_iter()
        .take(args.threads)
        .map(|(tid, cpu_ms)| {
            let taken = snapshots.remove(&tid).unwrap_or_default();
            HotThread {
                tid,
                name: java.get(&tid).cloned().unwrap_or_else(|| {
                    hsinspect::pipeline::os_thread_name(pid, tid).unwrap_or_default()
                }),
                java: java.contains_key(&tid),
                cpu_ms,
                percent: cpu_ms * 100.0 / interval_ms,
                snapshots: args.snapshots as usize,
                groups: group_snapshots(&taken),
            }
        })
        .collect();
    let hot = HotThreads {
        interval_ms,
        threads,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        HotFormat::Text => {
            let at = jiff::Timestamp::now().to_string();
            hsinspect::format::hot_threads::write_hot_threads(&mut out, &hot, pid, &at)?
        }
        HotFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &hot)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `inspect record` (Linux, as `inspect hot`).
pub fn run_record(args: &RecordArgs) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    use std::time::Instant;
    let pid = args.pid;
    let format =
        args.format
            .unwrap_or_else(|| match args.output.extension().and_then(|e| e.to_str()) {
                Some("svg") => RecordFormat::Svg,
                Some("json") => RecordFormat::Speedscope,
                _ => RecordFormat::Collapsed,
            });
    if args.output.exists() {
        anyhow::bail!(
            "{} exists: inspect never overwrites a file; give another name",
            args.output.display()
        );
    }
    let mut sampler = hsinspect::pipeline::ThreadSampler::open(pid)
        .with_context(|| format!("threads of process {pid}"))?;
    let stop = crate::os::catch_stop();
    let mut profile = hsinspect::cpu::Profile::new(args.threads);
    let period = Duration::from_secs(1) / args.rate;
    let began = Instant::now();
    // The threads that used CPU in the last second: only they are looked at per sample, so an
    // idle thread costs one read a second, not one a sample.
    let mut active: Vec<i32> = Vec::new();
    let mut refreshed = Instant::now() - Duration::from_secs(2);
    // The process's thread count when the Java thread list was last read, and when: the list
    // (every `JavaThread` and its `java.lang.Thread`'s name, most of what `inspect` reads) is
    // read again when the count moved (one read of a kept-open `stat`; listing
    // `/proc/<pid>/task` each second cost more than the samples' own reads of it), else every
    // `LIST_AGE` (a thread renamed meanwhile keeps its old name until then, and so may a thread
    // started while another ended).
    const LIST_AGE: Duration = Duration::from_secs(10);
    // (The sampler read the list when it opened.)
    let mut listed: (Option<u64>, Instant) = (sampler.thread_count(), began);
    // Each interval is drawn uniformly from half to one and a half periods (the mean rate stays
    // `--rate`): on a fixed grid, a thread's progress between samples (a period less the hold)
    // can lock onto a periodic workload's round and sample one phase of it over and over.
    let mut due = began;
    let mut k: u32 = 0;
    let (mut held_total, mut hold_max) = (0usize, Duration::ZERO);
    while began.elapsed() < args.duration && !stop.load(std::sync::atomic::Ordering::SeqCst) {
        if refreshed.elapsed() >= Duration::from_secs(1) {
            let count = sampler.thread_count();
            if count.is_none() || count != listed.0 || listed.1.elapsed() >= LIST_AGE {
                // The list read races with threads starting and ending: a failed read keeps
                // the last list, unless the JVM is gone (then what was recorded is written).
                if sampler.refresh().is_err() && hsinspect::process_usage(pid).is_err() {
                    break;
                }
                listed = (sampler.thread_count(), Instant::now());
            }
            active = sampler.busy_java_threads();
            refreshed = Instant::now();
        }
        match sampler.running_stacks(&active) {
            Ok((stacks, cost)) => {
                if args.verbose && cost.held > 0 {
                    eprintln!(
                        "sample {k}: {} threads held for {:.3} ms",
                        cost.held,
                        cost.hold.as_secs_f64() * 1e3
                    );
                }
                held_total += cost.held;
                hold_max = hold_max.max(cost.hold);
                profile.add(&stacks);
            }
            Err(e) if hsinspect::process_usage(pid).is_err() => {
                let _ = e;
                break; // the JVM exited
            }
            Err(e) => return Err(e).context(format!("a sample of process {pid}")),
        }
        k += 1;
        due += period.mul_f64(0.5 + fastrand::f64());
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    let took = began.elapsed();
    let title = format!("inspect record {pid}");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&args.output)
        .with_context(|| format!("creating {}", args.output.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let written = match format {
        RecordFormat::Svg => hsinspect::format::profile::write_svg(&mut out, &profile, &title),
        RecordFormat::Speedscope => {
            hsinspect::format::profile::write_speedscope(&mut out, &profile, &title)
        }
        RecordFormat::Collapsed => hsinspect::format::profile::write_collapsed(&mut out, &profile),
    }
    .and_then(|_| out.flush());
    if let Err(e) = written {
        drop(out);
        let _ = std::fs::remove_file(&args.output);
        return Err(e).with_context(|| format!("writing {}", args.output.display()));
    }
    eprintln!(
        "inspect record: {} samples in {:.1} s, {} thread stacks ({} held; longest hold {:.3} ms) written to {}",
        profile.ticks,
        took.as_secs_f64(),
        profile.samples,
        held_total,
        hold_max.as_secs_f64() * 1e3,
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Parses a span: `500ms`, `5s`, `2m` (or milliseconds alone, as jstat's intervals).
///
/// # Errors
/// A message naming the value for anything else.
fn parse_span(s: &str) -> anyhow::Result<Duration> {
    match s.strip_suffix('m').filter(|_| !s.ends_with("ms")) {
        Some(minutes) => match minutes.parse::<u64>() {
            Ok(m) => Ok(Duration::from_secs(m.saturating_mul(60))),
            Err(_) => anyhow::bail!("bad duration {s:?}: give e.g. 500ms, 5s or 2m"),
        },
        None => crate::sampling::parse_interval(s),
    }
}
