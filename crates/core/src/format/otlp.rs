//! OpenTelemetry's OTLP metrics, protobuf encoding: the messages of an OTLP/HTTP export
//! ([`proto`]) and one JVM's [`proto::ResourceMetrics`] built from the `otel` dialect's families
//! ([`super::dialect::points`], the mapping the `otel` page writes too).
//!
//! Pure: a JVM's JMX view ([`Beans`]) and its identity in, messages out. Sending them is the
//! CLI's (`inspect serve --otlp`, `inspect push`).
//!
//! # Temporality
//! Cumulative by default: every sum and histogram point starts at the JVM's start. With
//! [`Temporality::Delta`] the counters and histograms are sent as the change since the previous
//! push of the same JVM ([`Previous`] keeps the values), the up-down counters stay cumulative (the
//! specification's `delta` preference); [`Temporality::LowMemory`] makes only the histograms
//! delta (`lowmemory`: the counters here are observed, i.e. asynchronous). A JVM that started
//! before the push did ([`JvmPush::since`]) gets no delta point at its first push, only a
//! baseline: what it counted before may have been sent by an earlier push (another run of
//! `serve`), and sending it again would count it twice (the Collector's `cumulativetodelta`
//! processor does the same). A JVM that started since gets its first delta from its start, as
//! does a new start time under a pid (another JVM) or a counter that went down.
//!
//! # `jvm.gc.duration`
//! PerfData has each collector's count and total time, not each collection's duration: the
//! histogram has one bucket (no `explicit_bounds`) holding every collection, with their count and
//! sum exact. No bucket boundary is claimed that PerfData cannot back.

use std::collections::HashMap;

use super::dialect::{self, Beans, FAMILIES, Family, Instrument, Number, Point, Scope};

