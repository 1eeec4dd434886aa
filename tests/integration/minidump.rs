//! `inspect --core <minidump>` on Linux against minidumps of real Windows JDK 21 JVMs run under
//! Wine: a full-memory one (MiniDumpWithFullMemory) written by `MiniDumpWriteDump` must give the
//! counters `jcmd.exe PerfCounter.print` printed just before the dump (same names, same Constant
//! values, Monotonic values between the reads before and after it), and `inspect stat` must work
//! on it; so must HotSpot's own crash dump, `hs_err_pid<pid>.mdmp`, against `jcmd.exe` just before
//! the crash; a MiniDumpNormal one must be refused with the dump type that would hold the region
//! and how to write one.
//!
//! The dumps are made once and cached by `scripts/windows/minidump.py` (Wine, the Windows JDK and
//! mingw-w64, installed by `scripts/windows/setup.sh`; 30 s to 2 minutes cold, then instant):
//! scripts/test.sh runs it before the tests, and each test here runs it again (a cache hit) to
//! find the directory. `inspect.exe` reading the same dumps under Wine is checked by
//! `scripts/windows/integration.py` (`test_minidump_read_by_inspect_exe_matches_linux_build`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::*;

/// The directory of the cached dumps (`crate::support::minidumps`).
fn dumps() -> &'static Path {
    minidumps()
}

fn reference(name: &str) -> BTreeMap<String, String> {
    counters(&std::fs::read_to_string(dumps().join(name)).unwrap())
}

