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
    "-Dhsinspect.test=a b=c:d",
];

fn start(java_home: &Path) -> Jvm {
    let mut cmd = Command::new(java_home.join("bin/java"));
    cmd.args(FLAGS)
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

/// `inspect info`'s output split at its empty line: the flags part, the arguments part.
fn split(ours: &str) -> (String, String) {
    let (flags, args) = ours
        .split_once("\n\n")
        .unwrap_or_else(|| panic!("no empty line between the parts:\n{ours}"));
    (format!("{flags}\n"), args.to_string())
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

fn live(major: u32) {
    let home = jdk(major);
    let jvm = start(&home);
    let pid = jvm.pid.to_string();
    let before = reference(&home, jvm.pid);
    let props_before = jinfo_properties(&home, &pid);
    let flags = inspect_ok(&["info", "--flags", &pid]);
    let both = inspect_ok(&["info", &pid]);
    let all = inspect_ok(&["info", "--all", &pid]);
    let sysprops = inspect_ok(&["info", "--sysprops", &pid]);
    assert_left_alone(jvm.pid, false);
    let props_after = property_lines(&tool(&home, "jinfo", &["-sysprops", &pid]));
    assert!(props_after.iter().any(|l| l.starts_with("user.timezone=")));
    let after = reference(&home, jvm.pid);
    assert_eq!(before, after, "jcmd's answers moved between the reads");
    assert_eq!(props_before, props_after, "jinfo's properties moved");
    assert_eq!(
        property_lines(&sysprops),
        props_after,
        "JDK {major}: inspect info --sysprops vs jinfo -sysprops"
    );
    assert!(
        props_after.contains("hsinspect.test=a b\\=c\\:d"),
        "the escaped -D property: {props_after:?}"
    );
    assert_eq!(
        flags, before.0,
        "JDK {major}: inspect info --flags vs jcmd VM.flags"
    );
    assert!(
        flags.contains("-XX:OnError=echo one;echo two -XX:OnError=echo three ")
            && flags.contains("-XX:MaxRAMPercentage=33.500000 "),
        "{flags}"
    );
    assert_eq!(split(&both), after, "JDK {major}: inspect info vs jcmd");
    let (props, rest) = all
        .split_once("\n\n")
        .expect("the properties, then the rest");
    assert_eq!(
        property_lines(props),
        props_after,
        "JDK {major}: inspect info --all"
    );
    // The flags and the whole `VM Arguments:` block of jcmd VM.command_line (its class path
    // and launcher lines too).
    let command_line = tool(&home, "jcmd", &[&pid, "VM.command_line"]);
    let block = &command_line[command_line.find("VM Arguments:").unwrap()..];
    assert_eq!(
        rest,
        format!("{}\n{block}", after.0),
        "JDK {major}: inspect info --all after its properties"
    );
    assert!(both.contains("-Dhsinspect.test=a b=c:d "), "{both}");
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
/// stopped JVM and the core read after the JVM is gone print what jcmd printed before, and the
/// JVM is left stopped.
#[test]
#[ignore = "requires root, gdb, JDK 21 (scripts/test.sh)"]
fn jdk21_stopped_jvm_and_its_gcore_print_what_jcmd_printed() {
    let home = jdk(21);
    let dir = scratch_dir("info-core");
    let jvm = start(&home);
    let pid = jvm.pid.to_string();
    let (flags, args) = reference(&home, jvm.pid);
    let props = jinfo_properties(&home, &pid);
    let expected = (flags, args);
    let core = gcore(jvm.pid, dir.path());
    send_signal(jvm.pid, libc::SIGSTOP);
    let stopped = inspect_ok(&["info", &pid]);
    let stopped_props = inspect_ok(&["info", "--sysprops", &pid]);
    assert_left_alone(jvm.pid, true);
    send_signal(jvm.pid, libc::SIGCONT);
    drop(jvm);
    assert_eq!(split(&stopped), expected, "the SIGSTOPped JVM");
    assert_eq!(
        property_lines(&stopped_props),
        props,
        "the SIGSTOPped JVM's properties"
    );
    let core = core.to_str().unwrap();
    let from_core = inspect_ok(&["info", "--core", core]);
    assert_eq!(split(&from_core), expected, "the gcore");
    let core_props = inspect_ok(&["info", "--sysprops", "--core", core]);
    assert_eq!(property_lines(&core_props), props, "the gcore's properties");
}
