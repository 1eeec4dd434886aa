//! `inspect serve --otlp`: every interval, every JVM's `otel` metrics pushed to an OpenTelemetry
//! receiver over OTLP/HTTP with protobuf ([`hsinspect::serve::push`] builds the batch).
//!
//! Configuration is OpenTelemetry's (opentelemetry-specification
//! `specification/protocol/exporter.md`, `specification/configuration/sdk-environment-variables.md`),
//! the flags overriding the variables: the endpoint, headers, gzip, the timeout, a CA, a client
//! certificate and key, the export interval, the temporality preference, the resource's
//! attributes and service name. HTTP is ureq (blocking, no async runtime) over rustls with ring.
//!
//! Sending follows `specification/protocol/otlp.md`: 2xx is success (a partial success is
//! logged); 429, 502, 503 and 504 are retried after `Retry-After` when the receiver gives one,
//! else with exponential backoff and jitter, as are connection failures; any other status fails
//! the batch. Sending a batch is given at most the timeout, and never past the next interval's
//! start: one not sent by then is dropped and counted. Nothing is queued, so memory does not grow with a
//! receiver that is down.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hsinspect::format::otlp::{self, Temporality};
use hsinspect::serve::Exporter;
use hsinspect::serve::push::{Outcome, PushState, PushStats};

/// The push's flags (each overrides its `OTEL_*` variable).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OtlpArgs {
    /// Push every JVM's metrics (OpenTelemetry names) to this OTLP/HTTP receiver each interval,
    /// e.g. `http://collector:4318` (`/v1/metrics` is appended unless the URL ends with it).
    /// Without a URL: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (as is), else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` plus `/v1/metrics`, else `http://localhost:4318/v1/metrics`.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub otlp: Option<String>,

    /// With --otlp: push only, no HTTP listener and no /metrics (for hosts with no scraper).
    #[arg(long, requires = "otlp")]
    pub no_metrics: bool,

    /// An HTTP header of every push (`api-key=secret`); repeat for more. Added to
    /// `OTEL_EXPORTER_OTLP_HEADERS`.
    #[arg(long = "otlp-header", value_name = "NAME=VALUE")]
    pub headers: Vec<String>,

    /// `gzip` or `none` (`OTEL_EXPORTER_OTLP_COMPRESSION`; default none).
    #[arg(long = "otlp-compression", value_name = "gzip|none")]
    pub compression: Option<String>,

    /// Most time one interval's batch may take, retries included (`OTEL_EXPORTER_OTLP_TIMEOUT`,
    /// milliseconds; default 10 s; never more than the interval).
    #[arg(long = "otlp-timeout", value_name = "DUR", value_parser = crate::sampling::parse_interval)]
    pub timeout: Option<Duration>,

    /// Time between pushes (`OTEL_METRIC_EXPORT_INTERVAL`, milliseconds; default 60 s).
    #[arg(long = "otlp-interval", value_name = "DUR", value_parser = crate::sampling::parse_interval)]
    pub interval: Option<Duration>,

    /// `cumulative` (default), `delta` or `lowmemory`
    /// (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`).
    #[arg(long = "otlp-temporality", value_name = "PREF")]
    pub temporality: Option<String>,

    /// PEM file of the CA(s) the receiver's certificate must chain to, instead of Mozilla's
    /// roots (`OTEL_EXPORTER_OTLP_CERTIFICATE`).
    #[arg(long = "otlp-certificate", value_name = "FILE")]
    pub certificate: Option<PathBuf>,

    /// PEM client certificate for mutual TLS (`OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE`).
    #[arg(long = "otlp-client-certificate", value_name = "FILE")]
    pub client_certificate: Option<PathBuf>,

    /// PEM private key of the client certificate (`OTEL_EXPORTER_OTLP_CLIENT_KEY`).
    #[arg(long = "otlp-client-key", value_name = "FILE")]
    pub client_key: Option<PathBuf>,

    /// `service.name` of every JVM (`OTEL_SERVICE_NAME`). Default: per JVM, its --application
    /// rule, else its jar's name or main class (docs/opentelemetry.md).
    #[arg(long = "service-name", value_name = "NAME")]
    pub service_name: Option<String>,
}

