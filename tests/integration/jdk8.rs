//! JDK 8 as a target: JVMs of Debian's `openjdk-8-jdk-headless` (8u…) running in the Debian sid
//! root of scripts/jdk8-root.sh (a private mount namespace with its own /proc, then chroot:
//! scripts/jdk8-run.sh; the JVM keeps its host pid), each compared with JDK 8's own tools run
//! inside the same root: `-F` (through vmStructs: Debian's JDK 8 libjvm has no `.symtab`) and
//! the file path against `jcmd PerfCounter.print` (also in a pid + mount namespace), `list` against
//! `jps -l`, `stat` against `jstat` (all twelve options, Parallel, G1 and CMS), a
//! `-XX:+PerfDisableSharedMem` JVM against the region it saves at exit, the saved JDK 8 jstat
//! outputs of testdata/stat/jdk8-golden/ against JDK 8's jstat, serve's page with JVMs of
//! JDK 8, 11, 17, 21 and 25 at once against promtool, and `inspect threads` against JDK 8's
//! `jcmd Thread.print -l` (Parallel, G1, CMS; `-Xint`), and `inspect hot` and `record` on
//! HotTarget as `cpu::` checks them on later JDKs.
//!
//! Needs root, the JDK 8 root (scripts/jdk8-root.sh, called by scripts/setup-test-deps.sh), the
//! JDK 11/21/25 runtimes, JDK 17 and promtool: every test is ignored in plain `cargo test`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::support::serve::Serve;
use crate::support::*;

/// JDK 8's home inside the root (Debian's path).
const JAVA_HOME8: &str = "/usr/lib/jvm/java-8-openjdk-amd64";

/// The collectors the tests run: JDK 8's default (Parallel), G1 and CMS.
const COLLECTORS: &[(&str, &[&str])] = &[
    ("parallel", &[]),
    ("g1", &["-XX:+UseG1GC"]),
    ("cms", &["-XX:+UseConcMarkSweepGC"]),
];

/// The JDK 8 root, or a panic that says how to make it.
fn root() -> PathBuf {
    let root = std::env::var_os("HSINSPECT_JDK8_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is not set"))
                .join(".cache/hsinspect/jdk8-root")
        });
    assert!(
        root.join(".complete").exists() && root.join(&JAVA_HOME8[1..]).join("bin/java").exists(),
        "no JDK 8 root at {}: run scripts/jdk8-root.sh (or scripts/setup-test-deps.sh), as root",
        root.display()
    );
    root
}

/// A command run inside the root by scripts/jdk8-run.sh; `fd3`: a host directory the command
/// reaches as /proc/self/fd/3.
fn in_root(program: &str, fd3: Option<&Path>) -> Command {
    let mut cmd = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/jdk8-run.sh"));
    cmd.env("HSINSPECT_JDK8_ROOT", root()).arg(program);
    if let Some(dir) = fd3 {
        cmd.env("HSINSPECT_JDK8_FD3", dir);
    }
    cmd
}

/// One of JDK 8's tools (`jcmd`, `jstat`, `jps`) inside the root.
fn tool8(tool: &str, args: &[&str]) -> Output {
    in_root(&format!("{JAVA_HOME8}/bin/{tool}"), None)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running JDK 8's {tool}: {e}"))
}

/// Target and Churn compiled for JDK 8 (`--release 8`), once per test binary.
fn classes8() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-classes-8");
        std::fs::create_dir_all(&out).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java");
        run_ok(
            Command::new(jdk17().join("bin/javac"))
                .args(["--release", "8", "-nowarn", "-d"])
                .arg(&out)
                .arg(src.join("Target.java"))
                .arg(src.join("Churn.java"))
                .arg(src.join("ThreadsTarget.java"))
                .arg(src.join("HeapTarget.java"))
                .arg(src.join("HotTarget.java")),
        );
        out
    })
}

/// Starts `main` (Target or Churn) on JDK 8 inside the root with small heaps plus `extra`;
/// returns once it printed READY. Its classes are in `classes` (reached as /proc/self/fd/3).
fn start8_in(classes: &Path, main: &str, extra: &[&str]) -> Jvm {
    start8_with(classes, main, extra, "1")
}

/// As [`start8_in`], `main` given `arg`.
fn start8_with(classes: &Path, main: &str, extra: &[&str], arg: &str) -> Jvm {
    let mut cmd = in_root(&format!("{JAVA_HOME8}/bin/java"), Some(classes));
    cmd.args(["-Xmx64m", "-XX:TieredStopAtLevel=1"])
        .args(extra)
        .args(["-cp", "/proc/self/fd/3", main, arg])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // jdk8-run.sh execs all the way: the child's pid is the JVM's.
    Jvm::spawn(cmd, Path::new(JAVA_HOME8))
}