fn path_arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Each counter's variability as `inspect --format json` reports it.
fn variabilities(core: &Path) -> BTreeMap<String, String> {
    let json = inspect_ok(&["--format", "json", "--core", path_arg(core)]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    v["counters"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, c)| (k.clone(), c["variability"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
#[ignore = "requires Wine, Windows JDK (scripts/test.sh)"]
fn windows_full_minidump_read_on_linux_matches_jcmd_exe_before_the_dump() {
    let full = dumps().join("full.mdmp");
    let out = inspect(&["-v", "--core", path_arg(&full)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "inspect --core full.mdmp: {stderr}");
    let ours = counters(&String::from_utf8(out.stdout).unwrap());
    let (before, after) = (reference("jcmd-before.txt"), reference("jcmd-after.txt"));
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&ours),
        names(&before),
        "names differ from jcmd.exe's before the dump"
    );
    assert_eq!(
        names(&ours),
        names(&after),
        "names differ from jcmd.exe's after the dump"
    );
    let variability = variabilities(&full);
    let (mut constants, mut monotonic) = (0, 0);
    for (name, value) in &ours {
        match variability.get(name).map(String::as_str) {
            Some("constant") => {
                assert_eq!(value, &before[name], "Constant counter {name}");
                constants += 1;
            }
            // The dump was written between the two reads: a count can only have grown.
            Some("monotonic") => {
                let n = |s: &str| s.parse::<i64>().ok();
                if let (Some(b), Some(o), Some(a)) = (n(&before[name]), n(value), n(&after[name])) {
                    assert!(
                        b <= o && o <= a,
                        "Monotonic counter {name}: {b} before, {o} in the dump, {a} after"
                    );
                    monotonic += 1;
                }
            }
            _ => {}
        }
    }
    assert!(constants >= 30, "only {constants} Constant counters");
    assert!(monotonic >= 30, "only {monotonic} Monotonic counters");
    assert_plausible(&ours);
    assert!(
        ours["sun.rt.javaCommand"].contains("WinTarget"),
        "{}",
        ours["sun.rt.javaCommand"]
    );
    // -v says what was read from where.
    for says in [
        "path: minidump ",
        "(java.exe)",
        "minidump type MiniDumpWithFullMemory",
        "ModuleListStream",
        "memory: Memory64ListStream, ",
        "jvm.dll: ",
        "named exports",
        "symbols: gHotSpotVMStructs (exported by ",
        "&PerfMemory::_start = 0x",
        "region: 65536 bytes at 0x",
    ] {
        assert!(stderr.contains(says), "-v lacks {says:?}: {stderr}");
    }
    println!(
        "{} counters: {constants} Constant equal to jcmd.exe's, {monotonic} Monotonic between its reads",
        ours.len()
    );
}

/// HotSpot's own crash dump (`hs_err_pid<pid>.mdmp`, written with `-XX:+CreateCoredumpOnCrash`
/// when the JVM crashed on an access violation) against `jcmd.exe` just before the crash.
#[test]
#[ignore = "requires Wine, Windows JDK (scripts/test.sh)"]
fn windows_hotspot_crash_dump_hs_err_pid_mdmp_matches_jcmd_exe_before_the_crash() {
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dumps().join("info.json")).unwrap()).unwrap();
    let name = info["crash"]["file"].as_str().unwrap();
    assert!(
        name.starts_with("hs_err_pid") && name.ends_with(".mdmp"),
        "{name}"
    );
    let dump = dumps().join(name);
    let out = inspect(&["-v", "--core", path_arg(&dump)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "inspect --core {name}: {stderr}");
    let ours = counters(&String::from_utf8(out.stdout).unwrap());
    let before = reference("jcmd-before-crash.txt");
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&ours),
        names(&before),
        "names differ from jcmd.exe's before the crash"
    );
    let variability = variabilities(&dump);
    let (mut constants, mut monotonic) = (0, 0);
    for (name, value) in &ours {
        match variability.get(name).map(String::as_str) {
            Some("constant") => {
                assert_eq!(value, &before[name], "Constant counter {name}");
                constants += 1;
            }
            Some("monotonic") => {
                if let (Ok(b), Ok(o)) = (before[name].parse::<i64>(), value.parse::<i64>()) {
                    assert!(
                        b <= o,
                        "Monotonic counter {name}: {b} before the crash, {o} in its dump"
                    );
                    monotonic += 1;
                }
            }
            _ => {}
        }
    }
    assert!(
        constants >= 30 && monotonic >= 30,
        "{constants} Constant, {monotonic} Monotonic"
    );
    assert!(ours["java.rt.vmArgs"].contains("-XX:+CreateCoredumpOnCrash"));
    assert_eq!(ours["sun.rt.javaCommand"], "\"WinCrash\"");
    // HotSpot writes it with full memory and an exception stream (the crash).
    for says in [
        "minidump type MiniDumpWithFullMemory",
        "ExceptionStream",
        "region: 65536 bytes",
    ] {
        assert!(stderr.contains(says), "-v lacks {says:?}: {stderr}");
    }
    let stat = inspect_ok(&["stat", "--core", path_arg(&dump), "-gcutil"]);
    assert_eq!(stat.lines().count(), 2, "{stat}");
}

#[test]
#[ignore = "requires Wine, Windows JDK (scripts/test.sh)"]
fn windows_minidump_is_found_by_its_signature_whatever_its_name() {
    let dir = scratch_dir("minidump-name");
    let renamed = dir.path().join("core.4242");
    std::os::unix::fs::symlink(dumps().join("full.mdmp"), &renamed).unwrap();
    let by_name = inspect_ok(&["--core", path_arg(&dumps().join("full.mdmp"))]);
    assert_eq!(inspect_ok(&["--core", path_arg(&renamed)]), by_name);
    // --exe and --sysroot are for ELF cores.
    let err = inspect_err(&inspect(&[
        "--core",
        path_arg(&renamed),
        "--exe",
        "/bin/true",
    ]));
    assert!(
        err.contains("--exe and --sysroot are for ELF cores"),
        "{err}"
    );
}

