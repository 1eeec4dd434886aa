//! `inspect serve`: a Prometheus exporter for every JVM on this host ([`hsinspect::serve`]).
//!
//! Its memory is bounded by construction: a fixed pool of [`http::WORKERS`] threads behind a
//! queue of 64 connections, a fixed request-head buffer, one scan at a time whose page is shared
//! by every connection that asked during it (an `Arc`, never copied), and free heap handed back
//! after each scan. Over 10,000 scrapes by 8 clients its anonymous memory stays within a few KiB
//! after warm-up (about 3 MiB in all); VmRSS moves with the binary's own file pages as code runs
//! for the first time, which is not a leak (`serve::memory_and_fds_flat_over_10000_scrapes`).

pub(crate) mod http;
mod os;
mod otlp;
mod web;

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use hsinspect::format::prometheus;
use hsinspect::serve::{Dialects, Exporter, Selection, index_page};

use hsinspect::Pid;
pub use os::Stop;
use web::Web;

/// The arguments of `inspect serve`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect serve                                 every JVM on http://127.0.0.1:9779/metrics\n  \
    inspect serve --listen 0.0.0.0:9779 --names micrometer\n  \
    inspect serve --web.config.file web.yml       TLS and Basic auth (Prometheus's web config)\n  \
    inspect serve --otlp http://collector:4318 --no-metrics")]
pub struct ServeArgs {
    /// Address and port to listen on. Loopback by default: give `0.0.0.0:<port>` (or a host
    /// address) for Prometheus on another machine.
    #[arg(
        long,
        visible_alias = "web.listen-address",
        default_value = "127.0.0.1:9779",
        value_name = "ADDR:PORT"
    )]
    pub listen: SocketAddr,

    /// TLS and Basic authentication from a Prometheus exporter-toolkit web configuration file
    /// (tls_server_config, basic_auth_users, http_server_config.headers), as node_exporter
    /// takes it. Read again for each connection: new users and certificates need no restart.
    #[arg(long = "web.config.file", value_name = "FILE")]
    pub web_config_file: Option<PathBuf>,

    /// Export only this JVM (host pid); repeat for more.
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<Pid>,

    /// Export only JVMs of this user (name or uid); repeat for more.
    #[arg(long = "user", value_name = "NAME")]
    pub users: Vec<String>,

    /// Export only JVMs whose main class or jar path matches this glob (`*` also crosses `/`).
    #[arg(long = "match", value_name = "GLOB")]
    pub main: Option<String>,

    /// Do not use or fill the per-build symbol cache (~/.cache/hsinspect).
    #[arg(long)]
    pub no_cache: bool,

    /// Also count each JVM's Java threads by state (RUNNABLE, BLOCKED, WAITING, ...), read from
    /// its memory without stopping it, and export them as each dialect's thread-state family
    /// (hotspot_threads_state, Micrometer's jvm_threads_states_threads, client_java's
    /// jvm_threads_state, OpenTelemetry's jvm_thread_count with jvm_thread_state). Needs the
    /// right to read the JVMs' memory (root, or CAP_SYS_PTRACE); costs about 0.1 ms a JVM a
    /// scrape (see docs/serve.md).
    #[arg(long)]
    pub thread_states: bool,

    #[command(flatten)]
    pub pods: crate::pods::PodArgs,

    #[command(flatten)]
    pub dialects: crate::output::DialectArgs,

    #[command(flatten)]
    pub otlp: otlp::OtlpArgs,

    /// Say on stderr how each OTLP push went (JVMs, points, bytes, requests, time).
    #[arg(short, long)]
    pub verbose: bool,

    #[command(flatten)]
    pub service: os::ServiceArgs,
}

/// Runs `inspect serve` until SIGTERM or SIGINT (Windows: Ctrl-C, Ctrl-Break, the console's
/// close); on Windows, or installs, uninstalls or runs it as a service (`os::service_command`,
/// which calls [`serve`] with `Stop::Service`).
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    if let Some(done) = os::service_command(args) {
        return done;
    }
    serve(args, Stop::Console)
}

