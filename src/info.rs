//! `inspect info <pid>` / `inspect info --core <core>`: the VM's system properties, flags and
//! command line read from outside the JVM (no attach), printed as `jinfo` prints them:
//! `--flags` is `jinfo -flags`, `--sysprops` `jinfo -sysprops`, `--all` `jinfo <pid>` (the
//! three: `Java System Properties:`, `VM Flags:`, the `VM Arguments:` block); without them,
//! `VM Flags:` and `VM Arguments:`. Text only: properties and the command line may hold
//! secrets, so no machine format carries them.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;

use crate::target::{CoreFileArgs, Source};

/// `inspect info` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect info 4242            VM Flags: and VM Arguments: (jvm_args, java_command)\n  \
    inspect info --all 4242      as `jinfo 4242`: the system properties first\n  \
    inspect info --flags 4242    as `jinfo -flags 4242`\n  \
    inspect info --sysprops 4242 as `jinfo -sysprops 4242` (sorted by key)\n  \
    inspect info --flag MaxHeapSize 4242\n  \
    inspect info --core core.4242 --flags")]
pub struct InfoArgs {
    /// The JVM's pid (omit with --core).
    #[arg(value_name = "PID")]
    pid: Option<i32>,
    #[command(flatten)]
    file: CoreFileArgs,
    /// Only the flags not at their default, as `jinfo -flags` prints them.
    #[arg(long)]
    flags: bool,
    /// Only the system properties, as `jinfo -sysprops` prints them (read from the heap; sorted
    /// by key, where jinfo prints its hash map's order).
    #[arg(long, conflicts_with = "flags")]
    sysprops: bool,
    /// The system properties, then the flags and the command line, as `jinfo <pid>` prints
    /// them (with the `java_class_path (initial)` and `Launcher Type` lines, taken from the
    /// properties).
    #[arg(long, conflicts_with_all = ["flags", "sysprops"])]
    all: bool,
    /// One flag, whatever its origin, as `jinfo -flag NAME` prints it (`-XX:+NAME`,
    /// `-XX:NAME=value`); `no such flag 'NAME'` when the VM has none of that name.
    #[arg(long, value_name = "NAME", conflicts_with = "flags")]
    flag: Option<String>,
    /// The flags line alone, as `jcmd <pid> VM.flags` prints it (what the `jcmd` link uses).
    #[arg(long, hide = true, conflicts_with = "flags")]
    flags_line: bool,
    /// Say how the VM was read (path, model) on stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// Runs `inspect info`.
pub fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let properties = args.sysprops || args.all;
    let info = match args.file.source(args.pid)? {
        Source::Live(pid) => live(pid, properties)?,
        Source::Core(core) => hsinspect::pipeline::vm_info_core(
            core,
            args.file.exe.as_deref(),
            args.file.sysroot.as_deref(),
            properties,
        )
        .with_context(|| format!("flags of core {}", core.display()))?,
    };
    crate::threads::say_how(&info.details, &info.warnings, args.verbose);
    let mut out = io::BufWriter::new(io::stdout().lock());
    if let Some(name) = &args.flag {
        match info.flags.iter().find(|f| &f.name == name) {
            Some(f) => {
                hsinspect::format::flags::write_as_flag(&mut out, f)?;
                writeln!(out)?;
            }
            // jinfo's own words, on stdout, exit status 0.
            None => writeln!(out, "no such flag '{name}'")?,
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.flags_line {
        hsinspect::format::flags::write_set_flags_line(&mut out, &info.flags)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if properties {
        let Some(props) = &info.system_properties else {
            anyhow::bail!("the system properties could not be read (see the warning above)");
        };
        let date = date_line(props);
        hsinspect::format::flags::write_system_properties(&mut out, props, &date)?;
        if args.sysprops {
            out.flush()?;
            return Ok(ExitCode::SUCCESS);
        }
        writeln!(out)?;
    }
    hsinspect::format::flags::write_set_flags(&mut out, &info.flags)?;
    if !args.flags {
        writeln!(out)?;
        hsinspect::format::flags::write_arguments(&mut out, &info.arguments)?;
        // jinfo's whole block: the class path and launcher lines come from the properties.
        if let Some(props) = info.system_properties.as_ref().filter(|_| args.all) {
            hsinspect::format::flags::write_launch_lines(&mut out, props)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `Properties.store`'s time line: now, as Java's `Date.toString` prints it, in the target's
/// `user.timezone` when it names a zone this machine knows, else this machine's zone.
fn date_line(props: &[(String, String)]) -> String {
    let zone = props
        .iter()
        .find(|(k, _)| k == "user.timezone")
        .and_then(|(_, v)| jiff::tz::TimeZone::get(v).ok())
        .unwrap_or_else(jiff::tz::TimeZone::system);
    jiff::Timestamp::now()
        .to_zoned(zone)
        .strftime("%a %b %d %H:%M:%S %Z %Y")
        .to_string()
}

#[cfg(all(target_os = "linux", feature = "live"))]
fn live(pid: i32, properties: bool) -> anyhow::Result<hsinspect::pipeline::VmInfo> {
    hsinspect::pipeline::vm_info(pid, properties).with_context(|| format!("flags of process {pid}"))
}

#[cfg(not(all(target_os = "linux", feature = "live")))]
fn live(pid: i32, _properties: bool) -> anyhow::Result<hsinspect::pipeline::VmInfo> {
    Err(hsinspect::Error::Unsupported {
        what: "the flags of a live JVM",
        os: std::env::consts::OS,
    })
    .with_context(|| format!("flags of process {pid}"))
}
