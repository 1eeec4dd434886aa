//! What `inspect top` shows of one JVM, as pure functions: the PerfData counters of one sample
//! ([`Counters::of`]), a sample with the process's CPU time and the wall clock ([`Point`]), and
//! the figures of a row ([`Figures::between`]: levels of the later sample, rates over the two).
//!
//! Counter names and jstat's arithmetic (JDK 17 `jstat_options`):
//! - GC time is jstat's `GCT`: `sun.gc.collector.{0,1,2}.time` (ticks of `sun.os.hrt.frequency`),
//!   a missing collector counting 0. GC% is its growth over the wall-clock seconds between two
//!   samples, × 100.
//! - YGC/s and FGC/s: the growth of `sun.gc.collector.0.invocations` (jstat's `YGC`) and
//!   `.1.invocations` (`FGC`) per second; `-` where the collector has no such collector (ZGC's
//!   only one is its concurrent cycle, jstat's `CGC`).
//! - ALLOC: eden is `sun.gc.generation.0.space.0` (jstat's `EC`/`EU`). Between two samples with
//!   no collection, what was allocated is the growth of eden's used bytes; each young collection
//!   is taken to have come when eden was full, so with `n` of them between samples `a` and `b`
//!   it is `(EC_a − EU_a) + (n − 1) × EC + EU_b`, with `EC` the mean of the two capacities: the
//!   arithmetic a person does on two `jstat -gc` lines. Full collections count only when there
//!   was no young one (Serial and Parallel count a full collection that follows a young one in
//!   the same pause under both collectors, and eden was emptied once). A collection before
//!   eden is full (`System.gc()`) makes it an overestimate. Collectors without an eden (ZGC,
//!   Shenandoah) show `-`.
//! - HEAP used is the sum of every space of generations 0 and 1; max is the sum of the two
//!   generations' `maxCapacity`, except for G1 and generational ZGC, where each generation's
//!   maximum is the whole heap (so it is the larger of the two).
//! - OLD% is jstat's `O` (old space used / capacity), METASPACE `sun.gc.metaspace.used` (jstat's
//!   `MU`), SAFEPOINT% the growth of `sun.rt.safepointTime`, JIT ms/s of `java.ci.totalTime`
//!   (jstat `-compiler`'s `Time`), THREADS `java.threads.live`, CLASSES the classes loaded now
//!   (`java.cls.loadedClasses` + `sharedLoadedClasses` − `unloadedClasses` −
//!   `sharedUnloadedClasses`, what JMX's `ClassLoadingMXBean.getLoadedClassCount` gives).
//! - CPU% is the growth of the process's `utime + stime` (`/proc/<pid>/stat`, in clock ticks)
//!   per wall second × 100 (so up to 100 × cores, as `top`'s Irix mode).

use hsinspect::perfdata::{Snapshot, Value};
use serde::Serialize;

/// The PerfData counters `top` uses from one sample; `None` where the JVM has no such counter.
/// Times are in ticks of [`Counters::frequency`], sizes in bytes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// `sun.os.hrt.frequency`: ticks per second.
    pub frequency: Option<i64>,
    /// `sun.gc.collector.{0,1,2}.invocations`.
    pub invocations: [Option<i64>; 3],
    /// `sun.gc.collector.{0,1,2}.time`, ticks.
    pub gc_time: [Option<i64>; 3],
    /// `sun.gc.generation.0.space.0.capacity` and `.used` (eden).
    pub eden_capacity: Option<i64>,
    /// Eden's used bytes.
    pub eden_used: Option<i64>,
    /// `sun.gc.generation.1.space.0.capacity` and `.used` (old).
    pub old_capacity: Option<i64>,
    /// Old space's used bytes.
    pub old_used: Option<i64>,
    /// Sum of `sun.gc.generation.{0,1}.space.*.used`.
    pub heap_used: Option<i64>,
    /// The heap's maximum size (see the module docs).
    pub heap_max: Option<i64>,
    /// `sun.gc.metaspace.used`.
    pub metaspace_used: Option<i64>,
    /// `sun.rt.safepointTime`, ticks.
    pub safepoint_time: Option<i64>,
    /// `java.ci.totalTime`, ticks.
    pub jit_time: Option<i64>,
    /// `java.threads.live`.
    pub threads: Option<i64>,
    /// Classes loaded now (see the module docs).
    pub classes: Option<i64>,
    /// `sun.gc.lastCause` (jstat's `LGCC`).
    pub last_cause: Option<String>,
}

