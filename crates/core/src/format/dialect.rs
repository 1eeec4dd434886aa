//! Metric dialects: the names, labels, units and types that existing JVM dashboards and alerts
//! query, for the values PerfData (and the OS, for `process_*`) can give
//! (`inspect serve --names`, `--format prometheus --names`).
//!
//! | dialect | what defines it |
//! |---|---|
//! | `hotspot` | this crate's naming rule of every PerfData counter ([`super::prometheus`]) |
//! | `micrometer` | Micrometer's JVM and system binders through `micrometer-registry-prometheus` (Spring Boot; Grafana dashboard 4701) |
//! | `client_java` | Prometheus client_java 1.x, `prometheus-metrics-instrumentation-jvm` (also what jmx_exporter's agent registers) |
//! | `client_java_0` | client_java 0.x, `simpleclient_hotspot` (0.12 and later names) |
//! | `otel` | OpenTelemetry's JVM semantic conventions (`model/jvm/metrics.yaml`, stable metrics) in the OTLP-to-Prometheus form |
//!
//! The table `FAMILIES` is the one place the names live, each row with the file that defines it.
//! Text format 0.0.4 names counters' families with `_total`, as the client libraries write them.
//!
//! # What is left out
//! Values PerfData does not hold are never faked: thread states and deadlocks, buffer pools,
//! code cache pools (so no non-heap total: it would be short by them), usage after the last GC,
//! allocation and promotion totals, per-event GC durations (so no `_max` and no histogram buckets
//! but `+Inf`), GC causes (Micrometer's `cause` label is absent), pending finalization, the JIT
//! compiler's name (Micrometer's `compiler` label is absent), pool init sizes. Collectors without
//! a bean twin (Shenandoah's, see [`crate::metrics`]) are absent.

use std::fmt;

use super::prometheus::{Exposition, MetricType};
use crate::container::ContainerIdentity;
use crate::metrics::{Area, JvmMetrics};
use crate::pid::Pid;
use crate::process::ProcessUsage;
use crate::threads::states::{ThreadState, ThreadStates};

/// One naming scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dialect {
    /// Every PerfData counter by this crate's rule (`hotspot_sun_gc_collector_time_seconds_total`).
    Hotspot,
    /// Micrometer (`jvm_memory_used_bytes{area,id}`, `jvm_gc_pause_seconds{action,gc}`).
    Micrometer,
    /// client_java 1.x (`jvm_memory_used_bytes{area}`, `jvm_memory_pool_used_bytes{pool}`).
    ClientJava,
    /// client_java 0.x (`jvm_memory_bytes_used{area}`, `jvm_memory_pool_bytes_used{pool}`).
    ClientJava0,
    /// OpenTelemetry (`jvm_memory_used_bytes{jvm_memory_type,jvm_memory_pool_name}`).
    Otel,
}

impl Dialect {
    /// Every dialect, in the order `--help` lists them.
    pub const ALL: [Dialect; 5] = [
        Dialect::Hotspot,
        Dialect::Micrometer,
        Dialect::ClientJava,
        Dialect::ClientJava0,
        Dialect::Otel,
    ];

    /// The name `--names` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Hotspot => "hotspot",
            Dialect::Micrometer => "micrometer",
            Dialect::ClientJava => "client_java",
            Dialect::ClientJava0 => "client_java_0",
            Dialect::Otel => "otel",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a family's samples hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Each pool's used bytes.
    PoolUsed,
    /// Each pool's committed bytes.
    PoolCommitted,
    /// Each pool's max bytes, -1 where JMX has none.
    PoolMax,
    /// Each pool's max bytes, only where defined (OpenTelemetry's `jvm.memory.limit`).
    PoolLimit,
    /// The heap's used bytes (`area="heap"` only: see the module's "left out").
    HeapUsed,
    /// The heap's committed bytes.
    HeapCommitted,
    /// The heap's max bytes (-1 when undefined).
    HeapMax,
    /// Each collector's count and seconds (a summary or histogram).
    Collections,
    /// Micrometer's pauses: the collectors that are not concurrent phases.
    Pauses,
    /// Micrometer's concurrent phases.
    ConcurrentPhases,
    /// Live threads.
    ThreadsLive,
    /// Daemon threads.
    ThreadsDaemon,
    /// Peak live threads.
    ThreadsPeak,
    /// Threads started since the JVM started.
    ThreadsStarted,
    /// Live threads by daemon-ness (OpenTelemetry's `jvm.thread.count`), from PerfData: only
    /// when the thread states were not read.
    ThreadsByDaemon,
    /// Java threads by `java.lang.Thread.State` (`serve --thread-states`: a no-stop read of
    /// the thread list, [`crate::threads::states`]); client_java adds `UNKNOWN` for threads that
    /// could not be read.
    ThreadStates,
    /// Java threads by daemon-ness and state (OpenTelemetry's `jvm.thread.count` when the
    /// states were read).
    ThreadsByDaemonAndState,
    /// Classes loaded now.
    ClassesLoaded,
    /// Classes loaded since the JVM started.
    ClassesTotalLoaded,
    /// Classes unloaded since the JVM started.
    ClassesUnloaded,
    /// JIT compilation time, seconds.
    JitSeconds,
    /// JIT compilation time, milliseconds (Micrometer keeps the MXBean's unit).
    JitMillis,
    /// The runtime's identity as labels, value 1.
    RuntimeInfo,
    /// Process CPU time, seconds.
    CpuSeconds,
    /// Process CPU time, nanoseconds (Micrometer's `process.cpu.time`).
    CpuNanos,
    /// JVM start, seconds since the epoch.
    StartTime,
    /// Seconds since the JVM started.
    Uptime,
    /// Open file descriptors.
    OpenFds,
    /// The limit on open file descriptors.
    MaxFds,
    /// Virtual memory bytes.
    VirtualBytes,
    /// Resident memory bytes.
    ResidentBytes,
    /// Threads of the process, as the OS counts them.
    OsThreads,
    /// Safepoints reached since the JVM started.
    Safepoints,
    /// Seconds at safepoints.
    SafepointSeconds,
    /// Seconds reaching safepoints.
    SafepointSyncSeconds,
    /// Seconds spent loading classes.
    ClassLoadSeconds,
}

