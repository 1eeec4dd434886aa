//! The JDK tools' own names: `inspect` called as `jstack`, `jmap`, `jinfo`, `jstat` or `jcmd`
//! (a link made by `inspect links DIR`, as busybox's are) takes those tools' command lines for
//! what hsinspect does, and says plainly which flag it does not take (exit status 2), so that
//! runbooks and scripts written for the JDK's tools work unchanged where there is no JDK or the
//! JVM cannot answer. Each command line is rewritten into `inspect`'s own and parsed by clap.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};

/// The names `inspect` answers to, and what each maps to (for `inspect links` and the docs).
pub const TOOLS: [(&str, &str); 6] = [
    ("jstack", "inspect threads"),
    (
        "jmap",
        "inspect histo (-histo, -histo:all), inspect heapdump (-dump:format=b,file=F)",
    ),
    ("jinfo", "inspect info (-flags, -sysprops, -flag NAME)"),
    ("jstat", "inspect stat"),
    ("jps", "inspect list --format jps"),
    (
        "jcmd",
        "Thread.print, GC.class_histogram, GC.heap_info, GC.heap_dump, VM.flags, VM.command_line, VM.version, PerfCounter.print",
    ),
];

/// What a JDK tool's command line becomes.
#[derive(Debug, PartialEq, Eq)]
pub struct Rewritten {
    /// `inspect`'s command line (without the program name).
    pub args: Vec<String>,
    /// Print `<pid>:` first, as jcmd does.
    pub pid_line: Option<String>,
    /// Said on stderr before the output (what differs from the tool's own output).
    pub note: Option<String>,
}

impl Rewritten {
    fn new(args: &[&str]) -> Rewritten {
        Rewritten {
            args: args.iter().map(|s| s.to_string()).collect(),
            pid_line: None,
            note: None,
        }
    }
}

/// The tool `argv0` names (its file name), when it is one of [`TOOLS`].
pub fn tool_of(argv0: &OsString) -> Option<&'static str> {
    let name = Path::new(argv0).file_name()?.to_str()?;
    let name = name.strip_suffix(".exe").unwrap_or(name);
    TOOLS.iter().map(|(t, _)| *t).find(|t| *t == name)
}

/// A usage error (the tool's name prefixes the message where it is printed).
fn unsupported(what: &str, why: &str) -> anyhow::Error {
    anyhow::anyhow!("{what} is not supported by hsinspect: {why}")
}

/// A pid, or a usage error naming the tool.
fn pid(tool: &str, s: &str) -> anyhow::Result<String> {
    s.parse::<u32>()
        .map(|p| p.to_string())
        .with_context(|| format!("{tool}: expected a pid, got {s:?}"))
}

/// `jstack [-l] [-F] <pid>` / `jstack <executable> <core>` → `inspect threads`.
fn jstack(args: &[String]) -> anyhow::Result<Rewritten> {
    let mut locks = false;
    let mut rest = Vec::new();
    for a in args {
        match a.as_str() {
            // The ownable synchronizers: `inspect threads -l` walks the heap for them.
            "-l" => locks = true,
            // JDK 8's forced mode: hsinspect always reads from outside.
            "-F" => {}
            "-e" => bail!(unsupported(
                "-e",
                "the extended thread info (allocated bytes, defined classes) is not read"
            )),
            "-m" => bail!(unsupported("-m", "mixed (native) frames are not printed")),
            f if f.starts_with('-') => bail!(unsupported(f, "an option jstack has not")),
            _ => rest.push(a.as_str()),
        }
    }
    let l = if locks { &["-l"][..] } else { &[] };
    Ok(match rest[..] {
        [p] => Rewritten::new(&[&["threads"], l, &[&pid("jstack", p)?]].concat()),
        [exe, core] => Rewritten::new(&[&["threads"], l, &["--core", core, "--exe", exe]].concat()),
        _ => bail!("usage: jstack [-l] <pid>  or  jstack <executable> <core>"),
    })
}

