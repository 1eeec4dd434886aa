//! The JVMs `inspect top` shows and their samples: found by [`discover::scan`] (at start, then
//! at most every `--rescan` seconds and only when `/proc` has pids the last scan did not see with
//! as many threads as a JVM has, or a JVM could not be read), each re-read every refresh by its own [`Sampler`] (the memory without
//! a stop where ptrace is allowed, else the hsperfdata file: never a stop, never a write), with
//! CPU time and RSS from `/proc/<pid>/stat`. A JVM whose memory can be read also gets its Java
//! threads counted by state each refresh, without a stop ([`hsinspect::pipeline::StatesSampler`]:
//! BLOCKED and WAITING).
//!
//! A JVM that exits or stops being readable stays one refresh, marked with why ([`State::Gone`]),
//! then goes. A JVM the scan found but cannot read (another user's, `-XX:-UsePerfData`, ...)
//! stays listed with the reason and fix `inspect list` gives ([`State::Unreadable`]).

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::time::{Duration, Instant, SystemTime};

use hsinspect::discover::{self, JvmInfo, Readable, ScanOptions};
use hsinspect::{Error, LiveOptions, Reading, Sampler, SymbolCacheUse, Target};

use super::metrics::{Counters, Figures, Point};
use super::os;
use hsinspect::Pid;
use hsinspect::pipeline::StatesSampler;
use hsinspect::threads::states::ThreadStates;

/// How many samples each JVM's history keeps (the detail view's sparklines).
pub const HISTORY: usize = 600;

/// What is known of a JVM now.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    /// Sampled this refresh.
    Live,
    /// Found, but its PerfData cannot be read: why, and the fix (as `inspect list` says).
    Unreadable(String),
    /// Exited, or its read failed this refresh: why. Removed at the next refresh.
    Gone(String),
}

impl State {
    /// `live`, `unreadable`, `exited` or `failed`: the JSON `state`.
    pub fn name(&self) -> &'static str {
        match self {
            State::Live => "live",
            State::Unreadable(_) => "unreadable",
            State::Gone(why) if why == EXITED => "exited",
            State::Gone(_) => "failed",
        }
    }

    /// The reason, for the states that have one.
    pub fn reason(&self) -> Option<&str> {
        match self {
            State::Live => None,
            State::Unreadable(r) | State::Gone(r) => Some(r),
        }
    }
}

const EXITED: &str = "exited";

/// One point of a JVM's history.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HistoryPoint {
    /// Eden, old and whole heap used, bytes (0 where the JVM has no such space).
    pub eden_used: u64,
    /// Old space used, bytes.
    pub old_used: u64,
    /// Heap used, bytes.
    pub heap_used: u64,
    /// GC% of the interval.
    pub gc_percent: f64,
    /// Allocation, MiB/s.
    pub alloc_mib_per_s: f64,
    /// Live threads.
    pub threads: u64,
}

/// One JVM on screen.
pub struct Tracked {
    /// What the scan said of it (its reading dropped).
    pub info: JvmInfo,
    /// Live, unreadable or gone.
    pub state: State,
    sampler: Option<Sampler>,
    /// Its CPU time and RSS (Linux: `/proc/<pid>/stat` held open).
    usage: os::Usage,
    /// When the process started, on [`Host`]'s monotonic clock (seconds).
    started_at: f64,
    last: Option<Point>,
    /// The last reading (its raw bytes dropped): the detail view's jstat figures.
    pub reading: Option<Reading>,
    /// The row's figures, from the last two samples (the first: since the JVM started).
    pub figures: Figures,
    /// The last [`HISTORY`] samples.
    pub history: VecDeque<HistoryPoint>,
    /// When the last reading was taken.
    pub taken: SystemTime,
    /// Its Java threads by state as of this refresh, when its memory could be read.
    pub states: Option<ThreadStates>,
}

