//! `inspect stat`: jstat's views of any target, with jstat's grammar:
//!
//! ```text
//! inspect stat -<option> [-t] [-h<lines>] [-F [--no-stop]] [--format text|json|prometheus] <target> [<interval> [<count>]]
//! inspect stat -<option> [-t] [--format text|json|prometheus] --core <core> [--exe <path>] [--sysroot <dir>]
//! inspect stat -options
//! ```
//!
//! The arguments are parsed by hand, not by clap: jstat's single-dash long options (`-gcutil`) and
//! glued values (`-h10`) are the muscle memory this command exists for.
//!
//! **Layout.** The columns, widths and alignments are those of the jstat of the target JVM's own
//! JDK (its `java.vm.specification.version`: JDK 8's for a JDK 8 region, 11's for 11, 17's for
//! 17 and later: [`stat::Layout`]), so scripts that read jstat's columns by position keep
//! working; `--jstat <N>` prints JDK N's jstat's layout whatever the target.
//!
//! `-t` (Timestamp, seconds): for a live target, the JVM's uptime when the sample was taken (wall
//! clock now − `sun.rt.createVmBeginTime`); for a saved file or a core, the region's own uptime,
//! `sun.os.hrt.ticks / sun.os.hrt.frequency` (what JDK 17's jstat prints; `-` for a JDK 25 region,
//! which has no `sun.os.hrt.ticks`).

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::UNIX_EPOCH;

use anyhow::{Context, bail};
use hsinspect::format::{self, Filter};
use hsinspect::perfdata::Counter;
use hsinspect::stat::{self, Cell, Layout, View};
use hsinspect::{Sampler, Target};

use crate::output::{self, OutputFormat};
use crate::target::TargetArgs;

use crate::sampling::{self, Sample, Schedule};
use hsinspect::Pid;

