//! `--format text|json|prometheus` for the plain counter listing.

use std::io::{self, Write};
use std::time::SystemTime;

use hsinspect::Pid;
use hsinspect::format::dialect::{self, ApplicationRule, Names};
use hsinspect::format::{self, json, prometheus};
use hsinspect::perfdata::{Counter, Snapshot};

/// `--names` and `--application`: which metric dialects a Prometheus page carries.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DialectArgs {
    /// Metric names: `hotspot` (every PerfData counter, this tool's naming), `micrometer`,
    /// `client_java` (1.x; also jmx_exporter's agent), `client_java_0` (simpleclient_hotspot),
    /// `otel` (OpenTelemetry semantic conventions); a comma-separated list when they do not
    /// collide on a name.
    #[arg(long, value_name = "LIST", default_value = "hotspot", value_parser = parse_names)]
    pub names: Names,

    /// The `application` label of JVMs whose main class or jar path matches GLOB (`*` crosses
    /// `/`); repeat for more, first match wins. Default: the jar's name without `.jar`, else the
    /// main class's simple name.
    #[arg(long = "application", value_name = "NAME=GLOB", value_parser = parse_application)]
    pub applications: Vec<ApplicationRule>,

    #[command(flatten)]
    pub host_root: crate::pods::HostRootArg,
}

fn parse_names(s: &str) -> Result<Names, String> {
    Names::parse(s).map_err(|e| e.to_string())
}

fn parse_application(s: &str) -> Result<ApplicationRule, String> {
    ApplicationRule::parse(s)
}

/// This host's name, for the dialects' `instance` label: the kernel's hostname on Linux,
/// `COMPUTERNAME` on Windows, else `localhost`.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// How counters are printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// `jcmd PerfCounter.print`'s `name=value` lines.
    #[default]
    Text,
    /// JSON Lines: one object per sample (pid, time, each counter's value, units, variability).
    Json,
    /// Prometheus text exposition format 0.0.4 (see docs/output-formats.md: metric naming).
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
    dialects: &DialectArgs,
    pid: Option<Pid>,
    taken: SystemTime,
    snapshot: &Snapshot,
    counters: &[&'a Counter],
) -> io::Result<Vec<&'a Counter>> {
    match fmt {
        OutputFormat::Text => format::write_jcmd(out, counters),
        OutputFormat::Json => json::write_json_line(out, pid, taken, counters),
        OutputFormat::Prometheus => {
            let pid_number = pid;
            let mut page = prometheus::Exposition::new();
            // A live JVM's container: the labels serve gives it.
            let root = dialects.host_root.host_root.as_deref();
            let container = pid.and_then(|p| {
                hsinspect::container::identify(p, root.unwrap_or(std::path::Path::new("/")))
            });
            let pid = pid.map(|p| p.to_string());
            let mut labels: Vec<(&str, String)> = pid.iter().map(|p| ("pid", p.clone())).collect();
            labels.extend(container.iter().flat_map(|c| c.labels()));
            let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
            if dialects.names.has(dialect::Dialect::Hotspot) {
                page.add_counters(counters, snapshot.long("sun.os.hrt.frequency"), &labels);
            }
            if dialects.names.needs_jvm_metrics() {
                add_dialects(
                    &mut page,
                    dialects,
                    pid_number,
                    container.as_ref(),
                    taken,
                    snapshot,
                );
            }
            page.write(out)?;
            Ok(Vec::new())
        }
    }
}

/// The dialect families of one JVM. A live JVM's (`pid` given) also get its process's usage and
/// `instance`/`pid` labels; a file or core gets `application` only.
fn add_dialects(
    page: &mut prometheus::Exposition,
    dialects: &DialectArgs,
    pid: Option<Pid>,
    container: Option<&hsinspect::container::ContainerIdentity>,
    taken: SystemTime,
    snapshot: &Snapshot,
) {
    let command = match snapshot.get("sun.rt.javaCommand").map(|c| &c.value) {
        Some(hsinspect::perfdata::Value::String(s)) => s.as_str(),
        _ => "",
    };
    let main = hsinspect::perfdata::java_command::jps_main(command);
    let host = host_name();
    dialect::add_reading(
        page,
        &dialects.names,
        &dialects.applications,
        snapshot,
        main,
        pid.map(|p| (host.as_str(), p)),
        container,
        taken,
        None,
    );
}
