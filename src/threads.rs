//! `inspect threads <pid>` / `inspect threads --core <core>`: a thread dump read from outside the
//! JVM (no attach, no safepoint), printed as `jcmd <pid> Thread.print` prints it, or as JSON.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};

/// The post-mortem flags of the commands that read the VM (`inspect threads`, `inspect histo`):
/// a core instead of a live pid, and where its libjvm is.
#[derive(Debug, clap::Args)]
pub struct CoreFileArgs {
    /// Read a core file instead of a live process: an ELF core, or (`threads` only) a Windows
    /// JVM's full-memory minidump (`hs_err_pid<pid>.mdmp`, `procdump -ma`).
    #[arg(long, value_name = "CORE")]
    pub core: Option<PathBuf>,
    /// With --core: the java launcher or libjvm.so the JVM ran.
    #[arg(long, value_name = "PATH", requires = "core")]
    pub exe: Option<PathBuf>,
    /// With --core: a directory holding the dead process's files under their own paths.
    #[arg(long, value_name = "DIR", requires = "core")]
    pub sysroot: Option<PathBuf>,
}

/// What a command reads: a live JVM or a core.
pub enum Source<'a> {
    /// The live process.
    Live(i32),
    /// The core file.
    Core(&'a std::path::Path),
}

impl CoreFileArgs {
    /// The core to read or the live pid, refusing both or neither.
    ///
    /// # Errors
    /// Both a pid and --core, or neither.
    pub fn source(&self, pid: Option<i32>) -> anyhow::Result<Source<'_>> {
        match (&self.core, pid) {
            (Some(_), Some(_)) => bail!("give either a pid or --core, not both"),
            (None, None) => bail!("give the JVM's pid, or --core <core>"),
            (Some(core), None) => Ok(Source::Core(core)),
            (None, Some(pid)) => Ok(Source::Live(pid)),
        }
    }
}

/// How the commands that read a live VM (`inspect threads`, `inspect histo`) hold it, as
/// `inspect -F` does.
#[derive(Debug, clap::Args)]
pub struct HoldArgs {
    /// Do not stop the threads while reading (frames may be torn; a heap walk may meet objects
    /// being written and end a space early, with a note).
    #[arg(long)]
    pub no_stop: bool,
    /// Longest time the stop may take, in milliseconds, as for `inspect -F` (threads not stopped
    /// by then are read running, with a warning).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub stop_timeout: u64,
    /// Longest time to wait for another tracer's hold to end (another `inspect` reading the
    /// JVM, which lasts milliseconds), in milliseconds, as for `inspect -F`.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    pub wait: u64,
}

/// `inspect threads` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect threads 4242                     as `jcmd 4242 Thread.print -l`, threads held briefly\n  \
    inspect threads --no-stop 4242           without holding any thread (frames may be torn)\n  \
    inspect threads --virtual 4242           also the virtual threads no carrier runs\n  \
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
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ThreadsFormat,
    /// Say how the dump was taken (stop figures, reads) on stderr.
    #[arg(short, long)]
    verbose: bool,
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
            args.virtual_threads,
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
    if let Some(e) = &taken.dump.virtual_threads_error {
        eprintln!("error: virtual threads not read: {e}");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(all(any(target_os = "linux", windows), feature = "live"))]
fn live(pid: i32, args: &ThreadsArgs) -> anyhow::Result<hsinspect::pipeline::ThreadDump> {
    let opts = hsinspect::pipeline::ThreadsOptions {
        stop: !args.hold.no_stop,
        stop_timeout: Duration::from_millis(args.hold.stop_timeout),
        virtual_threads: args.virtual_threads,
        wait: Duration::from_millis(args.hold.wait),
    };
    hsinspect::pipeline::dump_threads(pid, &opts)
        .with_context(|| format!("thread dump of process {pid}"))
}

#[cfg(not(all(any(target_os = "linux", windows), feature = "live")))]
fn live(pid: i32, _args: &ThreadsArgs) -> anyhow::Result<hsinspect::pipeline::ThreadDump> {
    let _ = Duration::ZERO;
    Err(hsinspect::Error::Unsupported {
        what: "a thread dump of a live JVM",
        os: std::env::consts::OS,
    })
    .with_context(|| format!("thread dump of process {pid}"))
}
