//! The VM's flags and command line as the JDK's tools print them: `jinfo -flags` (JDK 9+:
//! `VM Flags:`, then `JVMFlag::printSetFlags`: every flag not at its default, sorted by name,
//! each as `JVMFlag::print_as_flag` writes it and followed by a space) and the `VM Arguments:`
//! block of `jcmd VM.command_line` / `jinfo` (`Arguments::print_on`, `runtime/arguments.cpp`).

use std::io::{self, Write};

use crate::vm::flags::{FlagKind, FlagOrigin, FlagValue, VmArguments, VmFlag};

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
    for f in set_flags(flags) {
        write_as_flag(out, f)?;
        out.write_all(b" ")?;
    }
    writeln!(out)
}

/// The flags `JVMFlag::printSetFlags` prints: every flag whose origin is not the default,
/// sorted by name in byte order (`strcmp`).
pub fn set_flags(flags: &[VmFlag]) -> Vec<&VmFlag> {
    let mut set: Vec<&VmFlag> = flags
        .iter()
        .filter(|f| f.origin != FlagOrigin::Default)
        .collect();
    set.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    set
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

/// How a JDK lays out `jcmd <pid> VM.flags -all`'s lines (`JVMFlag::print_on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagTableStyle {
    /// JDK 8 (`Flag::print_on`, `runtime/globals.cpp`): `%9s %-40s %c= ` (type, name, `:` when
    /// not at the default), the value left-justified in 16, 20 blanks, the kinds; no origin.
    Jdk8,
    /// JDK 9 on (`JVMFlag::print_on`, `runtime/flags/jvmFlag.cpp`): fixed columns — the type
    /// right-justified in 9, the name at 10, ` =` at 50, the value at 53, the kinds
    /// right-justified in 20 at 84, the origin at 105; a field past its column gets one blank.
    Columns,
}

impl FlagTableStyle {
    /// The style of JDK `major`.
    pub fn for_jdk(major: u32) -> FlagTableStyle {
        if major <= 8 {
            FlagTableStyle::Jdk8
        } else {
            FlagTableStyle::Columns
        }
    }
}

/// The flags `jcmd VM.flags -all` lists (`JVMFlag::printFlags`): every flag but a product
/// build's constants (`develop`, `notproduct`) and the locked ones (`diagnostic` without
/// `UnlockDiagnosticVMOptions`, `experimental` without `UnlockExperimentalVMOptions`), sorted
/// by name in byte order (`strcmp`).
pub fn listed_flags(flags: &[VmFlag]) -> Vec<&VmFlag> {
    let unlocked = |name: &str| {
        flags
            .iter()
            .any(|f| f.name == name && f.value == FlagValue::Bool(true))
    };
    let (diagnostic, experimental) = (
        unlocked("UnlockDiagnosticVMOptions"),
        unlocked("UnlockExperimentalVMOptions"),
    );
    let mut listed: Vec<&VmFlag> = flags
        .iter()
        .filter(|f| !f.is(FlagKind::Develop) && !f.is(FlagKind::NotProduct))
        .filter(|f| diagnostic || !f.is(FlagKind::Diagnostic))
        .filter(|f| experimental || !f.is(FlagKind::Experimental))
        .collect();
    listed.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    listed
}

/// The C++ type name of a flag's value (`JVMFlag::type_string`).
pub fn type_name(value: &FlagValue) -> &'static str {
    match value {
        FlagValue::Bool(_) => "bool",
        FlagValue::Int(_) => "int",
        FlagValue::Uint(_) => "uint",
        FlagValue::Intx(_) => "intx",
        FlagValue::Uintx(_) => "uintx",
        FlagValue::Uint64(_) => "uint64_t",
        FlagValue::SizeT(_) => "size_t",
        FlagValue::Double(_) => "double",
        FlagValue::Ccstr(_) => "ccstr",
        FlagValue::Ccstrlist(_) => "ccstrlist",
    }
}

