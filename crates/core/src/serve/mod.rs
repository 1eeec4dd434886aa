//! `inspect serve`: a Prometheus exporter for every HotSpot JVM on the host, with no agent in the
//! JVMs.
//!
//! Each scrape of `/metrics` runs [`Exporter::scrape`]: the [`crate::discover::scan`] of `/proc`
//! (the `inspect list` scan), then a read of each selected JVM's PerfData: its hsperfdata file
//! where readable, else its memory **without stopping it** ([`crate::pipeline::LiveOptions`] with
//! `stop: false`; serve never stops a JVM's threads). The counters go through the naming rule of
//! [`crate::format::prometheus`], each series labelled `pid`, `main` (main class or jar, never
//! its arguments), `user`, `jvm_version`, for a JVM in another pid namespace `container_pid`,
//! and for a JVM in a container its [`crate::container`] labels (`namespace`, `pod`,
//! `container`, `container_id`, `pod_uid`). A JVM that exits or cannot be read is counted in
//! `hsinspect_jvm_read_failures_total{cause}` and left out; it never fails the page.
//!
//! Scrapes that arrive while one is running wait for it and share its page (one scan at a
//! time, however many clients). The HTTP side (`GET /metrics`, `GET /`) is the CLI's.
//!
//! The OTLP push ([`push`]) starts from the same [`Exporter::scan_and_read`] and writes the
//! `otel` dialect's families as OTLP messages; its counts are on the page.
//!
//! With [`Exporter::with_thread_states`] (`--thread-states`), each JVM read also gets its Java
//! threads counted by state, without a stop ([`crate::pipeline::StatesSampler`]: the VM model
//! is read once per JVM, and only the offsets the counts need are kept); the dialects write them as their thread-state families, the
//! `hotspot` dialect as `hotspot_threads_state{state,daemon}`. A JVM whose states cannot be
//! read is still exported, without them, and counted in
//! `hsinspect_thread_states_failures_total{cause}`.

pub mod push;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::container::PodFilter;
use crate::discover::{self, JvmInfo, Readable, ScanOptions};
use crate::error::Error;
use crate::format::dialect::{self, ApplicationRule, Dialect, Names};
use crate::format::prometheus::{Exposition, MetricType};
use crate::pid::Pid;
use crate::pipeline::{Reading, StatesSampler};
use crate::threads::states::{ThreadState, ThreadStates};

/// Which JVMs to export; empty lists select all.
#[derive(Debug, Default, Clone)]
pub struct Selection {
    /// Only these host pids (`--pid`).
    pub pids: Vec<Pid>,
    /// Only JVMs of these users, by name or uid (`--user`).
    pub users: Vec<String>,
    /// Only JVMs whose main class or jar path matches this glob (`--match`; `*` crosses `/`).
    pub main: Option<globset::GlobMatcher>,
    /// Only JVMs in these namespaces and pods (`--namespace`, `--pod`).
    pub pods: PodFilter,
}

impl Selection {
    /// Whether `jvm` is exported.
    pub fn selects(&self, jvm: &JvmInfo) -> bool {
        (self.pids.is_empty() || self.pids.contains(&jvm.pid))
            && (self.users.is_empty()
                || self
                    .users
                    .iter()
                    .any(|u| *u == jvm.user || jvm.uid.is_some_and(|uid| *u == uid.to_string())))
            && self.main.as_ref().is_none_or(|g| g.is_match(&jvm.main))
            && self.pods.selects(jvm.container.as_ref())
    }
}

/// Why a JVM found by the scan was not exported in a scrape (the `cause` label of
/// `hsinspect_jvm_read_failures_total`).
pub(crate) const CAUSES: &[&str] = &[
    "exited",
    "permission_denied",
    "perf_data_disabled",
    "starting",
    "malformed",
    "no_file",
    "other",
];

/// The `cause` label of a failed read.
pub fn cause(e: &Error) -> &'static str {
    match e {
        Error::NoSuchProcess(_) | Error::ProcessExited(_) | Error::PidReused(_) => "exited",
        Error::PermissionDenied { .. } | Error::Ptrace { .. } | Error::AlreadyTraced { .. } => {
            "permission_denied"
        }
        Error::PerfDataDisabled(_) => "perf_data_disabled",
        Error::NotAccessible { .. } | Error::HsperfdataFileNotSized { .. } => "starting",
        Error::PerfData(_) => "malformed",
        Error::NoHsperfdataFile { .. } | Error::HsperfdataFile { .. } => "no_file",
        _ => "other",
    }
}

