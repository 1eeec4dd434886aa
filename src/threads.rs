//! `inspect threads <pid>` / `inspect threads --core <core>`: a thread dump read from outside the
//! JVM (no attach, no safepoint), printed as `jcmd <pid> Thread.print` prints it, or as JSON.

use std::io::{self, Write};

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::target::{CoreFileArgs, HoldArgs, Source};

/// `inspect threads` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect threads 4242                     as `jcmd 4242 Thread.print`, threads held briefly\n  \
    inspect threads --no-stop 4242           without holding any thread (frames may be torn)\n  \
    inspect threads --virtual 4242           also the virtual threads no carrier runs\n  \
    inspect threads -l 4242                  every thread's ownable synchronizers (a heap walk)\n  \
    inspect threads --core core.4242         from a core (gcore, the kernel's, a minidump)")]
pub struct ThreadsArgs {
    /// The JVM's pid (omit with --core).
    #[arg(value_name = "PID")]
    pid: Option<i32>,
    #[command(flatten)]
    file: CoreFileArgs,
    #[command(flatten)]
    hold: HoldArgs,
    /// Also list the virtual threads no carrier runs (JDK 21+): those of the JVM's thread
    /// containers (as `jcmd <pid> Thread.dump_to_file` finds them), with their frames read from
    /// their stack chunks in the heap. The JVM stays held while they are read: about 11 µs a
    /// virtual thread (2.2 s for 200,000).
    #[arg(long = "virtual")]
    virtual_threads: bool,
    /// Also walk the heap for every ownable synchronizer a thread owns (a `ReentrantLock`, a
    /// read-write lock, a pool worker's lock), as `jcmd <pid> Thread.print -l` lists them
    /// under "Locked ownable synchronizers", `- None` for a thread that owns none. The JVM is
    /// held (every thread, outside any stop-the-world collection) for the walk of its heap too:
    /// about as long as `inspect histo`. Without it, only those another thread waits on are
    /// listed.
    #[arg(short = 'l', long)]
    locks: bool,
    /// Which threads to hold for the walk: `running` (Linux): every thread walked with the JVM
    /// running, and only those that ran during the walk held, each walked again; a parked
    /// thread is never held (every thread is, if a collection ran meanwhile, under ZGC and
    /// Shenandoah, with --locks, and on Windows: -v says why); or `all`: every thread, for the
    /// whole walk.
    #[arg(long, value_enum, default_value = "running")]
    hold_threads: HoldThreads,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ThreadsFormat,
    /// Say how the dump was taken (stop figures, reads) on stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// Which threads `inspect threads` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HoldThreads {
    /// Every thread, for the whole walk.
    All,
    /// Only those that run during the walk.
    Running,
}

/// How `inspect threads` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ThreadsFormat {
    /// As `jcmd <pid> Thread.print`.
    Text,
    /// One JSON document: the threads, their identity, state and frames.
    Json,
}

/// Prints how a reading was taken on stderr: its `-v` details when `verbose`, and its warnings.
pub fn say_how(
    details: &[impl std::fmt::Display],
    warnings: &[impl std::fmt::Display],
    verbose: bool,
) {
    if verbose {
        for d in details {
            eprintln!("{d}");
        }
    }
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

/// Runs `inspect threads`.
pub fn run(args: &ThreadsArgs) -> anyhow::Result<ExitCode> {
    let taken = match args.file.source(args.pid)? {
        Source::Live(pid) => live(pid, args)?,
        Source::Core(core) => hsinspect::pipeline::dump_threads_core(
            core,
            args.file.exe.as_deref(),
            args.file.sysroot.as_deref(),
            &hsinspect::pipeline::ThreadsOptions {
                virtual_threads: args.virtual_threads,
                ownable_synchronizers: args.locks,
                ..Default::default()
            },
        )
        .with_context(|| format!("thread dump of core {}", core.display()))?,
    };
    say_how(&taken.details, &taken.warnings, args.verbose);
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match args.format {
        ThreadsFormat::Text => hsinspect::format::thread_dump::write_jcmd(&taken.dump, &mut out)?,
        ThreadsFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &taken.dump)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    let code = match &taken.dump.virtual_threads_error {
        Some(e) => {
            eprintln!("error: virtual threads not read: {e}");
            ExitCode::FAILURE
        }
        None => ExitCode::SUCCESS,
    };
    // The process ends next: its memory goes back whole, so the dump (every frame's strings:
    // 27,000 frames on a JVM of 1,000 threads) is not freed piece by piece.
    std::mem::forget(taken);
    Ok(code)
}

fn live(pid: i32, args: &ThreadsArgs) -> anyhow::Result<hsinspect::pipeline::ThreadDump> {
    let opts = hsinspect::pipeline::ThreadsOptions {
        stop: !args.hold.no_stop,
        stop_timeout: Duration::from_millis(args.hold.stop_timeout),
        virtual_threads: args.virtual_threads,
        wait: Duration::from_millis(args.hold.wait),
        hold_running: args.hold_threads == HoldThreads::Running,
        ownable_synchronizers: args.locks,
    };
    hsinspect::pipeline::dump_threads(pid, &opts)
        .with_context(|| format!("thread dump of process {pid}"))
}