/// A scalar value as `print_on` prints it (`%d`, `%f`, `true`); `None` for a string.
fn scalar(value: &FlagValue) -> Option<String> {
    Some(match value {
        FlagValue::Bool(b) => b.to_string(),
        FlagValue::Int(v) => v.to_string(),
        FlagValue::Uint(v) => v.to_string(),
        FlagValue::Intx(v) => v.to_string(),
        FlagValue::Uintx(v) | FlagValue::Uint64(v) | FlagValue::SizeT(v) => v.to_string(),
        FlagValue::Double(v) => format!("{v:.6}"),
        FlagValue::Ccstr(_) | FlagValue::Ccstrlist(_) => return None,
    })
}

/// `{product}`, `{C2 diagnostic}`: `print_kind`'s braces (empty when the flag has no kind).
fn kind_text(flag: &VmFlag) -> String {
    if flag.kinds.is_empty() {
        return String::new();
    }
    let words: Vec<&str> = flag.kinds.iter().map(|k| k.name()).collect();
    format!("{{{}}}", words.join(" "))
}

/// `{command line}`, `{command line, ergonomic}`: `print_origin`'s braces.
fn origin_text(flag: &VmFlag) -> String {
    let word = match flag.origin {
        FlagOrigin::Default => "default",
        FlagOrigin::CommandLine => "command line",
        FlagOrigin::EnvironVar => "environment",
        FlagOrigin::ConfigFile => "config file",
        FlagOrigin::Management => "management",
        FlagOrigin::Ergonomic if flag.set_on_command_line => "command line, ergonomic",
        FlagOrigin::Ergonomic => "ergonomic",
        FlagOrigin::AttachOnDemand => "attach",
        FlagOrigin::Internal => "internal",
        FlagOrigin::JimageResource => "jimage",
        FlagOrigin::Other(_) => "",
    };
    format!("{{{word}}}")
}

/// `fill_to_pos` of `jvmFlag.cpp`: blanks up to column `pos`, or one blank when the line is
/// already there or past it.
fn fill_to(line: &mut String, pos: usize) {
    if line.len() < pos {
        line.extend(std::iter::repeat_n(' ', pos - line.len()));
    } else {
        line.push(' ');
    }
}

/// Writes `jcmd <pid> VM.flags -all`'s text (after jcmd's `<pid>:` line): `[Global flags]`,
/// then one line per flag of [`listed_flags`] as `print_on` writes it in `style`; a
/// `ccstr`/`ccstrlist` value's further lines continue as `+=` lines under its name.
///
/// # Errors
/// Those of `out`.
pub fn write_all_flags(
    out: &mut dyn Write,
    flags: &[VmFlag],
    style: FlagTableStyle,
) -> io::Result<()> {
    writeln!(out, "[Global flags]")?;
    for flag in listed_flags(flags) {
        match style {
            FlagTableStyle::Columns => write_column_line(out, flag)?,
            FlagTableStyle::Jdk8 => write_jdk8_line(out, flag)?,
        }
    }
    Ok(())
}

fn write_column_line(out: &mut dyn Write, flag: &VmFlag) -> io::Result<()> {
    const NAME: usize = 10;
    const EQUALS: usize = 50;
    const VALUE: usize = 53;
    const KIND: usize = 84;
    const KIND_WIDTH: usize = 20;
    const ORIGIN: usize = 105;
    let mut line = format!("{:>9}", type_name(&flag.value));
    fill_to(&mut line, NAME);
    line.push_str(&flag.name);
    fill_to(&mut line, EQUALS);
    line.push_str(" =");
    fill_to(&mut line, VALUE);
    match scalar(&flag.value) {
        Some(v) => line.push_str(&v),
        None => {
            let (FlagValue::Ccstr(s) | FlagValue::Ccstrlist(s)) = &flag.value else {
                unreachable!("scalar() is None only for strings");
            };
            let mut parts = s.as_deref().unwrap_or("").split('\n');
            line.push_str(parts.next().unwrap_or(""));
            for part in parts {
                writeln!(out, "{line}")?;
                line.clear();
                fill_to(&mut line, NAME);
                line.push_str(&flag.name);
                fill_to(&mut line, EQUALS);
                line.push_str("+=");
                fill_to(&mut line, VALUE);
                line.push_str(part);
            }
        }
    }
    fill_to(&mut line, KIND);
    line.push_str(&format!("{:>KIND_WIDTH$}", kind_text(flag)));
    fill_to(&mut line, ORIGIN);
    line.push_str(&origin_text(flag));
    writeln!(out, "{line}")
}

