//! `inspect histo <pid>` / `inspect histo --core <core>`: the class histogram read from outside
//! the JVM (no attach, no safepoint, no GC), printed as `jcmd <pid> GC.class_histogram -all`
//! prints it, or as JSON; `inspect heap`: the heap summary as `jcmd <pid> GC.heap_info`.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;

use crate::target::{CoreFileArgs, HoldArgs, Source};

/// `inspect histo` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect histo 4242                as `jcmd 4242 GC.class_histogram -all`\n  \
    inspect histo 4242 | head -20     the classes holding the most bytes\n  \
    inspect histo --core core.4242    from a core\n  \
    inspect histo --format json 4242")]
pub struct HistoArgs {
    /// The JVM's pid (omit with --core).
    #[arg(value_name = "PID")]
    pid: Option<i32>,
    #[command(flatten)]
    file: CoreFileArgs,
    #[command(flatten)]
    hold: HoldArgs,
    /// Leave out the `(module@version)` column.
    #[arg(long)]
    no_module: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: HistoFormat,
    /// Say how the histogram was taken (spaces, objects, reads, stop) on stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// How `inspect histo` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoFormat {
    /// As `jcmd <pid> GC.class_histogram -all`.
    Text,
    /// One JSON document: the rows, the spaces, what the walk skipped.
    Json,
}

/// Runs `inspect histo`. Exit status 1 when a space could not be walked to its top (the
/// histogram printed is then short of those objects; each space is named on stderr).
pub fn run(args: &HistoArgs) -> anyhow::Result<ExitCode> {
    let taken = match args.file.source(args.pid)? {
        Source::Live(pid) => live(pid, args)?,
        Source::Core(core) => hsinspect::pipeline::heap_histogram_core(
            core,
            args.file.exe.as_deref(),
            args.file.sysroot.as_deref(),
        )
        .with_context(|| format!("class histogram of core {}", core.display()))?,
    };
    crate::threads::say_how(&taken.details, &taken.warnings, args.verbose);
    for n in &taken.histogram.notes {
        eprintln!("warning: {n}");
    }
    let torn = taken.histogram.stats.torn;
    if torn > 0 {
        eprintln!(
            "warning: {torn} objects were being allocated (header not written yet): the rest of their threads' TLABs was skipped"
        );
    }
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match args.format {
        HistoFormat::Text => hsinspect::format::histogram::write_histogram(
            &mut out,
            &taken.histogram,
            !args.no_module,
        )?,
        HistoFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &taken.histogram)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(if taken.histogram.notes.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn live(pid: i32, args: &HistoArgs) -> anyhow::Result<hsinspect::pipeline::HeapHistogram> {
    crate::os::live_heap_and_flags("a class histogram of a live JVM")
        .and_then(|()| hsinspect::pipeline::heap_histogram(pid, &args.hold.heap_options()))
        .with_context(|| format!("class histogram of process {pid}"))
}

/// `inspect heap` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect heap 4242                 as `jcmd 4242 GC.heap_info`\n  \
    inspect heap --core core.4242     from a core\n  \
    inspect heap --format json 4242")]
pub struct HeapArgs {
    /// The JVM's pid (omit with --core).
    #[arg(value_name = "PID")]
    pid: Option<i32>,
    #[command(flatten)]
    file: CoreFileArgs,
    #[command(flatten)]
    hold: HoldArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: HistoFormat,
    /// Say how the summary was read (model, stop) on stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// Runs `inspect heap`.
pub fn run_summary(args: &HeapArgs) -> anyhow::Result<ExitCode> {
    let taken = match args.file.source(args.pid)? {
        Source::Live(pid) => live_summary(pid, args)?,
        Source::Core(core) => hsinspect::pipeline::heap_summary_core(
            core,
            args.file.exe.as_deref(),
            args.file.sysroot.as_deref(),
        )
        .with_context(|| format!("heap summary of core {}", core.display()))?,
    };
    crate::threads::say_how(&taken.details, &taken.warnings, args.verbose);
    let mut out = io::BufWriter::new(io::stdout().lock());
    match args.format {
        HistoFormat::Text => hsinspect::format::heap_info::write_heap_info(&mut out, &taken.info)?,
        HistoFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &taken.info)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn live_summary(pid: i32, args: &HeapArgs) -> anyhow::Result<hsinspect::pipeline::HeapSummary> {
    crate::os::live_heap_and_flags("a heap summary of a live JVM")
        .and_then(|()| hsinspect::pipeline::heap_summary(pid, &args.hold.heap_options()))
        .with_context(|| format!("heap summary of process {pid}"))
}
