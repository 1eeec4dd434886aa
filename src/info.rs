//! `inspect info <pid>` / `inspect info --core <core>`: the VM's system properties, flags and
//! command line read from outside the JVM (no attach), printed as `jinfo` prints them: without
//! a part as `jinfo <pid>` (`Java System Properties:`, `VM Flags:`, the `VM Arguments:` block),
//! `--flags` as `jinfo -flags`, `--sysprops` as `jinfo -sysprops`, `--all-flags` as `jcmd
//! VM.flags -all`, `--vm-version` as `jcmd VM.version`; `--format json` the same parts as data.
//! Properties and the command line may hold secrets: they are printed here because the
//! operator asked for them by name, and no other command or format (`serve`, `top`, `list`,
//! the metric formats) carries them.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;

use crate::target::{CoreFileArgs, Source};

/// `inspect info` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    inspect info 4242              as `jinfo 4242`: system properties, VM flags, VM arguments\n  \
    inspect info --flags 4242      as `jinfo -flags 4242`\n  \
    inspect info --sysprops 4242   as `jinfo -sysprops 4242` (sorted by key)\n  \
    inspect info --all-flags 4242  as `jcmd 4242 VM.flags -all`\n  \
    inspect info --vm-version 4242 as `jcmd 4242 VM.version`\n  \
    inspect info --flag MaxHeapSize 4242\n  \
    inspect info --format json 4242\n  \
    inspect info --core core.4242 --flags")]
pub struct InfoArgs {
    /// The JVM's pid (omit with --core).
    #[arg(value_name = "PID")]
    pid: Option<i32>,
    #[command(flatten)]
    file: CoreFileArgs,
    /// Only the flags not at their default, as `jinfo -flags` prints them.
    #[arg(long, group = "part")]
    flags: bool,
    /// Only the system properties, as `jinfo -sysprops` prints them (read from the heap; sorted
    /// by key, where jinfo prints its hash map's order).
    #[arg(long, group = "part")]
    sysprops: bool,
    /// Every flag with its type, value, kind and origin, as `jcmd <pid> VM.flags -all` prints
    /// them (diagnostic and experimental flags when the VM has them unlocked).
    #[arg(long, group = "part")]
    all_flags: bool,
    /// The VM's name, release and JDK version, as `jcmd <pid> VM.version` prints them (from the
    /// system properties and the VM's release string).
    #[arg(long, group = "part")]
    vm_version: bool,
    /// One flag, whatever its origin, as `jinfo -flag NAME` prints it (`-XX:+NAME`,
    /// `-XX:NAME=value`); `no such flag 'NAME'` when the VM has none of that name.
    #[arg(long, value_name = "NAME", group = "part")]
    flag: Option<String>,
    /// What `inspect info` prints without a part (kept for scripts written for it).
    #[arg(long, hide = true, group = "part")]
    all: bool,
    /// The flags line alone, as `jcmd <pid> VM.flags` prints it (what the `jcmd` link uses).
    #[arg(long, hide = true, group = "part")]
    flags_line: bool,
    /// The `VM Arguments:` block alone, as `jcmd <pid> VM.command_line` prints it (what the
    /// `jcmd` link uses).
    #[arg(long, hide = true, group = "part")]
    command_line: bool,
    /// Output format: text as the JDK's tools print it, or one JSON document of the same parts
    /// (`vm`, `flags`, `system_properties`, `arguments`; without a part all four, with every
    /// flag `--all-flags` lists).
    #[arg(long, value_enum, default_value_t = InfoFormat::Text)]
    format: InfoFormat,
    /// Say how the VM was read (path, model) on stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// How `inspect info` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InfoFormat {
    /// As `jinfo` and `jcmd` print it.
    Text,
    /// One JSON document.
    Json,
}

/// Runs `inspect info`.
pub fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    use hsinspect::format::flags as fmt;
    let whole = !(args.flags
        || args.sysprops
        || args.all_flags
        || args.vm_version
        || args.flag.is_some()
        || args.flags_line
        || args.command_line);
    let properties = whole || args.sysprops || args.vm_version || args.command_line;
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
    let props = info.system_properties.as_deref();
    // Asked for and not read: what can be printed is, then the exit status says so.
    let missing = properties && props.is_none();
    let need = |what: &str| {
        props.ok_or_else(|| anyhow::anyhow!("{what} needs the system properties, which could not be read (see the warning above)"))
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    if args.format == InfoFormat::Json {
        let mut parts = fmt::InfoParts::default();
        if whole || args.vm_version {
            parts.version = Some((need("the VM version")?, info.vm_release.as_deref()));
        }
        if whole || args.all_flags {
            parts.flags = Some(fmt::listed_flags(&info.flags));
        } else if args.flags || args.flags_line {
            parts.flags = Some(fmt::set_flags(&info.flags));
        } else if let Some(name) = &args.flag {
            parts.flags = Some(info.flags.iter().filter(|f| &f.name == name).collect());
        }
        if whole || args.sysprops {
            parts.properties = Some(need("the system properties")?);
        }
        if whole || args.command_line {
            parts.arguments = Some((&info.arguments, props));
        }
        fmt::write_info_json(&mut out, &parts)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.flag {
        match info.flags.iter().find(|f| &f.name == name) {
            Some(f) => {
                fmt::write_as_flag(&mut out, f)?;
                writeln!(out)?;
            }
            // jinfo's own words, on stdout, exit status 0.
            None => writeln!(out, "no such flag '{name}'")?,
        }
    } else if args.flags_line {
        fmt::write_set_flags_line(&mut out, &info.flags)?;
    } else if args.flags {
        fmt::write_set_flags(&mut out, &info.flags)?;
    } else if args.all_flags {
        fmt::write_all_flags(
            &mut out,
            &info.flags,
            fmt::FlagTableStyle::for_jdk(info.jdk_major),
        )?;
    } else if args.vm_version {
        fmt::write_vm_version(&mut out, need("--vm-version")?, info.vm_release.as_deref())?;
    } else if args.sysprops {
        let props = need("--sysprops")?;
        fmt::write_system_properties(&mut out, props, &date_line(props))?;
    } else if args.command_line {
        fmt::write_arguments(&mut out, &info.arguments)?;
        fmt::write_launch_lines(&mut out, need("the VM Arguments: block")?)?;
    } else {
        // `jinfo <pid>`: the properties, the flags, the whole `VM Arguments:` block.
        if let Some(props) = props {
            fmt::write_system_properties(&mut out, props, &date_line(props))?;
            writeln!(out)?;
        }
        fmt::write_set_flags(&mut out, &info.flags)?;
        writeln!(out)?;
        fmt::write_arguments(&mut out, &info.arguments)?;
        if let Some(props) = props {
            fmt::write_launch_lines(&mut out, props)?;
        }
    }
    out.flush()?;
    if missing {
        anyhow::bail!(
            "the system properties could not be read (see the warning above): left out, with the java_class_path and Launcher Type lines"
        );
    }
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

fn live(pid: i32, properties: bool) -> anyhow::Result<hsinspect::pipeline::VmInfo> {
    crate::os::live_heap_and_flags("the flags of a live JVM")
        .and_then(|()| hsinspect::pipeline::vm_info(pid, properties))
        .with_context(|| format!("flags of process {pid}"))
}