/// `jmap -dump:`'s options (`[all,]format=b,file=F[,gz=N]`): the file and whether gzipped.
fn jmap_dump_options(opts: &str) -> anyhow::Result<(String, bool)> {
    let (mut file, mut gz) = (None, false);
    for o in opts.split(',') {
        match o.split_once('=') {
            None if o == "all" => {}
            None if o == "live" => bail!(unsupported(
                "-dump:live",
                "dumping only live objects needs a full GC inside the JVM, which only the JVM can run; -dump without live writes every object"
            )),
            Some(("format", "b")) => {}
            Some(("file", f)) if !f.is_empty() => file = Some(f.to_string()),
            Some(("gz", n)) if n.parse::<u8>().is_ok_and(|n| (1..=9).contains(&n)) => gz = true,
            Some(("parallel", n)) if n.parse::<u32>().is_ok() => {}
            _ => bail!(unsupported(
                &format!("-dump:{o}"),
                "of -dump's options only all, format=b, file=, gz= and parallel= are read"
            )),
        }
    }
    let file =
        file.ok_or_else(|| anyhow::anyhow!("usage: jmap -dump:format=b,file=<file> <pid>"))?;
    Ok((file, gz))
}

/// `jmap -histo[:all] <pid>` (or `<executable> <core>`) → `inspect histo`; `jmap
/// -dump:format=b,file=F <pid>` → `inspect heapdump <pid> -o F` (`gz=`: `--gz`).
fn jmap(args: &[String]) -> anyhow::Result<Rewritten> {
    let mut histo = false;
    let mut dump = None;
    let mut rest = Vec::new();
    for a in args {
        match a.as_str() {
            "-histo" | "-histo:all" => histo = true,
            "-F" => {}
            a if a.starts_with("-histo:") => {
                let opts: Vec<&str> = a["-histo:".len()..].split(',').collect();
                if opts.contains(&"live") {
                    bail!(unsupported(
                        "-histo:live",
                        "counting only live objects needs a full GC inside the JVM, which only the JVM can run; -histo:all counts every object"
                    ));
                }
                bail!(unsupported(
                    a,
                    "only -histo and -histo:all are read (no file=, parallel=)"
                ));
            }
            a if a.starts_with("-dump:") => dump = Some(jmap_dump_options(&a["-dump:".len()..])?),
            a if a.starts_with('-') => bail!(unsupported(
                a,
                "of jmap's options only -histo, -histo:all and -dump: are read"
            )),
            _ => rest.push(a.as_str()),
        }
    }
    if let Some((file, gz)) = dump {
        let mut line: Vec<String> = match rest[..] {
            [p] => vec!["heapdump".into(), pid("jmap", p)?],
            [exe, core] => vec![
                "heapdump".into(),
                "--core".into(),
                core.into(),
                "--exe".into(),
                exe.into(),
            ],
            _ => bail!("usage: jmap -dump:format=b,file=<file> <pid>"),
        };
        line.extend(["-o".into(), file]);
        if gz {
            line.push("--gz".into());
        }
        let line: Vec<&str> = line.iter().map(String::as_str).collect();
        return Ok(Rewritten::new(&line));
    }
    if !histo {
        bail!(
            "usage: jmap -histo[:all] <pid>, jmap -dump:format=b,file=<file> <pid>, or jmap -histo <executable> <core>"
        );
    }
    Ok(match rest[..] {
        [p] => Rewritten::new(&["histo", &pid("jmap", p)?]),
        [exe, core] => Rewritten::new(&["histo", "--core", core, "--exe", exe]),
        _ => bail!("usage: jmap -histo[:all] <pid>"),
    })
}