/// The labels a family's samples carry (besides the JVM's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Labels {
    /// None.
    None,
    /// client_java's `area` (`heap`).
    Area,
    /// client_java's `pool` (the bean name).
    Pool,
    /// Micrometer's `area` (`heap`/`nonheap`) and `id` (the bean name).
    AreaId,
    /// OpenTelemetry's `jvm_memory_pool_name` and `jvm_memory_type` (`heap`/`non_heap`).
    OtelPool,
    /// client_java's `gc` (the bean name).
    Gc,
    /// Micrometer's `action` and `gc` (its `cause` is unknown to PerfData: absent).
    ActionGc,
    /// OpenTelemetry's `jvm_gc_action` and `jvm_gc_name`.
    OtelGc,
    /// OpenTelemetry's `jvm_thread_daemon` (`true`/`false`).
    OtelDaemon,
    /// `state`: Micrometer's words (`timed-waiting`), client_java's `Thread.State` names
    /// (`TIMED_WAITING`).
    State,
    /// OpenTelemetry's `jvm_thread_daemon` and `jvm_thread_state` (`timed_waiting`).
    OtelDaemonState,
    /// `runtime`, `vendor`, `version` (`java.runtime.name`, `java.vm.vendor`, `java.runtime.version`).
    Runtime,
}

impl Labels {
    /// The label names on the Prometheus page, in the order [`points`] gives their values.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Labels::None => &[],
            Labels::Area => &["area"],
            Labels::Pool => &["pool"],
            Labels::AreaId => &["area", "id"],
            Labels::OtelPool => &["jvm_memory_pool_name", "jvm_memory_type"],
            Labels::Gc => &["gc"],
            Labels::ActionGc => &["action", "gc"],
            Labels::OtelGc => &["jvm_gc_action", "jvm_gc_name"],
            Labels::OtelDaemon => &["jvm_thread_daemon"],
            Labels::State => &["state"],
            Labels::OtelDaemonState => &["jvm_thread_daemon", "jvm_thread_state"],
            Labels::Runtime => &["runtime", "vendor", "version"],
        }
    }

    /// The same labels as OpenTelemetry attribute keys (dotted; the page's names are these with
    /// `.` made `_`, the OTLP-to-Prometheus rule).
    pub fn attribute_names(self) -> &'static [&'static str] {
        match self {
            Labels::OtelPool => &["jvm.memory.pool.name", "jvm.memory.type"],
            Labels::OtelGc => &["jvm.gc.action", "jvm.gc.name"],
            Labels::OtelDaemon => &["jvm.thread.daemon"],
            Labels::OtelDaemonState => &["jvm.thread.daemon", "jvm.thread.state"],
            other => other.names(),
        }
    }
}

/// An OpenTelemetry instrument kind, which decides the OTLP message a family is sent as
/// (opentelemetry-specification `specification/metrics/data-model.md`, "Point kinds").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instrument {
    /// A monotonic sum (`Sum`, `is_monotonic` true).
    Counter,
    /// A sum that may go down (`Sum`, `is_monotonic` false).
    UpDownCounter,
    /// A `Gauge`.
    Gauge,
    /// A `Histogram` (explicit buckets).
    Histogram,
}

/// The instrumentation scope an OpenTelemetry metric is sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// `hsinspect`: the semantic conventions' `jvm.*` and `process.*` metrics.
    Conventions,
    /// `hsinspect.hotspot`: HotSpot counters no JMX bean and no convention has (safepoints,
    /// class-loading time, JIT time).
    Hotspot,
}

impl Scope {
    /// The scope's name in OTLP (`InstrumentationScope.name`).
    pub fn name(self) -> &'static str {
        match self {
            Scope::Conventions => "hsinspect",
            Scope::Hotspot => "hsinspect.hotspot",
        }
    }
}

/// How OpenTelemetry names a family of the `otel` dialect: the OTLP push sends it under these,
/// and the page's name is their OTLP-to-Prometheus form (checked by a test).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OtelMetric {
    /// The metric's name (`jvm.memory.used`).
    pub name: &'static str,
    /// Its UCUM unit (`By`, `s`, `{thread}`).
    pub unit: &'static str,
    /// Its instrument kind.
    pub instrument: Instrument,
    /// Its scope.
    pub scope: Scope,
}

/// One family of one dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// The dialect.
    pub dialect: Dialect,
    /// The family's name on the page (its `# TYPE` line).
    pub name: &'static str,
    /// Its type.
    pub metric_type: MetricType,
    /// What its samples hold.
    pub quantity: Quantity,
    /// Its labels.
    pub labels: Labels,
    /// Where the dialect defines it (repository and file).
    pub source: &'static str,
    /// For the `otel` dialect: its OpenTelemetry name, unit, instrument and scope.
    pub otel: Option<OtelMetric>,
}

const CJ1: &str = "prometheus/client_java prometheus-metrics-instrumentation-jvm/src/main/java/io/prometheus/metrics/instrumentation/jvm/";
const CJ0: &str =
    "prometheus/client_java simpleclient_hotspot/src/main/java/io/prometheus/client/hotspot/";
const MM: &str = "micrometer-metrics/micrometer micrometer-core/src/main/java/io/micrometer/core/instrument/binder/";
const OTEL: &str = "open-telemetry/semantic-conventions model/jvm/metrics.yaml (stable), in the OTLP-to-Prometheus form (opentelemetry-specification compatibility/prometheus_and_openmetrics.md)";

const OTEL_PROCESS: &str = "open-telemetry/semantic-conventions model/process/metrics.yaml (development), in the OTLP-to-Prometheus form";
const HOTSPOT: &str = "hsinspect's own names (scope hsinspect.hotspot) for HotSpot's PerfData counters sun.rt.safepoints, sun.rt.safepointTime, sun.rt.safepointSyncTime, sun.cls.time, java.ci.totalTime";

macro_rules! row {
    ($d:ident, $name:literal, $t:ident, $q:ident, $l:ident, $src:expr) => {
        Family {
            dialect: Dialect::$d,
            name: $name,
            metric_type: MetricType::$t,
            quantity: Quantity::$q,
            labels: Labels::$l,
            source: $src,
            otel: None,
        }
    };
}

