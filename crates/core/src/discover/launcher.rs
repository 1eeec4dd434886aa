//! What a JVM's own words and its process say about it, without reading its PerfData: jps's
//! reading of `sun.rt.javaCommand`, the `java` launcher's command line, libjvm's line in
//! `/proc/<pid>/maps`, and the JDK's `release` file.

use std::path::{Path, PathBuf};

pub use crate::perfdata::java_command::{jps_main, jps_main_args, jps_short_main};

/// A `java` command line taken apart as the launcher does (`src/java.base/share/native/libjli/
/// java.c`, `ParseArguments`): the options before the main class (the JVM's and the launcher's),
/// the main class, jar (`-jar`) or module (`-m`/`--module`), and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LauncherCommand {
    /// `sun.rt.javaCommand`'s first word as the launcher would write it.
    pub main: String,
    /// The arguments after it.
    pub main_args: Vec<String>,
    /// The options before it.
    pub jvm_flags: Vec<String>,
}

/// Launcher options whose value is the next argument (`java.c`, `IsWhiteSpaceOption`).
const OPTIONS_WITH_VALUE: &[&str] = &[
    "-cp",
    "-classpath",
    "--class-path",
    "-p",
    "--module-path",
    "--upgrade-module-path",
    "--add-modules",
    "--enable-native-access",
    "--limit-modules",
    "--add-exports",
    "--add-opens",
    "--add-reads",
    "--patch-module",
    "--source",
];

/// Takes apart `argv` when `argv[0]` is a `java` launcher (named `java` or `javaw`); `None` for
/// any other program (a launcher embedding the JVM has its own syntax) or when no main is given.
pub fn parse_java_cmdline(argv: &[String]) -> Option<LauncherCommand> {
    let (exe, rest) = argv.split_first()?;
    let name = Path::new(exe).file_name()?.to_str()?;
    if name != "java" && name != "javaw" {
        return None;
    }
    let mut flags = Vec::new();
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        let main = match arg.as_str() {
            "-jar" | "-m" | "--module" => {
                flags.push(arg.clone());
                it.next()?
            }
            a if OPTIONS_WITH_VALUE.contains(&a) => {
                flags.push(arg.clone());
                flags.extend(it.next().cloned());
                continue;
            }
            a if a.starts_with('-') => {
                flags.push(arg.clone());
                continue;
            }
            _ => arg,
        };
        return Some(LauncherCommand {
            main: main.clone(),
            main_args: it.cloned().collect(),
            jvm_flags: flags,
        });
    }
    None
}

/// The path of the `libjvm.so` a process maps, from the bytes of its `/proc/<pid>/maps` (a line
/// ending in `/libjvm.so`, or in `/libjvm.so (deleted)` after a package upgrade replaced it).
/// A plain byte search: cheap enough to run on every process of the host.
pub fn libjvm_in_maps(maps: &[u8]) -> Option<PathBuf> {
    // Only whole lines: a read may stop in the middle of one.
    let whole = &maps[..maps.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)];
    whole.split(|b| *b == b'\n').find_map(|line| {
        let line = line.strip_suffix(b" (deleted)").unwrap_or(line);
        if !line.ends_with(b"/libjvm.so") {
            return None;
        }
        // The path is the sixth field; it starts at the first '/' after the inode.
        let start = line.iter().position(|b| *b == b'/')?;
        let path = &line[start..];
        Some(crate::sys::path_from_bytes(path))
    })
}

/// The JDK home of a `<home>/lib/server/libjvm.so` (also `lib/client`, `lib/zero`, ...).
pub fn java_home_of(libjvm: &Path) -> Option<&Path> {
    libjvm.parent()?.parent()?.parent()
}

/// Whether a command line is a JVM's, from what every user may read of another user's process
/// (`/proc/<pid>/cmdline`): a `java`, `javaw` or `jsvc` launcher, or HotSpot's own options
/// (`-XX:`, `-Xmx`, `-Xms`, `-Xss`), or a class path or jar (`-cp`, `-classpath`,
/// `--class-path`, `-jar`) with a `-D` property. Used only where `/proc/<pid>/maps` cannot be
/// read.
pub fn looks_like_jvm(argv: &[String]) -> bool {
    let Some(exe) = argv.first() else {
        return false;
    };
    let name = Path::new(exe)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    if matches!(name, "java" | "javaw" | "jsvc") {
        return true;
    }
    let hotspot_option = |a: &String| {
        a.starts_with("-XX:")
            || a.starts_with("-Xmx")
            || a.starts_with("-Xms")
            || a.starts_with("-Xss")
    };
    let class_path =
        |a: &String| matches!(a.as_str(), "-cp" | "-classpath" | "--class-path" | "-jar");
    argv.iter().any(hotspot_option)
        || (argv.iter().any(class_path) && argv.iter().any(|a| a.starts_with("-D")))
}

