//! The columns of `inspect top`, their cells, sort order and the summary line: shared by the
//! batch frames and the full-screen view.

use std::cmp::Ordering;

use super::model::{Host, State, Tracked};
use crate::list;

/// A column of the JVM table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Column {
    /// Host pid.
    Pid,
    /// User name.
    User,
    /// Main class or jar (short), `[launcher]` when none.
    Main,
    /// `java.vm.version`.
    Version,
    /// Time since the process started.
    Uptime,
    /// CPU% (per core: 200 is two cores busy).
    Cpu,
    /// Resident set size.
    Rss,
    /// Heap used / max.
    Heap,
    /// Heap used, % of max.
    HeapPct,
    /// jstat's `O`.
    Old,
    /// jstat's `MU`.
    Metaspace,
    /// GC time per wall second, %.
    Gc,
    /// Young collections per second.
    Ygc,
    /// Full collections per second.
    Fgc,
    /// Allocation, MiB/s.
    Alloc,
    /// Time at safepoints per wall second, %.
    Safepoint,
    /// Live threads.
    Threads,
    /// Java threads BLOCKED on a monitor (read without a stop; `-` when the memory cannot be).
    Blocked,
    /// Java threads WAITING or TIMED_WAITING.
    Waiting,
    /// Classes loaded now.
    Classes,
    /// JIT compilation ms per second.
    Jit,
    /// `namespace/pod/container`, a plain container's name or short id; `-` on the host.
    Container,
}

use Column::*;

/// Every column in display order.
/// Every column in display order: MAIN last, as `top`'s COMMAND, so that why a JVM cannot be read
/// can follow it.
pub const ALL: [Column; 22] = [
    Pid, User, Version, Uptime, Cpu, Rss, Heap, HeapPct, Old, Metaspace, Gc, Ygc, Fgc, Alloc,
    Safepoint, Threads, Blocked, Waiting, Classes, Jit, Container, Main,
];

/// The columns in the order a small terminal keeps them (the most useful first).
/// CONTAINER last: 24 columns of `-` on a host without containers; a wide terminal (and batch
/// mode, which has every column) shows it.
pub const PRIORITY: [Column; 22] = [
    Pid, Main, Cpu, Gc, Alloc, HeapPct, Rss, Ygc, Fgc, Old, Threads, Blocked, User, Uptime,
    Safepoint, Heap, Metaspace, Waiting, Classes, Jit, Version, Container,
];

impl Column {
    /// The header.
    pub fn header(self) -> &'static str {
        match self {
            Pid => "PID",
            User => "USER",
            Main => "MAIN",
            Version => "VERSION",
            Uptime => "UPTIME",
            Cpu => "CPU%",
            Rss => "RSS",
            Heap => "HEAP",
            HeapPct => "HEAP%",
            Old => "OLD%",
            Metaspace => "META",
            Gc => "GC%",
            Ygc => "YGC/s",
            Fgc => "FGC/s",
            Alloc => "ALLOC MB/s",
            Safepoint => "SAFEPT%",
            Threads => "THREADS",
            Blocked => "BLOCKED",
            Waiting => "WAITING",
            Classes => "CLASSES",
            Jit => "JIT ms/s",
            Container => "CONTAINER",
        }
    }

    /// Whether the cells are text (left-aligned, sorted A to Z).
    pub fn is_text(self) -> bool {
        matches!(self, User | Main | Version | Container)
    }

    /// The width the full-screen view gives the column (MAIN takes what is left).
    pub fn width(self) -> usize {
        match self {
            Pid => 7,
            User => 10,
            Version => 12,
            Main => 16,
            Container => 24,
            Heap => 11,
            // Room for the sort mark after the header.
            c => (c.header().len() + 1).max(6),
        }
    }
}

/// `512K`, `12.3M`, `640M`, `1.25G`: binary units, as `top`.
pub fn size(bytes: u64) -> String {
    const K: f64 = 1024.0;
    let b = bytes as f64;
    if b < K * K {
        format!("{:.0}K", b / K)
    } else if b < 10.0 * K * K {
        format!("{:.1}M", b / K / K)
    } else if b < K * K * K {
        format!("{:.0}M", b / K / K)
    } else {
        format!("{:.2}G", b / K / K / K)
    }
}