/// The push's settings, resolved from the flags and the environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// The URL POSTed to.
    pub endpoint: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Whether bodies are gzipped.
    pub gzip: bool,
    /// A batch's time, retries included.
    pub timeout: Duration,
    /// Time between pushes.
    pub interval: Duration,
    /// Delta or cumulative.
    pub temporality: Temporality,
    /// CA file.
    pub certificate: Option<PathBuf>,
    /// Client certificate and key files.
    pub client: Option<(PathBuf, PathBuf)>,
    /// `service.name` of every JVM.
    pub service_name: Option<String>,
    /// `OTEL_RESOURCE_ATTRIBUTES` without `service.name`.
    pub resource_attributes: Vec<(String, String)>,
}

/// Parses `OTEL_EXPORTER_OTLP_HEADERS`' form: `name=value` pairs separated by commas, values
/// percent-decoded.
fn parse_headers(s: &str, what: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for kv in s.split(',').map(str::trim).filter(|kv| !kv.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("{what}: {kv:?} is not name=value"))?;
        let k = k.trim();
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
            return Err(format!("{what}: {k:?} is not an HTTP header name"));
        }
        let v = otlp::percent_decode(v.trim());
        if v.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(format!("{what}: the value of {k} has a line break"));
        }
        out.push((k.to_string(), v));
    }
    Ok(out)
}

fn set_headers(headers: &mut Vec<(String, String)>, more: Vec<(String, String)>) {
    for (k, v) in more {
        headers.retain(|(h, _)| !h.eq_ignore_ascii_case(&k));
        headers.push((k, v));
    }
}

fn millis(v: &str, what: &str) -> Result<Duration, String> {
    v.trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| format!("{what}={v:?}: expected milliseconds"))
}