/// The JDK home of a `java` launcher path (`<home>/bin/java`): its parent's parent.
pub fn java_home_of_launcher(exe: &Path) -> Option<&Path> {
    let bin = exe.parent()?;
    (bin.file_name()? == "bin").then_some(bin.parent()?)
}

/// `JAVA_RUNTIME_VERSION` (else `JAVA_VERSION`) from the text of a JDK's `release` file (written by
/// the JDK build, `make/ReleaseFile.gmk`): the same string as `java.vm.version` for OpenJDK builds.
pub fn release_version(release: &str) -> Option<String> {
    let get = |key: &str| {
        release.lines().find_map(|l| {
            let v = l.strip_prefix(key)?.strip_prefix('=')?;
            Some(v.trim().trim_matches('"').to_string())
        })
    };
    get("JAVA_RUNTIME_VERSION")
        .or_else(|| get("JAVA_VERSION"))
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn jps_forms_of_the_main() {
        assert_eq!(jps_main("com.example.App a b"), "com.example.App");
        assert_eq!(jps_main(""), "");
        assert_eq!(jps_main_args("com.example.App a b"), Some("a b"));
        assert_eq!(jps_main_args("com.example.App"), None);
        assert_eq!(jps_short_main("com.example.App"), "App");
        assert_eq!(jps_short_main("/opt/app/server.jar"), "server.jar");
        assert_eq!(jps_short_main("my.module/com.example.App"), "App");
        assert_eq!(jps_short_main("Target"), "Target");
        assert_eq!(jps_short_main(""), "");
    }

    #[test]
    fn java_command_lines() {
        let c = parse_java_cmdline(&argv(
            "/usr/bin/java -Xmx1g -cp a:b -Dx=y com.example.App --port 80",
        ))
        .unwrap();
        assert_eq!(c.main, "com.example.App");
        assert_eq!(c.main_args, argv("--port 80"));
        assert_eq!(c.jvm_flags, argv("-Xmx1g -cp a:b -Dx=y"));
        let c = parse_java_cmdline(&argv("java -jar /opt/app.jar x")).unwrap();
        assert_eq!((c.main.as_str(), c.main_args.len()), ("/opt/app.jar", 1));
        let c = parse_java_cmdline(&argv("java --module-path m -m mod/cls")).unwrap();
        assert_eq!(c.main, "mod/cls");
        assert_eq!(parse_java_cmdline(&argv("/opt/bin/mylauncher App")), None);
        assert_eq!(parse_java_cmdline(&argv("java -version")), None);
        assert_eq!(parse_java_cmdline(&argv("java -cp")), None);
    }

    #[test]
    fn libjvm_line_in_maps() {
        let maps = b"55d0-55d1 r--p 00000000 08:01 1 /usr/bin/java\n\
            7f00-7f10 r--p 00000000 08:01 2 /opt/jdk dir/lib/server/libjvm.so (deleted)\n";
        assert_eq!(
            libjvm_in_maps(maps),
            Some(PathBuf::from("/opt/jdk dir/lib/server/libjvm.so"))
        );
        assert_eq!(
            libjvm_in_maps(b"55d0-55d1 r--p 0 08:01 1 /usr/bin/sleep\n"),
            None
        );
        assert_eq!(libjvm_in_maps(b""), None);
        assert_eq!(
            libjvm_in_maps(b"7f00-7f10 r--p 0 08:01 2 /j/lib/server/libjvm.so"),
            None
        );
        assert_eq!(
            java_home_of(Path::new("/j/lib/server/libjvm.so")),
            Some(Path::new("/j"))
        );
    }

    #[test]
    fn release_file() {
        let text = "IMPLEMENTOR=\"Debian\"\nJAVA_RUNTIME_VERSION=\"17.0.15+6\"\nJAVA_VERSION=\"17.0.15\"\n";
        assert_eq!(release_version(text).as_deref(), Some("17.0.15+6"));
        assert_eq!(
            release_version("JAVA_VERSION=\"11\"").as_deref(),
            Some("11")
        );
        assert_eq!(release_version("JAVA_VERSION=\"\""), None);
    }
}