/// A row of the `otel` dialect: its OpenTelemetry name, unit, instrument and scope, then the
/// page's name (the OTLP-to-Prometheus form of the first three), type, quantity and labels.
macro_rules! otel {
    ($otel:literal, $unit:literal, $inst:ident, $scope:ident; $name:literal, $t:ident, $q:ident, $l:ident, $src:expr) => {
        Family {
            dialect: Dialect::Otel,
            name: $name,
            metric_type: MetricType::$t,
            quantity: Quantity::$q,
            labels: Labels::$l,
            source: $src,
            otel: Some(OtelMetric {
                name: $otel,
                unit: $unit,
                instrument: Instrument::$inst,
                scope: Scope::$scope,
            }),
        }
    };
}

/// Every family of every dialect but `hotspot`, with its source. Read from the libraries' own
/// sources: client_java 1.8 and 0.16, Micrometer 1.15 (`jvm/JvmMemoryMetrics`, `JvmGcMetrics`,
/// `JvmThreadMetrics`, `ClassLoaderMetrics`, `JvmCompilationMetrics`, `JvmInfoMetrics`,
/// `system/UptimeMetrics`, `ProcessorMetrics`, `FileDescriptorMetrics`), semantic conventions 1.3x.
pub(crate) const FAMILIES: &[Family] = &[
    // Micrometer
    row!(
        Micrometer,
        "jvm_memory_used_bytes",
        Gauge,
        PoolUsed,
        AreaId,
        MM
    ),
    row!(
        Micrometer,
        "jvm_memory_committed_bytes",
        Gauge,
        PoolCommitted,
        AreaId,
        MM
    ),
    row!(
        Micrometer,
        "jvm_memory_max_bytes",
        Gauge,
        PoolMax,
        AreaId,
        MM
    ),
    row!(
        Micrometer,
        "jvm_gc_pause_seconds",
        Summary,
        Pauses,
        ActionGc,
        MM
    ),
    row!(
        Micrometer,
        "jvm_gc_concurrent_phase_time_seconds",
        Summary,
        ConcurrentPhases,
        ActionGc,
        MM
    ),
    row!(
        Micrometer,
        "jvm_threads_live_threads",
        Gauge,
        ThreadsLive,
        None,
        MM
    ),
    row!(
        Micrometer,
        "jvm_threads_daemon_threads",
        Gauge,
        ThreadsDaemon,
        None,
        MM
    ),
    row!(
        Micrometer,
        "jvm_threads_peak_threads",
        Gauge,
        ThreadsPeak,
        None,
        MM
    ),
    row!(
        Micrometer,
        "jvm_threads_started_threads_total",
        Counter,
        ThreadsStarted,
        None,
        MM
    ),
    row!(
        Micrometer,
        "jvm_threads_states_threads",
        Gauge,
        ThreadStates,
        State,
        MM
    ),
    row!(
        Micrometer,
        "jvm_classes_loaded_classes",
        Gauge,
        ClassesLoaded,
        None,
        MM
    ),
    row!(
        Micrometer,
        "jvm_classes_unloaded_classes_total",
        Counter,
        ClassesUnloaded,
        None,
        MM
    ),
    row!(
        Micrometer,
        "jvm_classes_loaded_count_classes_total",
        Counter,
        ClassesTotalLoaded,
        None,
        MM
    ),
    row!(
        Micrometer,
        "jvm_compilation_time_ms_total",
        Counter,
        JitMillis,
        None,
        MM
    ),
    row!(Micrometer, "jvm_info", Gauge, RuntimeInfo, Runtime, MM),
    row!(
        Micrometer,
        "process_cpu_time_ns_total",
        Counter,
        CpuNanos,
        None,
        MM
    ),
    row!(
        Micrometer,
        "process_start_time_seconds",
        Gauge,
        StartTime,
        None,
        MM
    ),
    row!(
        Micrometer,
        "process_uptime_seconds",
        Gauge,
        Uptime,
        None,
        MM
    ),
    row!(
        Micrometer,
        "process_files_open_files",
        Gauge,
        OpenFds,
        None,
        MM
    ),
    row!(
        Micrometer,
        "process_files_max_files",
        Gauge,
        MaxFds,
        None,
        MM
    ),
    // client_java 1.x
    row!(
        ClientJava,
        "jvm_memory_used_bytes",
        Gauge,
        HeapUsed,
        Area,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_memory_committed_bytes",
        Gauge,
        HeapCommitted,
        Area,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_memory_max_bytes",
        Gauge,
        HeapMax,
        Area,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_memory_pool_used_bytes",
        Gauge,
        PoolUsed,
        Pool,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_memory_pool_committed_bytes",
        Gauge,
        PoolCommitted,
        Pool,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_memory_pool_max_bytes",
        Gauge,
        PoolMax,
        Pool,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_gc_collection_seconds",
        Summary,
        Collections,
        Gc,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_threads_current",
        Gauge,
        ThreadsLive,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_threads_daemon",
        Gauge,
        ThreadsDaemon,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_threads_peak",
        Gauge,
        ThreadsPeak,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_threads_started_total",
        Counter,
        ThreadsStarted,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_threads_state",
        Gauge,
        ThreadStates,
        State,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_classes_currently_loaded",
        Gauge,
        ClassesLoaded,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_classes_loaded_total",
        Counter,
        ClassesTotalLoaded,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_classes_unloaded_total",
        Counter,
        ClassesUnloaded,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_compilation_time_seconds_total",
        Counter,
        JitSeconds,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "jvm_runtime_info",
        Gauge,
        RuntimeInfo,
        Runtime,
        CJ1
    ),
    row!(
        ClientJava,
        "process_cpu_seconds_total",
        Counter,
        CpuSeconds,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "process_start_time_seconds",
        Gauge,
        StartTime,
        None,
        CJ1
    ),
    row!(ClientJava, "process_open_fds", Gauge, OpenFds, None, CJ1),
    row!(ClientJava, "process_max_fds", Gauge, MaxFds, None, CJ1),
    row!(
        ClientJava,
        "process_virtual_memory_bytes",
        Gauge,
        VirtualBytes,
        None,
        CJ1
    ),
    row!(
        ClientJava,
        "process_resident_memory_bytes",
        Gauge,
        ResidentBytes,
        None,
        CJ1
    ),
    // client_java 0.x
    row!(
        ClientJava0,
        "jvm_memory_bytes_used",
        Gauge,
        HeapUsed,
        Area,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_memory_bytes_committed",
        Gauge,
        HeapCommitted,
        Area,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_memory_bytes_max",
        Gauge,
        HeapMax,
        Area,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_memory_pool_bytes_used",
        Gauge,
        PoolUsed,
        Pool,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_memory_pool_bytes_committed",
        Gauge,
        PoolCommitted,
        Pool,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_memory_pool_bytes_max",
        Gauge,
        PoolMax,
        Pool,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_gc_collection_seconds",
        Summary,
        Collections,
        Gc,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_threads_current",
        Gauge,
        ThreadsLive,
        None,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_threads_daemon",
        Gauge,
        ThreadsDaemon,
        None,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_threads_peak",
        Gauge,
        ThreadsPeak,
        None,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_threads_started_total",
        Counter,
        ThreadsStarted,
        None,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_threads_state",
        Gauge,
        ThreadStates,
        State,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_classes_currently_loaded",
        Gauge,
        ClassesLoaded,
        None,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_classes_loaded_total",
        Counter,
        ClassesTotalLoaded,
        None,
        CJ0
    ),
    row!(
        ClientJava0,
        "jvm_classes_unloaded_total",
        Counter,
        ClassesUnloaded,
        None,
        CJ0
    ),
    row!(ClientJava0, "jvm_info", Gauge, RuntimeInfo, Runtime, CJ0),
    row!(
        ClientJava0,
        "process_cpu_seconds_total",
        Counter,
        CpuSeconds,
        None,
        CJ0
    ),
    row!(
        ClientJava0,
        "process_start_time_seconds",
        Gauge,
        StartTime,
        None,
        CJ0
    ),
    row!(ClientJava0, "process_open_fds", Gauge, OpenFds, None, CJ0),
    row!(ClientJava0, "process_max_fds", Gauge, MaxFds, None, CJ0),
    row!(
        ClientJava0,
        "process_virtual_memory_bytes",
        Gauge,
        VirtualBytes,
        None,
        CJ0
    ),
    row!(
        ClientJava0,
        "process_resident_memory_bytes",
        Gauge,
        ResidentBytes,
        None,
        CJ0
    ),
    // OpenTelemetry: the stable JVM metrics (model/jvm/metrics.yaml), then the process metrics
    // (model/process/metrics.yaml, development status), then HotSpot's own counters.
    otel!("jvm.memory.used", "By", UpDownCounter, Conventions;
        "jvm_memory_used_bytes", Gauge, PoolUsed, OtelPool, OTEL),
    otel!("jvm.memory.committed", "By", UpDownCounter, Conventions;
        "jvm_memory_committed_bytes", Gauge, PoolCommitted, OtelPool, OTEL),
    otel!("jvm.memory.limit", "By", UpDownCounter, Conventions;
        "jvm_memory_limit_bytes", Gauge, PoolLimit, OtelPool, OTEL),
    otel!("jvm.gc.duration", "s", Histogram, Conventions;
        "jvm_gc_duration_seconds", Histogram, Collections, OtelGc, OTEL),
    otel!("jvm.thread.count", "{thread}", UpDownCounter, Conventions;
        "jvm_thread_count", Gauge, ThreadsByDaemon, OtelDaemon, OTEL),
    // The same metric with the states, when they were read (one of the two rows has points).
    otel!("jvm.thread.count", "{thread}", UpDownCounter, Conventions;
        "jvm_thread_count", Gauge, ThreadsByDaemonAndState, OtelDaemonState, OTEL),
    otel!("jvm.class.loaded", "{class}", Counter, Conventions;
        "jvm_class_loaded_total", Counter, ClassesTotalLoaded, None, OTEL),
    otel!("jvm.class.unloaded", "{class}", Counter, Conventions;
        "jvm_class_unloaded_total", Counter, ClassesUnloaded, None, OTEL),
    otel!("jvm.class.count", "{class}", UpDownCounter, Conventions;
        "jvm_class_count", Gauge, ClassesLoaded, None, OTEL),
    otel!("jvm.cpu.time", "s", Counter, Conventions;
        "jvm_cpu_time_seconds_total", Counter, CpuSeconds, None, OTEL),
    otel!("process.cpu.time", "s", Counter, Conventions;
        "process_cpu_time_seconds_total", Counter, CpuSeconds, None, OTEL_PROCESS),
    otel!("process.memory.usage", "By", UpDownCounter, Conventions;
        "process_memory_usage_bytes", Gauge, ResidentBytes, None, OTEL_PROCESS),
    otel!("process.memory.virtual", "By", UpDownCounter, Conventions;
        "process_memory_virtual_bytes", Gauge, VirtualBytes, None, OTEL_PROCESS),
    otel!("process.thread.count", "{thread}", UpDownCounter, Conventions;
        "process_thread_count", Gauge, OsThreads, None, OTEL_PROCESS),
    otel!("process.unix.file_descriptor.count", "{file_descriptor}", UpDownCounter, Conventions;
        "process_unix_file_descriptor_count", Gauge, OpenFds, None, OTEL_PROCESS),
    otel!("hotspot.safepoint.count", "{safepoint}", Counter, Hotspot;
        "hotspot_safepoint_count_total", Counter, Safepoints, None, HOTSPOT),
    otel!("hotspot.safepoint.time", "s", Counter, Hotspot;
        "hotspot_safepoint_time_seconds_total", Counter, SafepointSeconds, None, HOTSPOT),
    otel!("hotspot.safepoint.sync.time", "s", Counter, Hotspot;
        "hotspot_safepoint_sync_time_seconds_total", Counter, SafepointSyncSeconds, None, HOTSPOT),
    otel!("hotspot.class.load.time", "s", Counter, Hotspot;
        "hotspot_class_load_time_seconds_total", Counter, ClassLoadSeconds, None, HOTSPOT),
    otel!("hotspot.jit.compilation.time", "s", Counter, Hotspot;
        "hotspot_jit_compilation_time_seconds_total", Counter, JitSeconds, None, HOTSPOT),
];