impl Config {
    /// The settings from `args`, else the `OTEL_*` variables `env` gives (the metrics-specific
    /// `OTEL_EXPORTER_OTLP_METRICS_*` before the general ones), else the specification's defaults.
    ///
    /// # Errors
    /// A message naming the flag or variable at fault.
    pub fn resolve(
        args: &OtlpArgs,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, String> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let otlp_var = |what: &str| {
            var(&format!("OTEL_EXPORTER_OTLP_METRICS_{what}"))
                .map(|v| (format!("OTEL_EXPORTER_OTLP_METRICS_{what}"), v))
                .or_else(|| {
                    var(&format!("OTEL_EXPORTER_OTLP_{what}"))
                        .map(|v| (format!("OTEL_EXPORTER_OTLP_{what}"), v))
                })
        };
        let metrics_path = |base: &str| {
            if base.ends_with("/v1/metrics") {
                base.to_string()
            } else {
                format!("{}/v1/metrics", base.trim_end_matches('/'))
            }
        };
        let endpoint = match args.otlp.as_deref().filter(|u| !u.is_empty()) {
            Some(url) => metrics_path(url),
            None => match var("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
                Some(url) => url,
                None => match var("OTEL_EXPORTER_OTLP_ENDPOINT") {
                    Some(base) => format!("{}/v1/metrics", base.trim_end_matches('/')),
                    None => "http://localhost:4318/v1/metrics".into(),
                },
            },
        };
        let lower = endpoint.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(format!(
                "OTLP endpoint {endpoint:?}: expected an http:// or https:// URL"
            ));
        }
        let mut headers = Vec::new();
        if let Some(h) = var("OTEL_EXPORTER_OTLP_HEADERS") {
            set_headers(
                &mut headers,
                parse_headers(&h, "OTEL_EXPORTER_OTLP_HEADERS")?,
            );
        }
        if let Some(h) = var("OTEL_EXPORTER_OTLP_METRICS_HEADERS") {
            set_headers(
                &mut headers,
                parse_headers(&h, "OTEL_EXPORTER_OTLP_METRICS_HEADERS")?,
            );
        }
        for h in &args.headers {
            set_headers(&mut headers, parse_headers(h, "--otlp-header")?);
        }
        let gzip = match args
            .compression
            .clone()
            .map(|c| ("--otlp-compression".to_string(), c))
            .or_else(|| otlp_var("COMPRESSION"))
        {
            None => false,
            Some((what, c)) => match c.trim().to_ascii_lowercase().as_str() {
                "gzip" => true,
                "none" => false,
                _ => return Err(format!("{what}={c:?}: expected gzip or none")),
            },
        };
        let timeout = match (args.timeout, otlp_var("TIMEOUT")) {
            (Some(t), _) => t,
            (None, Some((what, v))) => millis(&v, &what)?,
            (None, None) => Duration::from_secs(10),
        };
        let interval = match (args.interval, var("OTEL_METRIC_EXPORT_INTERVAL")) {
            (Some(t), _) => t,
            (None, Some(v)) => millis(&v, "OTEL_METRIC_EXPORT_INTERVAL")?,
            (None, None) => Duration::from_secs(60),
        };
        if interval.is_zero() || timeout.is_zero() {
            return Err("the OTLP interval and timeout must be more than 0".into());
        }
        let temporality = match args
            .temporality
            .clone()
            .or_else(|| var("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"))
        {
            Some(t) => Temporality::parse(&t)?,
            None => Temporality::Cumulative,
        };
        let file = |flag: &Option<PathBuf>, what: &str| {
            flag.clone()
                .or_else(|| otlp_var(what).map(|(_, v)| PathBuf::from(v)))
        };
        let certificate = file(&args.certificate, "CERTIFICATE");
        let client = match (
            file(&args.client_certificate, "CLIENT_CERTIFICATE"),
            file(&args.client_key, "CLIENT_KEY"),
        ) {
            (Some(c), Some(k)) => Some((c, k)),
            (None, None) => None,
            _ => {
                return Err(
                    "a client certificate needs its key and the key its certificate \
                     (--otlp-client-certificate and --otlp-client-key)"
                        .into(),
                );
            }
        };
        let mut resource_attributes = var("OTEL_RESOURCE_ATTRIBUTES")
            .map(|r| otlp::parse_resource_attributes(&r))
            .unwrap_or_default();
        let from_attributes = resource_attributes
            .iter()
            .find(|(k, _)| k == "service.name")
            .map(|(_, v)| v.clone());
        resource_attributes.retain(|(k, _)| k != "service.name");
        let service_name = args
            .service_name
            .clone()
            .or_else(|| var("OTEL_SERVICE_NAME"))
            .or(from_attributes);
        Ok(Config {
            endpoint,
            headers,
            gzip,
            timeout,
            interval,
            temporality,
            certificate,
            client,
            service_name,
            resource_attributes,
        })
    }

    /// The HTTP agent: TLS roots (the CA file, else Mozilla's), the client certificate, no
    /// error on 4xx/5xx (they are read), this tool as the user agent.
    ///
    /// # Errors
    /// A file that cannot be read or holds no PEM certificate or key.
    pub fn agent(&self) -> Result<ureq::Agent, String> {
        use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig, TlsProvider};
        let read = |p: &PathBuf, what: &str| {
            std::fs::read(p).map_err(|e| format!("{what} {}: {e}", p.display()))
        };
        let certs = |p: &PathBuf, what: &str| -> Result<Vec<Certificate<'static>>, String> {
            let bytes = read(p, what)?;
            let certs: Vec<Certificate<'static>> = ureq::tls::parse_pem(&bytes)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(Ok(c.to_owned())),
                    Ok(_) => None,
                    Err(e) => Some(Err(format!("{what} {}: {e}", p.display()))),
                })
                .collect::<Result<_, _>>()?;
            if certs.is_empty() {
                return Err(format!("{what} {}: no PEM CERTIFICATE in it", p.display()));
            }
            Ok(certs)
        };
        let mut tls = TlsConfig::builder().provider(TlsProvider::Rustls);
        if let Some(ca) = &self.certificate {
            tls = tls.root_certs(RootCerts::new_with_certs(&certs(ca, "certificate")?));
        }
        if let Some((cert, key)) = &self.client {
            let chain = certs(cert, "client certificate")?;
            let key_bytes = read(key, "client key")?;
            let key = PrivateKey::from_pem(&key_bytes)
                .map_err(|e| format!("client key {}: {e}", key.display()))?;
            tls = tls.client_cert(Some(ClientCert::new_with_certs(&chain, key)));
        }
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .tls_config(tls.build())
            .user_agent(format!("hsinspect/{}", env!("CARGO_PKG_VERSION")))
            .max_redirects(0)
            .build();
        Ok(config.into())
    }
}

