//! `inspect info` against the JDK's own tools on the same JVM: `--flags` byte for byte with
//! `jcmd <pid> VM.flags` (and JDK 17's `jinfo -flags`), `--sysprops` line for line with
//! `jinfo -sysprops` (as sets: jinfo's order is its hash map's), the `VM Arguments:` lines with
//! `jcmd <pid> VM.command_line`'s `jvm_flags:`/`jvm_args:`/`java_command:` lines; live, while
//! SIGSTOPped (where jcmd cannot answer) and from a gcore. The JVM is started with flags of
//! every value kind that prints differently (`bool`, `size_t`, `double`, a `ccstrlist` of two
//! commands, an `intx`) and a `-D` holding a space, `=` and `:`. jcmd's answers are taken
//! before and after ours and must agree with each other (no flag moved) for the comparison.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{
    Jvm, assert_left_alone, gcore, inspect_ok, jdk, scratch_dir, send_signal, test_classes,
};

const FLAGS: &[&str] = &[
    "-Xmx64m",
    "-XX:+UseParallelGC",
    "-XX:MaxRAMPercentage=33.5",
    "-XX:OnError=echo one;echo two",
    "-XX:OnError=echo three",
    "-XX:CICompilerCount=2",
    "-XX:+UnlockDiagnosticVMOptions",
    "-Dhsinspect.test=a b=c:d",
    "-Dhsinspect.accents=café € 😀 ü",
    "-Dhsinspect.set=hsinspect.runtime",
];