/// One JVM as the `/` page lists it.
#[derive(Debug, Clone)]
pub struct Listed {
    /// What the scan said.
    pub info: JvmInfo,
    /// `None` when exported; else the failure's cause.
    pub failed: Option<&'static str>,
}

/// The result of one scrape, shared by every request that waited for it.
#[derive(Debug)]
pub struct Scrape {
    /// The exposition page (text format 0.0.4).
    pub page: Arc<str>,
    /// The selected JVMs, by pid.
    pub jvms: Vec<Listed>,
    /// How long the scan and reads took.
    pub duration: Duration,
}

#[derive(Default)]
struct Coalesce {
    running: bool,
    generation: u64,
    last: Option<Arc<Scrape>>,
}

/// The exporter: the selection, the cumulative failure counts, and the scrape in progress.
pub struct Exporter {
    selection: Selection,
    state: Mutex<Coalesce>,
    done: Condvar,
    failures: Mutex<BTreeMap<&'static str, u64>>,
    scans: Mutex<u64>,
    symbol_cache: bool,
    dialects: Dialects,
    host_root: Option<std::path::PathBuf>,
    push: Option<Arc<push::PushStats>>,
    states: Option<Mutex<StatesSampler>>,
    state_failures: Mutex<BTreeMap<&'static str, u64>>,
}

/// What one [`Exporter::scan_and_read`] found.
#[derive(Debug)]
pub struct Round {
    /// The selected JVMs, each with its reading or the cause of its failure.
    pub jvms: Vec<(JvmInfo, Result<Reading, &'static str>)>,
    /// Whether `/proc` (the process list) could be scanned.
    pub scan_up: bool,
    /// Processes that could not be looked at.
    pub not_inspected: usize,
    /// With `--thread-states`: each JVM's threads by state, for those read (by pid).
    pub states: BTreeMap<Pid, ThreadStates>,
    /// How long the thread states took, all JVMs together.
    pub states_time: Duration,
}

/// The metric dialects a page carries and the labels they need (`--names`, `--application`).
#[derive(Debug, Clone, Default)]
pub struct Dialects {
    /// The dialects (default `hotspot`).
    pub names: Names,
    /// `--application` rules, first match wins.
    pub applications: Vec<ApplicationRule>,
    /// This host's name, for the `instance` label of the dialects other than `hotspot`.
    pub host: String,
}

impl Exporter {
    /// An exporter of the JVMs `selection` picks; `symbol_cache` as `--no-cache` says.
    pub fn new(selection: Selection, symbol_cache: bool) -> Self {
        Exporter {
            selection,
            state: Mutex::new(Coalesce::default()),
            done: Condvar::new(),
            failures: Mutex::new(CAUSES.iter().map(|c| (*c, 0)).collect()),
            scans: Mutex::new(0),
            symbol_cache,
            dialects: Dialects::default(),
            host_root: None,
            push: None,
            states: None,
            state_failures: Mutex::new(CAUSES.iter().map(|c| (*c, 0)).collect()),
        }
    }

    /// The same exporter reading each JVM's thread states too (`--thread-states`).
    pub fn with_thread_states(mut self, on: bool) -> Self {
        self.states = on.then(|| Mutex::new(StatesSampler::new()));
        self
    }

    /// The same exporter reading the container runtimes' files under `root` (the host's root
    /// file system as mounted here: [`ScanOptions::host_root`]).
    pub fn with_host_root(mut self, root: Option<std::path::PathBuf>) -> Self {
        self.host_root = root;
        self
    }

    /// The same exporter writing these dialects.
    pub fn with_dialects(mut self, dialects: Dialects) -> Self {
        self.dialects = dialects;
        self
    }

    /// A scrape: runs one, or when one is already running, waits for it and returns its result.
    pub fn scrape(&self) -> Arc<Scrape> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.running {
            let waiting_for = state.generation;
            while state.generation == waiting_for {
                state = self.done.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            if let Some(last) = &state.last {
                return Arc::clone(last);
            }
        }
        state.running = true;
        drop(state);
        // A panic in the scan must not leave waiters waiting forever.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.collect()));
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.running = false;
        state.generation += 1;
        let scrape = match result {
            Ok(s) => Arc::new(s),
            Err(_) => Arc::new(Scrape {
                page: Arc::from(""),
                jvms: Vec::new(),
                duration: Duration::ZERO,
            }),
        };
        state.last = Some(Arc::clone(&scrape));
        self.done.notify_all();
        drop(state);
        release_free_memory();
        scrape
    }