fn write_jdk8_line(out: &mut dyn Write, flag: &VmFlag) -> io::Result<()> {
    let mark = if flag.origin == FlagOrigin::Default {
        ' '
    } else {
        ':'
    };
    write!(
        out,
        "{:>9} {:<40} {mark}= ",
        type_name(&flag.value),
        flag.name
    )?;
    match scalar(&flag.value) {
        Some(v) => write!(out, "{v:<16}")?,
        None => {
            let (FlagValue::Ccstr(s) | FlagValue::Ccstrlist(s)) = &flag.value else {
                unreachable!("scalar() is None only for strings");
            };
            let text = s.as_deref().unwrap_or("");
            let mut parts = text.split('\n').peekable();
            while let Some(part) = parts.next() {
                if parts.peek().is_some() {
                    writeln!(out, "{part}")?;
                    write!(out, "{:5} {:<35} += ", "", flag.name)?;
                } else {
                    write!(out, "{part:<16}")?;
                }
            }
        }
    }
    writeln!(out, "{:<20}{}", " ", kind_text(flag))
}

/// Writes `jcmd <pid> VM.version`'s two lines (`VersionDCmd`, `services/diagnosticCommand.cpp`):
/// `<java.vm.name> version <release>` and `JDK <version>` — from JDK 9 `JDK 17.0.15` (four
/// numbers when the fourth, the patch, is not 0), in JDK 8 `JDK 8.0_462`. `release` is
/// `Abstract_VM_Version::_s_vm_release` (the `java.vm.version` property when `None`); the
/// version numbers come from the `java.version` property.
///
/// # Errors
/// Those of `out`; [`io::ErrorKind::InvalidData`] when `java.vm.name` or `java.version` is
/// missing.
pub fn write_vm_version(
    out: &mut dyn Write,
    properties: &[(String, String)],
    release: Option<&str>,
) -> io::Result<()> {
    let get = |k: &str| {
        properties
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("no {k} property")))
    };
    let release = match release {
        Some(r) => r,
        None => get("java.vm.version")?,
    };
    writeln!(out, "{} version {release}", get("java.vm.name")?)?;
    writeln!(out, "JDK {}", jdk_version(get("java.version")?))
}

/// System properties as read: `(key, value)` pairs.
pub type Properties<'a> = &'a [(String, String)];

/// The parts of `inspect info --format json`, each written when present.
#[derive(Debug, Default)]
pub struct InfoParts<'a> {
    /// `vm`: `{name, release, jdk}` as [`write_vm_version`] prints them (needs the properties).
    pub version: Option<(Properties<'a>, Option<&'a str>)>,
    /// `flags`: these flags, each `{name, type, value, origin, kinds, set_on_command_line}`.
    pub flags: Option<Vec<&'a VmFlag>>,
    /// `system_properties`: an object of the properties, in their order.
    pub properties: Option<Properties<'a>>,
    /// `arguments`: `{jvm_flags, jvm_args, java_command}`, and `java_class_path`,
    /// `launcher_type` from the properties when given.
    pub arguments: Option<(&'a VmArguments, Option<Properties<'a>>)>,
}