/// Serves until `stop` says so.
pub fn serve(args: &ServeArgs, stop: Stop) -> anyhow::Result<ExitCode> {
    os::prepare()?;
    let main = match &args.main {
        Some(g) => Some(
            globset::GlobBuilder::new(g)
                .literal_separator(false)
                .build()
                .with_context(|| format!("--match {g}"))?
                .compile_matcher(),
        ),
        None => None,
    };
    let selection = Selection {
        pids: args.pids.clone(),
        users: args.users.clone(),
        main,
        pods: args.pods.filter()?,
    };
    let web = match &args.web_config_file {
        Some(path) => Some(Arc::new(
            Web::open(path).map_err(|e| anyhow::anyhow!("--web.config.file: {e}"))?,
        )),
        None => None,
    };
    let push = match &args.otlp.otlp {
        Some(_) => {
            let cfg = otlp::Config::resolve(&args.otlp, &|k| std::env::var(k).ok())
                .map_err(|e| anyhow::anyhow!("--otlp: {e}"))?;
            let agent = cfg.agent().map_err(|e| anyhow::anyhow!("--otlp: {e}"))?;
            Some((cfg, agent))
        }
        None => None,
    };
    let stats = Arc::new(hsinspect::serve::push::PushStats::default());
    let mut exporter = Exporter::new(selection, !args.no_cache)
        .with_dialects(Dialects {
            names: args.dialects.names.clone(),
            applications: args.dialects.applications.clone(),
            host: crate::output::host_name(),
        })
        .with_host_root(args.dialects.host_root.host_root.clone())
        .with_thread_states(args.thread_states);
    if push.is_some() {
        exporter = exporter.with_push_stats(Arc::clone(&stats));
    }
    let exporter = Arc::new(exporter);
    let listener = if args.otlp.no_metrics {
        None
    } else {
        Some(
            TcpListener::bind(args.listen)
                .with_context(|| format!("cannot listen on {}", args.listen))?,
        )
    };
    let addr = match &listener {
        Some(l) => Some(l.local_addr().context("listening socket")?),
        None => None,
    };
    if let Some(addr) = addr {
        let scheme = if web.as_ref().is_some_and(|w| w.speaks_tls()) {
            "https"
        } else {
            "http"
        };
        eprintln!("inspect serve: {scheme}://{addr}/metrics");
        let open = match &web {
            None => Some("no authentication"),
            Some(w) => w.unauthenticated(),
        };
        if let Some(open) = open.filter(|_| !addr.ip().is_loopback()) {
            eprintln!(
                "inspect serve: not on loopback: whoever reaches {addr} reads every JVM's counters, \
                 main class and user ({open})"
            );
        }
    }
    let flag = os::stop_flag(stop, addr)?;
    let pusher = push.map(|(cfg, agent)| {
        eprintln!(
            "inspect serve: pushing OTLP to {} every {:.3} s",
            cfg.endpoint,
            cfg.interval.as_secs_f64()
        );
        let exporter = Arc::clone(&exporter);
        let stop = Arc::clone(&flag);
        let verbose = args.verbose;
        std::thread::spawn(move || otlp::run(exporter, cfg, agent, stats, stop, verbose))
    });
    let Some(listener) = listener else {
        if let Some(p) = pusher {
            let _ = p.join();
        }
        eprintln!("inspect serve: stopped");
        return Ok(ExitCode::SUCCESS);
    };
    let handler = Arc::new(move |req: &http::Request| handle(&exporter, req));
    http::run(listener, handler, web, Arc::clone(&flag)).context("serving")?;
    if let Some(p) = pusher {
        let _ = p.join();
    }
    eprintln!("inspect serve: stopped");
    Ok(ExitCode::SUCCESS)
}

/// Answers one HTTP request: `GET /metrics`, `GET /`; 405 for another method on those, 404
/// for any other path.
fn handle(exporter: &Exporter, req: &http::Request) -> http::Response {
    let known = matches!(req.path.as_str(), "/" | "/metrics");
    if !known {
        return http::Response::text(404, "not found: try /metrics\n");
    }
    if req.method != "GET" {
        let mut r = http::Response::text(405, "only GET\n");
        r.headers.push("Allow: GET".into());
        return r;
    }
    let scrape = exporter.scrape();
    if req.path == "/metrics" {
        http::Response {
            status: 200,
            content_type: prometheus::CONTENT_TYPE,
            headers: Vec::new(),
            body: Arc::from(Arc::clone(&scrape.page)),
        }
    } else {
        http::Response {
            status: 200,
            content_type: "text/html; charset=utf-8",
            headers: Vec::new(),
            body: Arc::from(index_page(&scrape).into_bytes()),
        }
    }
}