fn start8(main: &str, extra: &[&str]) -> Jvm {
    start8_in(classes8(), main, extra)
}

/// JDK 8's `jcmd <pid> PerfCounter.print`, parsed.
fn jcmd8_counters(pid: i32) -> BTreeMap<String, String> {
    let out = tool8("jcmd", &[&pid.to_string(), "PerfCounter.print"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && text.starts_with(&format!("{pid}:")),
        "JDK 8's jcmd {pid} PerfCounter.print: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    counters(&text)
}

/// JDK 8's `java.version` as the JVM reports it (`jcmd <pid> VM.system_properties`).
fn java_version8(pid: i32) -> String {
    let out = tool8("jcmd", &[&pid.to_string(), "VM.system_properties"]);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("java.version=").map(str::to_owned))
        .expect("jcmd VM.system_properties has java.version")
}

/// JDK 8's `jstat <args>`, stdout.
fn jstat8(args: &[&str]) -> String {
    let out = tool8("jstat", args);
    assert!(
        out.status.success(),
        "JDK 8's jstat {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const OPTIONS: &[&str] = &[
    "class",
    "compiler",
    "gc",
    "gccapacity",
    "gccause",
    "gcmetacapacity",
    "gcnew",
    "gcnewcapacity",
    "gcold",
    "gcoldcapacity",
    "gcutil",
    "printcompilation",
];

#[test]
#[ignore = "requires JDK 8 root (scripts/test.sh)"]
fn jdk8_options_are_jdk8_jstats() {
    let listed: Vec<String> = jstat8(&["-options"])
        .lines()
        .map(|l| l.trim_start_matches('-').to_owned())
        .collect();
    assert_eq!(listed, OPTIONS, "JDK 8's jstat -options");
}

#[test]
#[ignore = "requires JDK 8 root (scripts/test.sh)"]
fn jdk8_forced_and_file_match_jdk8_jcmd_parallel_g1_cms() {
    for (gc, flags) in COLLECTORS {
        let jvm = start8("Target", flags);
        let pid = jvm.pid.to_string();
        let before = jcmd8_counters(jvm.pid);
        let forced = counters(&inspect_ok(&["-F", &pid]));
        let file = counters(&inspect_ok(&[&pid]));
        let after = jcmd8_counters(jvm.pid);
        assert_plausible(&forced);
        let compared = assert_matches_reference(&forced, &before, &after);
        assert!(compared > 150, "{gc}: compared {compared}");
        assert_matches_reference(&file, &before, &after);
        assert_eq!(
            forced["java.property.java.vm.specification.version"], "\"1.8\"",
            "{gc}"
        );
        // Debian's JDK 8 libjvm.so has no .symtab: PerfMemory is found through the exported
        // vmStructs table (as for a stripped libjvm).
        let verbose = inspect(&["-F", "-v", &pid]);
        let said = String::from_utf8_lossy(&verbose.stderr);
        assert!(said.contains("symbols: gHotSpotVMStructs"), "{gc}: {said}");
        assert_left_alone(jvm.pid, false);
    }
}

#[test]
#[ignore = "requires JDK 8 root (scripts/test.sh)"]
fn jdk8_list_matches_jdk8_jps_and_shows_the_java_version() {
    let jvm = start8("Target", &[]);
    let jps = String::from_utf8(tool8("jps", &["-l"]).stdout).unwrap();
    let jps_main = jps
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{} ", jvm.pid)))
        .unwrap_or_else(|| panic!("JDK 8's jps -l does not list {}: {jps}", jvm.pid))
        .to_owned();
    let version = java_version8(jvm.pid);
    assert!(version.starts_with("1.8.0_"), "{version}");
    let list: serde_json::Value =
        serde_json::from_str(&inspect_ok(&["list", "-l", "--format", "json"])).unwrap();
    let ours = list
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["pid"] == jvm.pid)
        .unwrap_or_else(|| panic!("list misses {}: {list}", jvm.pid));
    assert_eq!(ours["main"], jps_main.as_str(), "{ours}");
    assert_eq!(ours["jvm_version"], version.as_str(), "{ours}");
    assert_eq!(ours["readable"], "both", "{ours}");
    // The text table shows the same version, not HotSpot's 25.x numbering.
    let text = inspect_ok(&["list"]);
    let row = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&jvm.pid.to_string()))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains(&format!(" {version} ")), "{row}");
}

