//! `inspect heapdump <pid> -o FILE` / `inspect heapdump --core <core> -o FILE`: an HPROF heap
//! dump ("JAVA PROFILE 1.0.2", what `jcmd <pid> GC.heap_dump -all` writes) read from outside
//! the JVM: no attach, no safepoint, no GC; for Eclipse MAT, VisualVM or IntelliJ.
//!
//! The file is never half-written under its name: the dump goes to a temporary file beside it
//! (`.FILE.inspect-<our pid>.partial`), which is linked to FILE only when complete (a link, not
//! a rename, so an existing FILE, even one made meanwhile, is never replaced) and removed on any
//! failure. A run killed meanwhile leaves only the `.partial` file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use hsinspect::format::hprof::HprofWriter;
use hsinspect::pipeline::HeapDumpReport;

use crate::target::{CoreFileArgs, HoldArgs, Source};

/// `inspect heapdump` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect heapdump 4242 -o heap.hprof            as `jcmd 4242 GC.heap_dump -all heap.hprof`\n  \
    inspect heapdump 4242 --gz -o heap.hprof.gz    gzipped, as jcmd's -gz=1\n  \
    inspect heapdump --core core.4242 -o heap.hprof\n\
    Open the file in Eclipse MAT (File > Open Heap Dump) or VisualVM (File > Load).")]
pub struct HeapdumpArgs {
    /// The JVM's pid (omit with --core).
    #[arg(value_name = "PID")]
    pid: Option<i32>,
    #[command(flatten)]
    file: CoreFileArgs,
    #[command(flatten)]
    hold: HoldArgs,
    /// The file to write; it must not exist.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Gzip the file (level 1, as `jcmd GC.heap_dump -gz=1`).
    #[arg(long)]
    gz: bool,
    /// Say how the dump was taken (hold, bytes read, classes, objects, records, file size) on
    /// stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// The temporary file beside `out` that the dump is written to.
fn partial_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "heapdump".into());
    out.with_file_name(format!(".{name}.inspect-{}.partial", std::process::id()))
}

/// Where the dump goes while it is written: the file, buffered, gzipped or not.
enum Sink {
    Plain(BufWriter<File>),
    Gz(flate2::write::GzEncoder<BufWriter<File>>),
}

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(b),
            Sink::Gz(w) => w.write(b),
        }
    }

    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.write_all(b),
            Sink::Gz(w) => w.write_all(b),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gz(w) => w.flush(),
        }
    }
}

impl Sink {
    /// Ends the stream (the gzip trailer) and flushes it to the file (not synced to the disk,
    /// as jcmd's is not: a sync of a file of the heap's size would take seconds).
    fn finish(self) -> io::Result<()> {
        let buffered = match self {
            Sink::Plain(w) => w,
            Sink::Gz(w) => w.finish()?,
        };
        buffered.into_inner().map_err(|e| e.into_error())?;
        Ok(())
    }
}

/// Runs `inspect heapdump`. Exit status 1 when a space could not be walked to its top (the
/// file is written, short of those objects; each space is named on stderr).
pub fn run(args: &HeapdumpArgs) -> anyhow::Result<ExitCode> {
    let out = &args.output;
    if fs::symlink_metadata(out).is_ok() {
        bail!(
            "{} exists: inspect heapdump never overwrites a file; name another",
            out.display()
        );
    }
    let partial = partial_path(out);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&partial)
        .with_context(|| format!("creating {}", partial.display()))?;
    let result = write(args, file);
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            let _ = fs::remove_file(&partial);
            return Err(e);
        }
    };
    let linked = fs::hard_link(&partial, out);
    let _ = fs::remove_file(&partial);
    linked.with_context(|| format!("naming the dump {}", out.display()))?;
    crate::threads::say_how(&report.details, &report.warnings, args.verbose);
    let s = &report.stats;
    if args.verbose {
        let size = fs::metadata(out).map(|m| m.len()).unwrap_or(0);
        eprintln!("wrote {} ({size} bytes)", out.display());
    }
    for n in &s.notes {
        eprintln!("warning: {n}");
    }
    if s.unknown_class > 0 {
        eprintln!(
            "warning: {} objects of classes not in the class loader data graph were left out",
            s.unknown_class
        );
    }
    if let Some(bytes) = s.start_map_refused {
        eprintln!(
            "warning: the heap is too large for a map of object starts ({bytes} bytes, more than {}): a reference into a walked space was written as it is, and one left by a dead object may point where no object starts",
            hsinspect::heap::starts::MAX_BYTES
        );
    }
    if s.unmatched > 0 {
        eprintln!(
            "warning: {} objects found by the first walk of the heap were not written by the second (the JVM changed between them, or their bytes could not be read again): references to them do not resolve",
            s.unmatched
        );
    }
    if s.unreadable > 0 {
        eprintln!(
            "warning: {} objects could not be read and were left out",
            s.unreadable
        );
    }
    if s.unreadable_class_count > 0 {
        eprintln!(
            "warning: {} classes could not be read whole (first: {})",
            s.unreadable_class_count,
            s.unreadable_classes
                .iter()
                .map(|(n, why)| format!("{n}: {why}"))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if s.truncated_arrays > 0 {
        eprintln!(
            "warning: {} arrays too long for an HPROF record were cut short",
            s.truncated_arrays
        );
    }
    Ok(if s.notes.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn write(args: &HeapdumpArgs, file: File) -> anyhow::Result<HeapDumpReport> {
    // Smaller than a heap dump segment (about 1 MiB), which then goes to the file without a
    // copy; the records before the heap are gathered.
    let buffered = BufWriter::with_capacity(64 << 10, file);
    let sink = if args.gz {
        Sink::Gz(flate2::write::GzEncoder::new(
            buffered,
            flate2::Compression::fast(),
        ))
    } else {
        Sink::Plain(buffered)
    };
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut w = HprofWriter::new(sink, millis).context("writing the heap dump")?;
    let report = match args.file.source(args.pid)? {
        Source::Live(pid) => live(pid, args, &mut w)?,
        Source::Core(core) => hsinspect::pipeline::heap_dump_core(
            core,
            args.file.exe.as_deref(),
            args.file.sysroot.as_deref(),
            &mut w,
        )
        .with_context(|| format!("heap dump of core {}", core.display()))?,
    };
    let (sink, written) = w.finish().context("writing the heap dump")?;
    sink.finish().context("writing the heap dump")?;
    let mut report = report;
    report
        .details
        .push(hsinspect::pipeline::Detail::Heap(format!(
            "wrote {} records ({} heap dump segments, {} sub-records), {} bytes of HPROF{}",
            written.records,
            written.segments,
            written.sub_records,
            written.bytes,
            if args.gz { " before gzip" } else { "" }
        )));
    Ok(report)
}

fn live(
    pid: i32,
    args: &HeapdumpArgs,
    w: &mut HprofWriter<Sink>,
) -> anyhow::Result<HeapDumpReport> {
    crate::os::live_heap_and_flags("a heap dump of a live JVM")
        .and_then(|()| hsinspect::pipeline::heap_dump(pid, &args.hold.heap_options(), w))
        .with_context(|| format!("heap dump of process {pid}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partial_file_is_hidden_beside_the_output() {
        let p = partial_path(Path::new("/tmp/x/heap.hprof"));
        assert_eq!(p.parent(), Some(Path::new("/tmp/x")));
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".heap.hprof.inspect-"), "{name}");
        assert!(name.ends_with(".partial"), "{name}");
    }
}