fn num(x: Option<f64>, decimals: usize) -> String {
    x.map_or("-".into(), |x| format!("{x:.decimals$}"))
}

fn bytes(x: Option<i64>) -> String {
    x.map_or("-".into(), |b| size(b.max(0) as u64))
}

/// The cell of `column` for `jvm`, `now` on the model's clock; `-` where the JVM has no such
/// counter (as jstat prints) or could not be read.
pub fn cell(column: Column, jvm: &Tracked, now: f64) -> String {
    let f = &jvm.figures;
    let live = jvm.state == State::Live;
    match column {
        Pid => jvm.info.pid.to_string(),
        User => list::escape(&jvm.info.user),
        Main => list::main_column(&jvm.info, false),
        Version if jvm.info.jvm_version.is_empty() => "?".into(),
        Version => list::escape(&jvm.info.jvm_version),
        Container => list::container_column(&jvm.info),
        Uptime => list::uptime(jvm.uptime_s(now)),
        // The process's own figures, from /proc/<pid>/stat: an unreadable JVM has them too.
        Cpu | Rss if matches!(jvm.state, State::Gone(_)) => "-".into(),
        Cpu => num(f.cpu_percent, 1),
        Rss => f.rss_bytes.map_or("-".into(), size),
        _ if !live => "-".into(),
        Heap => match (f.heap_used_bytes, f.heap_max_bytes) {
            (Some(u), Some(m)) => format!("{}/{}", bytes(Some(u)), bytes(Some(m))),
            (u, _) => bytes(u),
        },
        HeapPct => num(f.heap_percent, 1),
        Old => num(f.old_percent, 1),
        Metaspace => bytes(f.metaspace_used_bytes),
        Gc => num(f.gc_percent, 1),
        Ygc => num(f.ygc_per_s, 1),
        Fgc => num(f.fgc_per_s, 1),
        Alloc => num(f.alloc_mib_per_s, 1),
        Safepoint => num(f.safepoint_percent, 1),
        Threads => f.threads.map_or("-".into(), |t| t.to_string()),
        Blocked => jvm.states.map_or("-".into(), |s| {
            s.in_state(hsinspect::threads::states::ThreadState::Blocked)
                .to_string()
        }),
        Waiting => jvm
            .states
            .map_or("-".into(), |s| super::waiting(&s).to_string()),
        Classes => f.classes.map_or("-".into(), |t| t.to_string()),
        Jit => num(f.jit_ms_per_s, 0),
    }
}

/// The note after a row that is not live: `(exited)`, or the reason it cannot be read and the fix.
pub fn note(jvm: &Tracked) -> Option<String> {
    jvm.state.reason().map(|r| format!("({})", list::escape(r)))
}

/// A number to sort by; `None` sorts last whatever the direction.
fn number(column: Column, jvm: &Tracked, now: f64) -> Option<f64> {
    let f = &jvm.figures;
    let live = jvm.state == State::Live;
    let i = |x: Option<i64>| x.map(|x| x as f64);
    match column {
        Pid => Some(jvm.info.pid as f64),
        Uptime => Some(jvm.uptime_s(now)),
        User | Main | Version | Container => None,
        _ if !live => None,
        Cpu => f.cpu_percent,
        Rss => f.rss_bytes.map(|b| b as f64),
        Heap => i(f.heap_used_bytes),
        HeapPct => f.heap_percent,
        Old => f.old_percent,
        Metaspace => i(f.metaspace_used_bytes),
        Gc => f.gc_percent,
        Ygc => f.ygc_per_s,
        Fgc => f.fgc_per_s,
        Alloc => f.alloc_mib_per_s,
        Safepoint => f.safepoint_percent,
        Threads => i(f.threads),
        Blocked => jvm
            .states
            .map(|s| f64::from(s.in_state(hsinspect::threads::states::ThreadState::Blocked))),
        Waiting => jvm.states.map(|s| f64::from(super::waiting(&s))),
        Classes => i(f.classes),
        Jit => f.jit_ms_per_s,
    }
}