impl Tracked {
    fn new(info: JvmInfo, no_cache: bool, started_at: f64) -> Tracked {
        let pid = info.pid;
        let source = match info.readable {
            Readable::Neither => None,
            // The file alone: ptrace is not allowed.
            Readable::File => Some(Target::Hsperfdata {
                pid,
                wait: Duration::ZERO,
            }),
            // The memory, never stopping the JVM: one process_vm_readv a sample.
            Readable::Live | Readable::Both => Some(Target::Live {
                pid,
                opts: LiveOptions {
                    stop: false,
                    wait_accessible: Duration::ZERO,
                    symbol_cache: if no_cache {
                        SymbolCacheUse::Off
                    } else {
                        SymbolCacheUse::ReadOnly
                    },
                    ..LiveOptions::default()
                },
            }),
        };
        let state = match (&source, &info.reason) {
            (None, Some(reason)) => State::Unreadable(reason.clone()),
            (None, None) => State::Unreadable("cannot be read".into()),
            (Some(_), _) => State::Live,
        };
        Tracked {
            usage: os::Usage::open(pid),
            sampler: source.map(Sampler::new),
            info: JvmInfo {
                reading: None,
                ..info
            },
            state,
            started_at,
            last: None,
            reading: None,
            figures: Figures::default(),
            history: VecDeque::new(),
            taken: SystemTime::now(),
            states: None,
        }
    }

    /// Seconds since the process started, at `now` on the host's clock.
    pub fn uptime_s(&self, now: f64) -> f64 {
        (now - self.started_at).max(0.0)
    }

    /// Takes one sample at `at` (host clock seconds).
    fn sample(&mut self, at: f64) {
        let Some(sampler) = &mut self.sampler else {
            // Unreadable PerfData, but the process's CPU time and RSS are in its
            // `/proc/<pid>/stat`, which every user may read.
            self.sample_process_only(at);
            return;
        };
        let mut reading = match sampler.sample() {
            Ok(r) => r,
            Err(e) => {
                self.state = State::Gone(match e {
                    Error::ProcessExited(_) | Error::NoSuchProcess(_) | Error::PidReused(_) => {
                        EXITED.to_string()
                    }
                    e => e.to_string(),
                });
                return;
            }
        };
        reading.bytes = Vec::new();
        let (cpu_s, rss) = self.usage.sample();
        let point = Point {
            at,
            counters: Counters::of(&reading.snapshot),
            cpu_s,
            rss,
        };
        let from = match self.last.take() {
            Some(p) => p,
            None => Point::origin(&point, (at - self.started_at).max(0.0)),
        };
        self.figures = Figures::between(&from, &point);
        let f = &self.figures;
        let bytes = |b: Option<i64>| b.unwrap_or(0).max(0) as u64;
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(HistoryPoint {
            eden_used: bytes(point.counters.eden_used),
            old_used: bytes(point.counters.old_used),
            heap_used: bytes(point.counters.heap_used),
            gc_percent: f.gc_percent.unwrap_or(0.0),
            alloc_mib_per_s: f.alloc_mib_per_s.unwrap_or(0.0),
            threads: bytes(point.counters.threads),
        });
        self.last = Some(point);
        self.taken = SystemTime::now();
        if let Some(old) = self.reading.replace(reading) {
            sampler.recycle(old);
        }
    }
}

impl Tracked {
    /// A sample of the process alone (CPU time and RSS), for a JVM whose PerfData this user
    /// cannot read: its other figures stay `-`.
    fn sample_process_only(&mut self, at: f64) {
        let (cpu_s, rss) = self.usage.sample();
        let point = Point {
            at,
            counters: Counters::default(),
            cpu_s,
            rss,
        };
        let from = match self.last.take() {
            Some(p) => p,
            None => Point::origin(&point, (at - self.started_at).max(0.0)),
        };
        self.figures = Figures::between(&from, &point);
        self.last = Some(point);
        self.taken = SystemTime::now();
    }
}

/// Options of the model.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// Shortest time between two scans of `/proc` for new JVMs.
    pub rescan: Duration,
    /// Do not use the symbol cache.
    pub no_cache: bool,
    /// Only JVMs in these pods (`--namespace`, `--pod`).
    pub pods: hsinspect::container::PodFilter,
    /// Where the container runtimes' files are (`--host-root`).
    pub host_root: Option<std::path::PathBuf>,
    /// Count each JVM's threads by state (not with `--no-thread-states`).
    pub thread_states: bool,
}

/// Every JVM on the host, sampled.
pub struct Host {
    opts: HostOptions,
    /// The JVMs by pid.
    pub jvms: BTreeMap<i32, Tracked>,
    /// The pids of `/proc` when it was last scanned.
    seen: HashSet<Pid>,
    last_scan: Option<Instant>,
    clock: Instant,
    /// How many scans of `/proc` were made.
    pub scans: u64,
    /// The processes the last scan could not look into, by reason (as `inspect list` says).
    pub not_inspected: Vec<(String, usize)>,
    states: StatesSampler,
}

