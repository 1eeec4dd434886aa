//! `inspect list`: every HotSpot JVM on the host, one line each (or a JSON array), from one scan
//! of `/proc` ([`hsinspect::discover::scan`]).

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Context;
use hsinspect::discover::{self, JvmInfo, Readable, Scan, ScanOptions, launcher};

/// `--namespace`/`--pod` as the library filters them: for `list`, `serve` and `top`, which exist
/// where JVMs are found (`os/mod.rs`), so here beside `list`.
impl crate::pods::PodArgs {
    /// The library's filter of these globs.
    ///
    /// # Errors
    /// A glob that does not parse.
    pub fn filter(&self) -> anyhow::Result<hsinspect::container::PodFilter> {
        hsinspect::container::PodFilter::new(&self.namespaces, &self.pods)
            .map_err(anyhow::Error::msg)
    }
}

/// Output formats of `inspect list`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    /// One line per JVM under a header; control characters escaped.
    #[default]
    Text,
    /// A JSON array of objects (`pid`, `container_pid`, `user`, `main`, `jvm_version`,
    /// `uptime_s`, `readable`, `container`, ...), strings exact.
    Json,
    /// As `jps` prints: the pid and the main class (`-l`: its full name), `-m` the main
    /// arguments, `-v` the JVM flags; `-q` the pid alone. No header; control characters escaped.
    Jps,
}

/// The arguments of `inspect list`.
#[derive(Debug, Default, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect list                  every JVM: pid, user, main class, version, uptime, how to read it\n  \
    inspect list -l               as `jps -l`: the main class's full name or the jar's path\n  \
    inspect list --format json    the same as a JSON array")]
pub struct ListArgs {
    /// The main class's full name, or the jar's full path (as `jps -l`); without it, the short
    /// name (text only: JSON always has the full one).
    #[arg(short = 'l')]
    pub long: bool,

    /// Also the arguments given to the main method (as `jps -m`), in text output only: they may
    /// hold secrets, and machine formats never carry them.
    #[arg(short = 'm')]
    pub main_args: bool,

    /// Also the JVM flags (as `jps -v`), in text output only: they may hold secrets
    /// (`-D...password=`), and machine formats never carry them.
    #[arg(short = 'v')]
    pub jvm_flags: bool,

    /// Only the pids, one a line (as `jps -q`).
    #[arg(short = 'q')]
    pub quiet: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: ListFormat,

    /// Do not use or fill the per-build symbol cache (~/.cache/hsinspect).
    #[arg(long)]
    pub no_cache: bool,

    #[command(flatten)]
    pub pods: crate::pods::PodArgs,

    #[command(flatten)]
    pub host_root: crate::pods::HostRootArg,
}

/// Runs `inspect list`: the JVMs on stdout; on stderr, how many processes could not be looked
/// at and why. Exits 0 whenever the processes could be listed.
pub fn run(args: &ListArgs) -> anyhow::Result<ExitCode> {
    if args.format == ListFormat::Json && (args.main_args || args.jvm_flags || args.quiet) {
        anyhow::bail!(
            "-m and -v print main arguments and JVM flags, which can hold secrets: machine formats never carry them, so use them with text output"
        );
    }
    let pods = args.pods.filter()?;
    let mut scan = discover::scan(&ScanOptions {
        main_args: args.main_args,
        jvm_flags: args.jvm_flags,
        no_symbol_cache: args.no_cache,
        keep_readings: false,
        host_root: args.host_root.host_root.clone(),
    })?;
    scan.jvms.retain(|j| pods.selects(j.container.as_ref()));
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let written = match args.format {
        ListFormat::Text if args.quiet => scan
            .jvms
            .iter()
            .try_for_each(|j| writeln!(out, "{}", j.pid)),
        ListFormat::Text => write_text(&mut out, &scan.jvms, args),
        ListFormat::Jps => write_jps(&mut out, &scan.jvms, args),
        ListFormat::Json => serde_json::to_writer_pretty(&mut out, &scan.jvms)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out)),
    }
    .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        r => r.context("writing the list")?,
    }
    report_not_inspected(&scan);
    Ok(ExitCode::SUCCESS)
}

/// On stderr: the processes that could not be looked at (they may be JVMs), grouped by reason.
fn report_not_inspected(scan: &Scan) {
    for (reason, count) in scan.not_inspected_by_reason() {
        let s = if count == 1 { "" } else { "es" };
        eprintln!("inspect: {count} process{s} not inspected: {reason}");
    }
}