#[test]
#[ignore = "requires Wine, Windows JDK (scripts/test.sh)"]
fn windows_full_minidump_stat_gc_matches_its_counters() {
    let full = dumps().join("full.mdmp");
    let c = counters(&inspect_ok(&["--core", path_arg(&full)]));
    let out = inspect_ok(&["stat", "--core", path_arg(&full), "-gc"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "S0C", "S1C", "S0U", "S1U", "EC", "EU", "OC", "OU", "MC", "MU", "CCSC", "CCSU", "YGC",
            "YGCT", "FGC", "FGCT", "CGC", "CGCT", "GCT"
        ]
    );
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    let kb = |name: &str| format!("{:.1}", c[name].parse::<f64>().unwrap() / 1024.0);
    // The capacities are jstat's expressions over the same counters, in KB with one decimal.
    assert_eq!(row[0], kb("sun.gc.generation.0.space.1.capacity"), "S0C");
    assert_eq!(row[1], kb("sun.gc.generation.0.space.2.capacity"), "S1C");
    assert_eq!(row[4], kb("sun.gc.generation.0.space.0.capacity"), "EC");
    assert_eq!(row[6], kb("sun.gc.generation.1.space.0.capacity"), "OC");
    assert_eq!(row[12], c["sun.gc.collector.0.invocations"], "YGC");
    assert_eq!(row[14], c["sun.gc.collector.1.invocations"], "FGC");
}

#[test]
#[ignore = "requires Wine, Windows JDK (scripts/test.sh)"]
fn windows_minidump_without_full_memory_is_refused_with_how_to_write_one() {
    let normal = dumps().join("normal.mdmp");
    for args in [
        vec!["--core", path_arg(&normal)],
        vec!["stat", "--core", path_arg(&normal), "-gcutil"],
    ] {
        let err = inspect_err(&inspect(&args));
        for says in [
            "is not in the dump",
            "written without full memory (MiniDumpNormal",
            "MemoryListStream",
            "MiniDumpWithFullMemory",
            "procdump -ma <pid>",
            "\"Create dump file\"",
            "hs_err_pid<pid>.mdmp",
            "-XX:+CreateCoredumpOnCrash",
        ] {
            assert!(
                err.contains(says),
                "{args:?}: the error lacks {says:?}: {err}"
            );
        }
    }
}

#[test]
#[ignore = "requires Wine, Windows JDK (scripts/test.sh)"]
fn windows_minidump_cut_off_copy_is_a_clear_error() {
    use std::io::{Read, Write};
    let dir = scratch_dir("minidump-cut");
    let cut = dir.path().join("cut.mdmp");
    let mut head = vec![0u8; 1 << 20];
    std::fs::File::open(dumps().join("full.mdmp"))
        .unwrap()
        .read_exact(&mut head)
        .unwrap();
    std::fs::File::create(&cut)
        .unwrap()
        .write_all(&head)
        .unwrap();
    let err = inspect_err(&inspect(&["--core", path_arg(&cut)]));
    assert!(
        err.contains("Memory64ListStream") && err.contains("cut-off copy"),
        "{err}"
    );
}

/// Bad input made here (no Wine): a file with the minidump signature and nothing valid after it,
/// and a valid dump of no JVM, give clear errors.
#[test]
fn bad_minidumps_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.dmp");
    std::fs::write(&junk, b"MDMP\x93\xa7\0\0garbage").unwrap();
    let err = inspect_err(&inspect(&["--core", path_arg(&junk)]));
    assert!(err.contains("not a readable minidump"), "{err}");
    // MINIDUMP_HEADER with one stream, an empty ModuleListStream.
    let mut b = Vec::new();
    for v in [u32::from_le_bytes(*b"MDMP"), 0xa793, 1, 32, 0, 0, 0, 0] {
        b.extend(v.to_le_bytes());
    }
    for v in [4u32, 4, 44, 0] {
        b.extend(v.to_le_bytes());
    }
    let empty = dir.path().join("empty.mdmp");
    std::fs::write(&empty, &b).unwrap();
    let err = inspect_err(&inspect(&["--core", path_arg(&empty)]));
    assert!(err.contains("no jvm.dll in its module list"), "{err}");
}