/// The OTLP messages an export needs, written for prost. Field numbers and types are those of
/// open-telemetry/opentelemetry-proto: `opentelemetry/proto/collector/metrics/v1/metrics_service.proto`
/// (`ExportMetricsServiceRequest`, `ExportMetricsServiceResponse`, `ExportMetricsPartialSuccess`),
/// `opentelemetry/proto/metrics/v1/metrics.proto` (`ResourceMetrics` ... `HistogramDataPoint`),
/// `opentelemetry/proto/common/v1/common.proto` (`AnyValue`, `KeyValue`, `InstrumentationScope`)
/// and `opentelemetry/proto/resource/v1/resource.proto` (`Resource`). Fields and oneof members
/// this exporter never sends (exemplars, exponential histograms, summaries, arrays, entity
/// references) are left out: a decoder skips unknown fields, and absent ones are their defaults.
pub mod proto {
    /// `ExportMetricsServiceRequest`: the body of a POST to `/v1/metrics`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ExportMetricsServiceRequest {
        /// One per JVM.
        #[prost(message, repeated, tag = "1")]
        pub resource_metrics: Vec<ResourceMetrics>,
    }

    /// `ExportMetricsServiceResponse`: a receiver's answer to a successful export.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ExportMetricsServiceResponse {
        /// Set when some points were rejected.
        #[prost(message, optional, tag = "1")]
        pub partial_success: Option<ExportMetricsPartialSuccess>,
    }

    /// `ExportMetricsPartialSuccess`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ExportMetricsPartialSuccess {
        /// Points the receiver rejected.
        #[prost(int64, tag = "1")]
        pub rejected_data_points: i64,
        /// Why (may be set with 0 rejected: a warning).
        #[prost(string, tag = "2")]
        pub error_message: String,
    }

    /// `ResourceMetrics`: one resource (here a JVM) and its scopes.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ResourceMetrics {
        /// The resource.
        #[prost(message, optional, tag = "1")]
        pub resource: Option<Resource>,
        /// Its scopes' metrics.
        #[prost(message, repeated, tag = "2")]
        pub scope_metrics: Vec<ScopeMetrics>,
        /// The schema of the resource's attributes.
        #[prost(string, tag = "3")]
        pub schema_url: String,
    }

    /// `Resource`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Resource {
        /// Its attributes.
        #[prost(message, repeated, tag = "1")]
        pub attributes: Vec<KeyValue>,
        /// Attributes dropped (always 0 here).
        #[prost(uint32, tag = "2")]
        pub dropped_attributes_count: u32,
    }

    /// `ScopeMetrics`: one instrumentation scope's metrics.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ScopeMetrics {
        /// The scope.
        #[prost(message, optional, tag = "1")]
        pub scope: Option<InstrumentationScope>,
        /// Its metrics.
        #[prost(message, repeated, tag = "2")]
        pub metrics: Vec<Metric>,
        /// The schema of its metrics.
        #[prost(string, tag = "3")]
        pub schema_url: String,
    }

    /// `InstrumentationScope`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct InstrumentationScope {
        /// Its name.
        #[prost(string, tag = "1")]
        pub name: String,
        /// Its version.
        #[prost(string, tag = "2")]
        pub version: String,
        /// Its attributes.
        #[prost(message, repeated, tag = "3")]
        pub attributes: Vec<KeyValue>,
        /// Attributes dropped.
        #[prost(uint32, tag = "4")]
        pub dropped_attributes_count: u32,
    }

    /// `Metric`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Metric {
        /// Its name (`jvm.memory.used`).
        #[prost(string, tag = "1")]
        pub name: String,
        /// What it measures.
        #[prost(string, tag = "2")]
        pub description: String,
        /// Its UCUM unit.
        #[prost(string, tag = "3")]
        pub unit: String,
        /// Its points.
        #[prost(oneof = "metric::Data", tags = "5, 7, 9")]
        pub data: Option<metric::Data>,
    }

    /// `Metric`'s oneof.
    pub mod metric {
        /// `Metric.data`: the kinds sent here.
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Data {
            /// `gauge = 5`.
            #[prost(message, tag = "5")]
            Gauge(super::Gauge),
            /// `sum = 7`.
            #[prost(message, tag = "7")]
            Sum(super::Sum),
            /// `histogram = 9`.
            #[prost(message, tag = "9")]
            Histogram(super::Histogram),
        }
    }

    /// `Gauge`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Gauge {
        /// Its points.
        #[prost(message, repeated, tag = "1")]
        pub data_points: Vec<NumberDataPoint>,
    }

    /// `Sum`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Sum {
        /// Its points.
        #[prost(message, repeated, tag = "1")]
        pub data_points: Vec<NumberDataPoint>,
        /// An [`AggregationTemporality`].
        #[prost(enumeration = "AggregationTemporality", tag = "2")]
        pub aggregation_temporality: i32,
        /// Whether it never goes down (a counter).
        #[prost(bool, tag = "3")]
        pub is_monotonic: bool,
    }

    /// `Histogram`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Histogram {
        /// Its points.
        #[prost(message, repeated, tag = "1")]
        pub data_points: Vec<HistogramDataPoint>,
        /// An [`AggregationTemporality`].
        #[prost(enumeration = "AggregationTemporality", tag = "2")]
        pub aggregation_temporality: i32,
    }

    /// `AggregationTemporality`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum AggregationTemporality {
        /// Not to be used.
        Unspecified = 0,
        /// Each point covers the time since the previous one.
        Delta = 1,
        /// Each point covers the time since the start.
        Cumulative = 2,
    }

    /// `NumberDataPoint`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NumberDataPoint {
        /// Its attributes.
        #[prost(message, repeated, tag = "7")]
        pub attributes: Vec<KeyValue>,
        /// Start of the time it covers (sums), nanoseconds since the epoch.
        #[prost(fixed64, tag = "2")]
        pub start_time_unix_nano: u64,
        /// When it was observed, nanoseconds since the epoch.
        #[prost(fixed64, tag = "3")]
        pub time_unix_nano: u64,
        /// Its value.
        #[prost(oneof = "number_data_point::Value", tags = "4, 6")]
        pub value: Option<number_data_point::Value>,
        /// `DataPointFlags`.
        #[prost(uint32, tag = "8")]
        pub flags: u32,
    }

    /// `NumberDataPoint`'s oneof.
    pub mod number_data_point {
        /// `NumberDataPoint.value`.
        #[derive(Clone, Copy, PartialEq, prost::Oneof)]
        pub enum Value {
            /// `as_double = 4`.
            #[prost(double, tag = "4")]
            AsDouble(f64),
            /// `as_int = 6` (sfixed64).
            #[prost(sfixed64, tag = "6")]
            AsInt(i64),
        }
    }

    /// `HistogramDataPoint`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct HistogramDataPoint {
        /// Its attributes.
        #[prost(message, repeated, tag = "9")]
        pub attributes: Vec<KeyValue>,
        /// Start of the time it covers, nanoseconds since the epoch.
        #[prost(fixed64, tag = "2")]
        pub start_time_unix_nano: u64,
        /// When it was observed, nanoseconds since the epoch.
        #[prost(fixed64, tag = "3")]
        pub time_unix_nano: u64,
        /// Events.
        #[prost(fixed64, tag = "4")]
        pub count: u64,
        /// Their sum.
        #[prost(double, optional, tag = "5")]
        pub sum: Option<f64>,
        /// Events per bucket (one more than `explicit_bounds`).
        #[prost(fixed64, repeated, tag = "6")]
        pub bucket_counts: Vec<u64>,
        /// The buckets' upper bounds.
        #[prost(double, repeated, tag = "7")]
        pub explicit_bounds: Vec<f64>,
        /// `DataPointFlags`.
        #[prost(uint32, tag = "10")]
        pub flags: u32,
        /// The smallest event.
        #[prost(double, optional, tag = "11")]
        pub min: Option<f64>,
        /// The largest event.
        #[prost(double, optional, tag = "12")]
        pub max: Option<f64>,
    }

    /// `KeyValue`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct KeyValue {
        /// The key.
        #[prost(string, tag = "1")]
        pub key: String,
        /// The value.
        #[prost(message, optional, tag = "2")]
        pub value: Option<AnyValue>,
    }

    /// `AnyValue`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AnyValue {
        /// The value.
        #[prost(oneof = "any_value::Value", tags = "1, 2, 3, 4")]
        pub value: Option<any_value::Value>,
    }

    /// `AnyValue`'s oneof.
    pub mod any_value {
        /// `AnyValue.value`: the scalar kinds sent here.
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Value {
            /// `string_value = 1`.
            #[prost(string, tag = "1")]
            StringValue(String),
            /// `bool_value = 2`.
            #[prost(bool, tag = "2")]
            BoolValue(bool),
            /// `int_value = 3`.
            #[prost(int64, tag = "3")]
            IntValue(i64),
            /// `double_value = 4`.
            #[prost(double, tag = "4")]
            DoubleValue(f64),
        }
    }

    impl KeyValue {
        /// A string attribute.
        pub fn string(key: &str, value: &str) -> KeyValue {
            KeyValue {
                key: key.to_string(),
                value: Some(AnyValue {
                    value: Some(any_value::Value::StringValue(value.to_string())),
                }),
            }
        }

        /// An integer attribute.
        pub fn int(key: &str, value: i64) -> KeyValue {
            KeyValue {
                key: key.to_string(),
                value: Some(AnyValue {
                    value: Some(any_value::Value::IntValue(value)),
                }),
            }
        }

        /// A boolean attribute.
        pub fn bool(key: &str, value: bool) -> KeyValue {
            KeyValue {
                key: key.to_string(),
                value: Some(AnyValue {
                    value: Some(any_value::Value::BoolValue(value)),
                }),
            }
        }
    }
}