/// `s` with backslashes and control characters escaped (`\n`, `\t`, `\r`, `\xNN`, `\u{NNNN}`), so
/// one JVM is always one line and a command line cannot move the terminal's cursor.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `3d04h`, `2h05m`, `4m12s`, `12s`.
pub(crate) fn uptime(seconds: f64) -> String {
    let s = seconds as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86400, s % 86400 / 3600),
    }
}

/// The container column: `namespace/pod/container` for a JVM in a pod whose names are known,
/// else the container's name or short id ([`hsinspect::container::ContainerIdentity::short`]);
/// `-` on the host.
pub(crate) fn container_column(jvm: &JvmInfo) -> String {
    jvm.container
        .as_ref()
        .map_or("-".into(), |c| escape(&c.short()))
}

/// The main column: the main class (short unless `-l`), else `[comm]` for a JVM that names none
/// (one embedded through `JNI_CreateJavaVM`, or one nothing could be read from).
pub(crate) fn main_column(jvm: &JvmInfo, long: bool) -> String {
    if jvm.main.is_empty() {
        return format!("[{}]", escape(&jvm.comm));
    }
    let main = if long {
        &jvm.main
    } else {
        launcher::jps_short_main(&jvm.main)
    };
    escape(main)
}

/// `jps`' lines (`sun.tools.jps.Jps`): `<pid> <main>`, then ` <main arguments>` (`-m`) and
/// ` <JVM flags>` (`-v`) when not empty; a JVM that cannot be read ` -- process information
/// unavailable`; `-q` the pid alone.
fn write_jps(out: &mut impl Write, jvms: &[JvmInfo], args: &ListArgs) -> io::Result<()> {
    for j in jvms {
        if args.quiet {
            writeln!(out, "{}", j.pid)?;
            continue;
        }
        if j.readable == Readable::Neither && j.main.is_empty() {
            writeln!(out, "{} -- process information unavailable", j.pid)?;
            continue;
        }
        let main = if args.long {
            j.main.as_str()
        } else {
            launcher::jps_short_main(&j.main)
        };
        write!(out, "{} {}", j.pid, escape(main))?;
        for extra in [&j.main_args, &j.jvm_flags].into_iter().flatten() {
            if !extra.is_empty() {
                write!(out, " {}", escape(extra))?;
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

fn write_text(out: &mut impl Write, jvms: &[JvmInfo], args: &ListArgs) -> io::Result<()> {
    let rows: Vec<[String; 7]> = jvms
        .iter()
        .map(|j| {
            [
                j.pid.to_string(),
                j.container_pid.map_or("-".into(), |p| p.to_string()),
                escape(&j.user),
                uptime(j.uptime_s),
                if j.jvm_version.is_empty() {
                    "?".into()
                } else {
                    escape(&j.jvm_version)
                },
                j.readable.as_str().to_string(),
                container_column(j),
            ]
        })
        .collect();
    let header = [
        "PID",
        "NSPID",
        "USER",
        "UPTIME",
        "VERSION",
        "READABLE",
        "CONTAINER",
    ];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut dyn Write, cells: &[&str], tail: &str| -> io::Result<()> {
        for (cell, w) in cells.iter().zip(widths) {
            write!(out, "{cell:<w$}  ")?;
        }
        writeln!(out, "{tail}")
    };
    line(out, &header, "MAIN")?;
    for (jvm, row) in jvms.iter().zip(&rows) {
        let mut tail = main_column(jvm, args.long);
        for extra in [&jvm.main_args, &jvm.jvm_flags].into_iter().flatten() {
            tail.push(' ');
            tail.push_str(&escape(extra));
        }
        if jvm.readable == Readable::Neither
            && let Some(reason) = &jvm.reason
        {
            tail.push_str(&format!("  ({})", escape(reason)));
        }
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        line(out, &cells, &tail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_control_characters() {
        assert_eq!(escape("a b"), "a b");
        assert_eq!(escape("a\nb\tc\\"), "a\\nb\\tc\\\\");
        assert_eq!(escape("\x1b[2J"), "\\x1b[2J");
        assert_eq!(escape("\u{85}"), "\\u{85}");
    }

    #[test]
    fn uptimes() {
        assert_eq!(uptime(5.5), "5s");
        assert_eq!(uptime(125.0), "2m05s");
        assert_eq!(uptime(7260.0), "2h01m");
        assert_eq!(uptime(90000.0), "1d01h");
    }
}