/// Whether a collector name or policy name says each generation's maximum is the whole heap:
/// G1 (`sun.gc.policy.name` `GarbageFirst`, collectors named `G1 ...`) and generational ZGC
/// (collectors named `ZGC ...`).
fn regional(name: &str) -> bool {
    name == "GarbageFirst" || name.starts_with("G1 ") || name.starts_with("ZGC ")
}

impl Counters {
    /// Takes `top`'s counters out of a snapshot, in one pass over its counters.
    pub fn of(snapshot: &Snapshot) -> Counters {
        let mut c = Counters::default();
        let (mut young_max, mut old_max, mut regional_heap) = (None, None, false);
        let mut cls = [None; 4];
        for counter in &snapshot.counters {
            let name = counter.name.as_str();
            let long = match &counter.value {
                Value::Long(v) => Some(*v),
                Value::String(s) => {
                    if name == "sun.gc.lastCause" {
                        c.last_cause = Some(s.clone());
                    } else if (name == "sun.gc.policy.name"
                        || (name.starts_with("sun.gc.collector.") && name.ends_with(".name")))
                        && regional(s)
                    {
                        regional_heap = true;
                    }
                    continue;
                }
                _ => continue,
            };
            let slot = match name {
                "sun.os.hrt.frequency" => &mut c.frequency,
                "sun.gc.collector.0.invocations" => &mut c.invocations[0],
                "sun.gc.collector.1.invocations" => &mut c.invocations[1],
                "sun.gc.collector.2.invocations" => &mut c.invocations[2],
                "sun.gc.collector.0.time" => &mut c.gc_time[0],
                "sun.gc.collector.1.time" => &mut c.gc_time[1],
                "sun.gc.collector.2.time" => &mut c.gc_time[2],
                "sun.gc.generation.0.space.0.capacity" => &mut c.eden_capacity,
                "sun.gc.generation.1.space.0.capacity" => &mut c.old_capacity,
                "sun.gc.generation.0.maxCapacity" => &mut young_max,
                "sun.gc.generation.1.maxCapacity" => &mut old_max,
                "sun.gc.metaspace.used" => &mut c.metaspace_used,
                "sun.rt.safepointTime" => &mut c.safepoint_time,
                "java.ci.totalTime" => &mut c.jit_time,
                "java.threads.live" => &mut c.threads,
                "java.cls.loadedClasses" => &mut cls[0],
                "java.cls.sharedLoadedClasses" => &mut cls[1],
                "java.cls.unloadedClasses" => &mut cls[2],
                "java.cls.sharedUnloadedClasses" => &mut cls[3],
                _ => {
                    // `sun.gc.generation.{0,1}.space.<n>.used`: the heap's spaces.
                    if let Some(rest) = name.strip_prefix("sun.gc.generation.")
                        && (rest.starts_with("0.space.") || rest.starts_with("1.space."))
                        && rest.ends_with(".used")
                    {
                        c.heap_used = Some(c.heap_used.unwrap_or(0) + long.unwrap_or(0));
                        match rest {
                            "0.space.0.used" => c.eden_used = long,
                            "1.space.0.used" => c.old_used = long,
                            _ => {}
                        }
                    }
                    continue;
                }
            };
            *slot = long;
        }
        c.frequency = c.frequency.filter(|f| *f > 0);
        c.heap_max = match (young_max, old_max) {
            (Some(y), Some(o)) if regional_heap => Some(y.max(o)),
            (Some(y), Some(o)) => Some(y + o),
            (y, o) => y.or(o),
        }
        .filter(|m| *m > 0);
        c.classes = cls[0]
            .map(|loaded| loaded + cls[1].unwrap_or(0) - cls[2].unwrap_or(0) - cls[3].unwrap_or(0));
        c
    }