use proto::AggregationTemporality as Agg;

/// The protobuf bytes of a request (`Content-Type: application/x-protobuf`).
pub fn encode(request: &proto::ExportMetricsServiceRequest) -> Vec<u8> {
    prost::Message::encode_to_vec(request)
}

/// Decodes a receiver's answer body (an empty body is an empty answer).
///
/// # Errors
/// The decoder's message when the bytes are not an `ExportMetricsServiceResponse`.
pub fn decode_response(bytes: &[u8]) -> Result<proto::ExportMetricsServiceResponse, String> {
    <proto::ExportMetricsServiceResponse as prost::Message>::decode(bytes)
        .map_err(|e| e.to_string())
}

/// `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` (opentelemetry-specification
/// `specification/metrics/sdk_exporters/otlp.md`): which instruments are sent as deltas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Temporality {
    /// Everything cumulative (the default).
    #[default]
    Cumulative,
    /// Counters and histograms delta, up-down counters cumulative.
    Delta,
    /// Histograms delta (synchronous instruments), the observed counters cumulative.
    LowMemory,
}

impl Temporality {
    /// Parses `cumulative`, `delta` or `lowmemory` (any case, as the specification allows).
    ///
    /// # Errors
    /// A message naming the three values.
    pub fn parse(s: &str) -> Result<Temporality, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cumulative" => Ok(Temporality::Cumulative),
            "delta" => Ok(Temporality::Delta),
            "lowmemory" => Ok(Temporality::LowMemory),
            _ => Err(format!(
                "temporality {s:?}: expected cumulative, delta or lowmemory"
            )),
        }
    }

    /// The temporality an instrument is sent with.
    pub fn of(self, instrument: Instrument) -> Agg {
        match (self, instrument) {
            (Temporality::Delta, Instrument::Counter | Instrument::Histogram)
            | (Temporality::LowMemory, Instrument::Histogram) => Agg::Delta,
            _ => Agg::Cumulative,
        }
    }
}