    /// One JVM's reading: the scan's own (the file first, else memory without a stop); when the
    /// scan could read neither, one more try the same way, whose error gives the failure's cause.
    fn read(&self, jvm: &mut JvmInfo) -> Result<Reading, Error> {
        if let Some(reading) = jvm.reading.take() {
            return Ok(reading);
        }
        let file = || crate::pipeline::read_hsperfdata(jvm.pid, Duration::ZERO);
        let memory =
            || crate::pipeline::read_live(jvm.pid, &discover::no_stop_options(!self.symbol_cache));
        match jvm.readable {
            Readable::File => file(),
            Readable::Both => file().or_else(|_| memory()),
            Readable::Live | Readable::Neither => memory(),
        }
    }

    /// One scan and a read of every selected JVM: each with its reading or the failure's
    /// cause (counted in `hsinspect_jvm_read_failures_total`), whether `/proc` could be scanned,
    /// and how many processes could not be looked at. What a scrape and a push both start from.
    pub fn scan_and_read(&self) -> Round {
        let scan = discover::scan(&ScanOptions {
            no_symbol_cache: !self.symbol_cache,
            keep_readings: true,
            host_root: self.host_root.clone(),
            ..ScanOptions::default()
        });
        *self.scans.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        let mut round = Round {
            jvms: Vec::new(),
            scan_up: scan.is_ok(),
            not_inspected: 0,
            states: BTreeMap::new(),
            states_time: Duration::ZERO,
        };
        if let Ok(scan) = scan {
            round.not_inspected = scan.not_inspected.len();
            for mut jvm in scan.jvms {
                if !self.selection.selects(&jvm) {
                    continue;
                }
                let read = self.read(&mut jvm).map_err(|e| cause(&e));
                round.jvms.push((jvm, read));
            }
        }
        let mut f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        for (_, r) in &round.jvms {
            if let Err(c) = r {
                *f.entry(c).or_default() += 1;
            }
        }
        drop(f);
        if let Some(sampler) = &self.states {
            let began = Instant::now();
            let mut sampler = sampler.lock().unwrap_or_else(|e| e.into_inner());
            let mut failures = self
                .state_failures
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            for (jvm, read) in &round.jvms {
                if read.is_err() {
                    continue;
                }
                match sampler.read(jvm.pid, jvm.start_ticks) {
                    Ok(states) => {
                        round.states.insert(jvm.pid, states);
                    }
                    Err(e) => *failures.entry(cause(&e)).or_default() += 1,
                }
            }
            sampler.retain(|pid| round.jvms.iter().any(|(j, _)| j.pid == pid));
            round.states_time = began.elapsed();
        }
        round
    }

    /// The dialects' settings (`--application` rules, host name).
    pub fn dialects(&self) -> &Dialects {
        &self.dialects
    }

    /// Counts of the OTLP push, written on every page from now on.
    pub fn with_push_stats(mut self, stats: Arc<push::PushStats>) -> Self {
        self.push = Some(stats);
        self
    }