    /// The counters of a JVM that has just started: every cumulative counter 0, eden empty with
    /// the capacity of `now` (the origin [`Figures::between`] measures a first sample from).
    pub fn origin(now: &Counters) -> Counters {
        let zero = |c: Option<i64>| c.map(|_| 0);
        Counters {
            frequency: now.frequency,
            invocations: now.invocations.map(zero),
            gc_time: now.gc_time.map(zero),
            eden_capacity: now.eden_capacity,
            eden_used: zero(now.eden_used),
            safepoint_time: zero(now.safepoint_time),
            jit_time: zero(now.jit_time),
            ..Counters::default()
        }
    }

    /// jstat's `GCT` in ticks: collectors 0, 1 and 2, a missing one counting 0.
    fn gct(&self) -> i64 {
        self.gc_time.iter().map(|t| t.unwrap_or(0)).sum()
    }
}

/// One sample of a JVM: its counters, its process's CPU time, RSS, and when it was taken.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Point {
    /// Seconds on a monotonic clock (any origin, the same for every point compared).
    pub at: f64,
    /// The PerfData counters.
    pub counters: Counters,
    /// `utime + stime` of `/proc/<pid>/stat`, in seconds.
    pub cpu_s: Option<f64>,
    /// Resident set size (`/proc/<pid>/statm`'s resident pages × page size), bytes.
    pub rss: Option<u64>,
}

impl Point {
    /// The point a JVM started from, `uptime_s` seconds before `now`: zero CPU time, counters
    /// as [`Counters::origin`]. [`Figures::between`] it and `now` gives averages since start
    /// (the first frame's rates, as `top`'s first frame shows CPU since each process started).
    pub fn origin(now: &Point, uptime_s: f64) -> Point {
        Point {
            at: now.at - uptime_s,
            counters: Counters::origin(&now.counters),
            cpu_s: now.cpu_s.map(|_| 0.0),
            rss: None,
        }
    }
}

/// The figures of one row: levels of the later sample, rates between two. `None` is jstat's `-`:
/// the JVM has no such counter (or the interval is empty). Serialized as `top --format json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figures {
    /// Process CPU time per wall second × 100.
    pub cpu_percent: Option<f64>,
    /// Resident set size, bytes.
    pub rss_bytes: Option<u64>,
    /// Heap used, bytes.
    pub heap_used_bytes: Option<i64>,
    /// Heap maximum, bytes.
    pub heap_max_bytes: Option<i64>,
    /// `heap_used / heap_max × 100`.
    pub heap_percent: Option<f64>,
    /// jstat's `O`.
    pub old_percent: Option<f64>,
    /// jstat's `MU`, in bytes.
    pub metaspace_used_bytes: Option<i64>,
    /// GC time (jstat's `GCT`) per wall second × 100.
    pub gc_percent: Option<f64>,
    /// Young collections (jstat's `YGC`) per second.
    pub ygc_per_s: Option<f64>,
    /// Full collections (jstat's `FGC`) per second.
    pub fgc_per_s: Option<f64>,
    /// Concurrent cycles (jstat's `CGC`) per second.
    pub cgc_per_s: Option<f64>,
    /// Bytes allocated per second (see the module docs), in MiB/s.
    pub alloc_mib_per_s: Option<f64>,
    /// Time at safepoints per wall second × 100.
    pub safepoint_percent: Option<f64>,
    /// Live Java threads.
    pub threads: Option<i64>,
    /// Classes loaded now.
    pub classes: Option<i64>,
    /// JIT compilation milliseconds per wall second.
    pub jit_ms_per_s: Option<f64>,
}

const MIB: f64 = 1024.0 * 1024.0;