/// The OpenTelemetry families, in `FAMILIES`' order (the `otel` dialect).
pub fn families() -> impl Iterator<Item = (&'static Family, &'static dialect::OtelMetric)> {
    FAMILIES
        .iter()
        .filter_map(|f| f.otel.as_ref().map(|o| (f, o)))
}

/// What one JVM's previous push sent, for delta points: keyed by metric and attribute values.
#[derive(Debug, Default, Clone)]
pub struct Previous {
    start: u64,
    time: u64,
    values: HashMap<(&'static str, Vec<String>), Point>,
}

impl Previous {
    /// Series remembered (bounded by the JVM's pools and collectors: a few dozen).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// One JVM's identity and times for [`resource_metrics`].
#[derive(Debug, Clone)]
pub struct JvmPush<'a> {
    /// The resource's attributes ([`resource`]).
    pub resource: Vec<proto::KeyValue>,
    /// Its values.
    pub beans: Beans<'a>,
    /// When the JVM started, nanoseconds since the epoch (the start of cumulative points).
    pub start_unix_nano: u64,
    /// When it was read, nanoseconds since the epoch.
    pub time_unix_nano: u64,
    /// When the push began, nanoseconds since the epoch: a JVM that started before it gets a
    /// baseline, no point, at its first delta push.
    pub since: u64,
}

/// The semantic conventions' schema the names follow.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.37.0";

/// One JVM's `ResourceMetrics`: every `otel` family it has a value for, the conventions' in scope
/// `hsinspect`, HotSpot's own in `hsinspect.hotspot` (both versioned `version`), with the
/// temporality `temporality` gives each instrument. `previous` is this JVM's state from the last
/// push (updated here; used only for delta points).
pub fn resource_metrics(
    jvm: &JvmPush<'_>,
    version: &str,
    temporality: Temporality,
    previous: &mut Previous,
) -> proto::ResourceMetrics {
    use proto::metric::Data;
    if previous.start != jvm.start_unix_nano {
        *previous = Previous {
            start: jvm.start_unix_nano,
            time: jvm.start_unix_nano,
            values: HashMap::new(),
        };
    }
    let mut scopes: Vec<(Scope, Vec<proto::Metric>)> = Vec::new();
    for (f, o) in families() {
        let agg = temporality.of(o.instrument);
        let mut numbers = Vec::new();
        let mut histograms = Vec::new();
        let keys = f.labels.attribute_names();
        dialect::points(f, &jvm.beans, |values, point| {
            let attributes: Vec<proto::KeyValue> = keys
                .iter()
                .zip(values)
                .map(|(k, v)| match (*k, *v) {
                    ("jvm.thread.daemon", "true") => proto::KeyValue::bool(k, true),
                    ("jvm.thread.daemon", "false") => proto::KeyValue::bool(k, false),
                    _ => proto::KeyValue::string(k, v),
                })
                .collect();
            let mut start = jvm.start_unix_nano;
            let mut point = point;
            if agg == Agg::Delta {
                let key = (o.name, values.iter().map(|v| v.to_string()).collect());
                match previous.values.insert(key, point) {
                    Some(b) => {
                        if let Some(d) = difference(point, b) {
                            point = d;
                            start = previous.time;
                        }
                    }
                    // A baseline only: this JVM's past may have been sent already.
                    None if jvm.start_unix_nano < jvm.since => return,
                    None => {}
                }
            }
            match point {
                Point::Number(n) => numbers.push(proto::NumberDataPoint {
                    attributes,
                    start_time_unix_nano: start,
                    time_unix_nano: jvm.time_unix_nano,
                    value: Some(match n {
                        Number::Int(v) => proto::number_data_point::Value::AsInt(v),
                        Number::Double(v) => proto::number_data_point::Value::AsDouble(v),
                    }),
                    flags: 0,
                }),
                Point::Collections { count, seconds } => {
                    histograms.push(proto::HistogramDataPoint {
                        attributes,
                        start_time_unix_nano: start,
                        time_unix_nano: jvm.time_unix_nano,
                        count,
                        sum: Some(seconds),
                        bucket_counts: vec![count],
                        explicit_bounds: Vec::new(),
                        flags: 0,
                        min: None,
                        max: None,
                    })
                }
            }
        });
        let data = match o.instrument {
            _ if numbers.is_empty() && histograms.is_empty() => continue,
            Instrument::Histogram => Data::Histogram(proto::Histogram {
                data_points: histograms,
                aggregation_temporality: agg as i32,
            }),
            Instrument::Gauge => Data::Gauge(proto::Gauge {
                data_points: numbers,
            }),
            Instrument::Counter | Instrument::UpDownCounter => Data::Sum(proto::Sum {
                data_points: numbers,
                aggregation_temporality: agg as i32,
                is_monotonic: o.instrument == Instrument::Counter,
            }),
        };
        let metric = proto::Metric {
            name: o.name.to_string(),
            description: dialect::describe(f.quantity).to_string(),
            unit: o.unit.to_string(),
            data: Some(data),
        };
        match scopes.iter_mut().find(|(s, _)| *s == o.scope) {
            Some((_, metrics)) => metrics.push(metric),
            None => scopes.push((o.scope, vec![metric])),
        }
    }
    previous.time = jvm.time_unix_nano;
    proto::ResourceMetrics {
        resource: Some(proto::Resource {
            attributes: jvm.resource.clone(),
            dropped_attributes_count: 0,
        }),
        scope_metrics: scopes
            .into_iter()
            .map(|(scope, metrics)| proto::ScopeMetrics {
                scope: Some(proto::InstrumentationScope {
                    name: scope.name().to_string(),
                    version: version.to_string(),
                    attributes: Vec::new(),
                    dropped_attributes_count: 0,
                }),
                metrics,
                // HotSpot's own names follow no published schema.
                schema_url: match scope {
                    Scope::Conventions => SCHEMA_URL.to_string(),
                    Scope::Hotspot => String::new(),
                },
            })
            .collect(),
        schema_url: SCHEMA_URL.to_string(),
    }
}

/// `now - before` for a delta point; `None` when a value went down (a reset: the caller then
/// sends `now` from the JVM's start).
fn difference(now: Point, before: Point) -> Option<Point> {
    match (now, before) {
        (Point::Number(Number::Int(a)), Point::Number(Number::Int(b))) if a >= b => {
            Some(Point::Number(Number::Int(a - b)))
        }
        (Point::Number(Number::Double(a)), Point::Number(Number::Double(b))) if a >= b => {
            Some(Point::Number(Number::Double(a - b)))
        }
        (
            Point::Collections { count, seconds },
            Point::Collections {
                count: c0,
                seconds: s0,
            },
        ) if count >= c0 && seconds >= s0 => Some(Point::Collections {
            count: count - c0,
            seconds: seconds - s0,
        }),
        _ => None,
    }
}

/// Who a JVM's container or pod is, when a front end knows it: `container.id`, `k8s.*`
/// attributes and the container's name. Nothing fills it yet; the container identity of
/// `inspect serve` will (docs/opentelemetry.md).
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// The container's name: `service.name` when neither `OTEL_SERVICE_NAME` nor a rule says.
    pub container_name: Option<String>,
    /// Resource attributes (`container.id`, `k8s.pod.name`, `k8s.namespace.name`, ...).
    pub attributes: Vec<(String, String)>,
}