    fn collect(&self) -> Scrape {
        let began = Instant::now();
        let round = self.scan_and_read();
        let mut page = Exposition::new();
        let mut jvms = Vec::new();
        let scan_up = round.scan_up;
        let not_inspected = round.not_inspected;
        for (jvm, read) in round.jvms {
            let failed = match read {
                Ok(reading) => {
                    let states = round.states.get(&jvm.pid);
                    add_jvm(&mut page, &jvm, &reading, states, &self.dialects);
                    None
                }
                Err(c) => Some(c),
            };
            jvms.push(Listed { info: jvm, failed });
        }
        let found = jvms.len();
        let duration = began.elapsed();
        let failures = self
            .failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let scans = *self.scans.lock().unwrap_or_else(|e| e.into_inner());
        page.add_sample(
            "hsinspect_scrape_duration_seconds",
            MetricType::Gauge,
            "Time this page took: the /proc scan and every JVM's read",
            &[],
            duration.as_secs_f64(),
        );
        page.add_sample(
            "hsinspect_jvms",
            MetricType::Gauge,
            "HotSpot JVMs found by this scrape's scan (of those --pid/--user/--match select)",
            &[],
            found as f64,
        );
        page.add_sample(
            "hsinspect_processes_not_inspected",
            MetricType::Gauge,
            "Processes whose /proc/<pid>/maps could not be read, so they may be JVMs not exported",
            &[],
            not_inspected as f64,
        );
        page.add_sample(
            "hsinspect_scan_up",
            MetricType::Gauge,
            "1 when /proc could be scanned, 0 when not",
            &[],
            if scan_up { 1.0 } else { 0.0 },
        );
        page.add_sample(
            "hsinspect_scans_total",
            MetricType::Counter,
            "Scans run (concurrent scrapes share one)",
            &[],
            scans as f64,
        );
        for (c, n) in &failures {
            page.add_sample(
                "hsinspect_jvm_read_failures_total",
                MetricType::Counter,
                "JVMs found but not exported, by cause (exited meanwhile, permission denied, ...)",
                &[("cause", c)],
                *n as f64,
            );
        }
        if self.states.is_some() {
            page.add_sample(
                "hsinspect_thread_states_seconds",
                MetricType::Gauge,
                "Time this page's thread-state reads took, every JVM together (--thread-states)",
                &[],
                round.states_time.as_secs_f64(),
            );
            let failures = self
                .state_failures
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            for (c, n) in &failures {
                page.add_sample(
                    "hsinspect_thread_states_failures_total",
                    MetricType::Counter,
                    "JVMs exported without their thread states, by cause (--thread-states)",
                    &[("cause", c)],
                    *n as f64,
                );
            }
        }
        if let Some(push) = &self.push {
            push.write(&mut page);
        }
        let mut text = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = page.write(&mut text);
        Scrape {
            page: Arc::from(String::from_utf8(text).unwrap_or_default()),
            jvms,
            duration,
        }
    }
}

/// Gives the heap's free pages back to the kernel after a scrape or a push (glibc keeps them
/// otherwise): the scan of a host with many JVMs peaks far above what serve keeps between
/// scrapes, and RSS should show what serve holds, not its busiest scrape so far. About 0.1 ms.
pub fn release_free_memory() {
    crate::sys::release_free_memory();
}

/// The labels every series of a JVM carries: `pid`, `main`, `user`, `jvm_version`, in another pid
/// namespace `container_pid`, and in a container its labels
/// ([`crate::container::ContainerIdentity::labels`]: `namespace`, `pod`, `container`,
/// `container_id`, `pod_uid`).
pub fn jvm_labels(jvm: &JvmInfo) -> Vec<(&'static str, String)> {
    let mut labels = vec![
        ("pid", jvm.pid.to_string()),
        ("main", jvm.main.clone()),
        ("user", jvm.user.clone()),
        ("jvm_version", jvm.jvm_version.clone()),
    ];
    if let Some(inner) = jvm.container_pid {
        labels.push(("container_pid", inner.to_string()));
    }
    if let Some(c) = &jvm.container {
        labels.extend(c.labels());
    }
    labels
}

fn add_jvm(
    page: &mut Exposition,
    jvm: &JvmInfo,
    reading: &Reading,
    states: Option<&ThreadStates>,
    dialects: &Dialects,
) {
    if dialects.names.has(Dialect::Hotspot) {
        let labels = jvm_labels(jvm);
        let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        page.add_snapshot(&reading.snapshot, &labels);
        if let Some(s) = states {
            for state in ThreadState::ALL {
                for (daemon, word) in [(false, "false"), (true, "true")] {
                    page.add_dialect_sample(
                        "hotspot_threads_state",
                        MetricType::Gauge,
                        "Java threads by java.lang.Thread.State and daemon status, as jcmd Thread.print lists them (read without a stop)",
                        "",
                        &labels,
                        &[("state", state.name()), ("daemon", word)],
                        f64::from(s.count(state, daemon)),
                    );
                }
            }
        }
    }
    if dialects.names.needs_jvm_metrics() {
        dialect::add_reading(
            page,
            &dialects.names,
            &dialects.applications,
            &reading.snapshot,
            &jvm.main,
            Some((&dialects.host, jvm.pid)),
            jvm.container.as_ref(),
            std::time::SystemTime::now(),
            states,
        );
    }
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The `/` page: the JVMs of the last scrape and the link to `/metrics`.
pub fn index_page(scrape: &Scrape) -> String {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hsinspect serve</title></head>\n<body>\n<h1>hsinspect serve</h1>\n<p><a href=\"/metrics\">/metrics</a>: PerfData counters of the JVMs below, in the Prometheus text format.</p>\n<table>\n<tr><th>pid</th><th>container pid</th><th>container</th><th>user</th><th>main</th><th>JVM version</th><th>exported</th></tr>\n",
    );
    for j in &scrape.jvms {
        let i = &j.info;
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i.pid,
            i.container_pid.map(|p| p.to_string()).unwrap_or_default(),
            html_escape(&i.container.as_ref().map(|c| c.short()).unwrap_or_default()),
            html_escape(&i.user),
            html_escape(&i.main),
            html_escape(&i.jvm_version),
            j.failed.map_or("yes".to_string(), |c| format!("no ({c})"))
        );
    }
    let _ = write!(
        html,
        "</table>\n<p>{} JVMs; scrape took {:.1} ms.</p>\n</body></html>\n",
        scrape.jvms.len(),
        scrape.duration.as_secs_f64() * 1e3
    );
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            html_escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