/// What one HTTP request gave.
enum Answer {
    /// 2xx, with the points the receiver rejected and its message.
    Ok(i64, String),
    /// A status to retry, with the wait `Retry-After` asked for.
    Retry(u16, Option<Duration>),
    /// A status not to retry.
    Refused(u16, String),
    /// No answer: connection, TLS or timeout (retried while time is left).
    Transport(String),
}

fn post(agent: &ureq::Agent, cfg: &Config, body: &[u8], within: Duration) -> Answer {
    let mut req = agent
        .post(&cfg.endpoint)
        .config()
        .timeout_global(Some(within))
        .build()
        .header("Content-Type", "application/x-protobuf");
    if cfg.gzip {
        req = req.header("Content-Encoding", "gzip");
    }
    for (k, v) in &cfg.headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let mut resp = match req.send(body) {
        Ok(r) => r,
        Err(e) => return Answer::Transport(e.to_string()),
    };
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let body = resp
        .body_mut()
        .with_config()
        .limit(64 * 1024)
        .read_to_vec()
        .unwrap_or_default();
    match status {
        200..=299 => match otlp::decode_response(&body) {
            Ok(r) => match r.partial_success {
                Some(p) => Answer::Ok(p.rejected_data_points, p.error_message),
                None => Answer::Ok(0, String::new()),
            },
            // A 2xx whose body is not the protobuf answer (e.g. a JSON one): taken.
            Err(_) => Answer::Ok(0, String::new()),
        },
        429 | 502 | 503 | 504 => Answer::Retry(status, retry_after),
        _ => {
            let text = String::from_utf8_lossy(&body[..body.len().min(300)])
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect::<String>();
            Answer::Refused(status, text.trim().to_string())
        }
    }
}

/// A small xorshift for the backoff's jitter (no need for a cryptographic source).
struct Jitter(u64);

impl Jitter {
    fn new() -> Jitter {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1;
        Jitter(seed ^ u64::from(std::process::id()).rotate_left(32))
    }

    /// A fraction in [0.5, 1).
    fn half_to_one(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        0.5 + (self.0 >> 11) as f64 / (1u64 << 53) as f64 / 2.0
    }
}

/// Sleeps until `until`, waking every 100 ms to look at `stop`; false when stopped.
fn sleep_until(until: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(100)));
    }
}

/// What sending one batch came to.
struct Sent {
    outcome: Outcome,
    requests: u64,
    rejected: u64,
    note: Option<String>,
}