/// `(later − earlier) / seconds`, when both are known and the interval is not empty; a counter
/// that went backwards (it cannot: a reused pid is caught before) gives `None`.
fn per_second(earlier: Option<i64>, later: Option<i64>, seconds: f64) -> Option<f64> {
    let (a, b) = (earlier?, later?);
    (seconds > 0.0 && b >= a).then(|| (b - a) as f64 / seconds)
}

/// `used / capacity × 100`, jstat's percentages.
fn percent(used: Option<i64>, capacity: Option<i64>) -> Option<f64> {
    let (u, c) = (used?, capacity?);
    (c > 0).then(|| u as f64 * 100.0 / c as f64)
}

/// Bytes allocated between two samples, from eden and the number of collections (module docs).
pub fn allocated(a: &Counters, b: &Counters) -> Option<f64> {
    let (ec_a, eu_a, ec_b, eu_b) = (
        a.eden_capacity?,
        a.eden_used?,
        b.eden_capacity?,
        b.eden_used?,
    );
    if ec_a <= 0 && ec_b <= 0 {
        return None; // a young generation without an eden (Shenandoah's placeholder)
    }
    let delta = |i: usize| b.invocations[i].unwrap_or(0) - a.invocations[i].unwrap_or(0);
    let (young, full) = (delta(0), delta(1));
    if young < 0 || full < 0 {
        return None;
    }
    // Serial and Parallel count a full collection that follows a young one in the same pause
    // under both collectors: only young collections count, unless there were none.
    let n = if young > 0 { young } else { full };
    if n == 0 {
        return Some((eu_b - eu_a).max(0) as f64);
    }
    let mean_capacity = (ec_a + ec_b) as f64 / 2.0;
    Some((ec_a - eu_a).max(0) as f64 + (n - 1) as f64 * mean_capacity + eu_b as f64)
}