/// `ours` against JDK 8's jstat read just before and after: the same header, and every cell that
/// did not change between the two equal to ours.
fn assert_bracketed(ours: &str, before: &str, after: &str, what: &str) {
    let lines = |s: &str| s.lines().map(str::to_owned).collect::<Vec<_>>();
    let (o, b, a) = (lines(ours), lines(before), lines(after));
    assert_eq!(o.len(), 2, "{what}: header and one row: {ours}");
    assert_eq!(o[0], b[0], "{what}: header");
    if b[1] == a[1] {
        assert_eq!(o[1], b[1], "{what}: row");
        return;
    }
    let cells = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let (oc, bc, ac) = (cells(&o[1]), cells(&b[1]), cells(&a[1]));
    assert_eq!(oc.len(), bc.len(), "{what}: {ours} vs {before}");
    let stable: Vec<usize> = (0..oc.len()).filter(|i| bc[*i] == ac[*i]).collect();
    for i in &stable {
        assert_eq!(
            oc[*i], bc[*i],
            "{what}: cell {i}: ours {ours} jstat {before}"
        );
    }
    assert!(stable.len() * 2 > oc.len(), "{what}: too few stable cells");
}

#[test]
#[ignore = "requires JDK 8 root (scripts/test.sh)"]
fn jdk8_stat_matches_jdk8_jstat_live_every_option_parallel_g1_cms() {
    for (gc, flags) in COLLECTORS {
        let jvm = start8("Churn", flags);
        let pid = jvm.pid.to_string();
        for option in OPTIONS {
            let flag = format!("-{option}");
            let before = jstat8(&[&flag, &pid]);
            let forced = inspect_ok(&["stat", &flag, "-F", &pid]);
            let file = inspect_ok(&["stat", &flag, &pid]);
            let after = jstat8(&[&flag, &pid]);
            assert_bracketed(&forced, &before, &after, &format!("{gc} {flag} -F"));
            assert_bracketed(&file, &before, &after, &format!("{gc} {flag}"));
        }
        assert_left_alone(jvm.pid, false);
    }
}

/// The committed JDK 8 jstat outputs (testdata/stat/jdk8-golden/, which the fast tier compares
/// `inspect stat` with) are what JDK 8's jstat prints for those regions today.
#[test]
#[ignore = "requires JDK 8 root (scripts/test.sh)"]
fn jdk8_saved_jstat_outputs_are_jdk8_jstats() {
    let stat = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/stat");
    let mut cases = Vec::new();
    for gc in ["parallel", "serial", "g1", "cms"] {
        for o in OPTIONS {
            cases.push((gc, o.to_string(), *o, false));
        }
        for o in ["gcutil", "class"] {
            cases.push((gc, format!("t-{o}"), o, true));
        }
    }
    assert_eq!(
        cases.len(),
        56,
        "twelve options, and two with -t, on four regions"
    );
    // Two at a time: each is a JVM start (jstat's own).
    let (a, b) = cases.split_at(cases.len() / 2);
    let check = |(gc, file, option, t): &(&str, String, &str, bool)| {
        let golden = stat.join(format!("jdk8-golden/jdk8-{gc}.{file}"));
        let out = in_root(&format!("{JAVA_HOME8}/bin/jstat"), Some(&stat))
            .arg(format!("-{option}"))
            .args(t.then_some("-t"))
            .arg(format!("file:///proc/self/fd/3/jdk8-{gc}.hsperf"))
            .output()
            .unwrap();
        assert!(out.status.success(), "jstat -{option} jdk8-{gc}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            std::fs::read_to_string(&golden).unwrap(),
            "{}",
            golden.display()
        );
    };
    std::thread::scope(|s| {
        s.spawn(|| a.iter().for_each(check));
        b.iter().for_each(check);
    });
}