/// Sends one batch by `deadline`, retrying as the module docs say.
fn send(
    agent: &ureq::Agent,
    cfg: &Config,
    body: &[u8],
    deadline: Instant,
    stop: &AtomicBool,
    jitter: &mut Jitter,
) -> Sent {
    let mut requests = 0;
    let mut backoff = Duration::from_millis(500);
    let mut last = String::new();
    loop {
        let now = Instant::now();
        if now >= deadline || stop.load(Ordering::SeqCst) {
            return Sent {
                outcome: Outcome::Dropped,
                requests,
                rejected: 0,
                note: Some(format!("not sent within the timeout: dropped ({last})")),
            };
        }
        requests += 1;
        let wait = match post(agent, cfg, body, deadline - now) {
            Answer::Ok(rejected, message) => {
                let note = (rejected > 0 || !message.is_empty())
                    .then(|| format!("partial success: {rejected} points rejected: {message}"));
                return Sent {
                    outcome: Outcome::Sent,
                    requests,
                    rejected: rejected.max(0) as u64,
                    note,
                };
            }
            Answer::Refused(status, text) => {
                return Sent {
                    outcome: Outcome::Failed,
                    requests,
                    rejected: 0,
                    note: Some(format!("refused with HTTP {status}: {text}")),
                };
            }
            Answer::Retry(status, after) => {
                last = format!("HTTP {status}");
                after.unwrap_or_else(|| backoff.mul_f64(jitter.half_to_one()))
            }
            Answer::Transport(e) => {
                last = e;
                backoff.mul_f64(jitter.half_to_one())
            }
        };
        backoff = (backoff * 2).min(Duration::from_secs(5));
        let until = Instant::now() + wait;
        if until >= deadline {
            // The wait asked for outlasts this batch's time: drop it now rather than wait idle.
            return Sent {
                outcome: Outcome::Dropped,
                requests,
                rejected: 0,
                note: Some(format!(
                    "{last}; a retry would come after the batch's time: dropped"
                )),
            };
        }
        if !sleep_until(until, stop) {
            continue;
        }
    }
}

