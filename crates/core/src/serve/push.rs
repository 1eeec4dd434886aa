//! The OTLP push of `inspect serve --otlp`: each interval, one [`super::Exporter::scan_and_read`]
//! and one `ExportMetricsServiceRequest` with a `ResourceMetrics` per JVM
//! ([`crate::format::otlp::resource_metrics`], the `otel` dialect's mapping), and the push's own
//! counts ([`PushStats`]) for `/metrics`. Sending is the CLI's (HTTP, TLS, retries).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Exporter;
use crate::format::dialect::Beans;
use crate::format::otlp::{self, JvmPush, Previous, Temporality, Workload, proto};
use crate::format::prometheus::{Exposition, MetricType};
use crate::metrics::JvmMetrics;
use crate::pid::Pid;

/// What the push keeps between intervals: the settings of its resources, and each JVM's values
/// of the last push (for delta points; JVMs gone are forgotten at the next batch).
#[derive(Debug)]
pub struct PushState {
    /// Which instruments are sent as deltas.
    pub temporality: Temporality,
    /// `service.name` of every JVM (`OTEL_SERVICE_NAME`, or `service.name` of
    /// `OTEL_RESOURCE_ATTRIBUTES`); `None`: per JVM, by the rule of [`otlp::resource`].
    pub service_name: Option<String>,
    /// `OTEL_RESOURCE_ATTRIBUTES`' other attributes, added to every JVM's resource.
    pub resource_attributes: Vec<(String, String)>,
    /// This crate's version, the scopes' version.
    pub version: String,
    previous: HashMap<Pid, Previous>,
    since: u64,
}

impl PushState {
    /// A state with nothing remembered yet.
    pub fn new(
        temporality: Temporality,
        service_name: Option<String>,
        resource_attributes: Vec<(String, String)>,
        version: &str,
    ) -> PushState {
        PushState {
            temporality,
            service_name,
            resource_attributes,
            version: version.to_string(),
            previous: HashMap::new(),
            since: nanos(SystemTime::now()),
        }
    }

    /// JVMs whose last values are kept.
    pub fn remembered(&self) -> usize {
        self.previous.len()
    }
}

/// One interval's request.
#[derive(Debug)]
pub struct Batch {
    /// The request.
    pub request: proto::ExportMetricsServiceRequest,
    /// JVMs in it.
    pub jvms: usize,
    /// Data points in it.
    pub points: usize,
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Data points in a `ResourceMetrics`.
pub fn points(rm: &proto::ResourceMetrics) -> usize {
    use proto::metric::Data;
    rm.scope_metrics
        .iter()
        .flat_map(|s| &s.metrics)
        .map(|m| match &m.data {
            Some(Data::Gauge(g)) => g.data_points.len(),
            Some(Data::Sum(s)) => s.data_points.len(),
            Some(Data::Histogram(h)) => h.data_points.len(),
            None => 0,
        })
        .sum()
}

impl Exporter {
    /// One interval's batch: scan, read every selected JVM, and build its `ResourceMetrics`
    /// (the `otel` families, the resource of [`otlp::resource`]); every point's time is when the
    /// scan began. `workload` gives a JVM's
    /// container or pod where known (none yet).
    pub fn otlp_batch(
        &self,
        state: &mut PushState,
        workload: &dyn Fn(&crate::discover::JvmInfo) -> Option<Workload>,
    ) -> Batch {
        // The points' time: when the scan began, just before every read of the batch (the
        // reads take milliseconds), so any value read before it is older than the push's.
        let now = SystemTime::now();
        let round = self.scan_and_read();
        let mut request = proto::ExportMetricsServiceRequest::default();
        let mut seen = Vec::new();
        for (jvm, read) in &round.jvms {
            let Ok(reading) = read else { continue };
            let metrics = JvmMetrics::from_snapshot(&reading.snapshot);
            let usage = crate::process::usage(jvm.pid).ok();
            let start_seconds = usage
                .as_ref()
                .map(|u| u.start_time_seconds)
                .or(metrics.start_time_seconds)
                .unwrap_or(0.0);
            let w = workload(jvm);
            let resource = otlp::resource(
                &otlp::Identity {
                    pid: jvm.pid,
                    main: &jvm.main,
                    user: &jvm.user,
                    host: &self.dialects.host,
                    runtime: &metrics.runtime,
                    workload: w.as_ref(),
                },
                state.service_name.as_deref(),
                &self.dialects.applications,
                &state.resource_attributes,
            );
            let push = JvmPush {
                resource,
                beans: Beans {
                    jvm: &metrics,
                    process: usage.as_ref(),
                    now_seconds: now
                        .duration_since(UNIX_EPOCH)
                        .map_or(0.0, |d| d.as_secs_f64()),
                    states: round.states.get(&jvm.pid),
                },
                start_unix_nano: (start_seconds * 1e9) as u64,
                time_unix_nano: nanos(now),
                since: state.since,
            };
            let previous = state.previous.entry(jvm.pid).or_default();
            let rm = otlp::resource_metrics(&push, &state.version, state.temporality, previous);
            request.resource_metrics.push(rm);
        }
        // A JVM found but not read this time keeps its values: its next delta covers both
        // intervals. A JVM gone is forgotten.
        for (jvm, _) in &round.jvms {
            seen.push(jvm.pid);
        }
        state.previous.retain(|pid, _| seen.contains(pid));
        let points = request.resource_metrics.iter().map(points).sum();
        Batch {
            jvms: request.resource_metrics.len(),
            request,
            points,
        }
    }
}

/// How one interval's batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The receiver took it (2xx).
    Sent,
    /// The receiver refused it for good (a status not to retry), or it could not be sent.
    Failed,
    /// Not sent within its time (the timeout, bounded by the interval): dropped.
    Dropped,
}

