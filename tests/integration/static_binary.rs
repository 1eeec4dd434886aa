//! The static release binary (`x86_64-unknown-linux-musl`, what the README tells users to
//! download) in an empty root: a directory holding nothing but the binary (and mount points for
//! the host's /proc), entered with `unshare --root`, as on a distribution with another (or no)
//! libc and in a `FROM scratch` image. It reads a host JVM by pid (hsperfdata file through
//! /proc/<pid>/root), by a file path and with -F, and lists it, with the same results as jcmd and
//! as the host build.
//!
//! Needs: root (mount namespace, bind mounts, ptrace), JDK 17, util-linux (unshare, mount), and
//! the static binary, built by scripts/test.sh with
//! `cargo build --release --target x86_64-unknown-linux-musl` (or named by
//! `$HSINSPECT_STATIC_BIN`).

use std::path::Path;
use std::process::{Command, Output};

use crate::support::*;
use serde_json::Value;

/// An empty root: the binary as /inspect, and /proc (the host's, bind-mounted at run time).
struct EmptyRoot {
    dir: tempfile::TempDir,
}

impl EmptyRoot {
    fn new() -> EmptyRoot {
        let dir = scratch_dir("empty-root");
        std::fs::copy(static_bin(), dir.path().join("inspect")).unwrap();
        std::fs::create_dir(dir.path().join("proc")).unwrap();
        EmptyRoot { dir }
    }

    /// Runs `/inspect args` with the root at the directory, in a private mount namespace in
    /// which the host's /proc is bind-mounted there; no environment at all.
    fn inspect(&self, args: &[&str]) -> Output {
        let script = r#"mount --rbind /proc "$0/proc" && exec unshare --root="$0" /inspect "$@""#;
        Command::new("unshare")
            .args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
            .arg(script)
            .arg(self.dir.path())
            .args(args)
            .env_clear()
            .output()
            .expect("running unshare (util-linux)")
    }

    fn inspect_ok(&self, args: &[&str]) -> String {
        let out = self.inspect(args);
        assert!(
            out.status.success(),
            "/inspect {args:?} in an empty root failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("inspect prints UTF-8")
    }
}

/// The ELF has no interpreter and needs no shared library: it starts where no libc is.
fn assert_static(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    assert!(
        elf.interpreter.is_none(),
        "{} asks for the program interpreter {:?}",
        path.display(),
        elf.interpreter
    );
    assert!(
        elf.libraries.is_empty(),
        "{} needs {:?}",
        path.display(),
        elf.libraries
    );
}

#[test]
#[ignore = "requires root, JDK 17, musl target (scripts/test.sh)"]
fn static_binary_reads_a_host_jvm_from_an_empty_root() {
    assert_static(&static_bin());
    let root = EmptyRoot::new();
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let home = &jvm.java_home;

    // -F: ptrace, /proc/<pid>/maps, libjvm's symbols through /proc/<pid>/root, process_vm_readv
    let before = jcmd_counters(home, jvm.pid);
    let forced = root.inspect_ok(&["-F", &pid]);
    let after = jcmd_counters(home, jvm.pid);
    assert_matches_reference(&counters(&forced), &before, &after);
    assert_left_alone(jvm.pid, false);

    // by pid: the hsperfdata file, found through /proc/<pid>/root/tmp
    let before = jcmd_counters(home, jvm.pid);
    let by_pid = root.inspect_ok(&[&pid]);
    let after = jcmd_counters(home, jvm.pid);
    assert_matches_reference(&counters(&by_pid), &before, &after);

    // a file path: a copy of the hsperfdata file inside the root reads as the host build reads it
    let file = Path::new("/tmp")
        .join(format!("hsperfdata_{}", whoami()))
        .join(&pid);
    let copy = root.dir.path().join("saved.hsperf");
    std::fs::copy(&file, &copy).unwrap();
    let inside = root.inspect_ok(&["/saved.hsperf"]);
    let host = inspect_ok(&[copy.to_str().unwrap()]);
    assert_eq!(
        inside, host,
        "the static binary in an empty root and the host build read the same file differently"
    );
    // stat on the same file: byte-identical too
    let inside = root.inspect_ok(&["stat", "-gcutil", "/saved.hsperf"]);
    let host = inspect_ok(&["stat", "-gcutil", copy.to_str().unwrap()]);
    assert_eq!(inside, host);

    // list: the JVM, with what the host build says of it (no /etc/passwd: no user name)
    let entry = |text: &str| -> Value {
        let all: Vec<Value> = serde_json::from_str(text).expect("list --format json");
        all.into_iter()
            .find(|j| j["pid"] == jvm.pid)
            .unwrap_or_else(|| panic!("pid {pid} not listed: {text}"))
    };
    let inside = entry(&root.inspect_ok(&["list", "--format", "json"]));
    let host = entry(&inspect_ok(&["list", "--format", "json"]));
    for key in ["pid", "uid", "comm", "main", "jvm_version", "readable"] {
        assert_eq!(inside[key], host[key], "list's {key}: {inside} vs {host}");
    }
    assert_eq!(inside["readable"], "both", "{inside}");
}

/// The user name the JVM (run by this test, as this user) writes its hsperfdata directory for.
fn whoami() -> String {
    let out = run_ok(Command::new("id").arg("-un"));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}
