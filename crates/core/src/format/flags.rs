//! The VM's flags and command line as the JDK's tools print them: `jinfo -flags` (JDK 9+:
//! `VM Flags:`, then `JVMFlag::printSetFlags`: every flag not at its default, sorted by name,
//! each as `JVMFlag::print_as_flag` writes it and followed by a space) and the `VM Arguments:`
//! block of `jcmd VM.command_line` / `jinfo` (`Arguments::print_on`, `runtime/arguments.cpp`).

use std::io::{self, Write};

use crate::vm::flags::{FlagOrigin, FlagValue, VmArguments, VmFlag};

/// Writes one flag as `-XX:` option text (`JVMFlag::print_as_flag`): `-XX:+Name`/`-XX:-Name`
/// for a `bool`, `-XX:Name=<value>` otherwise (a `double` as C's `%f`); the lines of a
/// `ccstr`/`ccstrlist` value become ` -XX:Name=<line>` each, as the VM prints them.
///
/// # Errors
/// Those of `out`.
pub fn write_as_flag(out: &mut dyn Write, flag: &VmFlag) -> io::Result<()> {
    let name = &flag.name;
    match &flag.value {
        FlagValue::Bool(b) => write!(out, "-XX:{}{name}", if *b { '+' } else { '-' }),
        FlagValue::Int(v) => write!(out, "-XX:{name}={v}"),
        FlagValue::Uint(v) => write!(out, "-XX:{name}={v}"),
        FlagValue::Intx(v) => write!(out, "-XX:{name}={v}"),
        FlagValue::Uintx(v) | FlagValue::Uint64(v) | FlagValue::SizeT(v) => {
            write!(out, "-XX:{name}={v}")
        }
        FlagValue::Double(v) => write!(out, "-XX:{name}={v:.6}"),
        FlagValue::Ccstr(s) | FlagValue::Ccstrlist(s) => {
            write!(out, "-XX:{name}=")?;
            let mut lines = s.as_deref().unwrap_or("").split('\n');
            if let Some(first) = lines.next() {
                out.write_all(first.as_bytes())?;
            }
            for line in lines {
                write!(out, " -XX:{name}={line}")?;
            }
            Ok(())
        }
    }
}

/// Writes `jinfo -flags`' text: `VM Flags:`, then [`write_set_flags_line`].
///
/// # Errors
/// Those of `out`.
pub fn write_set_flags(out: &mut dyn Write, flags: &[VmFlag]) -> io::Result<()> {
    writeln!(out, "VM Flags:")?;
    write_set_flags_line(out, flags)
}

/// Writes `jcmd <pid> VM.flags`' line (`JVMFlag::printSetFlags`): every flag whose origin is
/// not the default, sorted by name (byte order, as `strcmp`), each followed by a space.
///
/// # Errors
/// Those of `out`.
pub fn write_set_flags_line(out: &mut dyn Write, flags: &[VmFlag]) -> io::Result<()> {
    let mut set: Vec<&VmFlag> = flags
        .iter()
        .filter(|f| f.origin != FlagOrigin::Default)
        .collect();
    set.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    for f in set {
        write_as_flag(out, f)?;
        out.write_all(b" ")?;
    }
    writeln!(out)
}

/// Writes the `jvm_flags:`, `jvm_args:` and `java_command:` lines of `Arguments::print_on`
/// under `VM Arguments:` (each option followed by a space; `java_command: <unknown>` without
/// one).
///
/// # Errors
/// Those of `out`.
pub fn write_arguments(out: &mut dyn Write, args: &VmArguments) -> io::Result<()> {
    writeln!(out, "VM Arguments:")?;
    for (label, list) in [("jvm_flags", &args.jvm_flags), ("jvm_args", &args.jvm_args)] {
        if !list.is_empty() {
            write!(out, "{label}: ")?;
            for a in list {
                write!(out, "{a} ")?;
            }
            writeln!(out)?;
        }
    }
    writeln!(
        out,
        "java_command: {}",
        args.java_command.as_deref().unwrap_or("<unknown>")
    )
}