/// The dialects one page carries: `--names`'s list, checked for collisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    dialects: Vec<Dialect>,
}

/// Why a `--names` list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamesError {
    /// A word that names no dialect.
    #[error(
        "unknown metric dialect {0:?}: the dialects are hotspot, micrometer, client_java, client_java_0, otel"
    )]
    Unknown(String),
    /// Two dialects define one family differently: one page cannot carry both.
    #[error(
        "{first} and {second} both name a family {family}, with different labels or meaning ({first}: {first_labels}; {second}: {second_labels}): one page cannot carry both; serve them on two ports"
    )]
    Collision {
        /// The family name.
        family: &'static str,
        /// One dialect.
        first: Dialect,
        /// Its labels.
        first_labels: String,
        /// The other.
        second: Dialect,
        /// Its labels.
        second_labels: String,
    },
}

impl Names {
    /// `hotspot` alone, the default.
    pub fn hotspot() -> Names {
        Names {
            dialects: vec![Dialect::Hotspot],
        }
    }

    /// Parses a comma-separated list (`micrometer`, `hotspot,client_java`).
    ///
    /// # Errors
    /// [`NamesError::Unknown`], or [`NamesError::Collision`] when two of them name one family
    /// differently (Micrometer, client_java 1.x and OpenTelemetry all have `jvm_memory_used_bytes`
    /// with other labels). A family two dialects define alike (`process_start_time_seconds`) is
    /// written once.
    pub fn parse(list: &str) -> Result<Names, NamesError> {
        let mut dialects = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let d = Dialect::ALL
                .into_iter()
                .find(|d| d.as_str() == word)
                .ok_or_else(|| NamesError::Unknown(word.to_string()))?;
            if !dialects.contains(&d) {
                dialects.push(d);
            }
        }
        if dialects.is_empty() {
            return Err(NamesError::Unknown(list.to_string()));
        }
        for (i, a) in dialects.iter().enumerate() {
            for b in &dialects[i + 1..] {
                for fa in FAMILIES.iter().filter(|f| f.dialect == *a) {
                    if let Some(fb) = FAMILIES
                        .iter()
                        .find(|f| f.dialect == *b && f.name == fa.name)
                        && (fa.metric_type, fa.quantity, fa.labels)
                            != (fb.metric_type, fb.quantity, fb.labels)
                    {
                        return Err(NamesError::Collision {
                            family: fa.name,
                            first: *a,
                            first_labels: fa.labels.names().join(","),
                            second: *b,
                            second_labels: fb.labels.names().join(","),
                        });
                    }
                }
            }
        }
        Ok(Names { dialects })
    }

    /// The dialects, in the order given.
    pub fn dialects(&self) -> &[Dialect] {
        &self.dialects
    }

    /// Whether the list has this dialect.
    pub fn has(&self, d: Dialect) -> bool {
        self.dialects.contains(&d)
    }

    /// Whether any dialect besides `hotspot` is asked for (those need [`JvmMetrics`]).
    pub fn needs_jvm_metrics(&self) -> bool {
        self.dialects.iter().any(|d| *d != Dialect::Hotspot)
    }
}