/// The arguments of `inspect stat`, parsed by [`run`] with jstat's grammar.
#[derive(Debug, Default, clap::Args)]
#[command(disable_help_flag = true)]
pub struct StatArgs {
    /// `-<option> [-t] [-h<lines>] [-F] [--no-stop] [--format text|json|prometheus] <target> [<interval> [<count>]]`;
    /// `-options` lists the options.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

const USAGE: &str = "\
Usage: inspect stat -options
       inspect stat -<option> [-t] [-h<lines>] [-F [--no-stop]] [--format text|json|prometheus] <target> [<interval> [<count>]]
       inspect stat -<option> [-t] [--format text|json|prometheus] --core <core> [--exe <path>] [--sysroot <dir>]

jstat's views, byte for byte, of any target inspect reads.
  <option>     one of `inspect stat -options`: class compiler gc gccapacity gccause gcmetacapacity
               gcnew gcnewcapacity gcold gcoldcapacity gcutil printcompilation
  <target>     a pid (its hsperfdata file; with -F its memory) or a saved hsperfdata file
               (jstat's file:///path form works too)
  <interval>   time between samples: <n>[ms|s], milliseconds by default
  <count>      number of samples (default: one without an interval, endless with one)
  -t           Timestamp column first: a live JVM's uptime at the sample; for a file or a core the
               region's own uptime (sun.os.hrt.ticks / sun.os.hrt.frequency, `-` on JDK 25+)
  -h<lines>    repeat the header every <lines> samples
  --jstat <N>  print JDK N's jstat's layout (8, 11, 17, ...); by default the layout of the
               target JVM's own JDK (JDK 8's jstat has no CGC/CGCT columns and narrower ones)
  -F           read the JVM's memory (works with -XX:+PerfDisableSharedMem, hung JVMs)
  --no-stop    with -F: never stop the JVM's threads
  --format     text (jstat's table, the default), json (JSON Lines: one object a sample, the
               columns as numbers) or prometheus (the counters the view is computed from, named
               as `inspect --format prometheus` names them)
  -v, --stop-timeout <ms>, --wait <ms>, --no-cache   as for `inspect` (-v: about the first sample)

Examples:
  inspect stat -gcutil 4242 1s          same as `jstat -gcutil 4242 1s`
  inspect stat -gcutil -t -h10 -F 4242 250ms 20
  inspect stat -class region.hsperf     same as `jstat -class file:///path/region.hsperf`
  inspect stat -gc --format json -F --no-stop 4242 1s | jq .columns.OU
";

/// A parsed `inspect stat` command line.
#[derive(Debug)]
struct Command {
    option: String,
    timestamp: bool,
    header_every: u64,
    format: OutputFormat,
    /// `--jstat`: a layout chosen on the command line instead of the target's.
    layout: Option<Layout>,
    source: Target,
    schedule: Schedule,
    verbose: bool,
}

enum Parsed {
    Help,
    Options,
    Run(Box<Command>),
}

fn parse(args: &[String]) -> anyhow::Result<Parsed> {
    let mut option: Option<String> = None;
    let mut timestamp = false;
    // The target flags, as `inspect` takes them (one group: target::TargetArgs).
    let mut t = TargetArgs::default();
    let mut verbose = false;
    let mut header_every = 0u64;
    let mut format = OutputFormat::Text;
    let mut layout = None;
    let mut positional: Vec<&str> = Vec::new();

    let mut it = args.iter().map(String::as_str);
    let value = |it: &mut dyn Iterator<Item = &str>, flag: &str| {
        it.next()
            .map(str::to_owned)
            .with_context(|| format!("{flag} needs a value"))
    };
    let millis = |s: String, flag: &str| -> anyhow::Result<u64> {
        s.parse::<u64>()
            .with_context(|| format!("{flag} {s:?}: give milliseconds"))
    };
    while let Some(arg) = it.next() {
        let (flag, glued) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg, None),
        };
        let val = |it: &mut dyn Iterator<Item = &str>| match glued.clone() {
            Some(v) => Ok(v),
            None => value(it, flag),
        };
        match flag {
            "-help" | "--help" | "-?" => return Ok(Parsed::Help),
            "-options" if option.is_none() && positional.is_empty() => {
                return Ok(Parsed::Options);
            }
            "-t" => timestamp = true,
            // jstat passes -J<flag> to its own JVM; there is none here.
            j if j.starts_with("-J") => {}
            "-F" | "--force" => t.force = true,
            "--no-stop" => t.no_stop = true,
            "--no-cache" => t.no_cache = true,
            "-v" | "--verbose" => verbose = true,
            "--format" => {
                format = match val(&mut it)?.as_str() {
                    "text" => OutputFormat::Text,
                    "json" => OutputFormat::Json,
                    "prometheus" => OutputFormat::Prometheus,
                    other => bail!("--format {other:?}: give text, json or prometheus"),
                }
            }
            "--jstat" => {
                let v = val(&mut it)?;
                let major = stat::java_major(&v)
                    .filter(|m| *m >= 1 && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
                    .with_context(|| {
                        format!("--jstat {v:?}: give a JDK's major version (8, 11, 17, ...)")
                    })?;
                layout = Some(Layout::of_major(major));
            }
            "--core" => t.core = Some(PathBuf::from(val(&mut it)?)),
            "--exe" => t.exe = Some(PathBuf::from(val(&mut it)?)),
            "--sysroot" => t.sysroot = Some(PathBuf::from(val(&mut it)?)),
            "--stop-timeout" => t.stop_timeout = millis(val(&mut it)?, flag)?,
            "--wait" => t.wait = millis(val(&mut it)?, flag)?,
            h if h.starts_with("-h") && !h.starts_with("--") => {
                let n = if h == "-h" {
                    value(&mut it, "-h")?
                } else {
                    h[2..].to_owned()
                };
                header_every = n.parse().with_context(|| {
                    format!("illegal -h argument: {n} (give a number of lines)")
                })?;
            }
            o if o.starts_with('-') && !o.starts_with("--") && o.len() > 1 && !is_number(o) => {
                if option.is_some() || !positional.is_empty() {
                    bail!("illegal argument: {o} (the -<option> comes first)");
                }
                option = Some(o[1..].to_owned());
            }
            o if o.starts_with("--") => bail!("unknown flag {o}"),
            p => positional.push(p),
        }
    }
    let Some(option) = option else {
        if args.is_empty() {
            return Ok(Parsed::Help);
        }
        bail!("-<option> required (`inspect stat -options` lists them)");
    };
    // Refuse an unknown option before touching the target.
    View::new(&option, timestamp)?;
    if t.no_stop && !t.force {
        bail!("--no-stop goes with -F");
    }
    let source = if t.core.is_some() {
        if t.force {
            bail!("--core reads a core file: -F does not apply");
        }
        if !positional.is_empty() {
            bail!(
                "a core is one moment: no target, interval or count after --core (got {})",
                positional.join(" ")
            );
        }
        t.target(None)?
    } else {
        if t.exe.is_some() || t.sysroot.is_some() {
            bail!("--exe and --sysroot go with --core");
        }
        let Some(target) = positional.first() else {
            bail!("give a target: a pid, an hsperfdata file, or --core <core>");
        };
        if positional.len() > 3 {
            bail!("too many arguments: {}", positional[3..].join(" "));
        }
        // jstat's vmid for a saved region is a file: URL (`file:///path/region`).
        t.target(Some(target.strip_prefix("file://").unwrap_or(target)))?
    };
    let schedule = match positional.get(1..).unwrap_or_default() {
        [] => Schedule::ONCE,
        [interval] => Schedule {
            interval: sampling::parse_interval(interval)?,
            count: None,
        },
        [interval, count] => Schedule {
            interval: sampling::parse_interval(interval)?,
            count: Some(sampling::parse_count(count)?),
        },
        _ => unreachable!("at most three positionals"),
    };
    Ok(Parsed::Run(Box::new(Command {
        option,
        timestamp,
        header_every,
        format,
        layout,
        source,
        schedule,
        verbose,
    })))
}