/// Writes `parts` as one JSON document and a newline. These strings may hold secrets; the
/// operator asked for them by name, as for the text.
///
/// # Errors
/// Those of `out`.
pub fn write_info_json(out: &mut dyn Write, parts: &InfoParts) -> io::Result<()> {
    use serde_json::{Map, Value, json};
    let get = |props: &[(String, String)], k: &str| {
        props
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| Value::from(v.as_str()))
            .unwrap_or(Value::Null)
    };
    let mut doc = Map::new();
    if let Some((props, release)) = parts.version {
        let release = release
            .map(Value::from)
            .unwrap_or_else(|| get(props, "java.vm.version"));
        let jdk = match get(props, "java.version") {
            Value::String(v) => Value::from(jdk_version(&v)),
            other => other,
        };
        doc.insert(
            "vm".into(),
            json!({"name": get(props, "java.vm.name"), "release": release, "jdk": jdk}),
        );
    }
    if let Some(flags) = &parts.flags {
        doc.insert("flags".into(), serde_json::to_value(flags)?);
    }
    if let Some(props) = parts.properties {
        let map: Map<String, Value> = props
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect();
        doc.insert("system_properties".into(), Value::Object(map));
    }
    if let Some((args, props)) = parts.arguments {
        let mut a = Map::new();
        a.insert("jvm_flags".into(), json!(args.jvm_flags));
        a.insert("jvm_args".into(), json!(args.jvm_args));
        a.insert("java_command".into(), json!(args.java_command));
        if let Some(props) = props {
            a.insert("java_class_path".into(), get(props, "java.class.path"));
            a.insert("launcher_type".into(), get(props, "sun.java.launcher"));
        }
        doc.insert("arguments".into(), Value::Object(a));
    }
    serde_json::to_writer_pretty(&mut *out, &Value::Object(doc))?;
    writeln!(out)
}