impl Default for Names {
    fn default() -> Self {
        Names::hotspot()
    }
}

fn area_word(a: Area, otel: bool) -> &'static str {
    match (a, otel) {
        (Area::Heap, _) => "heap",
        (Area::NonHeap, false) => "nonheap",
        (Area::NonHeap, true) => "non_heap",
    }
}

/// What one JVM gives the dialects: its JMX view, what the OS says of its process (`None` for a
/// file or a core), and the time of the reading (seconds since the epoch, for uptime).
#[derive(Debug, Clone, Copy)]
pub struct Beans<'a> {
    /// The JMX view of its PerfData.
    pub jvm: &'a JvmMetrics,
    /// Its process's usage.
    pub process: Option<&'a ProcessUsage>,
    /// When it was read.
    pub now_seconds: f64,
    /// Its Java threads by state, when they were read (`serve --thread-states`).
    pub states: Option<&'a ThreadStates>,
}

/// Adds one JVM's families of every dialect of `names` but `hotspot` to `page`, every series
/// labelled `first` first (the JVM's `application`, `instance`, `pid`), then its container's
/// labels (`container`: [`ContainerIdentity::labels`], and in the `otel` dialect
/// [`ContainerIdentity::otel_labels`], the resource attributes as the OTLP-to-Prometheus rule
/// names them). A family two dialects define alike is written once (see [`Names::parse`]).
pub fn add_jvm(
    page: &mut Exposition,
    names: &Names,
    src: &Beans<'_>,
    first: &[(&str, &str)],
    container: Option<&ContainerIdentity>,
) {
    let with = |extra: Vec<(&'static str, String)>| -> Vec<(String, String)> {
        first
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain(extra.into_iter().map(|(k, v)| (k.to_string(), v)))
            .collect()
    };
    let prom = with(container.map(ContainerIdentity::labels).unwrap_or_default());
    let otel = with(
        container
            .map(ContainerIdentity::otel_labels)
            .unwrap_or_default(),
    );
    let (prom, otel) = (borrow(&prom), borrow(&otel));
    let mut written: Vec<(&str, Quantity)> = Vec::new();
    for dialect in names.dialects() {
        let first = if *dialect == Dialect::Otel {
            &otel
        } else {
            &prom
        };
        for f in FAMILIES.iter().filter(|f| f.dialect == *dialect) {
            if written.contains(&(f.name, f.quantity)) {
                continue;
            }
            written.push((f.name, f.quantity));
            add_family(page, f, src, first);
        }
    }
}

/// Adds one JVM's reading to `page` in every dialect of `names` but `hotspot`: its JMX view
/// ([`JvmMetrics::from_snapshot`]), its `application` label (from `rules`, its container's
/// name, `main`: see [`application`]), and for a live JVM (`live`: this host's name and the
/// JVM's pid) its process's usage and the `instance`/`pid` labels, and its container's labels
/// (`container`, `None` on the host: see [`add_jvm`]). A file or a core (`live` `None`) gets
/// `application` only. `taken` is when the reading was taken; `states` its Java threads by
/// state when they were read. The one place `inspect --format prometheus` and `serve` build a
/// JVM's dialect families.
#[allow(clippy::too_many_arguments)]
pub fn add_reading(
    page: &mut Exposition,
    names: &Names,
    rules: &[ApplicationRule],
    snapshot: &crate::perfdata::Snapshot,
    main: &str,
    live: Option<(&str, Pid)>,
    container: Option<&ContainerIdentity>,
    taken: std::time::SystemTime,
    states: Option<&ThreadStates>,
) {
    let metrics = JvmMetrics::from_snapshot(snapshot);
    let app = application(
        main,
        container.and_then(ContainerIdentity::application),
        rules,
    );
    let labels = match live {
        Some((host, pid)) => jvm_labels(&app, host, pid),
        None => vec![("application", app)],
    };
    let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let usage = live.and_then(|(_, pid)| crate::process::usage(pid).ok());
    let beans = Beans {
        jvm: &metrics,
        process: usage.as_ref(),
        now_seconds: taken
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
        states,
    };
    add_jvm(page, names, &beans, &labels, container);
}