impl Host {
    /// A model with no JVM yet: the first [`Host::refresh`] scans.
    pub fn new(opts: HostOptions) -> Host {
        Host {
            opts,
            jvms: BTreeMap::new(),
            seen: HashSet::new(),
            last_scan: None,
            clock: Instant::now(),
            scans: 0,
            not_inspected: Vec::new(),
            states: StatesSampler::new(),
        }
    }

    /// Seconds on the model's monotonic clock.
    pub fn now(&self) -> f64 {
        self.clock.elapsed().as_secs_f64()
    }

    /// One refresh: drops what was marked gone, scans `/proc` when due, samples every JVM.
    ///
    /// # Errors
    /// Only when `/proc` cannot be listed.
    pub fn refresh(&mut self) -> anyhow::Result<()> {
        self.jvms.retain(|_, j| !matches!(j.state, State::Gone(_)));
        self.rescan_if_due()?;
        for jvm in self.jvms.values_mut() {
            let at = self.clock.elapsed().as_secs_f64();
            jvm.sample(at);
            // The states need the memory: not for a JVM read from its file alone.
            let by_memory = matches!(jvm.info.readable, Readable::Live | Readable::Both);
            jvm.states = if self.opts.thread_states && by_memory && jvm.state == State::Live {
                self.states.read(jvm.info.pid, jvm.info.start_ticks).ok()
            } else {
                None
            };
        }
        let jvms = &self.jvms;
        self.states.retain(|pid| jvms.contains_key(&pid));
        Ok(())
    }

    /// Scans at start, and later when `--rescan` has passed and either `/proc` holds a pid the
    /// last scan did not see or a JVM could not be read (it may be readable now).
    fn rescan_if_due(&mut self) -> anyhow::Result<()> {
        let due = self
            .last_scan
            .is_none_or(|t| t.elapsed() >= self.opts.rescan);
        if !due {
            return Ok(());
        }
        let (pids, threads) = os::pids()?;
        let unreadable = self
            .jvms
            .values()
            .any(|j| matches!(j.state, State::Unreadable(_)));
        // A new JVM has at least its VM thread, GC, compiler, signal dispatcher, finalizer and
        // reference handler threads: new processes with fewer threads (compilers, shells) are
        // no reason to scan. One still starting stays new until the next scan.
        let new = pids
            .iter()
            .filter(|p| !self.seen.contains(p))
            .any(|p| threads(*p).is_some_and(|n| n >= MIN_JVM_THREADS));
        if self.last_scan.is_some() && !new && !unreadable {
            return Ok(());
        }
        let mut scan = discover::scan(&ScanOptions {
            no_symbol_cache: self.opts.no_cache,
            host_root: self.opts.host_root.clone(),
            ..ScanOptions::default()
        })?;
        let pods = &self.opts.pods;
        scan.jvms.retain(|j| pods.selects(j.container.as_ref()));
        self.scans += 1;
        // The scan's peak is far above what top keeps between scans: give the free pages back.
        os::trim_heap();
        self.last_scan = Some(Instant::now());
        self.seen = pids;
        self.not_inspected = scan.not_inspected_by_reason();
        let now = self.now();
        // An unreadable JVM has no sampler to notice its exit: the scan does.
        let found: HashSet<Pid> = scan.jvms.iter().map(|j| j.pid).collect();
        for (pid, jvm) in &mut self.jvms {
            if matches!(jvm.state, State::Unreadable(_)) && !found.contains(pid) {
                jvm.state = State::Gone(EXITED.to_string());
            }
        }
        for info in scan.jvms {
            let keep = self
                .jvms
                .get(&info.pid)
                .is_some_and(|j| !matches!(j.state, State::Unreadable(_)));
            if !keep {
                let started_at = now - info.uptime_s;
                self.jvms
                    .insert(info.pid, Tracked::new(info, self.opts.no_cache, started_at));
            }
        }
        Ok(())
    }
}

/// The fewest threads a started JVM has (`-Xint -XX:+UseSerialGC` has about ten).
const MIN_JVM_THREADS: i64 = 6;
