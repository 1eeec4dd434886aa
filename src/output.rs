//! `--format text|json|prometheus` for the plain counter listing.

use std::io::{self, Write};
use std::time::SystemTime;

use hsinspect::format::{self, json, prometheus};
use hsinspect::perfdata::{Counter, Snapshot};

/// How counters are printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// `jcmd PerfCounter.print`'s `name=value` lines.
    #[default]
    Text,
    /// JSON Lines: one object per sample (pid, time, each counter's value, units, variability).
    Json,
    /// Prometheus text exposition format 0.0.4 (see README: metric naming).
    Prometheus,
}

/// Writes `counters` (a selection of `snapshot`, taken at `taken`, in jvmstat's order) in `fmt`. Returns the
/// counters that format cannot show (byte vectors, unsupported types), for a warning.
///
/// # Errors
/// Any error from `out`.
pub fn write<'a, W: Write>(
    out: &mut W,
    fmt: OutputFormat,
    pid: Option<i32>,
    taken: SystemTime,
    snapshot: &Snapshot,
    counters: &[&'a Counter],
) -> io::Result<Vec<&'a Counter>> {
    match fmt {
        OutputFormat::Text => format::write_jcmd(out, counters),
        OutputFormat::Json => json::write_json_line(out, pid, taken, counters),
        OutputFormat::Prometheus => {
            let mut page = prometheus::Exposition::new();
            let pid = pid.map(|p| p.to_string());
            let labels: Vec<(&str, &str)> = pid.iter().map(|p| ("pid", p.as_str())).collect();
            page.add_counters(counters, snapshot.long("sun.os.hrt.frequency"), &labels);
            page.write(out)?;
            Ok(Vec::new())
        }
    }
}