/// What a JVM's resource is made of ([`resource`]).
#[derive(Debug, Clone)]
pub struct Identity<'a> {
    /// Host pid.
    pub pid: crate::pid::Pid,
    /// The main class or jar (`jps -l`'s form, never the arguments).
    pub main: &'a str,
    /// The user running it.
    pub user: &'a str,
    /// This host's name.
    pub host: &'a str,
    /// Its runtime (from PerfData's allow-listed identity strings).
    pub runtime: &'a crate::metrics::Runtime,
    /// Its container or pod, when known.
    pub workload: Option<&'a Workload>,
}

/// The resource attributes of one JVM:
///
/// - `service.name`: `service_name` (`OTEL_SERVICE_NAME`, or `service.name` in
///   `OTEL_RESOURCE_ATTRIBUTES`) when given; else the first `--application` rule matching the
///   main class or jar; else the container's name when known; else the jar's file name without
///   `.jar`, or the main class's simple name ([`dialect::application`]); else
///   `unknown_service:java`.
/// - `service.instance.id` `<host>/<pid>` (the page's `instance`), `process.pid`,
///   `process.owner`, `host.name`, `process.runtime.name` (`java.runtime.name` as derived in
///   [`crate::metrics::Runtime`]), `process.runtime.version` (`java.runtime.version`),
///   `process.runtime.description` (`java.vm.vendor java.vm.name java.vm.version`, as the Java
///   agent writes it);
/// - the workload's attributes; then `extra` (`OTEL_RESOURCE_ATTRIBUTES`) for keys not set above.
///
/// No JVM argument, system property or command-line argument is ever among them.
pub fn resource(
    id: &Identity<'_>,
    service_name: Option<&str>,
    rules: &[dialect::ApplicationRule],
    extra: &[(String, String)],
) -> Vec<proto::KeyValue> {
    let service = match service_name {
        Some(s) => s.to_string(),
        None => match rules.iter().find(|r| r.main.is_match(id.main)) {
            Some(r) => r.name.clone(),
            None => match id.workload.and_then(|w| w.container_name.as_deref()) {
                Some(c) => c.to_string(),
                None => match dialect::application(id.main, None, &[]) {
                    a if a == "unknown" => "unknown_service:java".to_string(),
                    a => a,
                },
            },
        },
    };
    let r = id.runtime;
    let description = [r.vendor.as_str(), r.vm_name.as_str(), r.vm_version.as_str()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let mut attrs = vec![
        proto::KeyValue::string("service.name", &service),
        proto::KeyValue::string("service.instance.id", &format!("{}/{}", id.host, id.pid)),
        proto::KeyValue::int("process.pid", i64::from(id.pid)),
        proto::KeyValue::string("process.owner", id.user),
        proto::KeyValue::string("host.name", id.host),
        proto::KeyValue::string("process.runtime.name", &r.name),
        proto::KeyValue::string("process.runtime.version", &r.version),
        proto::KeyValue::string("process.runtime.description", &description),
    ];
    if let Some(w) = id.workload {
        for (k, v) in &w.attributes {
            if !attrs.iter().any(|a| a.key == *k) {
                attrs.push(proto::KeyValue::string(k, v));
            }
        }
    }
    for (k, v) in extra {
        if !attrs.iter().any(|a| a.key == *k) {
            attrs.push(proto::KeyValue::string(k, v));
        }
    }
    attrs
}

/// Parses `OTEL_RESOURCE_ATTRIBUTES` (`key1=value1,key2=value2`, values percent-decoded; the
/// specification's `resource/sdk.md`): entries without `=` or with an empty key are skipped.
pub fn parse_resource_attributes(s: &str) -> Vec<(String, String)> {
    s.split(',')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then(|| (k.to_string(), percent_decode(v.trim())))
        })
        .collect()
}

