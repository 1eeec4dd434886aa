//! `inspect`: print a HotSpot JVM's PerfData counters from outside the JVM.
//!
//! The binary edge: argument parsing (clap) and error reporting (anyhow). Each subcommand has
//! its own file (`stat.rs`, `list.rs`, `serve/`, `top/`; `os/elsewhere.rs` for what other OSes
//! lack); the plain counter listing (`inspect [-F] <target> [patterns]`) is here, with its formats
//! in `output.rs` and the sampling loop `--interval` and `stat` share in `sampling.rs`. OS code
//! sits behind seams chosen once: `os/` (which commands exist, the allocator, the multi-call
//! names, Ctrl-C, the live reads an OS refuses), `serve/os/` (signals, the Windows service) and
//! `top/os/` (`/proc` or toolhelp, the terminal).

mod cpu;
mod heap;
mod heapdump;
mod info;
mod multicall;
mod os;
mod output;
mod pods;
mod sampling;
mod stat;
mod target;
mod threads;
// `list`, `serve` and `top` find JVMs on Linux and Windows: elsewhere they say how to do
// without them. The OS seam chooses (`os/mod.rs`).
use os::{list, serve, top};

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;
use hsinspect::format::{self, Filter};
use hsinspect::{Reading, Sampler, Target};
use target::TargetArgs;

const EXAMPLES: &str = "\
Examples:
  inspect -F 4242                  every counter of JVM 4242, read from its memory (works on hung
                                   JVMs and with -XX:+PerfDisableSharedMem); same output as
                                   `jcmd 4242 PerfCounter.print`
  inspect 4242                     the same from its hsperfdata file (no ptrace needed)
  inspect -F 4242 sun.gc.collector 'java.threads.*'
                                   only counters with that prefix or matching that glob
  inspect --no-stop -F 4242        read without stopping the JVM (for frequent sampling)
  inspect /tmp/hsperfdata_app/4242 a saved or copied hsperfdata file
  inspect --core core.4242 sun.gc  counters of a dead JVM from its core file (crash or gcore)
  inspect --core core.4242 --sysroot /srv/box1
                                   a core from another machine, its JDK copied under /srv/box1
  inspect --core hs_err_pid4242.mdmp
                                   a Windows JVM's minidump with full memory, on any OS
  inspect --save out.hsperf -F 4242
                                   also write the raw region, readable later by `inspect out.hsperf`

Permissions: -F needs ptrace access: root, the JVM's own user (when kernel.yama.ptrace_scope is 0),
or CAP_SYS_PTRACE (in a container: --cap-add SYS_PTRACE). Without it, `inspect <pid>` reads the
hsperfdata file, which the JVM's user and root can read.";

/// Read HotSpot JVM performance counters (PerfData / hsperfdata) from outside the JVM.
#[derive(Debug, Parser)]
#[command(
    name = "inspect",
    version,
    about,
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// A JVM's pid, or the path of an hsperfdata file. With --core: the first counter pattern.
    target: Option<String>,

    /// Counters to print: a name prefix, or a glob (`*`, `?`, `[..]`) over the whole name.
    patterns: Vec<String>,

    #[command(flatten)]
    target_args: TargetArgs,

    /// Also write the raw PerfData region to this file (never over an existing one).
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,

    /// Output format: `text` (jcmd's), `json` (JSON Lines) or `prometheus` (exposition format 0.0.4).
    #[arg(long, value_enum, default_value_t)]
    format: output::OutputFormat,

    #[command(flatten)]
    dialects: output::DialectArgs,

    /// Say on stderr which path and symbols were used, where the region is, how long the JVM was stopped.
    #[arg(short, long)]
    verbose: bool,

    /// Sample repeatedly at this interval (`250`, `250ms`, `5s`; milliseconds by default), an
    /// empty line between samples.
    #[arg(long, value_name = "DUR", value_parser = sampling::parse_interval, conflicts_with_all = ["core", "save"])]
    interval: Option<Duration>,

    /// With --interval: stop after this many samples (default: until the JVM exits).
    #[arg(long, value_name = "N", value_parser = sampling::parse_count, requires = "interval")]
    count: Option<u64>,
}