/// A negative lvmid is a number, not an option (jstat's rule).
fn is_number(s: &str) -> bool {
    s.parse::<i64>().is_ok()
}

/// Runs `inspect stat`.
pub fn run(args: &StatArgs) -> anyhow::Result<ExitCode> {
    let cmd = match parse(&args.args)? {
        Parsed::Help => {
            print!("{USAGE}");
            return Ok(ExitCode::SUCCESS);
        }
        Parsed::Options => {
            return write_quietly(stat::options_listing().as_bytes());
        }
        Parsed::Run(cmd) => cmd,
    };
    // The layout is the target's (known from the first sample) unless --jstat chose one.
    let mut view: Option<View> = match cmd.layout {
        Some(layout) => Some(View::with_layout(&cmd.option, cmd.timestamp, layout)?),
        None => None,
    };
    let (option, timestamp) = (cmd.option.clone(), cmd.timestamp);
    let pid = cmd.source.pid();
    let mut sampler = Sampler::new(cmd.source);
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let header_every = cmd.header_every;
    let format = cmd.format;
    let verbose = cmd.verbose;
    sampling::run(&mut sampler, cmd.schedule, &mut out, |out, sample| {
        if verbose && sample.index == 0 {
            for d in &sample.reading.details {
                eprintln!("inspect: {d}");
            }
        }
        let view = match &mut view {
            Some(v) => v,
            None => view.insert(
                View::with_layout(
                    &option,
                    timestamp,
                    Layout::of_snapshot(&sample.reading.snapshot),
                )
                .map_err(io::Error::other)?,
            ),
        };
        let uptime = pid.and_then(|_| live_uptime(sample));
        let cells = view.cells(&sample.reading.snapshot, uptime);
        match format {
            OutputFormat::Text => {
                // jstat prints the header once before the first sample; with -h<n>, before
                // every n-th.
                let header_due = if header_every == 0 {
                    sample.index == 0
                } else {
                    sample.index % header_every == 0
                };
                if header_due {
                    writeln!(out, "{}", view.header())?;
                }
                writeln!(out, "{}", view.row(&cells))
            }
            OutputFormat::Json => {
                let line = json_line(view, &cells, pid, sample);
                writeln!(out, "{line}")
            }
            OutputFormat::Prometheus => {
                // The counters the view's columns are computed from, named as the plain
                // listing's --format prometheus names them (jstat's ratios are PromQL's job).
                let snapshot = &sample.reading.snapshot;
                let counters: Vec<&Counter> = format::sorted(snapshot, &Filter::default())
                    .into_iter()
                    .filter(|c| view.counter_names().contains(&c.name))
                    .collect();
                output::write(
                    out,
                    OutputFormat::Prometheus,
                    &output::DialectArgs::default(),
                    pid,
                    sample.taken,
                    snapshot,
                    &counters,
                )
                .map(drop)
            }
        }
    })
}