/// Decodes `%XX` escapes (the W3C Baggage encoding OTel's variables use); a `%` not followed
/// by two hex digits is kept as is, and bytes that do not form UTF-8 are replaced.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::JvmMetrics;
    use prost::Message;

    fn snapshot(name: &str) -> crate::perfdata::Snapshot {
        let path = format!(
            "{}/../../testdata/captures/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        crate::perfdata::parse(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn percent_decoding_and_resource_attributes() {
        assert_eq!(percent_decode("a%20b%2Cc"), "a b,c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(
            parse_resource_attributes("deployment.environment=prod, team=a%3Db,bad,=x"),
            vec![
                ("deployment.environment".into(), "prod".into()),
                ("team".into(), "a=b".into())
            ]
        );
    }

    #[test]
    fn temporality_follows_the_preference() {
        use Instrument::*;
        let t = Temporality::parse("Delta").unwrap();
        assert_eq!(t.of(Counter), Agg::Delta);
        assert_eq!(t.of(Histogram), Agg::Delta);
        assert_eq!(t.of(UpDownCounter), Agg::Cumulative);
        let l = Temporality::parse("lowmemory").unwrap();
        assert_eq!(
            (l.of(Counter), l.of(Histogram)),
            (Agg::Cumulative, Agg::Delta)
        );
        assert_eq!(Temporality::default().of(Counter), Agg::Cumulative);
        assert!(Temporality::parse("sometimes").is_err());
    }

    #[test]
    fn a_captured_jvm_encodes_and_deltas_restart_with_the_jvm() {
        let s = snapshot("jdk17-g1.hsperf");
        let metrics = JvmMetrics::from_snapshot(&s);
        let push = |start: u64, time: u64| JvmPush {
            resource: resource(
                &Identity {
                    pid: 42,
                    main: "/srv/orders-1.4.jar",
                    user: "app",
                    host: "box",
                    runtime: &metrics.runtime,
                    workload: None,
                },
                None,
                &[],
                &[("service.name".into(), "ignored".into())],
            ),
            beans: Beans {
                jvm: &metrics,
                process: None,
                now_seconds: 0.0,
                states: None,
            },
            start_unix_nano: start,
            time_unix_nano: time,
            since: 0,
        };
        let mut prev = Previous::default();
        let rm = resource_metrics(&push(1, 10), "0.1.0", Temporality::Delta, &mut prev);
        let bytes = proto::ExportMetricsServiceRequest {
            resource_metrics: vec![rm.clone()],
        }
        .encode_to_vec();
        let back = proto::ExportMetricsServiceRequest::decode(bytes.as_slice()).unwrap();
        assert_eq!(back.resource_metrics, vec![rm.clone()]);
        let attrs = &rm.resource.as_ref().unwrap().attributes;
        assert_eq!(
            attrs[0],
            proto::KeyValue::string("service.name", "orders-1.4")
        );
        assert_eq!(attrs.iter().filter(|a| a.key == "service.name").count(), 1);
        let scopes: Vec<&str> = rm
            .scope_metrics
            .iter()
            .map(|s| s.scope.as_ref().unwrap().name.as_str())
            .collect();
        assert_eq!(scopes, ["hsinspect", "hsinspect.hotspot"]);
        let metric = |rm: &proto::ResourceMetrics, name: &str| {
            rm.scope_metrics
                .iter()
                .flat_map(|s| &s.metrics)
                .find(|m| m.name == name)
                .cloned()
                .unwrap()
        };
        let loaded = |rm: &proto::ResourceMetrics| match metric(rm, "jvm.class.loaded").data {
            Some(proto::metric::Data::Sum(s)) => {
                assert!(s.is_monotonic);
                assert_eq!(s.aggregation_temporality, Agg::Delta as i32);
                let p = &s.data_points[0];
                (p.start_time_unix_nano, p.value)
            }
            other => panic!("{other:?}"),
        };
        let total = metrics.classes.unwrap().total_loaded as i64;
        use proto::number_data_point::Value::AsInt;
        assert_eq!(loaded(&rm), (1, Some(AsInt(total))));
        // The same values again: a delta of 0 since the last push.
        let rm = resource_metrics(&push(1, 20), "0.1.0", Temporality::Delta, &mut prev);
        assert_eq!(loaded(&rm), (10, Some(AsInt(0))));
        // Up-down counters stay cumulative.
        match metric(&rm, "jvm.memory.used").data {
            Some(proto::metric::Data::Sum(s)) => {
                assert!(!s.is_monotonic);
                assert_eq!(s.aggregation_temporality, Agg::Cumulative as i32);
            }
            other => panic!("{other:?}"),
        }
        // A JVM older than the push: a baseline first, no point.
        let mut old = Previous::default();
        let mut before_push = push(1, 10);
        before_push.since = 5;
        let rm = resource_metrics(&before_push, "0.1.0", Temporality::Delta, &mut old);
        assert!(
            rm.scope_metrics[0]
                .metrics
                .iter()
                .all(|m| m.name != "jvm.class.loaded")
        );
        before_push.time_unix_nano = 20;
        let rm2 = resource_metrics(&before_push, "0.1.0", Temporality::Delta, &mut old);
        assert_eq!(loaded(&rm2), (10, Some(AsInt(0))));
        // Another JVM under the pid: from its own start again.
        let rm = resource_metrics(&push(15, 30), "0.1.0", Temporality::Delta, &mut prev);
        assert_eq!(loaded(&rm), (15, Some(AsInt(total))));
        match metric(&rm, "jvm.gc.duration").data {
            Some(proto::metric::Data::Histogram(h)) => {
                for p in &h.data_points {
                    assert_eq!(p.bucket_counts, vec![p.count]);
                    assert!(p.explicit_bounds.is_empty());
                }
            }
            other => panic!("{other:?}"),
        }
    }
}