/// `--application NAME=GLOB`: JVMs whose main class or jar path matches `main` (`*` crosses `/`)
/// get `application="NAME"`.
#[derive(Debug, Clone)]
pub struct ApplicationRule {
    /// The label's value.
    pub name: String,
    /// The glob over the main class or jar path (`jps -l`'s form).
    pub main: globset::GlobMatcher,
}

impl ApplicationRule {
    /// Parses `NAME=GLOB`.
    ///
    /// # Errors
    /// A message when there is no `=`, the name is empty, or the glob is invalid.
    pub fn parse(rule: &str) -> Result<ApplicationRule, String> {
        let (name, glob) = rule.split_once('=').ok_or_else(|| {
            format!("--application {rule:?}: expected NAME=GLOB, e.g. orders=*/orders-*.jar")
        })?;
        if name.is_empty() {
            return Err(format!("--application {rule:?}: the name is empty"));
        }
        let main = globset::GlobBuilder::new(glob)
            .literal_separator(false)
            .build()
            .map_err(|e| format!("--application {rule:?}: {e}"))?
            .compile_matcher();
        Ok(ApplicationRule {
            name: name.to_string(),
            main,
        })
    }
}

/// The `application` label of a JVM whose main class or jar (`jps -l`'s form, from
/// `sun.rt.javaCommand`) is `main`, in a container named `container` (its name in its pod, or a
/// plain container's name: [`ContainerIdentity::application`]): the first rule that matches;
/// else the container's name; else the jar's file name without `.jar` (`/srv/orders-1.4.jar` →
/// `orders-1.4`); else the main class's simple name (`org.apache.catalina.startup.Bootstrap` →
/// `Bootstrap`, `mod/pkg.Main` → `Main`); else `unknown` (a JVM embedded with
/// `JNI_CreateJavaVM` names no main).
pub fn application(main: &str, container: Option<&str>, rules: &[ApplicationRule]) -> String {
    if let Some(r) = rules.iter().find(|r| r.main.is_match(main)) {
        return r.name.clone();
    }
    if let Some(name) = container {
        return name.to_string();
    }
    let short = crate::perfdata::java_command::jps_short_main(main);
    let short = short.strip_suffix(".jar").unwrap_or(short);
    if short.is_empty() {
        "unknown".into()
    } else {
        short.to_string()
    }
}

/// The labels every series of a JVM carries in the dialects: `application`, `instance`
/// (`<host>/<pid>`: each JVM its own instance, so dashboards that select on `application` and
/// `instance` never merge two JVMs; Prometheus keeps it with `honor_labels: true`) and `pid`.
pub fn jvm_labels(application: &str, host: &str, pid: Pid) -> Vec<(&'static str, String)> {
    vec![
        ("application", application.to_string()),
        ("instance", format!("{host}/{pid}")),
        ("pid", pid.to_string()),
    ]
}

/// The `# HELP` text of a family: what it holds and where the dialect defines it.
pub fn help(f: &Family) -> String {
    format!(
        "{} from HotSpot PerfData (dialect {}, as defined in {})",
        describe(f.quantity),
        f.dialect,
        f.source
    )
}

/// What a quantity holds, in a few words (the OTLP metric's description).
pub fn describe(q: Quantity) -> &'static str {
    match q {
        Quantity::PoolUsed => "Memory pool used bytes",
        Quantity::PoolCommitted => "Memory pool committed bytes",
        Quantity::PoolMax => "Memory pool max bytes (-1: undefined)",
        Quantity::PoolLimit => "Memory pool max bytes",
        Quantity::HeapUsed => "Heap used bytes",
        Quantity::HeapCommitted => "Heap committed bytes",
        Quantity::HeapMax => "Heap max bytes (-1: undefined)",
        Quantity::Collections | Quantity::Pauses => {
            "Collections and their total seconds, per collector"
        }
        Quantity::ConcurrentPhases => "Concurrent-phase pauses and their total seconds",
        Quantity::ThreadsLive => "Live threads",
        Quantity::ThreadsDaemon => "Live daemon threads",
        Quantity::ThreadsPeak => "Peak live threads",
        Quantity::ThreadsStarted => "Threads started",
        Quantity::ThreadsByDaemon => "Live threads by daemon status",
        Quantity::ThreadStates => "Java threads by state",
        Quantity::ThreadsByDaemonAndState => "Live threads by daemon status and state",
        Quantity::ClassesLoaded => "Classes loaded now",
        Quantity::ClassesTotalLoaded => "Classes loaded since start",
        Quantity::ClassesUnloaded => "Classes unloaded since start",
        Quantity::JitSeconds => "JIT compilation seconds",
        Quantity::JitMillis => "JIT compilation milliseconds",
        Quantity::RuntimeInfo => "Java runtime identity (value 1)",
        Quantity::CpuSeconds => "Process CPU seconds (user and system)",
        Quantity::CpuNanos => "Process CPU nanoseconds (user and system)",
        Quantity::StartTime => "JVM start time, seconds since the epoch",
        Quantity::Uptime => "Seconds since the JVM started",
        Quantity::OpenFds => "Open file descriptors",
        Quantity::MaxFds => "Limit on open file descriptors",
        Quantity::VirtualBytes => "Virtual memory bytes",
        Quantity::ResidentBytes => "Resident memory bytes",
        Quantity::OsThreads => "Threads of the process (Java and native), as the OS counts them",
        Quantity::Safepoints => "Safepoints reached since the JVM started",
        Quantity::SafepointSeconds => "Seconds at safepoints (application threads stopped)",
        Quantity::SafepointSyncSeconds => "Seconds spent reaching safepoints",
        Quantity::ClassLoadSeconds => "Seconds spent loading classes",
    }
}