/// A live JVM's uptime in seconds at the sample: wall clock − `sun.rt.createVmBeginTime` (ms
/// since the epoch, set when the VM began to start).
fn live_uptime(sample: &Sample) -> Option<f64> {
    let began_ms = sample.reading.snapshot.long("sun.rt.createVmBeginTime")?;
    let now_ms = sample.taken.duration_since(UNIX_EPOCH).ok()?.as_millis() as f64;
    Some((now_ms - began_ms as f64) / 1000.0)
}

/// One JSON Lines object: `{"pid", "timestamp" (Unix ms of the sample), "option", "columns":
/// {key: number | string | null}}`; numbers are the cells jstat would print, as numbers.
fn json_line(view: &View, cells: &[Cell], pid: Option<Pid>, sample: &Sample) -> String {
    let mut columns = serde_json::Map::new();
    for (i, (spec, cell)) in view.specs().zip(cells).enumerate() {
        let value = match cell {
            Cell::Number(n) if n.is_nan() => serde_json::Value::Null,
            Cell::Number(_) => json_number(&view.text(i, cell)),
            Cell::Text(t) => serde_json::Value::String(t.clone()),
        };
        columns.insert(spec.json_key().to_owned(), value);
    }
    let taken_ms = sample
        .taken
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    serde_json::json!({
        "pid": pid,
        "timestamp": taken_ms,
        "option": view.option().name,
        "columns": columns,
    })
    .to_string()
}

/// The number jstat printed as `text`: an integer when it has no decimals (`YGC`), else a float
/// with the printed digits (`16.67`); infinities have no JSON form and are `null`.
fn json_number(text: &str) -> serde_json::Value {
    if let Ok(n) = text.parse::<i64>() {
        return n.into();
    }
    text.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// Writes `bytes` to stdout; a closed stdout is not an error.
fn write_quietly(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e).context("writing the output"),
        _ => Ok(ExitCode::SUCCESS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn command(s: &str) -> Command {
        match parse(&args(s)).unwrap() {
            Parsed::Run(c) => *c,
            _ => panic!("not a run: {s}"),
        }
    }

    #[test]
    fn jstat_grammar() {
        let c = command("-gcutil -t -h10 -F 4242 250ms 20");
        assert_eq!(c.option, "gcutil");
        assert!(c.timestamp);
        assert_eq!(c.header_every, 10);
        assert!(matches!(c.source, Target::Live { pid: 4242, .. }));
        assert_eq!(
            c.schedule,
            Schedule {
                interval: std::time::Duration::from_millis(250),
                count: Some(20)
            }
        );
        let c = command("-class 4242 1s");
        assert!(matches!(c.source, Target::Hsperfdata { pid: 4242, .. }));
        assert_eq!(c.schedule.count, None);
        assert_eq!(command("-gc -h 5 x.hsperf").header_every, 5);
        assert_eq!(command("-gc x.hsperf").schedule, Schedule::ONCE);
        assert!(matches!(
            command("-gc --core c").source,
            Target::Core { .. }
        ));
        assert_eq!(command("-gc --format=json 1").format, OutputFormat::Json);
        assert!(matches!(parse(&args("-options")).unwrap(), Parsed::Options));
        let c = command("-J-Xmx8m -gcutil file:///tmp/r.hsperf");
        assert!(matches!(c.source, Target::SavedFile(p) if p == Path::new("/tmp/r.hsperf")));
    }

    #[test]
    fn bad_command_lines_are_refused() {
        for bad in [
            "-nope 1",
            "-gcutil",
            "4242",
            "-gcutil 4242 1x",
            "-gcutil 4242 1s 0",
            "-gcutil 4242 1s 2 3",
            "-gcutil -hx 4242",
            "-gcutil --core c 1s",
            "-gcutil -F x.hsperf",
            "-gcutil --no-stop 4242",
            "-gcutil --format xml 4242",
            "-gcutil 0",
            "-gcutil 4242 -class",
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad}");
        }
    }
}