/// The subcommands; with none, `inspect` prints counters (or, with no target, lists JVMs).
#[derive(Debug, clap::Subcommand)]
enum Command {
    /// jstat's views (`-gcutil`, `-class`, ...) of any target, sampled at an interval.
    Stat(stat::StatArgs),
    /// Every HotSpot JVM on this host, and how each can be read.
    List(list::ListArgs),
    /// A Prometheus exporter for every JVM on this host.
    Serve(Box<serve::ServeArgs>),
    /// A live view of every JVM on this host, with rates (GC%, allocation, ...); `-b` for batch.
    Top(top::TopArgs),
    /// A thread dump (as `jcmd <pid> Thread.print`) read from outside: no attach, no safepoint;
    /// live (threads held briefly as with -F) or from a core.
    Threads(threads::ThreadsArgs),
    /// A class histogram (as `jcmd <pid> GC.class_histogram -all`) read from outside: no
    /// attach, no GC; Serial, Parallel and G1 heaps, live (threads held as with -F) or a core.
    Histo(heap::HistoArgs),
    /// The heap summary (as `jcmd <pid> GC.heap_info`) read from outside: each generation's
    /// reservation, commit and spaces, G1's regions, ZGC's capacity, then Metaspace; live or a
    /// core.
    Heap(heap::HeapArgs),
    /// An HPROF heap dump (as `jcmd <pid> GC.heap_dump -all`) read from outside: no attach, no
    /// safepoint, no GC; live (threads held as with -F) or a core. For MAT and VisualVM.
    Heapdump(heapdump::HeapdumpArgs),
    /// The VM's flags and command line (as `jinfo -flags` and jinfo's `VM Arguments:`) read
    /// from outside: no attach; live (nothing held) or from a core.
    Info(info::InfoArgs),
    /// The busiest threads over an interval with their stack snapshots, as Elasticsearch's hot
    /// threads: CPU from /proc, stacks walked from outside holding only the threads that run.
    Hot(cpu::HotArgs),
    /// Sample the running Java threads at a rate and write a flame graph (SVG), a speedscope
    /// file or collapsed stacks: no agent, no safepoint bias; parked threads never held.
    Record(cpu::RecordArgs),
    /// Make links named as the JDK's tools (jstack, jmap, jinfo, jstat, jcmd, jps) to this binary in
    /// DIR: called through them, inspect takes those tools' command lines for what it does.
    #[command(after_help = "Examples:\n  \
        inspect links /usr/local/bin     then `jstack 4242`, `jmap -histo 4242`, `jinfo -flags 4242`,\n                                   `jstat -gcutil 4242 1s`, `jcmd 4242 Thread.print` work without a JDK")]
    Links {
        /// The directory to make the links in.
        dir: PathBuf,
    },
    /// Print a shell completion script (`inspect completions bash > /etc/bash_completion.d/inspect`).
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page inspect(1) (roff) on stdout, or write it and one page per subcommand
    /// (inspect-stat(1), ...) into a directory.
    #[command(hide = true)]
    Manpage {
        /// Write inspect.1 and `inspect-<subcommand>.1` here instead of printing inspect.1.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    os::init_allocator();
    // Called as jstack, jmap, jinfo, jstat or jcmd (a link of `inspect links`): that tool's
    // command line, rewritten into inspect's.
    // `inspect jstack 4242` likewise (busybox's form; what the FROM scratch image, whose
    // entrypoint is inspect, answers to).
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.first().and_then(multicall::tool_of).is_none()
        && argv.get(1).and_then(multicall::tool_of).is_some()
        && argv
            .get(1)
            .is_some_and(|a| !std::path::Path::new(a).exists())
    {
        argv.remove(0);
    }
    let (cli, pid_line) = match argv.first().and_then(multicall::tool_of) {
        Some(tool) => {
            let args: Vec<String> = argv[1..]
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            match multicall::rewrite(tool, &args) {
                Ok(rw) => {
                    if let Some(note) = &rw.note {
                        eprintln!("{tool}: note: {note}");
                    }
                    let line = std::iter::once("inspect".to_string()).chain(rw.args);
                    (Cli::parse_from(line), rw.pid_line)
                }
                Err(e) => {
                    eprintln!("{tool}: {e:#}");
                    return ExitCode::from(2);
                }
            }
        }
        None => (Cli::parse(), None),
    };
    if let Some(line) = pid_line {
        println!("{line}");
    }
    let result = match &cli.command {
        Some(Command::Stat(args)) => stat::run(args),
        Some(Command::List(args)) => list::run(args),
        Some(Command::Serve(args)) => serve::run(args),
        Some(Command::Top(args)) => top::run(args),
        Some(Command::Threads(args)) => threads::run(args),
        Some(Command::Histo(args)) => heap::run(args),
        Some(Command::Heap(args)) => heap::run_summary(args),
        Some(Command::Heapdump(args)) => heapdump::run(args),
        Some(Command::Info(args)) => info::run(args),
        Some(Command::Hot(args)) => cpu::run_hot(args),
        Some(Command::Record(args)) => cpu::run_record(args),
        Some(Command::Links { dir }) => multicall::make_links(dir),
        Some(Command::Completions { shell }) => completions(*shell),
        Some(Command::Manpage { out_dir }) => manpage(out_dir.as_deref()),
        None if cli.target.is_none() && cli.target_args.core.is_none() => {
            list::run(&list::ListArgs::default())
        }
        None => run(&cli),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("inspect: {e:#}");
            // What this build or OS cannot do at all is a usage error (2), as for bad arguments.
            let unsupported = e.chain().any(|c| {
                matches!(
                    c.downcast_ref::<hsinspect::Error>(),
                    Some(hsinspect::Error::Unsupported { .. })
                )
            });
            if unsupported {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// `inspect completions <shell>`: clap_complete's script for the whole command tree.
fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    use clap::CommandFactory;
    clap_complete::generate(shell, &mut Cli::command(), "inspect", &mut io::stdout());
    Ok(ExitCode::SUCCESS)
}

/// `inspect manpage [--out-dir DIR]`: clap_mangen's inspect(1), and with a directory one page
/// per subcommand too.
fn manpage(out_dir: Option<&std::path::Path>) -> anyhow::Result<ExitCode> {
    use clap::CommandFactory;
    let cmd = Cli::command();
    if let Some(dir) = out_dir {
        // one page per visible subcommand (inspect-stat.1 ...), this hidden one left out
        clap_mangen::generate_to(cmd, dir)
            .with_context(|| format!("writing man pages into {}", dir.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = BufWriter::new(io::stdout().lock());
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .and_then(|()| out.flush())
        .context("writing the man page")?;
    Ok(ExitCode::SUCCESS)
}

/// The counter patterns: with --core the positional TARGET is the first of them.
fn patterns(cli: &Cli) -> Vec<String> {
    match (&cli.target_args.core, &cli.target) {
        (Some(_), Some(first)) => std::iter::once(first.clone())
            .chain(cli.patterns.iter().cloned())
            .collect(),
        _ => cli.patterns.clone(),
    }
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    if cli.dialects.names != hsinspect::format::dialect::Names::hotspot()
        && cli.format != output::OutputFormat::Prometheus
    {
        bail!("--names applies to --format prometheus (and to inspect serve)");
    }
    let patterns = patterns(cli);
    let filter = Filter::new(&patterns).context("bad counter pattern")?;
    if let Some(interval) = cli.interval {
        let schedule = sampling::Schedule {
            interval,
            count: cli.count,
        };
        return sampling::run_listing(
            &mut Sampler::new(source(cli)?),
            &filter,
            schedule,
            cli.format,
            &cli.dialects,
        );
    }
    let reading = read(cli)?;
    if cli.verbose {
        for d in &reading.details {
            eprintln!("inspect: {d}");
        }
    }
    for w in &reading.warnings {
        eprintln!("inspect: warning: {w}");
    }
    if let Some(path) = &cli.save {
        save(path, &reading.bytes)?;
    }
    let counters = format::sorted(&reading.snapshot, &filter);
    if counters.is_empty() && !filter.is_empty() {
        bail!("no counter matches {}", patterns.join(" "));
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let pid = reading.pid;
    let taken = std::time::SystemTime::now();
    let written = output::write(
        &mut out,
        cli.format,
        &cli.dialects,
        pid,
        taken,
        &reading.snapshot,
        &counters,
    )
    .and_then(|skipped| out.flush().map(|()| skipped));
    match written {
        Ok(skipped) => {
            for c in skipped {
                eprintln!(
                    "inspect: warning: counter {} has a value jcmd cannot show ({:?}); left out",
                    c.name, c.value
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e).context("writing the counters"),
    }
}

/// The target named on the command line.
fn source(cli: &Cli) -> anyhow::Result<Target> {
    cli.target_args.target(cli.target.as_deref())
}

fn read(cli: &Cli) -> anyhow::Result<Reading> {
    let mut sampler = Sampler::new(source(cli)?);
    let reading = sampler.sample()?;
    if let Some(refused) = &reading.fallback {
        eprintln!("inspect: {refused}");
    }
    Ok(reading)
}

fn save(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("--save {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("--save {}", path.display()))?;
    Ok(())
}