/// Runs the push until `stop`: a batch every interval (ticks on a monotonic clock; a batch that
/// overruns skips the ticks it missed). Failures go to stderr when they change; with `verbose`
/// every batch does.
pub fn run(
    exporter: Arc<Exporter>,
    cfg: Config,
    agent: ureq::Agent,
    stats: Arc<PushStats>,
    stop: Arc<AtomicBool>,
    verbose: bool,
) {
    let mut state = PushState::new(
        cfg.temporality,
        cfg.service_name.clone(),
        cfg.resource_attributes.clone(),
        env!("CARGO_PKG_VERSION"),
    );
    let mut jitter = Jitter::new();
    let start = Instant::now();
    let mut tick: u32 = 0;
    let mut reported: Option<String> = None;
    // A JVM's container or pod (`discover`'s container identity): its name and attributes.
    let workload = |jvm: &hsinspect::discover::JvmInfo| {
        jvm.container.as_ref().map(|c| otlp::Workload {
            container_name: c.container_name().map(str::to_string),
            attributes: c
                .otel_attributes()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        })
    };
    loop {
        let began = Instant::now();
        let batch = exporter.otlp_batch(&mut state, &workload);
        let mut body = otlp::encode(&batch.request);
        let plain = body.len();
        if cfg.gzip {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            if gz.write_all(&body).is_ok()
                && let Ok(z) = gz.finish()
            {
                body = z;
            }
        }
        drop(batch.request);
        // The receiver gets the timeout, and the batch ends by the next tick at the latest.
        let sending = Instant::now();
        let deadline = (sending + cfg.timeout).min(began + cfg.interval);
        let sent = send(&agent, &cfg, &body, deadline, &stop, &mut jitter);
        let took = began.elapsed();
        let (read_ms, send_ms) = (
            (sending - began).as_secs_f64() * 1e3,
            sending.elapsed().as_secs_f64() * 1e3,
        );
        stats.record(
            sent.outcome,
            sent.requests,
            batch.points as u64,
            sent.rejected,
            took,
        );
        if verbose {
            eprintln!(
                "inspect serve: OTLP {}: {} JVMs, {} points, {} bytes ({} on the wire), {} request(s), {:.1} ms (read {:.1} ms, send {:.1} ms){}",
                match sent.outcome {
                    Outcome::Sent => "sent",
                    Outcome::Failed => "failed",
                    Outcome::Dropped => "dropped",
                },
                batch.jvms,
                batch.points,
                plain,
                body.len(),
                sent.requests,
                took.as_secs_f64() * 1e3,
                read_ms,
                send_ms,
                sent.note
                    .as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            );
        } else if sent.note != reported {
            match &sent.note {
                Some(n) => eprintln!("inspect serve: OTLP push to {}: {n}", cfg.endpoint),
                None => eprintln!("inspect serve: OTLP push to {}: sent again", cfg.endpoint),
            }
        }
        reported = sent.note;
        drop(body);
        hsinspect::serve::release_free_memory();
        // The next tick after now.
        let elapsed = start.elapsed();
        let next = (elapsed.as_nanos() / cfg.interval.as_nanos().max(1)) as u32 + 1;
        tick = next.max(tick + 1);
        if !sleep_until(start + cfg.interval * tick, &stop) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn resolve(args: &OtlpArgs, vars: &[(&str, &str)]) -> Result<Config, String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::resolve(args, &|k| map.get(k).cloned())
    }

    #[test]
    fn endpoints_as_the_specification_says() {
        let args = OtlpArgs {
            otlp: Some(String::new()),
            ..OtlpArgs::default()
        };
        assert_eq!(
            resolve(&args, &[]).unwrap().endpoint,
            "http://localhost:4318/v1/metrics"
        );
        assert_eq!(
            resolve(&args, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c:4318/")])
                .unwrap()
                .endpoint,
            "https://c:4318/v1/metrics"
        );
        let both = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c:4318"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "https://m:1/custom"),
        ];
        assert_eq!(
            resolve(&args, &both).unwrap().endpoint,
            "https://m:1/custom"
        );
        let flag = OtlpArgs {
            otlp: Some("http://p:9090/api/v1/otlp".into()),
            ..OtlpArgs::default()
        };
        assert_eq!(
            resolve(&flag, &both).unwrap().endpoint,
            "http://p:9090/api/v1/otlp/v1/metrics"
        );
        let flag = OtlpArgs {
            otlp: Some("grpc://x".into()),
            ..OtlpArgs::default()
        };
        assert!(resolve(&flag, &[]).is_err());
    }

    #[test]
    fn headers_timeouts_and_resource_from_the_environment_flags_first() {
        let args = OtlpArgs {
            otlp: Some(String::new()),
            headers: vec!["api-key=flag".into()],
            timeout: Some(Duration::from_millis(250)),
            ..OtlpArgs::default()
        };
        let c = resolve(
            &args,
            &[
                ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=env,x-team=a%20b"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "5000"),
                ("OTEL_EXPORTER_OTLP_COMPRESSION", "GZIP"),
                ("OTEL_METRIC_EXPORT_INTERVAL", "1500"),
                ("OTEL_RESOURCE_ATTRIBUTES", "service.name=orders,env=prod"),
                ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta"),
            ],
        )
        .unwrap();
        assert_eq!(
            c.headers,
            vec![
                ("x-team".to_string(), "a b".to_string()),
                ("api-key".to_string(), "flag".to_string())
            ]
        );
        assert_eq!(c.timeout, Duration::from_millis(250));
        assert_eq!(c.interval, Duration::from_millis(1500));
        assert!(c.gzip);
        assert_eq!(c.temporality, Temporality::Delta);
        assert_eq!(c.service_name.as_deref(), Some("orders"));
        assert_eq!(
            c.resource_attributes,
            vec![("env".to_string(), "prod".to_string())]
        );
        let with_name = resolve(
            &args,
            &[
                ("OTEL_SERVICE_NAME", "billing"),
                ("OTEL_RESOURCE_ATTRIBUTES", "service.name=orders"),
            ],
        )
        .unwrap();
        assert_eq!(with_name.service_name.as_deref(), Some("billing"));
        let bare = OtlpArgs {
            otlp: Some(String::new()),
            ..OtlpArgs::default()
        };
        for bad in [
            ("OTEL_EXPORTER_OTLP_HEADERS", "novalue"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=b%0Ac"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "10s"),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/k.pem"),
        ] {
            assert!(resolve(&bare, &[bad]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn jitter_stays_within_half_to_one() {
        let mut j = Jitter::new();
        for _ in 0..1000 {
            let f = j.half_to_one();
            assert!((0.5..1.0).contains(&f), "{f}");
        }
    }
}