/// `jinfo -flags <pid>` → `inspect info --flags`; `jinfo -sysprops <pid>` → `inspect info
/// --sysprops`; `jinfo -flag NAME <pid>` → `inspect info --flag NAME`; `jinfo <pid>` →
/// `inspect info`.
fn jinfo(args: &[String]) -> anyhow::Result<Rewritten> {
    let mut flags = false;
    let mut sysprops = false;
    let mut flag = None;
    let mut rest = Vec::new();
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        match a.as_str() {
            "-flags" => flags = true,
            "-sysprops" => sysprops = true,
            "-flag" => {
                let name = iter.next().map(String::as_str).unwrap_or("");
                if name.is_empty() || name.starts_with(['+', '-']) || name.contains('=') {
                    bail!(unsupported(
                        &format!("-flag {name}"),
                        "hsinspect never writes to a JVM; `jinfo -flag NAME` reads one"
                    ));
                }
                flag = Some(name.to_string());
            }
            "-F" => {}
            a if a.starts_with('-') => bail!(unsupported(a, "an option jinfo has not")),
            _ => rest.push(a.as_str()),
        }
    }
    let mut out = match rest[..] {
        [p] => Rewritten::new(&["info", &pid("jinfo", p)?]),
        [exe, core] => Rewritten::new(&["info", "--core", core, "--exe", exe]),
        _ => bail!("usage: jinfo [-flags] <pid>"),
    };
    if let Some(name) = flag {
        out.args.insert(1, "--flag".into());
        out.args.insert(2, name);
    } else if flags {
        out.args.insert(1, "--flags".into());
    } else if sysprops {
        out.args.insert(1, "--sysprops".into());
        out.note = Some("the properties are sorted by key".into());
    } else {
        out.note = Some("the properties are sorted by key".into());
    }
    Ok(out)
}

/// `jcmd <pid> <command> [options]` for the commands hsinspect has.
fn jcmd(args: &[String]) -> anyhow::Result<Rewritten> {
    // No arguments or -l: the JVMs, as `<pid> <java command>` (jps -l -m's lines).
    if args.is_empty() || args == ["-l"] {
        return Ok(Rewritten::new(&["list", "--format", "jps", "-l", "-m"]));
    }
    let [p, command, options @ ..] = args else {
        bail!(unsupported(
            &args.join(" "),
            "hsinspect takes `jcmd`, `jcmd -l` and `jcmd <pid> <command>`"
        ));
    };
    let p = pid("jcmd", p)?;
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    const COMMANDS: [&str; 8] = [
        "Thread.print",
        "GC.class_histogram",
        "GC.heap_info",
        "GC.heap_dump",
        "VM.flags",
        "VM.command_line",
        "VM.version",
        "PerfCounter.print",
    ];
    let mut out = match (command.as_str(), &options[..]) {
        ("Thread.print", o) if o.iter().all(|o| *o == "-l" || *o == "-l=true") => {
            if o.is_empty() {
                Rewritten::new(&["threads", &p])
            } else {
                Rewritten::new(&["threads", "-l", &p])
            }
        }
        ("GC.class_histogram", []) => bail!(unsupported(
            "GC.class_histogram without -all",
            "counting only live objects needs a full GC inside the JVM; GC.class_histogram -all counts every object"
        )),
        ("GC.class_histogram", o) if o.iter().all(|o| *o == "-all" || *o == "-all=true") => {
            Rewritten::new(&["histo", &p])
        }
        ("GC.heap_info", []) => Rewritten::new(&["heap", &p]),
        ("GC.heap_dump", o) => jcmd_heap_dump(&p, o)?,
        ("VM.flags", []) => Rewritten::new(&["info", "--flags-line", &p]),
        ("VM.flags", ["-all" | "-all=true"]) => Rewritten::new(&["info", "--all-flags", &p]),
        ("VM.command_line", []) => Rewritten::new(&["info", "--command-line", &p]),
        ("VM.version", []) => Rewritten::new(&["info", "--vm-version", &p]),
        ("PerfCounter.print", []) => Rewritten::new(&["-F", &p]),
        (c, o) if COMMANDS.contains(&c) => bail!(unsupported(
            &format!("{c} {}", o.join(" ")),
            "hsinspect does not take these options of it"
        )),
        (c, _) => bail!(unsupported(
            c,
            "hsinspect answers Thread.print, GC.class_histogram -all, GC.heap_info, GC.heap_dump -all, VM.flags [-all], VM.command_line, VM.version and PerfCounter.print"
        )),
    };
    out.pid_line = Some(format!("{p}:"));
    Ok(out)
}

