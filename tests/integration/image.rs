//! The OCI image of deploy/Containerfile (`FROM scratch`, the static binary) built and run with
//! podman, as the DaemonSet runs it: the host's pid namespace, every capability dropped but
//! SYS_PTRACE and DAC_READ_SEARCH, a read-only root. `list` inside it finds the host's JVMs
//! (one with -XX:+PerfDisableSharedMem, readable only from memory), `-F` inside it matches jcmd (and the host build),
//! and `serve` inside it is scraped by a real Prometheus.
//!
//! Needs: root, podman and runc (scripts/setup-test-deps.sh installs them), JDK 17, Prometheus,
//! and the static binary (scripts/test.sh builds it: `cargo build --release --target
//! x86_64-unknown-linux-musl`, or `$HSINSPECT_STATIC_BIN`). No registry is contacted: the image
//! has no base. Podman's storage is a temp dir (vfs driver), removed at the end; the settings
//! are the ones that work on a kernel with hybrid cgroups (runc, cgroupfs, no default rlimits).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::prom::Prometheus;
use crate::support::*;
use serde_json::Value;

const IMAGE: &str = "localhost/hsinspect:test";
const HOW: &str =
    "install podman and runc with scripts/setup-test-deps.sh (apt-get install podman runc)";

/// podman with private vfs storage in a temp dir.
struct Podman {
    dir: tempfile::TempDir,
}

impl Podman {
    fn new() -> Podman {
        for tool in ["podman", "runc"] {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(found, "{tool} not found: {HOW}");
        }
        let dir = scratch_dir("podman");
        // crun and podman's default rlimits fail on this kernel kind: see the module docs
        std::fs::write(
            dir.path().join("containers.conf"),
            "[containers]\ndefault_ulimits = []\n[engine]\nevents_logger = \"file\"\n",
        )
        .unwrap();
        Podman { dir }
    }

    fn command(&self) -> Command {
        let d = self.dir.path();
        let mut cmd = Command::new("podman");
        cmd.env("CONTAINERS_CONF", d.join("containers.conf"))
            .env("TMPDIR", d)
            .arg("--storage-driver=vfs")
            .arg(format!("--root={}", d.join("storage").display()))
            .arg(format!("--runroot={}", d.join("run").display()))
            .args(["--cgroup-manager=cgroupfs", "--runtime=runc"]);
        cmd
    }

    fn ok(&self, args: &[&str]) -> Output {
        run_ok(self.command().args(args))
    }

    /// `podman build` of deploy/Containerfile over a context holding only the static binary.
    fn build_image(&self) {
        let ctx = self.dir.path().join("context");
        std::fs::create_dir_all(&ctx).unwrap();
        std::fs::copy(static_bin(), ctx.join("inspect")).unwrap();
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/Containerfile");
        self.ok(&[
            "build",
            "--quiet",
            "-f",
            file.to_str().unwrap(),
            "-t",
            IMAGE,
            ctx.to_str().unwrap(),
        ]);
    }

    /// `podman run` with the DaemonSet's settings; `extra` goes before the image.
    fn run_args<'a>(extra: &[&'a str], args: &[&'a str]) -> Vec<&'a str> {
        let mut all = vec![
            "run",
            "--network=host",
            "--pid=host",
            "--read-only",
            "--cap-drop=ALL",
            "--cap-add=SYS_PTRACE,DAC_READ_SEARCH",
        ];
        all.extend_from_slice(extra);
        all.push(IMAGE);
        all.extend_from_slice(args);
        all
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.ok(&Podman::run_args(&["--rm"], args));
        String::from_utf8(out.stdout).unwrap()
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        // containers are --rm or removed by the test; the image goes with the storage dir
        let _ = self
            .command()
            .args(["rm", "--force", "--all", "--time=2"])
            .output();
    }
}

/// A free loopback port (bound, then released for serve to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
#[ignore = "requires root, podman, JDK 17, Prometheus, musl target (scripts/test.sh)"]
fn image_lists_reads_and_serves_the_hosts_jvms() {
    let podman = Podman::new();
    podman.build_image();
    let plain = Jvm::start(&[]);
    let no_file = Jvm::start(&["-XX:+PerfDisableSharedMem"]);

    // list: both JVMs, each readable as a plain host read says
    let listed: Vec<Value> =
        serde_json::from_str(&podman.run(&["list", "--format", "json"])).expect("list JSON");
    let readable = |pid: i32| {
        listed
            .iter()
            .find(|j| j["pid"] == pid)
            .unwrap_or_else(|| panic!("the image's list misses JVM {pid}: {listed:?}"))["readable"]
            .clone()
    };
    assert_eq!(readable(plain.pid), "both");
    assert_eq!(readable(no_file.pid), "-F"); // memory only: no hsperfdata file

    // -F inside the container: the same counters as jcmd reads, and for the JVM jcmd cannot read
    // (no shared memory: jcmd attaches but prints nothing) as the host build's -F reads
    let pid = plain.pid.to_string();
    let before = jcmd_counters(&plain.java_home, plain.pid);
    let forced = podman.run(&["-F", &pid]);
    let after = jcmd_counters(&plain.java_home, plain.pid);
    assert_matches_reference(&counters(&forced), &before, &after);
    let pid = no_file.pid.to_string();
    let before = counters(&inspect_ok(&["-F", &pid]));
    let forced = podman.run(&["-F", &pid]);
    let after = counters(&inspect_ok(&["-F", &pid]));
    assert_matches_reference(&counters(&forced), &before, &after);
    assert_left_alone(plain.pid, false);
    assert_left_alone(no_file.pid, false);

    // serve inside the container, scraped by Prometheus
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    podman.ok(&Podman::run_args(
        &["--detach", "--name=hsinspect-serve-test"],
        &["serve", "--listen", &listen],
    ));
    let prometheus = Prometheus::start(port);
    prometheus.wait_for("up{job=\"hsinspect\"}", |r| r.len() == 1 && r[0].1 == 1.0);
    let ours: BTreeSet<String> = [plain.pid, no_file.pid]
        .iter()
        .map(|p| p.to_string())
        .collect();
    let info = prometheus.wait_for("hotspot_jvm_info", |r| {
        ours.iter()
            .all(|p| r.iter().any(|(l, _)| l.get("pid") == Some(p)))
    });
    for (labels, _) in info.iter().filter(|(l, _)| ours.contains(&l["pid"])) {
        assert_eq!(labels["main"], "Target", "{labels:?}");
        assert!(labels["jvm_version"].starts_with("17."), "{labels:?}");
    }
    // a Monotonic counter grows between scrapes, for each of our JVMs
    let q = "hotspot_sun_os_hrt_ticks_seconds_total";
    for pid in &ours {
        let one = format!("{q}{{pid=\"{pid}\"}}");
        let v0 = prometheus.wait_for(&one, |r| r.len() == 1)[0].1;
        prometheus.wait_for(&one, |r| r.len() == 1 && r[0].1 > v0);
    }
    // SIGTERM ends serve with status 0
    let start = Instant::now();
    podman.ok(&["stop", "--time=10", "hsinspect-serve-test"]);
    assert!(
        start.elapsed() < Duration::from_secs(9),
        "serve ignored SIGTERM"
    );
    let code = podman.ok(&[
        "inspect",
        "--format",
        "{{.State.ExitCode}}",
        "hsinspect-serve-test",
    ]);
    assert_eq!(String::from_utf8_lossy(&code.stdout).trim(), "0");
    podman.ok(&["rm", "hsinspect-serve-test"]);
}
