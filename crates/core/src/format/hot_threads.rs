//! `inspect hot`'s text, as Elasticsearch's `_nodes/hot_threads` prints a node's hot threads
//! (`monitor/jvm/HotThreads.java`): a header line, then per thread its share of the interval
//! (`42.3% (423ms out of 1s) cpu usage by thread 'worker-3'`) and its snapshots grouped by
//! their shared bottom frames (`10/10 snapshots sharing following 12 elements`, or `unique
//! snapshot`), each frame on its own line.

use std::io::{self, Write};

use crate::cpu::HotThreads;

/// A duration as Elasticsearch's `TimeValue` prints one: `423ms`, `423.5ms`, `1s`, `1.5s`.
pub fn time_value(ms: f64) -> String {
    let trim = |v: f64| {
        let t = format!("{v:.1}");
        t.strip_suffix(".0").map(str::to_string).unwrap_or(t)
    };
    if ms >= 1000.0 {
        format!("{}s", trim(ms / 1000.0))
    } else {
        format!("{}ms", trim(ms))
    }
}

/// Writes `hot` for process `pid` taken at `at` (an RFC 3339 time).
///
/// # Errors
/// Those of `out`.
pub fn write_hot_threads(
    out: &mut dyn Write,
    hot: &HotThreads,
    pid: i32,
    at: &str,
) -> io::Result<()> {
    writeln!(
        out,
        "::: {{{pid}}}\n   Hot threads at {at}, interval={}, busiestThreads={}, ignoreIdleThreads=true:",
        time_value(hot.interval_ms),
        hot.threads.len()
    )?;
    for t in &hot.threads {
        writeln!(out, "   ")?;
        writeln!(
            out,
            "   {:4.1}% ({} out of {}) cpu usage by thread '{}'",
            t.percent,
            time_value(t.cpu_ms),
            time_value(hot.interval_ms),
            t.name
        )?;
        if !t.java {
            writeln!(out, "     (not a Java thread: no Java frames)")?;
            continue;
        }
        for g in &t.groups {
            if g.count == 1 {
                writeln!(out, "     unique snapshot")?;
            } else {
                writeln!(
                    out,
                    "     {}/{} snapshots sharing following {} elements",
                    g.count,
                    t.snapshots,
                    g.frames.len()
                )?;
            }
            for f in &g.frames {
                writeln!(out, "       {f}")?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_as_time_value_does() {
        assert_eq!(time_value(423.0), "423ms");
        assert_eq!(time_value(423.46), "423.5ms");
        assert_eq!(time_value(1000.0), "1s");
        assert_eq!(time_value(1500.0), "1.5s");
    }
}