impl Figures {
    /// The figures of `b`, with rates over the time from `a` to `b` (`a` may be
    /// [`Point::origin`]).
    pub fn between(a: &Point, b: &Point) -> Figures {
        let (ca, cb) = (&a.counters, &b.counters);
        let seconds = b.at - a.at;
        let ticks_percent = |ta: Option<i64>, tb: Option<i64>| {
            let f = cb.frequency? as f64;
            per_second(ta, tb, seconds).map(|t| t / f * 100.0)
        };
        let gct = |c: &Counters| c.gc_time.iter().any(Option::is_some).then(|| c.gct());
        Figures {
            cpu_percent: match (a.cpu_s, b.cpu_s) {
                (Some(x), Some(y)) if seconds > 0.0 && y >= x => Some((y - x) / seconds * 100.0),
                _ => None,
            },
            rss_bytes: b.rss,
            heap_used_bytes: cb.heap_used,
            heap_max_bytes: cb.heap_max,
            heap_percent: percent(cb.heap_used, cb.heap_max),
            old_percent: percent(cb.old_used, cb.old_capacity),
            metaspace_used_bytes: cb.metaspace_used,
            gc_percent: ticks_percent(gct(ca), gct(cb)),
            ygc_per_s: per_second(ca.invocations[0], cb.invocations[0], seconds),
            fgc_per_s: per_second(ca.invocations[1], cb.invocations[1], seconds),
            cgc_per_s: per_second(ca.invocations[2], cb.invocations[2], seconds),
            alloc_mib_per_s: allocated(ca, cb)
                .filter(|_| seconds > 0.0)
                .map(|bytes| bytes / MIB / seconds),
            safepoint_percent: ticks_percent(ca.safepoint_time, cb.safepoint_time),
            threads: cb.threads,
            classes: cb.classes,
            jit_ms_per_s: ticks_percent(ca.jit_time, cb.jit_time).map(|p| p * 10.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Serial-like JVM: eden of 10 MiB, ticks in nanoseconds.
    fn serial(ygc: i64, fgc: i64, gc_ms: [i64; 2], eden_used: i64) -> Counters {
        Counters {
            frequency: Some(1_000_000_000),
            invocations: [Some(ygc), Some(fgc), None],
            gc_time: [Some(gc_ms[0] * 1_000_000), Some(gc_ms[1] * 1_000_000), None],
            eden_capacity: Some(10 * MIB as i64),
            eden_used: Some(eden_used),
            old_capacity: Some(40 * MIB as i64),
            old_used: Some(10 * MIB as i64),
            heap_used: Some(eden_used + 10 * MIB as i64),
            heap_max: Some(64 * MIB as i64),
            metaspace_used: Some(5_000_000),
            safepoint_time: Some(0),
            jit_time: Some(0),
            threads: Some(12),
            classes: Some(700),
            last_cause: None,
        }
    }

    fn point(at: f64, cpu_s: f64, counters: Counters) -> Point {
        Point {
            at,
            counters,
            cpu_s: Some(cpu_s),
            rss: Some(100 << 20),
        }
    }

    #[test]
    fn gc_percent_is_gct_growth_over_wall_seconds() {
        // 2 s apart; 150 ms young + 50 ms full = 200 ms of GC: 10 %.
        let a = point(10.0, 1.0, serial(5, 1, [100, 20], 0));
        let b = point(12.0, 2.5, serial(8, 2, [250, 70], 0));
        let f = Figures::between(&a, &b);
        assert!((f.gc_percent.unwrap() - 10.0).abs() < 1e-9, "{f:?}");
        assert_eq!(f.ygc_per_s, Some(1.5));
        assert_eq!(f.fgc_per_s, Some(0.5));
        assert_eq!(f.cgc_per_s, None, "no collector 2: jstat's -");
        assert_eq!(f.cpu_percent, Some(75.0));
        assert_eq!(f.heap_percent, Some(100.0 * 10.0 / 64.0));
        assert_eq!(f.old_percent, Some(25.0));
        assert_eq!(f.threads, Some(12));
    }

    #[test]
    fn allocation_without_a_collection_is_eden_growth() {
        let a = serial(5, 0, [0, 0], 1 << 20);
        let b = serial(5, 0, [0, 0], 5 << 20);
        assert_eq!(allocated(&a, &b), Some((4 << 20) as f64));
        let f = Figures::between(&point(0.0, 0.0, a), &point(2.0, 0.0, b));
        assert_eq!(f.alloc_mib_per_s, Some(2.0));
    }

    #[test]
    fn allocation_across_collections_counts_a_full_eden_each() {
        // Eden 10 MiB: from 4 MiB used, 3 young collections, to 2 MiB used:
        // 6 (rest of the first eden) + 2 × 10 + 2 = 28 MiB; the full collections that came in
        // the same pauses as young ones do not count again.
        let a = serial(5, 0, [0, 0], 4 << 20);
        let b = serial(8, 2, [0, 0], 2 << 20);
        assert_eq!(allocated(&a, &b), Some((28 << 20) as f64));
        // Only full collections: each emptied eden.
        let b = serial(5, 2, [0, 0], 2 << 20);
        assert_eq!(allocated(&a, &b), Some((18 << 20) as f64));
    }

    #[test]
    fn first_frame_rates_are_averages_since_start() {
        // Up 100 s, 20 young collections of a 10 MiB eden and 3 MiB in eden now: 203 MiB.
        let now = point(500.0, 4.0, serial(20, 0, [2000, 0], 3 << 20));
        let f = Figures::between(&Point::origin(&now, 100.0), &now);
        assert!((f.alloc_mib_per_s.unwrap() - 2.03).abs() < 1e-9, "{f:?}");
        assert!((f.gc_percent.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(f.ygc_per_s, Some(0.2));
        assert_eq!(f.cpu_percent, Some(4.0));
    }

    #[test]
    fn missing_counters_are_dashes() {
        // ZGC (JDK 17): only collector 2, no eden.
        let zgc = |cycles: i64, ms: i64| Counters {
            frequency: Some(1_000_000_000),
            invocations: [None, None, Some(cycles)],
            gc_time: [None, None, Some(ms * 1_000_000)],
            ..Counters::default()
        };
        let a = point(0.0, 0.0, zgc(2, 10));
        let b = point(1.0, 0.0, zgc(4, 30));
        let f = Figures::between(&a, &b);
        assert_eq!((f.ygc_per_s, f.fgc_per_s), (None, None));
        assert_eq!(f.cgc_per_s, Some(2.0));
        assert!((f.gc_percent.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(f.alloc_mib_per_s, None);
        assert_eq!(f.heap_percent, None);
        // An empty interval has no rates.
        let f = Figures::between(&b, &b);
        assert_eq!((f.gc_percent, f.cpu_percent), (None, None));
    }

    /// On every captured region (JDK 8 to 25, every collector), OLD% is jstat's `O`, and the
    /// GC time GC% is computed from is jstat's `GCT`, as `inspect stat -gcutil` computes them.
    #[test]
    fn levels_agree_with_jstat_arithmetic() {
        use hsinspect::stat::{Cell, View};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/stat");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "hsperf") {
                continue;
            }
            let snapshot = hsinspect::read_file(&path).unwrap().snapshot;
            let mut view = View::new("gcutil", false).unwrap();
            let cells = view.cells(&snapshot, None);
            let column = |name: &str| {
                let i = view.specs().position(|c| c.title() == name).unwrap();
                match cells[i] {
                    Cell::Number(n) => n,
                    Cell::Text(_) => panic!("{name} is text"),
                }
            };
            let c = Counters::of(&snapshot);
            let f = Figures::between(&Point::default(), &point(1.0, 0.0, c.clone()));
            let jstat_o = column("O");
            match f.old_percent {
                Some(o) => assert!((o - jstat_o).abs() < 1e-9, "{path:?}: {o} vs {jstat_o}"),
                None => assert!(jstat_o.is_nan(), "{path:?}"),
            }
            let gct = c.gct() as f64 / c.frequency.unwrap() as f64;
            assert!((gct - column("GCT")).abs() < 1e-9, "{path:?}");
            seen += 1;
        }
        assert!(seen >= 12, "{seen} regions");
    }

    /// The counters of real regions (JDK 17 and 21 captures): names as HotSpot writes them.
    #[test]
    fn counters_of_captured_regions() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let read = |name: &str| {
            hsinspect::read_file(&root.join("testdata").join(name))
                .unwrap()
                .snapshot
        };
        let g1 = Counters::of(&read("stat/jdk17-g1.hsperf"));
        assert_eq!(g1.frequency, Some(1_000_000_000));
        assert_eq!(g1.invocations, [Some(9), Some(1), Some(0)]);
        assert_eq!(g1.gc_time, [Some(10918644), Some(1923300), Some(0)]);
        assert_eq!(g1.eden_capacity, Some(6291464));
        assert_eq!(g1.old_used, Some(1718456));
        // G1: each generation's maximum is the whole heap.
        assert_eq!(g1.heap_max, Some(67108888));
        assert_eq!(g1.heap_used, Some(1718456));
        assert_eq!(g1.classes, Some(53 + 671));
        assert_eq!(g1.last_cause.as_deref(), Some("System.gc()"));
        let serial = Counters::of(&read("stat/jdk17-serial.hsperf"));
        assert_eq!(serial.heap_max, Some(22347776 + 44761088));
        let zgc = Counters::of(&read("stat/jdk17-zgc.hsperf"));
        assert_eq!(zgc.invocations, [None, None, Some(18)]);
        assert_eq!((zgc.eden_capacity, zgc.heap_used), (None, Some(6291456)));
        assert_eq!(zgc.heap_max, Some(67108864));
        let shenandoah = Counters::of(&read("stat/jdk17-shenandoah.hsperf"));
        assert_eq!(shenandoah.heap_max, Some(67108864));
        assert_eq!(allocated(&shenandoah, &shenandoah), None);
    }
}