/// The last two lines of `jcmd VM.command_line`'s block (`Arguments::print_on`), from the
/// system properties the launcher set: `java_class_path (initial):` (`java.class.path`;
/// `<not set>` when empty or absent) and `Launcher Type:` (`sun.java.launcher`; `generic`
/// when absent, as for a JVM created through JNI).
///
/// # Errors
/// Those of `out`.
pub fn write_launch_lines(out: &mut dyn Write, properties: &[(String, String)]) -> io::Result<()> {
    let get = |k: &str| {
        properties
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.as_str())
    };
    let class_path = get("java.class.path").filter(|p| !p.is_empty());
    writeln!(
        out,
        "java_class_path (initial): {}",
        class_path.unwrap_or("<not set>")
    )?;
    writeln!(
        out,
        "Launcher Type: {}",
        get("sun.java.launcher").unwrap_or("generic")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(name: &str, value: FlagValue, origin: FlagOrigin) -> VmFlag {
        VmFlag {
            name: name.into(),
            value,
            origin,
        }
    }

    fn text(f: impl Fn(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn set_flags_are_sorted_typed_and_spaced_as_print_set_flags_prints_them() {
        let flags = [
            flag("UseG1GC", FlagValue::Bool(true), FlagOrigin::Ergonomic),
            flag(
                "MaxHeapSize",
                FlagValue::SizeT(67108864),
                FlagOrigin::CommandLine,
            ),
            flag("UseSerialGC", FlagValue::Bool(false), FlagOrigin::Default),
            flag(
                "THPStackMitigation",
                FlagValue::Bool(false),
                FlagOrigin::Ergonomic,
            ),
            flag("CICompilerCount", FlagValue::Intx(2), FlagOrigin::Ergonomic),
            flag(
                "MaxRAMPercentage",
                FlagValue::Double(75.0),
                FlagOrigin::CommandLine,
            ),
            flag(
                "ErrorFile",
                FlagValue::Ccstr(Some("/tmp/e.log".into())),
                FlagOrigin::CommandLine,
            ),
            flag(
                "OnError",
                FlagValue::Ccstrlist(Some("a\nb".into())),
                FlagOrigin::CommandLine,
            ),
            flag("Empty", FlagValue::Ccstr(None), FlagOrigin::CommandLine),
        ];
        assert_eq!(
            text(|o| write_set_flags(o, &flags)),
            "VM Flags:\n-XX:CICompilerCount=2 -XX:Empty= -XX:ErrorFile=/tmp/e.log \
             -XX:MaxHeapSize=67108864 -XX:MaxRAMPercentage=75.000000 -XX:OnError=a -XX:OnError=b \
             -XX:-THPStackMitigation -XX:+UseG1GC \n"
        );
    }

    #[test]
    fn arguments_print_each_option_followed_by_a_space_and_unknown_without_a_command() {
        let args = VmArguments {
            jvm_flags: vec![],
            jvm_args: vec!["-Xmx64m".into(), "-Dk=a b".into()],
            java_command: None,
        };
        assert_eq!(
            text(|o| write_arguments(o, &args)),
            "VM Arguments:\njvm_args: -Xmx64m -Dk=a b \njava_command: <unknown>\n"
        );
    }
}

/// Writes the system properties as `jinfo -sysprops` does (`Properties.store`: a `#` line with
/// the time, then `key=value` lines with `Properties.saveConvert`'s escapes and non-ASCII as
/// `\uXXXX`), after the `Java System Properties:` title. `date` is the time line's text (Java's
/// `Date.toString`). Sorted by key (jinfo prints its hash map's order).
///
/// # Errors
/// Those of `out`.
pub fn write_system_properties(
    out: &mut dyn Write,
    properties: &[(String, String)],
    date: &str,
) -> io::Result<()> {
    writeln!(out, "Java System Properties:")?;
    writeln!(out, "#{date}")?;
    for (k, v) in properties {
        writeln!(out, "{}={}", save_convert(k, true), save_convert(v, false))?;
    }
    Ok(())
}

/// `java.util.Properties.saveConvert` with `escUnicode` (what `store(OutputStream, ...)` uses),
/// over UTF-16 code units as Java sees them.
fn save_convert(s: &str, escape_space: bool) -> String {
    let mut o = String::with_capacity(s.len());
    for (i, c) in s.encode_utf16().enumerate() {
        match c {
            0x5C => o.push_str("\\\\"),
            62..=126 => o.push(char::from(c as u8)),
            0x20 if i == 0 || escape_space => o.push_str("\\ "),
            0x09 => o.push_str("\\t"),
            0x0A => o.push_str("\\n"),
            0x0D => o.push_str("\\r"),
            0x0C => o.push_str("\\f"),
            0x3D | 0x3A | 0x23 | 0x21 => {
                o.push('\\');
                o.push(char::from(c as u8));
            }
            c if !(0x20..=0x7E).contains(&c) => o.push_str(&format!("\\u{c:04X}")),
            c => o.push(char::from(c as u8)),
        }
    }
    o
}

#[cfg(test)]
mod properties_tests {
    use super::save_convert;

    #[test]
    fn escapes_as_properties_store_does() {
        assert_eq!(save_convert("a b", true), "a\\ b");
        assert_eq!(save_convert(" a b", false), "\\ a b");
        assert_eq!(save_convert("C:\\x=y#z!", false), "C\\:\\\\x\\=y\\#z\\!");
        assert_eq!(save_convert("\t\n\r\u{c}", false), "\\t\\n\\r\\f");
        assert_eq!(save_convert("é€😀", false), "\\u00E9\\u20AC\\uD83D\\uDE00");
        assert_eq!(save_convert("/usr/lib", false), "/usr/lib");
    }
}