/// `-XX:+PerfDisableSharedMem` on JDK 8: no hsperfdata file, so JDK 8's jps and jstat cannot see
/// it and the default path says to use `-F`; `-F` reads it, and against the region the VM saved
/// of itself at exit (`-XX:+PerfDataSaveToFile`) its constants are equal and its monotonic
/// counters no larger. `stat -F` prints JDK 8's layout for it.
#[test]
#[ignore = "requires JDK 8 root (scripts/test.sh)"]
fn jdk8_perf_disable_shared_mem_forced_matches_its_exit_dump() {
    use hsinspect::perfdata::{Value, Variability};
    let dir = scratch_dir("jdk8-perfdisable");
    for e in std::fs::read_dir(classes8()).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
    }
    let mut jvm = start8_in(
        dir.path(),
        "Target",
        &[
            "-XX:+PerfDisableSharedMem",
            "-XX:+PerfDataSaveToFile",
            "-XX:PerfDataSaveFile=/proc/self/fd/3/saved.hsperf",
        ],
    );
    let pid = jvm.pid.to_string();
    let jps = String::from_utf8(tool8("jps", &["-q"]).stdout).unwrap();
    assert!(
        !jps.lines().any(|l| l.trim() == pid),
        "JDK 8's jps saw a PerfDisableSharedMem JVM: {jps}"
    );
    let err = inspect_err(&inspect(&[&pid]));
    assert!(err.contains(&format!("inspect -F {pid}")), "{err}");
    let gcutil = inspect_ok(&["stat", "-gcutil", "-F", &pid]);
    assert!(
        gcutil.starts_with(
            "  S0     S1     E      O      M     CCS    YGC     YGCT    FGC    FGCT     GCT   \n"
        ),
        "{gcutil}"
    );
    let last_raw = dir.path().join("last.hsperf");
    let last_text = inspect_ok(&["-F", "--save", last_raw.to_str().unwrap(), &pid]);
    assert_plausible(&counters(&last_text));
    assert_left_alone(jvm.pid, false);
    drop(jvm.child.stdin.take());
    assert!(jvm.child.wait().unwrap().success());
    let last = hsinspect::read_file(&last_raw).unwrap().snapshot;
    let at_exit = hsinspect::read_file(&dir.path().join("saved.hsperf"))
        .unwrap()
        .snapshot;
    let (mut constants, mut monotonic) = (0, 0);
    for c in &last.counters {
        let saved = at_exit
            .get(&c.name)
            .unwrap_or_else(|| panic!("{} missing from the exit dump", c.name));
        match (c.variability, &c.value, &saved.value) {
            (Variability::Constant, a, b) => {
                assert_eq!(a, b, "constant {} changed", c.name);
                constants += 1;
            }
            (Variability::Monotonic, Value::Long(a), Value::Long(b)) => {
                assert!(b >= a, "monotonic {} went from {a} to {b}", c.name);
                monotonic += 1;
            }
            _ => {}
        }
    }
    assert!(
        constants > 30 && monotonic > 20,
        "{constants} constants, {monotonic} monotonic"
    );
}

/// A JDK 8 JVM in a container made without Docker: its own pid and mount namespace (pid 1 there)
/// and a private /tmp (the file only reachable as /proc/<pid>/root/tmp/hsperfdata_root/1): `-F` and the file path by host pid match JDK 8's jcmd run inside the same
/// namespaces (`nsenter`), and `list` shows its container pid and Java version.
#[test]
#[ignore = "requires JDK 8 root (scripts/test.sh)"]
fn jdk8_in_own_pid_and_mount_namespace_both_paths_match_jcmd() {
    let mut cmd = in_root(&format!("{JAVA_HOME8}/bin/java"), Some(classes8()));
    cmd.env("HSINSPECT_JDK8_PIDNS", "1")
        .args(["-Xmx32m", "-cp", "/proc/self/fd/3", "Target", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut jvm = Jvm::spawn(cmd, Path::new(JAVA_HOME8));
    jvm.pid = child_of(jvm.pid);
    assert_eq!(status_field(jvm.pid, "NSpid"), format!("{}\t1", jvm.pid));
    let jcmd = || {
        let out = Command::new("nsenter")
            .args(["-t", &jvm.pid.to_string(), "-m", "-p", "-r", "-w"])
            .arg(format!("{JAVA_HOME8}/bin/jcmd"))
            .args(["1", "PerfCounter.print"])
            .output()
            .expect("running nsenter");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.starts_with("1:"),
            "JDK 8's jcmd in the namespace: {text}"
        );
        counters(&text)
    };
    let pid = jvm.pid.to_string();
    let before = jcmd();
    let forced = counters(&inspect_ok(&["-F", &pid]));
    let file = counters(&inspect_ok(&[&pid]));
    let after = jcmd();
    assert_matches_reference(&forced, &before, &after);
    assert_matches_reference(&file, &before, &after);
    let list: serde_json::Value =
        serde_json::from_str(&inspect_ok(&["list", "--format", "json"])).unwrap();
    let ours = list
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["pid"] == jvm.pid)
        .unwrap_or_else(|| panic!("list misses {}: {list}", jvm.pid));
    assert_eq!(ours["container_pid"], 1, "{ours}");
    assert!(
        ours["jvm_version"].as_str().unwrap().starts_with("1.8.0_"),
        "{ours}"
    );
    assert_left_alone(jvm.pid, false);
}

