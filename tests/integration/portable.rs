//! The portable paths with the live backend compiled out: `inspect` built with
//! `--no-default-features` (what every OS without a live backend gets, e.g. macOS) reads saved
//! hsperfdata files, `inspect stat` on them, ELF cores and Windows minidumps exactly as the full
//! build does, and says "not supported" with exit status 2 for everything that needs a live
//! process.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `inspect` built without the `live` feature, into a target directory of its own.
fn portable_inspect() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("portable");
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--offline",
                "--no-default-features",
                "--bin",
                "inspect",
            ])
            .arg("--target-dir")
            .arg(&target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("running cargo build --no-default-features");
        assert!(status.success(), "cargo build --no-default-features failed");
        target.join("debug/inspect")
    })
}

fn run(bin: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running inspect")
}

fn full(args: &[&str]) -> Output {
    run(Path::new(env!("CARGO_BIN_EXE_inspect")), args)
}

fn portable(args: &[&str]) -> Output {
    run(portable_inspect(), args)
}

/// Same stdout and exit status from both builds (JSON lines compared without the `timestamp`
/// of the run).
fn assert_same(args: &[&str]) {
    let (a, b) = (full(args), portable(args));
    assert!(
        a.status.success(),
        "inspect {args:?}: {}",
        String::from_utf8_lossy(&a.stderr)
    );
    assert_eq!(a.status.code(), b.status.code(), "inspect {args:?}");
    let comparable = |out: &Output| -> Vec<String> {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(
                |line| match serde_json::from_str::<serde_json::Value>(line) {
                    Ok(serde_json::Value::Object(mut o)) => {
                        o.remove("timestamp");
                        serde_json::Value::Object(o).to_string()
                    }
                    _ => line.to_string(),
                },
            )
            .collect()
    };
    let (la, lb) = (comparable(&a), comparable(&b));
    assert_eq!(la.len(), lb.len(), "inspect {args:?}: line counts differ");
    for (x, y) in la.iter().zip(&lb) {
        assert_eq!(x, y, "inspect {args:?}: the portable build differs");
    }
}

#[test]
#[ignore = "slow: builds the CLI a second time without its live backend (about a minute) (scripts/test.sh)"]
fn files_and_stat_read_the_same_without_the_live_backend() {
    for capture in ["jdk17-serial", "jdk17-g1", "jdk21-g1"] {
        let file = format!("testdata/captures/{capture}.hsperf");
        assert_same(&[&file]);
        assert_same(&["--format", "json", &file]);
        assert_same(&["--format", "prometheus", &file]);
        for option in ["-gcutil", "-gc", "-class", "-compiler"] {
            assert_same(&["stat", option, &file]);
        }
    }
}

#[test]
#[ignore = "slow: builds the CLI a second time without its live backend (about a minute) (scripts/test.sh)"]
fn live_commands_say_not_supported_with_status_2() {
    let os = std::env::consts::OS;
    let me = std::process::id().to_string();
    for args in [
        vec!["-F", me.as_str()],
        vec![me.as_str()],
        vec!["--no-stop", "-F", me.as_str()],
        vec!["stat", "-gcutil", me.as_str()],
        vec!["stat", "-gcutil", "-F", me.as_str()],
    ] {
        let out = portable(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "inspect {args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("reading a live JVM is not supported on {os}")),
            "inspect {args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    for args in [vec!["list"], vec!["serve"], vec![]] {
        let out = portable(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "inspect {args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("is not supported on {os}")),
            "inspect {args:?}: {stderr}"
        );
    }
}

#[test]
#[ignore = "requires JDK 17, gdb; slow: builds the CLI without its live backend (scripts/test.sh)"]
fn a_core_reads_the_same_without_the_live_backend() {
    let jvm = crate::support::Jvm::start(&[]);
    let dir = crate::support::scratch_dir("portable-core");
    let prefix = dir.path().join("core");
    let out = Command::new("gcore")
        .arg("-o")
        .arg(&prefix)
        .arg(jvm.pid.to_string())
        .output()
        .unwrap_or_else(|e| {
            panic!("running gcore ({e}): install gdb (scripts/setup-test-deps.sh does)")
        });
    assert!(out.status.success(), "gcore failed: {out:?}");
    let core = format!("{}.{}", prefix.display(), jvm.pid);
    drop(jvm);
    assert_same(&["--core", &core]);
    assert_same(&["stat", "-gcutil", "--core", &core]);
}

#[test]
#[ignore = "requires Wine, Windows JDK; slow: builds the CLI without its live backend (scripts/test.sh)"]
fn a_windows_minidump_reads_the_same_without_the_live_backend() {
    let dir = crate::support::minidumps();
    let dump = dir.join("full.mdmp");
    let dump = dump.to_str().unwrap();
    assert_same(&["--core", dump]);
    assert_same(&["stat", "-gcutil", "--core", dump]);
    // The refusal of a dump without full memory, too.
    let normal = dir.join("normal.mdmp");
    let args = ["--core", normal.to_str().unwrap()];
    let (a, b) = (full(&args), portable(&args));
    assert_eq!(a.status.code(), Some(1));
    assert_eq!((a.status.code(), &a.stderr), (b.status.code(), &b.stderr));
}