/// `jcmd <pid> GC.heap_dump -all [-gz=N] [-parallel=N] FILE` → `inspect heapdump <pid> -o FILE`
/// (`-gz`: `--gz`).
fn jcmd_heap_dump(p: &str, options: &[&str]) -> anyhow::Result<Rewritten> {
    let (mut all, mut gz, mut file) = (false, false, None);
    for o in options {
        match o.split_once('=') {
            _ if *o == "-all" || *o == "-all=true" => all = true,
            Some(("-gz", n)) if n.parse::<u8>().is_ok_and(|n| (1..=9).contains(&n)) => gz = true,
            Some(("-parallel", n)) if n.parse::<u32>().is_ok() => {}
            _ if *o == "-overwrite" || o.starts_with("-overwrite=") => bail!(unsupported(
                "GC.heap_dump -overwrite",
                "inspect heapdump never overwrites a file"
            )),
            _ if !o.starts_with('-') && file.is_none() => file = Some(*o),
            _ => bail!(unsupported(
                &format!("GC.heap_dump {o}"),
                "hsinspect does not take this option of it"
            )),
        }
    }
    if !all {
        bail!(unsupported(
            "GC.heap_dump without -all",
            "dumping only live objects needs a full GC inside the JVM; GC.heap_dump -all writes every object"
        ));
    }
    let file = file.ok_or_else(|| anyhow::anyhow!("usage: jcmd <pid> GC.heap_dump -all <file>"))?;
    let mut line = vec!["heapdump", p, "-o", file];
    if gz {
        line.push("--gz");
    }
    Ok(Rewritten::new(&line))
}

/// `jps [-q] [-l] [-m] [-v]` → `inspect list --format jps`.
fn jps(args: &[String]) -> anyhow::Result<Rewritten> {
    let mut out = Rewritten::new(&["list", "--format", "jps"]);
    for a in args {
        let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) else {
            bail!(unsupported(a, "other hosts' JVMs (jstatd) are not listed"));
        };
        for c in letters.chars() {
            match c {
                'q' | 'l' | 'm' | 'v' => out.args.push(format!("-{c}")),
                'V' => bail!(unsupported(
                    "-V",
                    "the flags of a .hotspotrc file are not listed"
                )),
                _ => bail!(unsupported(a, "an option jps has not")),
            }
        }
    }
    Ok(out)
}

/// The command line of `tool` (`args` without the program name) as `inspect`'s.
///
/// # Errors
/// A flag or command of the tool that hsinspect does not take, saying why; a malformed pid.
pub fn rewrite(tool: &str, args: &[String]) -> anyhow::Result<Rewritten> {
    match tool {
        "jstack" => jstack(args),
        "jmap" => jmap(args),
        "jinfo" => jinfo(args),
        "jcmd" => jcmd(args),
        "jps" => jps(args),
        // inspect stat takes jstat's own command line.
        _ => {
            let mut out = Rewritten::new(&["stat"]);
            out.args.extend(args.iter().cloned());
            Ok(out)
        }
    }
}