/// How rows are ordered: by `column`, largest number first (text and PID: A to Z, lowest
/// first), the other way round with `reverse`; ties by pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    /// The column.
    pub column: Column,
    /// Reversed (`R`).
    pub reverse: bool,
}

impl Sort {
    /// Compares two rows.
    pub fn compare(&self, a: &Tracked, b: &Tracked, now: f64) -> Ordering {
        let ascending = self.column.is_text() || self.column == Pid;
        let ord = if self.column.is_text() {
            cell(self.column, a, now).cmp(&cell(self.column, b, now))
        } else {
            match (number(self.column, a, now), number(self.column, b, now)) {
                (Some(x), Some(y)) => {
                    let o = x.partial_cmp(&y).unwrap_or(Ordering::Equal);
                    if ascending { o } else { o.reverse() }
                }
                // Unknown values last, whatever the direction.
                (Some(_), None) => return Ordering::Less,
                (None, Some(_)) => return Ordering::Greater,
                (None, None) => Ordering::Equal,
            }
        };
        let ord = if self.reverse { ord.reverse() } else { ord };
        ord.then(a.info.pid.cmp(&b.info.pid))
    }
}

/// The JVMs to show, filtered (`filter`: a substring of main, user, pid or container, any case)
/// and sorted.
pub fn rows<'h>(host: &'h Host, sort: Sort, filter: &str) -> Vec<&'h Tracked> {
    let now = host.now();
    let needle = filter.to_lowercase();
    let mut rows: Vec<&Tracked> = host
        .jvms
        .values()
        .filter(|j| {
            needle.is_empty()
                || j.info.pid.to_string().contains(&needle)
                || j.info.user.to_lowercase().contains(&needle)
                || j.info.main.to_lowercase().contains(&needle)
                || j.info.comm.to_lowercase().contains(&needle)
                || list::container_column(&j.info)
                    .to_lowercase()
                    .contains(&needle)
        })
        .collect();
    rows.sort_by(|a, b| sort.compare(a, b, now));
    rows
}

/// The host's totals: JVMs (unreadable, gone), summed CPU%, RSS, GC% and allocation.
pub fn summary(host: &Host) -> String {
    let jvms = host.jvms.values();
    let live: Vec<&Tracked> = jvms.clone().filter(|j| j.state == State::Live).collect();
    let unreadable = jvms
        .clone()
        .filter(|j| matches!(j.state, State::Unreadable(_)))
        .count();
    let gone = jvms.filter(|j| matches!(j.state, State::Gone(_))).count();
    let sum = |f: fn(&Tracked) -> Option<f64>| live.iter().filter_map(|j| f(j)).sum::<f64>();
    // CPU and RSS are every process's, readable PerfData or not.
    let running: Vec<&Tracked> = host
        .jvms
        .values()
        .filter(|j| !matches!(j.state, State::Gone(_)))
        .collect();
    let mut s = format!("JVMs: {}", host.jvms.len());
    if unreadable + gone > 0 {
        s.push_str(&format!(" ({unreadable} unreadable, {gone} gone)"));
    }
    s.push_str(&format!(
        ", CPU {:.1}%, RSS {}, GC {:.1}%, ALLOC {:.1} MB/s",
        running
            .iter()
            .filter_map(|j| j.figures.cpu_percent)
            .sum::<f64>(),
        size(running.iter().filter_map(|j| j.figures.rss_bytes).sum()),
        sum(|j| j.figures.gc_percent),
        sum(|j| j.figures.alloc_mib_per_s),
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_top() {
        assert_eq!(size(512 * 1024), "512K");
        assert_eq!(size(12_900_000), "12M");
        assert_eq!(size(5 << 20), "5.0M");
        assert_eq!(size(640 << 20), "640M");
        assert_eq!(size(5 << 30), "5.00G");
    }

    #[test]
    fn every_column_once_in_each_order() {
        for c in ALL {
            assert_eq!(PRIORITY.iter().filter(|p| **p == c).count(), 1, "{c:?}");
        }
    }
}