fn borrow(l: &[(String, String)]) -> Vec<(&str, &str)> {
    l.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// A number as the JVM or the OS gave it: a count or a size (`Int`), or seconds (`Double`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// An integer (counts, bytes; -1 for an undefined max).
    Int(i64),
    /// A real (seconds).
    Double(f64),
}

impl Number {
    /// As the page writes it.
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(v) => v as f64,
            Number::Double(v) => v,
        }
    }
}

/// One point of a family for one JVM: a number, or a collector's count and total seconds (a
/// summary's or histogram's `_count` and `_sum`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Point {
    /// One value.
    Number(Number),
    /// Events and their total duration in seconds.
    Collections {
        /// How many.
        count: u64,
        /// Their total seconds.
        seconds: f64,
    },
}

fn int(v: u64) -> Number {
    Number::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

/// The points of family `f` for one JVM, each with its label values in the order of
/// `f.labels`' names ([`Labels::names`], or [`Labels::attribute_names`] for OpenTelemetry). The
/// one mapping from a JVM's values to a family: the Prometheus page ([`add_jvm`]) and the OTLP
/// push ([`super::otlp`]) both write what this gives.
pub fn points(f: &Family, src: &Beans<'_>, mut emit: impl FnMut(&[&str], Point)) {
    let jvm = src.jvm;
    let mut one = |labels: &[&str], v: Number| emit(labels, Point::Number(v));
    let max_or_minus_one = |m: Option<u64>| m.map_or(Number::Int(-1), int);
    match f.quantity {
        Quantity::PoolUsed | Quantity::PoolCommitted | Quantity::PoolMax | Quantity::PoolLimit => {
            for p in &jvm.pools {
                let value = match f.quantity {
                    Quantity::PoolUsed => int(p.used),
                    Quantity::PoolCommitted => int(p.committed),
                    Quantity::PoolMax => max_or_minus_one(p.max),
                    _ => match p.max {
                        Some(m) => int(m),
                        None => continue,
                    },
                };
                match f.labels {
                    Labels::Pool => one(&[p.name], value),
                    Labels::AreaId => one(&[area_word(p.area, false), p.name], value),
                    _ => one(&[p.name, area_word(p.area, true)], value),
                }
            }
        }
        Quantity::HeapUsed | Quantity::HeapCommitted | Quantity::HeapMax => {
            if let Some((used, committed, max)) = jvm.heap {
                let value = match f.quantity {
                    Quantity::HeapUsed => int(used),
                    Quantity::HeapCommitted => int(committed),
                    _ => max_or_minus_one(max),
                };
                one(&["heap"], value);
            }
        }
        Quantity::Collections | Quantity::Pauses | Quantity::ConcurrentPhases => {
            for c in &jvm.collectors {
                match f.quantity {
                    Quantity::Pauses if c.concurrent => continue,
                    Quantity::ConcurrentPhases if !c.concurrent => continue,
                    _ => {}
                }
                let point = Point::Collections {
                    count: c.count,
                    seconds: c.seconds,
                };
                match f.labels {
                    Labels::Gc => emit(&[c.name], point),
                    _ => emit(&[c.action, c.name], point),
                }
            }
        }
        Quantity::ThreadsLive
        | Quantity::ThreadsDaemon
        | Quantity::ThreadsPeak
        | Quantity::ThreadsStarted
        | Quantity::ThreadsByDaemon => {
            if let Some(t) = jvm.threads {
                match f.quantity {
                    // From the states instead, when they were read.
                    Quantity::ThreadsByDaemon if src.states.is_some() => {}
                    Quantity::ThreadsLive => one(&[], int(t.live)),
                    Quantity::ThreadsDaemon => one(&[], int(t.daemon)),
                    Quantity::ThreadsPeak => one(&[], int(t.peak)),
                    Quantity::ThreadsStarted => one(&[], int(t.started)),
                    _ => {
                        one(&["true"], int(t.daemon));
                        one(&["false"], int(t.live.saturating_sub(t.daemon)));
                    }
                }
            }
        }
        Quantity::ThreadStates => {
            let Some(s) = src.states else { return };
            for state in ThreadState::ALL {
                let word = match f.dialect {
                    Dialect::Micrometer => state.micrometer(),
                    _ => state.name(),
                };
                one(&[word], int(u64::from(s.in_state(state))));
            }
            if matches!(f.dialect, Dialect::ClientJava | Dialect::ClientJava0) {
                one(&["UNKNOWN"], int(u64::from(s.dropped)));
            }
        }
        Quantity::ThreadsByDaemonAndState => {
            let Some(s) = src.states else { return };
            for state in ThreadState::ALL {
                for (daemon, word) in [(true, "true"), (false, "false")] {
                    let n = s.count(state, daemon);
                    if n > 0 {
                        one(&[word, state.otel()], int(u64::from(n)));
                    }
                }
            }
        }
        Quantity::ClassesLoaded | Quantity::ClassesTotalLoaded | Quantity::ClassesUnloaded => {
            if let Some(c) = jvm.classes {
                let v = match f.quantity {
                    Quantity::ClassesLoaded => c.loaded,
                    Quantity::ClassesTotalLoaded => c.total_loaded,
                    _ => c.unloaded,
                };
                one(&[], int(v));
            }
        }
        Quantity::JitSeconds => {
            if let Some(s) = jvm.jit_seconds {
                one(&[], Number::Double(s));
            }
        }
        Quantity::JitMillis => {
            if let Some(s) = jvm.jit_seconds {
                one(&[], Number::Double((s * 1e3).floor()));
            }
        }
        Quantity::Safepoints | Quantity::SafepointSeconds | Quantity::SafepointSyncSeconds => {
            if let Some(sp) = jvm.safepoints {
                one(
                    &[],
                    match f.quantity {
                        Quantity::Safepoints => int(sp.count),
                        Quantity::SafepointSeconds => Number::Double(sp.seconds),
                        _ => Number::Double(sp.sync_seconds),
                    },
                );
            }
        }
        Quantity::ClassLoadSeconds => {
            if let Some(s) = jvm.class_load_seconds {
                one(&[], Number::Double(s));
            }
        }
        Quantity::RuntimeInfo => {
            let r = &jvm.runtime;
            one(&[&r.name, &r.vendor, &r.version], Number::Int(1));
        }
        Quantity::StartTime => {
            if let Some(t) = jvm.start_time_seconds {
                one(&[], Number::Double(t));
            }
        }
        Quantity::Uptime => {
            if let Some(t) = jvm.start_time_seconds {
                one(&[], Number::Double((src.now_seconds - t).max(0.0)));
            }
        }
        Quantity::CpuSeconds
        | Quantity::CpuNanos
        | Quantity::OpenFds
        | Quantity::MaxFds
        | Quantity::VirtualBytes
        | Quantity::ResidentBytes
        | Quantity::OsThreads => {
            let Some(p) = src.process else { return };
            let v = match f.quantity {
                Quantity::CpuSeconds => Some(Number::Double(p.cpu_seconds)),
                Quantity::CpuNanos => Some(Number::Double((p.cpu_seconds * 1e9).round())),
                Quantity::OpenFds => p.open_fds.map(int),
                Quantity::MaxFds => p.max_fds.map(int),
                Quantity::VirtualBytes => Some(int(p.virtual_bytes)),
                Quantity::OsThreads => Some(int(p.threads)),
                _ => Some(int(p.resident_bytes)),
            };
            if let Some(v) = v {
                one(&[], v);
            }
        }
    }
}

fn add_family(page: &mut Exposition, f: &Family, src: &Beans<'_>, first: &[(&str, &str)]) {
    let help = help(f);
    let names = f.labels.names();
    points(f, src, |values, point| {
        let labels: Vec<(&str, &str)> = names.iter().copied().zip(values.iter().copied()).collect();
        let mut one = |suffix: &str, labels: &[(&str, &str)], value: f64| {
            page.add_dialect_sample(f.name, f.metric_type, &help, suffix, first, labels, value);
        };
        match point {
            Point::Number(v) => one("", &labels, v.as_f64()),
            Point::Collections { count, seconds } => {
                if f.metric_type == MetricType::Histogram {
                    let mut with_le = labels.clone();
                    with_le.push(("le", "+Inf"));
                    one("_bucket", &with_le, count as f64);
                }
                one("_count", &labels, count as f64);
                one("_sum", &labels, seconds);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_collisions_are_refused() {
        assert_eq!(Names::parse("hotspot").unwrap(), Names::hotspot());
        let n = Names::parse("client_java, client_java_0,hotspot").unwrap();
        assert_eq!(
            n.dialects(),
            &[Dialect::ClientJava, Dialect::ClientJava0, Dialect::Hotspot]
        );
        let e = Names::parse("micrometer,client_java").unwrap_err();
        assert!(
            e.to_string().contains("jvm_memory_used_bytes") && e.to_string().contains("area,id"),
            "{e}"
        );
        assert!(Names::parse("otel,micrometer").is_err());
        assert!(matches!(
            Names::parse("prometheus"),
            Err(NamesError::Unknown(_))
        ));
        assert!(Names::parse("").is_err());
        // Micrometer and client_java 0.x share only alike families (process_start_time_seconds).
        Names::parse("micrometer,client_java_0").unwrap();
    }

    #[test]
    fn application_names_as_dashboards_expect() {
        let rules = vec![ApplicationRule::parse("orders=*/orders-*.jar").unwrap()];
        assert_eq!(application("/srv/orders-1.4.jar", None, &rules), "orders");
        assert_eq!(application("/srv/billing-2.jar", None, &rules), "billing-2");
        assert_eq!(
            application("org.apache.catalina.startup.Bootstrap", None, &[]),
            "Bootstrap"
        );
        assert_eq!(application("mod.name/pkg.Main", None, &[]), "Main");
        assert_eq!(application("", None, &[]), "unknown");
        // The container's name before the main's, after the rules.
        assert_eq!(
            application("/srv/billing-2.jar", Some("billing"), &[]),
            "billing"
        );
        assert_eq!(
            application("/srv/orders-1.4.jar", Some("x"), &rules),
            "orders"
        );
        assert!(ApplicationRule::parse("noequals").is_err());
        assert!(ApplicationRule::parse("=x").is_err());
        assert!(ApplicationRule::parse("a=[").is_err());
    }

    /// The page's name of every `otel` family is its OpenTelemetry name, unit and instrument in
    /// the OTLP-to-Prometheus form (opentelemetry-specification
    /// `compatibility/prometheus_and_openmetrics.md`): dots to `_`, the unit's word appended
    /// (`By` → `_bytes`, `s` → `_seconds`; `{...}` annotations dropped), `_total` for counters;
    /// and its label names are its attribute keys so translated.
    #[test]
    fn otel_page_names_are_the_otlp_names_translated() {
        let otel: Vec<&Family> = FAMILIES
            .iter()
            .filter(|f| f.dialect == Dialect::Otel)
            .collect();
        assert!(otel.iter().all(|f| f.otel.is_some()));
        for f in otel {
            let o = f.otel.unwrap();
            let mut name = o.name.replace('.', "_");
            match o.unit {
                "By" => name.push_str("_bytes"),
                "s" => name.push_str("_seconds"),
                u => assert!(u.starts_with('{') && u.ends_with('}'), "{u}"),
            }
            if o.instrument == Instrument::Counter {
                name.push_str("_total");
            }
            assert_eq!(f.name, name);
            let kind = match o.instrument {
                Instrument::Counter => MetricType::Counter,
                Instrument::Histogram => MetricType::Histogram,
                _ => MetricType::Gauge,
            };
            assert_eq!(f.metric_type, kind, "{}", f.name);
            let translated: Vec<String> = f
                .labels
                .attribute_names()
                .iter()
                .map(|k| k.replace('.', "_"))
                .collect();
            assert_eq!(translated, f.labels.names(), "{}", f.name);
        }
    }

    #[test]
    fn every_family_name_follows_the_prometheus_rules() {
        for f in FAMILIES {
            assert!(
                f.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{}",
                f.name
            );
            assert_eq!(
                f.name.ends_with("_total"),
                f.metric_type == MetricType::Counter,
                "{}",
                f.name
            );
        }
    }
}