/// `inspect links DIR`: a symbolic link to this binary in `dir` under each of [`TOOLS`]' names;
/// an existing file of that name is left alone and named.
pub fn make_links(dir: &Path) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("finding this binary")?;
    let mut code = ExitCode::SUCCESS;
    for (name, what) in TOOLS {
        let link = dir.join(name);
        if link.symlink_metadata().is_ok() {
            eprintln!("inspect: {} exists: left alone", link.display());
            code = ExitCode::FAILURE;
            continue;
        }
        crate::os::link_tool(&exe, &link)?;
        println!("{} -> {}  ({what})", link.display(), exe.display());
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(tool: &str, line: &str) -> anyhow::Result<Rewritten> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        rewrite(tool, &args)
    }

    fn args(tool: &str, line: &str) -> String {
        rw(tool, line).unwrap().args.join(" ")
    }

    #[test]
    fn tools_are_known_by_their_file_name() {
        assert_eq!(tool_of(&"/usr/local/bin/jstack".into()), Some("jstack"));
        assert_eq!(tool_of(&"jcmd.exe".into()), Some("jcmd"));
        assert_eq!(tool_of(&"/usr/bin/inspect".into()), None);
        assert_eq!(tool_of(&"jps".into()), Some("jps"));
        assert_eq!(tool_of(&"jhsdb".into()), None);
    }

    #[test]
    fn each_tools_command_lines_become_inspects() {
        assert_eq!(args("jstack", "4242"), "threads 4242");
        assert_eq!(args("jstack", "-l 4242"), "threads -l 4242");
        assert_eq!(
            args("jstack", "/usr/bin/java core.1"),
            "threads --core core.1 --exe /usr/bin/java"
        );
        assert_eq!(args("jmap", "-histo 4242"), "histo 4242");
        assert_eq!(args("jmap", "-histo:all 4242"), "histo 4242");
        assert_eq!(args("jinfo", "-flags 4242"), "info --flags 4242");
        assert_eq!(
            args("jinfo", "-flag MaxHeapSize 4242"),
            "info --flag MaxHeapSize 4242"
        );
        assert_eq!(args("jinfo", "-sysprops 4242"), "info --sysprops 4242");
        assert_eq!(args("jinfo", "4242"), "info 4242");
        assert_eq!(args("jcmd", "4242 GC.heap_info"), "heap 4242");
        assert_eq!(args("jcmd", "4242 VM.flags -all"), "info --all-flags 4242");
        assert_eq!(args("jcmd", "4242 VM.version"), "info --vm-version 4242");
        assert_eq!(
            args("jcmd", "4242 VM.command_line"),
            "info --command-line 4242"
        );
        assert_eq!(
            args("jcmd", "4242 GC.heap_dump -all -gz=1 /tmp/h.hprof.gz"),
            "heapdump 4242 -o /tmp/h.hprof.gz --gz"
        );
        assert_eq!(
            args("jmap", "-dump:format=b,file=h.hprof 4242"),
            "heapdump 4242 -o h.hprof"
        );
        assert_eq!(
            args(
                "jmap",
                "-dump:all,format=b,file=h.hprof,gz=1 /usr/bin/java core.1"
            ),
            "heapdump --core core.1 --exe /usr/bin/java -o h.hprof --gz"
        );
        assert_eq!(args("jstat", "-gcutil 4242 1s 5"), "stat -gcutil 4242 1s 5");
        let j = rw("jcmd", "4242 VM.flags").unwrap();
        assert_eq!(
            (j.args.join(" "), j.pid_line),
            ("info --flags-line 4242".into(), Some("4242:".into()))
        );
        assert_eq!(args("jcmd", "4242 Thread.print"), "threads 4242");
        assert_eq!(args("jcmd", "4242 GC.class_histogram -all"), "histo 4242");
        assert_eq!(args("jcmd", "4242 PerfCounter.print"), "-F 4242");
        assert_eq!(args("jcmd", ""), "list --format jps -l -m");
        assert_eq!(args("jcmd", "-l"), "list --format jps -l -m");
        assert_eq!(args("jps", ""), "list --format jps");
        assert_eq!(args("jps", "-lmv"), "list --format jps -l -m -v");
        assert_eq!(args("jps", "-q"), "list --format jps -q");
    }

    #[test]
    fn what_is_not_taken_is_said_with_why() {
        for (tool, line, says) in [
            ("jmap", "-histo:live 4242", "full GC"),
            ("jmap", "-dump:live,format=b,file=h.hprof 4242", "full GC"),
            ("jmap", "-dump:format=b 4242", "usage"),
            ("jinfo", "-flag +UseG1GC 4242", "never writes"),
            ("jinfo", "-flag MaxHeapSize=1g 4242", "never writes"),
            ("jstack", "-e 4242", "extended"),
            ("jcmd", "4242 GC.class_histogram", "-all"),
            ("jcmd", "4242 GC.heap_dump /tmp/h", "full GC"),
            (
                "jcmd",
                "4242 GC.heap_dump -all -overwrite /tmp/h",
                "never overwrites",
            ),
            ("jcmd", "4242 GC.Foo", "answers Thread.print"),
            ("jcmd", "4242 VM.flags -foo", "these options"),
            ("jcmd", "4242", "jcmd <pid> <command>"),
            ("jps", "-V", "hotspotrc"),
            ("jps", "remotehost", "jstatd"),
            ("jstack", "notapid", "expected a pid"),
        ] {
            let e = format!("{:#}", rw(tool, line).unwrap_err());
            assert!(e.contains(says), "{tool} {line}: {e}");
        }
    }
}
