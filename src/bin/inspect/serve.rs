//! `inspect serve`: a Prometheus exporter for every JVM on this host ([`hsinspect::serve`]).

use std::net::{SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use hsinspect::serve::{self, Exporter, Selection};

/// The arguments of `inspect serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address and port to listen on. Loopback by default: give `0.0.0.0:<port>` (or a host
    /// address) for Prometheus on another machine.
    #[arg(long, default_value = "127.0.0.1:9779", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,

    /// Export only this JVM (host pid); repeat for more.
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<i32>,

    /// Export only JVMs of this user (name or uid); repeat for more.
    #[arg(long = "user", value_name = "NAME")]
    pub users: Vec<String>,

    /// Export only JVMs whose main class or jar path matches this glob (`*` also crosses `/`).
    #[arg(long = "match", value_name = "GLOB")]
    pub main: Option<String>,

    /// Do not use or fill the per-build symbol cache (~/.cache/hsinspect).
    #[arg(long)]
    pub no_cache: bool,
}

/// Runs `inspect serve` until SIGTERM or SIGINT.
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    serve::block_stop_signals().context("blocking SIGTERM/SIGINT")?;
    // Each scan's worker threads would otherwise each get a glibc malloc arena of their own,
    // which keeps freed pages: two arenas keep the exporter's memory flat and small.
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets an allocator parameter; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
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
    };
    let listener = TcpListener::bind(args.listen)
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr().context("listening socket")?;
    eprintln!("inspect serve: http://{addr}/metrics");
    if !addr.ip().is_loopback() {
        eprintln!(
            "inspect serve: not on loopback: whoever reaches {addr} reads every JVM's counters, \
             main class and user (no authentication)"
        );
    }
    let exporter = Arc::new(Exporter::new(selection, !args.no_cache));
    serve::serve_until_signalled(listener, exporter).context("serving")?;
    eprintln!("inspect serve: stopped");
    Ok(ExitCode::SUCCESS)
}