/// serve's page with JVMs of JDK 8 (Parallel, G1, CMS), 11, 17, 21 and 25 on the host at once
/// passes `promtool check metrics` (format and lint: JDK 8's `sun.rt._sync_PrivateB` no longer
/// reads as "B" bytes), and labels the JDK 8 JVMs with the Java version `1.8.0_…`.
#[test]
#[ignore = "requires JDK 8 root, JDK 11 runtime, JDK 21 runtime, JDK 25 runtime, promtool (scripts/test.sh)"]
fn serve_page_with_jdk8_11_17_21_25_passes_promtool() {
    let mut jvms: Vec<(String, Jvm)> = Vec::new();
    for (gc, flags) in COLLECTORS {
        jvms.push((format!("8-{gc}"), start8("Target", flags)));
    }
    for major in [11, 17, 21, 25] {
        jvms.push((major.to_string(), Jvm::start_with(&jdk(major), &[], 1)));
    }
    let pids: Vec<i32> = jvms.iter().map(|(_, j)| j.pid).collect();
    let serve = Serve::for_pids(&pids);
    let page = serve.metrics();
    crate::support::prom::check_metrics(&page, "JVMs of JDK 8, 11, 17, 21 and 25");
    let (samples, _) = crate::support::prom::parse(&page);
    for (what, jvm) in &jvms {
        let info = samples
            .iter()
            .find(|s| s.name == "hotspot_jvm_info" && s.labels["pid"] == jvm.pid.to_string())
            .unwrap_or_else(|| panic!("no hotspot_jvm_info for JDK {what}"));
        let version = &info.labels["jvm_version"];
        let major = what.split('-').next().unwrap();
        let want = if major == "8" {
            "1.8.0_".to_owned()
        } else {
            format!("{major}.")
        };
        assert!(version.starts_with(&want), "JDK {what}: {version}");
    }
    assert!(
        samples
            .iter()
            .any(|s| s.name == "hotspot_sun_rt_sync_privateb_total"),
        "JDK 8's sun.rt._sync_PrivateB is on the page"
    );
}