fn start(java_home: &Path) -> Jvm {
    let mut cmd = Command::new(java_home.join("bin/java"));
    // A UTF-8 locale, so that the JVM decodes the non-ASCII `-D` as the text it is.
    cmd.args(FLAGS)
        .env("LC_ALL", "C.UTF-8")
        .arg("-cp")
        .arg(test_classes())
        .args(["Target", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, java_home)
}

/// The output of a JDK tool, less jcmd's `<pid>:` first line.
fn tool(java_home: &Path, tool: &str, args: &[&str]) -> String {
    let out = Command::new(java_home.join("bin").join(tool))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {tool}: {e}"));
    assert!(
        out.status.success(),
        "{tool} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    match text.split_once('\n') {
        Some((first, rest)) if tool == "jcmd" && first.ends_with(':') => rest.to_string(),
        _ => text,
    }
}

/// jcmd's flags as `jinfo -flags` (and `inspect info --flags`) print them, and its command
/// line's `VM Arguments:` lines that `inspect info` prints.
fn reference(java_home: &Path, pid: i32) -> (String, String) {
    let pid = pid.to_string();
    let flags = format!(
        "VM Flags:\n{}",
        tool(java_home, "jcmd", &[&pid, "VM.flags"])
    );
    let command_line: String = tool(java_home, "jcmd", &[&pid, "VM.command_line"])
        .lines()
        .filter(|l| {
            ["VM Arguments:", "jvm_flags:", "jvm_args:", "java_command:"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    (flags, command_line)
}

/// `jinfo -sysprops`'s lines, after a first call: the first sets `user.timezone` in the target
/// (its `Properties.store` formats the date) after printing the properties without it.
fn jinfo_properties(java_home: &Path, pid: &str) -> BTreeSet<String> {
    tool(java_home, "jinfo", &["-sysprops", pid]);
    property_lines(&tool(java_home, "jinfo", &["-sysprops", pid]))
}

/// The `key=value` lines of a `Java System Properties:` block (after its title and `#` time
/// line), as a set: jinfo prints them in its hash map's order, ours sorted by key.
fn property_lines(block: &str) -> BTreeSet<String> {
    let mut lines = block.lines();
    assert_eq!(lines.next(), Some("Java System Properties:"), "{block}");
    assert!(lines.next().is_some_and(|l| l.starts_with('#')), "{block}");
    lines.map(str::to_string).collect()
}

/// jcmd's `VM.flags -all`, `VM.version` and `VM.command_line` (less its `<pid>:` line).
fn jcmd_parts(home: &Path, pid: &str) -> (String, String, String) {
    (
        tool(home, "jcmd", &[pid, "VM.flags", "-all"]),
        tool(home, "jcmd", &[pid, "VM.version"]),
        tool(home, "jcmd", &[pid, "VM.command_line"]),
    )
}

fn live(major: u32) {
    let home = jdk(major);
    let jvm = start(&home);
    let pid = jvm.pid.to_string();
    let before = reference(&home, jvm.pid);
    let parts_before = jcmd_parts(&home, &pid);
    let props_before = jinfo_properties(&home, &pid);
    let flags = inspect_ok(&["info", "--flags", &pid]);
    let all = inspect_ok(&["info", &pid]);
    let sysprops = inspect_ok(&["info", "--sysprops", &pid]);
    let all_flags = inspect_ok(&["info", "--all-flags", &pid]);
    let version = inspect_ok(&["info", "--vm-version", &pid]);
    let command_line = inspect_ok(&["info", "--command-line", &pid]);
    let json = inspect_ok(&["info", "--format", "json", &pid]);
    assert_left_alone(jvm.pid, false);
    let props_after = property_lines(&tool(&home, "jinfo", &["-sysprops", &pid]));
    assert!(props_after.iter().any(|l| l.starts_with("user.timezone=")));
    let after = reference(&home, jvm.pid);
    let parts_after = jcmd_parts(&home, &pid);
    assert_eq!(before, after, "jcmd's answers moved between the reads");
    assert_eq!(
        parts_before, parts_after,
        "jcmd's answers moved between the reads"
    );
    assert_eq!(props_before, props_after, "jinfo's properties moved");
    assert_eq!(
        property_lines(&sysprops),
        props_after,
        "JDK {major}: inspect info --sysprops vs jinfo -sysprops"
    );
    for expected in [
        "hsinspect.test=a b\\=c\\:d",
        "hsinspect.accents=caf\\u00E9 \\u20AC \\uD83D\\uDE00 \\u00FC",
        "hsinspect.runtime=set at run time\\: caf\\u00E9 \\u20AC \\uD83D\\uDE00",
    ] {
        assert!(
            props_after.contains(expected),
            "{expected} not in jinfo's properties: {props_after:?}"
        );
    }
    assert_eq!(
        flags, before.0,
        "JDK {major}: inspect info --flags vs jcmd VM.flags"
    );
    assert!(
        flags.contains("-XX:OnError=echo one;echo two -XX:OnError=echo three ")
            && flags.contains("-XX:MaxRAMPercentage=33.500000 "),
        "{flags}"
    );
    let (all_flags_jcmd, version_jcmd, command_line_jcmd) = parts_after;
    assert_eq!(
        all_flags, all_flags_jcmd,
        "JDK {major}: inspect info --all-flags vs jcmd VM.flags -all"
    );
    assert!(all_flags.contains("+= echo three"), "{all_flags}");
    assert_eq!(
        version, version_jcmd,
        "JDK {major}: inspect info --vm-version vs jcmd VM.version"
    );
    assert_eq!(
        command_line, command_line_jcmd,
        "JDK {major}: inspect info --command-line vs jcmd VM.command_line"
    );
    // `jinfo <pid>`: the properties, then the flags and jcmd VM.command_line's whole block.
    let (props, rest) = all
        .split_once("\n\n")
        .expect("the properties, then the rest");
    assert_eq!(
        property_lines(props),
        props_after,
        "JDK {major}: inspect info"
    );
    assert_eq!(
        rest,
        format!("{}\n{command_line_jcmd}", after.0),
        "JDK {major}: inspect info after its properties"
    );
    assert!(rest.contains("-Dhsinspect.test=a b=c:d "), "{rest}");

    // The same as data.
    let json: serde_json::Value = serde_json::from_str(&json).expect("inspect info --format json");
    let names: Vec<&str> = json["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let listed: Vec<&str> = all_flags
        .lines()
        .skip(1)
        .filter(|l| !l.contains("+="))
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(names, listed, "JDK {major}: the JSON's flags");
    let max_heap = json["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "MaxHeapSize")
        .unwrap();
    assert_eq!(max_heap["type"], "size_t");
    assert_eq!(max_heap["value"], 64 << 20);
    assert_eq!(max_heap["origin"], "command_line");
    assert_eq!(
        json["system_properties"]["hsinspect.runtime"],
        "set at run time: café € 😀"
    );
    assert_eq!(
        json["system_properties"]["hsinspect.accents"],
        "café € 😀 ü"
    );
    assert!(
        json["arguments"]["jvm_args"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "-Dhsinspect.accents=café € 😀 ü"),
        "{json}"
    );
    let mut version_lines = version.lines();
    assert_eq!(
        version_lines.next().unwrap(),
        format!(
            "{} version {}",
            json["vm"]["name"].as_str().unwrap(),
            json["vm"]["release"].as_str().unwrap()
        )
    );
    assert_eq!(
        version_lines.next().unwrap(),
        format!("JDK {}", json["vm"]["jdk"].as_str().unwrap())
    );
}

#[test]
#[ignore = "requires root, JDK 11 (scripts/test.sh)"]
fn jdk11_flags_and_command_line_match_jcmd() {
    live(11);
}

/// Also byte for byte with `jinfo -flags`.
#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn jdk17_flags_and_command_line_match_jcmd_and_jinfo() {
    live(17);
    let home = jdk(17);
    let jvm = start(&home);
    let pid = jvm.pid.to_string();
    let jinfo = tool(&home, "jinfo", &["-flags", &pid]);
    assert_eq!(inspect_ok(&["info", "--flags", &pid]), jinfo);
}

#[test]
#[ignore = "requires root, JDK 21 (scripts/test.sh)"]
fn jdk21_flags_and_command_line_match_jcmd() {
    live(21);
}

#[test]
#[ignore = "requires root, JDK 25 (scripts/test.sh)"]
fn jdk25_flags_and_command_line_match_jcmd() {
    live(25);
}

/// A gcore of the running JVM, then the JVM SIGSTOPped (jcmd cannot answer it then): the
/// stopped JVM and the core read after the JVM is gone print what jcmd and jinfo printed before
/// (`jinfo <pid>`'s three parts, `VM.flags -all`, `VM.version`), and the JVM is left stopped.
#[test]
#[ignore = "requires root, gdb, JDK 21 (scripts/test.sh)"]
fn jdk21_stopped_jvm_and_its_gcore_print_what_jcmd_printed() {
    let home = jdk(21);
    let dir = scratch_dir("info-core");
    let jvm = start(&home);
    let pid = jvm.pid.to_string();
    let (flags, _) = reference(&home, jvm.pid);
    let props = jinfo_properties(&home, &pid);
    let (all_flags, version, command_line) = jcmd_parts(&home, &pid);
    let rest = format!("{flags}\n{command_line}");
    let core = gcore(jvm.pid, dir.path());
    send_signal(jvm.pid, libc::SIGSTOP);
    let read = |target: &[&str]| {
        let with = |part: Option<&str>| {
            let mut a = vec!["info"];
            a.extend(part);
            a.extend_from_slice(target);
            inspect_ok(&a)
        };
        (
            with(None),
            with(Some("--all-flags")),
            with(Some("--vm-version")),
        )
    };
    let stopped = read(&[&pid]);
    assert_left_alone(jvm.pid, true);
    send_signal(jvm.pid, libc::SIGCONT);
    drop(jvm);
    let core = core.to_str().unwrap();
    let from_core = read(&["--core", core]);
    for ((whole, ours_all, ours_version), what) in
        [(stopped, "the SIGSTOPped JVM"), (from_core, "the gcore")]
    {
        let (our_props, our_rest) = whole.split_once("\n\n").expect("three parts");
        assert_eq!(property_lines(our_props), props, "{what}'s properties");
        assert_eq!(our_rest, rest, "{what}'s flags and arguments");
        assert_eq!(ours_all, all_flags, "{what}: VM.flags -all");
        assert_eq!(ours_version, version, "{what}: VM.version");
    }
}