/// `JDK_Version::to_string`'s numbers from a `java.version` property: `1.8.0_462` →
/// `8.0_462`, `1.8.0` → `8.0`; `17.0.15` → `17.0.15`, `25` → `25.0.0`, `11.0.9.1` → `11.0.9.1`.
fn jdk_version(java_version: &str) -> String {
    if let Some(rest) = java_version.strip_prefix("1.") {
        // JDK 8 and before: 1.<major>.<micro>[_<update>]; HotSpot prints <major>.<micro>_<update>.
        let (numbers, update) = rest.split_once('_').unwrap_or((rest, ""));
        let mut parts = numbers.split('.');
        let major = parts.next().unwrap_or("0");
        let minor = parts.next().unwrap_or("0");
        let update: String = update.chars().take_while(char::is_ascii_digit).collect();
        return match update.parse::<u32>() {
            Ok(u) if u > 0 => format!("{major}.{minor}_{u}"),
            _ => format!("{major}.{minor}"),
        };
    }
    let numbers: Vec<u32> = java_version
        .split(['-', '+'])
        .next()
        .unwrap_or("")
        .split('.')
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    let n = |i: usize| numbers.get(i).copied().unwrap_or(0);
    if n(3) > 0 {
        format!("{}.{}.{}.{}", n(0), n(1), n(2), n(3))
    } else {
        format!("{}.{}.{}", n(0), n(1), n(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(name: &str, value: FlagValue, origin: FlagOrigin) -> VmFlag {
        VmFlag {
            name: name.into(),
            value,
            origin,
            kinds: vec![FlagKind::Product],
            set_on_command_line: false,
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

    /// Lines as JDK 17's `jcmd VM.flags -all` printed them (the unit test's flags set up as
    /// that JVM had them: `-XX:OnError="echo one;echo two" -XX:OnError="echo three"`).
    #[test]
    fn all_flags_lines_are_jvmflag_print_on_columns() {
        let kinds = |f: VmFlag, k: &[FlagKind], on_cl: bool| VmFlag {
            kinds: k.to_vec(),
            set_on_command_line: on_cl,
            ..f
        };
        let flags = [
            kinds(
                flag("AVX3Threshold", FlagValue::Int(4096), FlagOrigin::Default),
                &[FlagKind::Arch, FlagKind::Diagnostic],
                false,
            ),
            kinds(
                flag(
                    "UnlockDiagnosticVMOptions",
                    FlagValue::Bool(true),
                    FlagOrigin::CommandLine,
                ),
                &[FlagKind::Diagnostic],
                true,
            ),
            kinds(
                flag("UseZGC", FlagValue::Bool(false), FlagOrigin::Default),
                &[FlagKind::Experimental],
                false,
            ),
            kinds(
                flag("Verbose", FlagValue::Bool(false), FlagOrigin::Default),
                &[FlagKind::Develop],
                false,
            ),
            kinds(
                flag(
                    "OnError",
                    FlagValue::Ccstrlist(Some("echo one;echo two\necho three".into())),
                    FlagOrigin::CommandLine,
                ),
                &[FlagKind::Product],
                true,
            ),
            kinds(
                flag(
                    "ObjectAlignmentInBytes",
                    FlagValue::Intx(8),
                    FlagOrigin::Default,
                ),
                &[FlagKind::Product, FlagKind::Lp64Product],
                false,
            ),
            kinds(
                flag("CICompilerCount", FlagValue::Intx(2), FlagOrigin::Ergonomic),
                &[FlagKind::Product],
                true,
            ),
            kinds(
                flag("HeapDumpPath", FlagValue::Ccstr(None), FlagOrigin::Default),
                &[FlagKind::Manageable],
                false,
            ),
            flag(
                "MaxRAMPercentage",
                FlagValue::Double(33.5),
                FlagOrigin::CommandLine,
            ),
        ];
        let expected = "[Global flags]
      int AVX3Threshold                            = 4096                              {ARCH diagnostic} {default}
     intx CICompilerCount                          = 2                                         {product} {command line, ergonomic}
    ccstr HeapDumpPath                             =                                        {manageable} {default}
   double MaxRAMPercentage                         = 33.500000                                 {product} {command line}
     intx ObjectAlignmentInBytes                   = 8                              {product lp64_product} {default}
ccstrlist OnError                                  = echo one;echo two
          OnError                                 += echo three                                {product} {command line}
     bool UnlockDiagnosticVMOptions                = true                                   {diagnostic} {command line}
";
        let ours = text(|o| write_all_flags(o, &flags, FlagTableStyle::Columns));
        assert_eq!(ours, expected);
        // JDK 8: `:=` for a flag not at its default, the kinds after 20 blanks, no origin.
        let jdk8 = text(|o| write_all_flags(o, &flags[4..], FlagTableStyle::Jdk8));
        assert_eq!(
            jdk8,
            "[Global flags]
     intx CICompilerCount                          := 2                                   {product}
    ccstr HeapDumpPath                              =                                     {manageable}
   double MaxRAMPercentage                         := 33.500000                           {product}
     intx ObjectAlignmentInBytes                    = 8                                   {product lp64_product}
ccstrlist OnError                                  := echo one;echo two
      OnError                             += echo three                          {product}
"
        );
    }

    #[test]
    fn vm_version_prints_hotspots_jdk_numbers() {
        let props = |v: &str| {
            vec![
                (
                    "java.vm.name".to_string(),
                    "OpenJDK 64-Bit Server VM".to_string(),
                ),
                ("java.version".to_string(), v.to_string()),
                ("java.vm.version".to_string(), "vm-version".to_string()),
            ]
        };
        let version =
            |v: &str, release: Option<&str>| text(|o| write_vm_version(o, &props(v), release));
        assert_eq!(
            version("17.0.15", Some("17.0.15+6-Debian-1deb12u1")),
            "OpenJDK 64-Bit Server VM version 17.0.15+6-Debian-1deb12u1\nJDK 17.0.15\n"
        );
        assert_eq!(
            version("25", None),
            "OpenJDK 64-Bit Server VM version vm-version\nJDK 25.0.0\n"
        );
        assert_eq!(jdk_version("11.0.9.1"), "11.0.9.1");
        assert_eq!(jdk_version("21.0.9-ea"), "21.0.9");
        assert_eq!(jdk_version("1.8.0_462"), "8.0_462");
        assert_eq!(jdk_version("1.8.0"), "8.0");
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