/// Dumps `pid` with gcore at `/proc/<pid>/coredump_filter` = `filter` (the old value restored).
fn gcore8(pid: i32, filter: u32, dir: &Path) -> PathBuf {
    let path = format!("/proc/{pid}/coredump_filter");
    let old = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{filter:#x}")).unwrap();
    let prefix = dir.join("core");
    let out = Command::new("gcore")
        .arg("-o")
        .arg(&prefix)
        .arg(pid.to_string())
        .output()
        .unwrap_or_else(|e| panic!("gcore ({e}): install gdb (scripts/setup-test-deps.sh)"));
    std::fs::write(&path, format!("0x{}", old.trim())).unwrap();
    let core = PathBuf::from(format!("{}.{pid}", prefix.display()));
    assert!(
        out.status.success() && core.exists(),
        "gcore {pid}: {out:?}"
    );
    core
}

/// Issue 16: JDK 8 cores at the kernel's default `coredump_filter` (0x33; JDK 8 does not add bit
/// 3 as 11+ do). Debian's libjvm has no `.symtab`: vmStructs, whose names are in libjvm's
/// read-only data, which the core lacks and the root's libjvm (the JVM's own file) supplies. A `-XX:+PerfDisableSharedMem` JVM's region is anonymous memory, in the
/// core: read, and equal to forced reads before and after. A shared-file region is not in such a
/// core: the error says which bit would have kept it.
#[test]
#[ignore = "requires JDK 8 root, gdb (scripts/test.sh)"]
fn jdk8_cores_at_the_default_filter_read_or_say_what_to_change() {
    // gcore, run on the host, names the root's files by their host paths (no --sysroot needed).
    let dir = scratch_dir("jdk8-cores");
    let hidden = start8("Target", &["-XX:+PerfDisableSharedMem"]);
    let pid = hidden.pid.to_string();
    let before = counters(&inspect_ok(&["-F", &pid]));
    let core = gcore8(hidden.pid, 0x33, dir.path());
    let after = counters(&inspect_ok(&["-F", &pid]));
    let out = inspect(&["-v", "--core", core.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("gHotSpotVMStructs") && stderr.contains("not in the core: "),
        "{stderr}"
    );
    let ours = counters(&String::from_utf8(out.stdout).unwrap());
    let compared = assert_matches_reference(&ours, &before, &after);
    assert!(compared > 100, "only {compared} compared");
    std::fs::remove_file(&core).unwrap();
    drop(hidden);

    let shared = start8("Target", &[]);
    let core = gcore8(shared.pid, 0x33, dir.path());
    let out = inspect(&["--core", core.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    for needle in ["is not in the core", "bit 3", "JDK 8", "coredump_filter"] {
        assert!(err.contains(needle), "missing {needle:?}: {err}");
    }
}

// ---- Thread dumps ----------------------------------------------------------------------------

/// JDK 8's `jcmd <pid> Thread.print -l`, as it prints it: a VM-anonymous class with its
/// mirror's identity hash (`ThreadsTarget$$Lambda$3/1078694789`), which `inspect threads` reads
/// once jcmd has installed it (every comparison runs jcmd before ours).
fn jcmd8_threads(pid: i32) -> String {
    let out = tool8("jcmd", &[&pid.to_string(), "Thread.print", "-l"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && text.contains("Full thread dump"),
        "JDK 8's jcmd {pid} Thread.print: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The lambda proxies' frames of a dump (`ThreadsTarget$$Lambda$3/1078694789.run`), with
/// whatever suffix they have.
fn lambda_frames(dump: &str) -> std::collections::BTreeSet<String> {
    dump.lines()
        .filter_map(|l| l.trim_start().strip_prefix("at "))
        .filter_map(|f| f.split('(').next())
        .filter(|f| f.contains("$$Lambda$"))
        .map(str::to_owned)
        .collect()
}

/// The command that runs ThreadsTarget on JDK 8 inside the root with `flags`.
fn threads_target8_command(flags: &[&str]) -> Command {
    let mut cmd = in_root(&format!("{JAVA_HOME8}/bin/java"), Some(classes8()));
    cmd.args(["-Xmx64m"])
        .args(flags)
        .args(["-cp", "/proc/self/fd/3", "ThreadsTarget"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    cmd
}

/// ThreadsTarget on JDK 8 inside the root with `flags`, once its threads are in place.
fn threads_target8(flags: &[&str]) -> Jvm {
    Jvm::spawn(threads_target8_command(flags), Path::new(JAVA_HOME8))
}

/// A kernel core (SIGABRT) of a JDK 8 ThreadsTarget, read with the root as `--sysroot` (the
/// core names libjvm by its path inside the root), against JDK 8's two dumps before it. (gdb
/// 13's `gcore` of such a JVM wrote the Reference Handler's stack as zeros: not used here.)
fn kernel_core8_matches_jcmd(flags: &[&str]) {
    let root = root();
    for old in std::fs::read_dir(&root).unwrap() {
        let p = old.unwrap().path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("core"))
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    let mut cmd = threads_target8_command(flags);
    crate::support::cores::allow_core_dumps(&mut cmd);
    let mut jvm = Jvm::spawn(cmd, Path::new(JAVA_HOME8));
    let first = jcmd8_threads(jvm.pid);
    let second = jcmd8_threads(jvm.pid);
    crate::support::cores::abort_with_core(&mut jvm);
    // chroot(8) runs the JVM in the root's /: the kernel writes its core there.
    let core = crate::support::cores::kernel_core_in(&root);
    let ours = crate::support::jcmd::threads_ok(&[
        "--core",
        core.to_str().unwrap(),
        "--sysroot",
        root.to_str().unwrap(),
    ]);
    std::fs::remove_file(&core).unwrap();
    let compared = crate::support::jcmd::agree(&first, &ours, &second, crate::support::jcmd::NAMED);
    assert!(
        compared >= 12,
        "JDK 8 kernel core: only {compared} threads compared"
    );
}

/// The thread-dump agreement of `threads::compare` and the lock lines and deadlocks of
/// `threads::compare_locks`, against JDK 8's jcmd, for each of JDK 8's collectors.
fn threads8_match_jcmd(flags: &[&str]) {
    for (name, gc) in COLLECTORS {
        let mut all: Vec<&str> = gc.to_vec();
        all.extend(flags);
        eprintln!("JDK 8 threads, {name} {flags:?}");
        let jvm = threads_target8(&all);
        let pid = jvm.pid.to_string();
        crate::support::jcmd::compare_with(jvm.pid, &jcmd8_threads);
        // The lambdas' frames carry the hash jcmd installed in their mirrors, as jcmd's do.
        let ours = lambda_frames(&crate::support::jcmd::inspect_threads_with(&[&pid]));
        let jcmd = lambda_frames(&jcmd8_threads(jvm.pid));
        assert!(
            !ours.is_empty() && ours.is_subset(&jcmd),
            "lambda frames: ours {ours:?}, jcmd's {jcmd:?}"
        );
        crate::support::jcmd::compare_locks_with(jvm.pid, &jcmd8_threads);
        // The thread states of `serve --thread-states`, read without a stop.
        for names in ["hotspot", "otel"] {
            crate::support::states::agree(jvm.pid, &jcmd8_threads, names);
        }
        if flags.is_empty() && *name == "parallel" {
            kernel_core8_matches_jcmd(&all);
        }
    }
}

#[test]
#[ignore = "requires root, JDK 8 root (scripts/test.sh)"]
fn jdk8_thread_dumps_match_jcmd() {
    threads8_match_jcmd(&[]);
}

#[test]
#[ignore = "requires root, JDK 8 root (scripts/test.sh)"]
fn jdk8_interpreted_thread_dumps_match_jcmd() {
    threads8_match_jcmd(&["-Xint"]);
}

/// `inspect info --flags` on JDK 8 (its `Flag` table, type names as strings) byte for byte with
/// JDK 8's `jcmd <pid> VM.flags`, before and after ours; `jvm_args:`/`java_command:` as its
/// `VM.command_line` prints them.
#[test]
#[ignore = "requires root, JDK 8 root (scripts/test.sh)"]
fn jdk8_flags_and_command_line_match_jcmd() {
    let jvm = start8(
        "Target",
        &["-XX:+UseParallelGC", "-Dhsinspect.test=a b=c:d"],
    );
    let pid = jvm.pid.to_string();
    let jcmd = |command: &str| {
        let mut args = vec![pid.as_str()];
        args.extend(command.split(' '));
        let out = tool8("jcmd", &args);
        assert!(out.status.success(), "JDK 8's jcmd {command} failed");
        let text = String::from_utf8(out.stdout).unwrap();
        text.split_once('\n')
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    };
    let before = (jcmd("VM.flags"), jcmd("VM.command_line"));
    let tables_before = (jcmd("VM.flags -all"), jcmd("VM.version"));
    let ours = inspect_ok(&["info", &pid]);
    let all_flags = inspect_ok(&["info", "--all-flags", &pid]);
    let version = inspect_ok(&["info", "--vm-version", &pid]);
    let after = (jcmd("VM.flags"), jcmd("VM.command_line"));
    let tables_after = (jcmd("VM.flags -all"), jcmd("VM.version"));
    assert_eq!(before, after, "jcmd's answers moved between the reads");
    assert_eq!(
        tables_before, tables_after,
        "jcmd's answers moved between the reads"
    );
    // JDK 8's own layout of the table (`Flag::print_on`: `:=` for a flag not at its default,
    // the kinds, no origin) and of `VM.version` (`JDK 8.0_<update>`).
    assert_eq!(
        all_flags, tables_after.0,
        "JDK 8: inspect info --all-flags vs jcmd VM.flags -all"
    );
    assert_eq!(
        version, tables_after.1,
        "JDK 8: inspect info --vm-version vs jcmd VM.version"
    );
    // `jinfo <pid>`'s three parts: the properties (checked below), the flags, the arguments.
    let (_, flags_and_args) = ours.split_once("\n\n").expect("three parts");
    let (flags, args) = flags_and_args.split_once("\n\n").expect("three parts");
    assert_eq!(format!("{flags}\n"), format!("VM Flags:\n{}", after.0));
    for line in args.lines().skip(1) {
        assert!(
            after.1.lines().any(|l| l == line),
            "{line:?} is not in JDK 8's VM.command_line:\n{}",
            after.1
        );
    }
    assert!(args.contains("jvm_args: ") && args.contains("-Dhsinspect.test=a b=c:d "));

    // The system properties (JDK 8: a Hashtable) as JDK 8's `jcmd VM.system_properties` prints
    // them, as sets (its order is the table's); its first call sets `user.timezone`.
    let props = |text: &str| -> std::collections::BTreeSet<String> {
        text.lines()
            .filter(|l| !l.starts_with('#') && l.contains('='))
            .map(str::to_string)
            .collect()
    };
    jcmd("VM.system_properties");
    let before = props(&jcmd("VM.system_properties"));
    let ours = inspect_ok(&["info", "--sysprops", &pid]);
    let after = props(&jcmd("VM.system_properties"));
    assert_eq!(before, after, "jcmd's properties moved");
    assert!(ours.starts_with("Java System Properties:\n#"), "{ours}");
    assert_eq!(props(&ours), after, "JDK 8's system properties");
    assert!(after.contains("hsinspect.test=a b\\=c\\:d"), "{after:?}");
}

/// `inspect histo` on JDK 8 (Parallel) against JDK 8's `jmap -histo` (every object, as `-all`
/// on later JDKs) taken before and after, as `heap::` compares them; lambdas named
/// `Name/<identity hash>` as JDK 8 names them.
#[test]
#[ignore = "requires root, JDK 8 root (scripts/test.sh)"]
fn jdk8_parallel_histogram_matches_jmap() {
    histogram_matches_jmap(&["-XX:+UseParallelGC"]);
}

/// As [`jdk8_parallel_histogram_matches_jmap`] under CMS, its old generation swept by a
/// concurrent cycle into free chunks between the objects (`-XX:+ExplicitGCInvokesConcurrent`,
/// every survivor promoted).
#[test]
#[ignore = "requires root, JDK 8 root (scripts/test.sh)"]
fn jdk8_cms_histogram_matches_jmap() {
    histogram_matches_jmap(&[
        "-XX:+UseConcMarkSweepGC",
        "-XX:+ExplicitGCInvokesConcurrent",
        "-XX:MaxTenuringThreshold=0",
    ]);
}

/// As [`jdk8_parallel_histogram_matches_jmap`] under G1, whose regions' types JDK 8's vmStructs
/// do not export: its humongous `int[]` (larger than a region) counted once, its
/// continues-humongous region skipped by address.
#[test]
#[ignore = "requires root, JDK 8 root (scripts/test.sh)"]
fn jdk8_g1_histogram_matches_jmap() {
    histogram_matches_jmap(&["-XX:+UseG1GC", "-Xmx64m"]);
}

fn histogram_matches_jmap(flags: &[&str]) {
    let jvm = start8_with(classes8(), "HeapTarget", flags, "20000");
    let pid = jvm.pid.to_string();
    let jmap = || {
        let out = tool8("jmap", &["-histo", &pid]);
        assert!(out.status.success(), "JDK 8's jmap -histo failed");
        String::from_utf8(out.stdout).unwrap()
    };
    jmap();
    let before = jmap();
    let ours = inspect_ok(&["histo", &pid]);
    let after = jmap();
    crate::support::histo::compare_as(&before, &ours, &after, false);
}

/// `inspect heapdump` of JDK 8 (Parallel, G1, CMS): both readers accept it, every class with
/// the same instances in JDK 8's `jmap -histo` before and after has that many in the file,
/// HeapTarget's objects read back (tests/integration/heapdump.rs `check_ours`); and its roots
/// hold those of JDK 8's own dump (`jmap -dump`) of the same JVM: every frame and JNI local
/// root, and JNI globals among JDK 8's (Debian's libjvm is stripped: `Universe`'s oops, which
/// its dumper writes as JNI globals too, are not found).
#[test]
#[ignore = "requires root, JDK 8 root (scripts/test.sh)"]
fn jdk8_heap_dumps_pass_both_readers_and_hold_jmaps_roots() {
    for (name, flags) in COLLECTORS {
        let jvm = start8_with(classes8(), "HeapTarget", flags, "20000");
        let pid = jvm.pid.to_string();
        let what = format!("JDK 8 {name}");
        let histo = || {
            let out = tool8("jmap", &["-histo", &pid]);
            assert!(out.status.success(), "JDK 8's jmap -histo failed");
            String::from_utf8(out.stdout).unwrap()
        };
        let dir = scratch_dir("jdk8-heapdump");
        let ours = dir.path().join("ours.hprof");
        let before = histo();
        inspect_ok(&["heapdump", &pid, "-o", ours.to_str().unwrap()]);
        let after = histo();
        crate::heapdump::check_ours(&ours, &before, &after, 8, &what);
        // JDK 8's own dump, written inside the root's /tmp.
        let name = format!("hsinspect-jdk8-{pid}.hprof");
        let theirs = root().join("tmp").join(&name);
        let _ = std::fs::remove_file(&theirs);
        let out = tool8("jmap", &[&format!("-dump:format=b,file=/tmp/{name}"), &pid]);
        assert!(out.status.success(), "JDK 8's jmap -dump failed");
        crate::heapdump::assert_roots_cover(&what, &theirs, &ours, false);
        let _ = std::fs::remove_file(&theirs);
    }
}

/// HotTarget (tests/java/HotTarget.java) on JDK 8 inside the root, with C2 (its counted loop).
fn hot_target8() -> Jvm {
    let mut cmd = in_root(&format!("{JAVA_HOME8}/bin/java"), Some(classes8()));
    cmd.args(crate::cpu::HOT_TARGET_FLAGS)
        .args(["-cp", "/proc/self/fd/3", "HotTarget", "500"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, Path::new(JAVA_HOME8))
}

#[test]
#[ignore = "requires root, JDK 8 root (scripts/test.sh)"]
fn jdk8_hot_threads_rank_the_busy_threads_with_their_cpu_and_methods() {
    crate::cpu::hot_on(&hot_target8(), "JDK 8");
}

#[test]
#[ignore = "requires root, JDK 8 root (scripts/test.sh)"]
fn jdk8_record_splits_a_and_b_and_sees_the_counted_loop() {
    crate::cpu::record_on(&hot_target8(), "JDK 8");
}