/// The push's counts since start, written on `/metrics` as `hsinspect_otlp_*`.
#[derive(Debug, Default)]
pub struct PushStats {
    sent: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    requests: AtomicU64,
    points: AtomicU64,
    rejected: AtomicU64,
    last: Mutex<Option<(Duration, u64)>>,
    total_nanos: AtomicU64,
}

impl PushStats {
    /// Records one batch: its outcome, the HTTP requests it took, its points (counted when sent),
    /// the points the receiver rejected (a partial success) and how long it took.
    pub fn record(
        &self,
        outcome: Outcome,
        requests: u64,
        points: u64,
        rejected: u64,
        took: Duration,
    ) {
        let counter = match outcome {
            Outcome::Sent => &self.sent,
            Outcome::Failed => &self.failed,
            Outcome::Dropped => &self.dropped,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.requests.fetch_add(requests, Ordering::Relaxed);
        if outcome == Outcome::Sent {
            self.points.fetch_add(points, Ordering::Relaxed);
        }
        self.rejected.fetch_add(rejected, Ordering::Relaxed);
        self.total_nanos.fetch_add(
            u64::try_from(took.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some((took, points));
    }

    /// Batches by outcome: (sent, failed, dropped).
    pub fn batches(&self) -> (u64, u64, u64) {
        (
            self.sent.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
            self.dropped.load(Ordering::Relaxed),
        )
    }

    /// Writes the counts on a page.
    pub fn write(&self, page: &mut Exposition) {
        let (sent, failed, dropped) = self.batches();
        for (result, n) in [("sent", sent), ("failed", failed), ("dropped", dropped)] {
            page.add_sample(
                "hsinspect_otlp_batches_total",
                MetricType::Counter,
                "OTLP export batches (one per interval), by result: sent, failed (refused for good), dropped (not sent within the timeout)",
                &[("result", result)],
                n as f64,
            );
        }
        page.add_sample(
            "hsinspect_otlp_requests_total",
            MetricType::Counter,
            "OTLP HTTP requests made, retries included",
            &[],
            self.requests.load(Ordering::Relaxed) as f64,
        );
        page.add_sample(
            "hsinspect_otlp_points_sent_total",
            MetricType::Counter,
            "Data points in the batches the receiver took",
            &[],
            self.points.load(Ordering::Relaxed) as f64,
        );
        page.add_sample(
            "hsinspect_otlp_points_rejected_total",
            MetricType::Counter,
            "Data points the receiver said it rejected (partial success)",
            &[],
            self.rejected.load(Ordering::Relaxed) as f64,
        );
        page.add_sample(
            "hsinspect_otlp_export_seconds_total",
            MetricType::Counter,
            "Time spent building and sending OTLP batches",
            &[],
            self.total_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        );
        if let Some((took, _)) = *self.last.lock().unwrap_or_else(|e| e.into_inner()) {
            page.add_sample(
                "hsinspect_otlp_last_export_duration_seconds",
                MetricType::Gauge,
                "How long the last OTLP batch took to build and send",
                &[],
                took.as_secs_f64(),
            );
        }
    }
}
