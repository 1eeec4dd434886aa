//! JVMs in real containers, named by their pods: a containerd container made with `ctr` as the CRI
//! plugin makes a pod's (the kubelet's cgroupfs path `/kubepods/burstable/pod<uid>/<id>`, the
//! CRI annotations in its task bundle's `config.json`), a podman container, and a JVM in a plain
//! `unshare` namespace. `serve` (hotspot and client_java, as the DaemonSet runs it), `inspect
//! --format prometheus` (otel, micrometer), `list` and `top` name each by its container and pod,
//! and nothing for the last;
//! a real Prometheus scraping with `honor_labels: true` keeps the labels, every query of the
//! dashboard deploy/grafana/jvms-by-pod.json returns the pod's JVM alone, and the PerfData clock
//! the "stopped answering" alert watches stands still while the JVM is SIGSTOPped (and runs
//! again after SIGCONT).
//!
//! Needs: root, containerd with ctr, podman and runc (scripts/setup-test-deps.sh installs them;
//! the test starts containerd when it is not running, and stops it again), JDK 17 and
//! Prometheus. The containers' root file systems are temp dirs with the host's `/usr` and `/etc`
//! bind-mounted read-only (JDK 17 is Debian's, under `/usr/lib/jvm`); podman's storage is a temp
//! dir (vfs driver, as tests/integration/image.rs).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::prom::{self, Prometheus};
use crate::support::*;

const HOW: &str = "install containerd, podman and runc with scripts/setup-test-deps.sh";

/// `n` random lowercase hex digits.
fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n.div_ceil(2)];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut bytes)
        .unwrap();
    bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()[..n].to_string()
}

/// A random pod UID (a UUID, as the API server gives).
fn random_uid() -> String {
    let h = random_hex(32);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A root file system for a JVM: empty directories for the host's `/usr` and `/etc` (mounted
/// read-only by the runtime), the merged-/usr links Debian has, a writable `/tmp` (where the
/// JVM's hsperfdata file goes), and `/classes` for the test program.
fn jvm_rootfs(dir: &Path) -> PathBuf {
    let root = dir.join("rootfs");
    for d in ["usr", "etc", "tmp", "proc", "sys", "dev", "classes"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.join("tmp"), std::fs::Permissions::from_mode(0o1777)).unwrap();
    for (link, to) in [
        ("lib", "usr/lib"),
        ("lib64", "usr/lib64"),
        ("bin", "usr/bin"),
        ("sbin", "usr/sbin"),
    ] {
        std::os::unix::fs::symlink(to, root.join(link)).unwrap();
    }
    root
}

/// The JVM's command inside a container: JDK 17 from the host's `/usr`, the classes at /classes.
fn java_in_container() -> Vec<String> {
    let java = jdk17().join("bin/java");
    assert!(
        java.starts_with("/usr/"),
        "the container test needs JDK 17 under /usr (Debian's openjdk-17): {}",
        java.display()
    );
    let mut args = vec![java.display().to_string()];
    args.extend(target_args(&[], 1).into_iter().map(|a| {
        if Path::new(&a) == test_classes() {
            "/classes".into()
        } else {
            a
        }
    }));
    args
}

/// Waits for the READY line of the test program on `child`'s stdout.
fn wait_ready(child: &mut Child, what: &str) {
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "READY", "{what}: the JVM did not start");
}

/// containerd, started here when it was not running (and stopped again on drop).
struct Containerd {
    started: Option<Child>,
    _dir: Option<tempfile::TempDir>,
    /// Held while this test uses containerd: a daemon one test started is not stopped under
    /// another test's container (whose `ctr run` would then exit and leave its task running).
    _serial: std::sync::MutexGuard<'static, ()>,
}

/// One test at a time uses containerd.
static CONTAINERD: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Containerd {
    fn ensure() -> Containerd {
        let serial = CONTAINERD.lock().unwrap_or_else(|e| e.into_inner());
        assert!(
            have("containerd") && have("ctr"),
            "containerd or ctr not found: {HOW}"
        );
        let answers = || {
            Command::new("ctr")
                .arg("version")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if answers() {
            return Containerd {
                started: None,
                _dir: None,
                _serial: serial,
            };
        }
        let dir = scratch_dir("containerd");
        let log = std::fs::File::create(dir.path().join("containerd.log")).unwrap();
        // The default root and state (/var/lib/containerd, /run/containerd): the task bundles
        // are where a node has them.
        let child = Command::new("containerd")
            .args(["--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("starting containerd");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !answers() {
            assert!(
                Instant::now() < deadline,
                "containerd did not answer within 30 s: see {}",
                dir.path().join("containerd.log").display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Containerd {
            started: Some(child),
            _dir: Some(dir),
            _serial: serial,
        }
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        if let Some(child) = &mut self.started {
            send_signal(child.id() as i32, libc::SIGTERM);
            let _ = child.wait();
        }
    }
}

/// What a pod's container is called.
#[derive(Debug, Clone)]
struct PodNames {
    namespace: String,
    pod: String,
    container: String,
    uid: String,
    id: String,
}

/// A JVM in a containerd container made with `ctr run`.
struct CtrJvm {
    child: Child,
    pid: i32,
    /// The containerd namespace (`ctr -n`).
    ns: String,
    names: PodNames,
    _dir: tempfile::TempDir,
}

impl CtrJvm {
    /// As the CRI plugin makes a pod's container: namespace `k8s.io`, the kubelet's cgroupfs
    /// path, the CRI annotations and the kubelet's labels.
    fn start(names: PodNames) -> CtrJvm {
        let PodNames {
            namespace,
            pod,
            container,
            uid,
            id,
        } = &names;
        let sandbox = random_hex(64);
        let mut args = vec![format!("--cgroup=/kubepods/burstable/pod{uid}/{id}")];
        for a in [
            "io.kubernetes.cri.container-type=container".to_string(),
            format!("io.kubernetes.cri.container-name={container}"),
            format!("io.kubernetes.cri.sandbox-id={sandbox}"),
            format!("io.kubernetes.cri.sandbox-name={pod}"),
            format!("io.kubernetes.cri.sandbox-namespace={namespace}"),
            format!("io.kubernetes.cri.sandbox-uid={uid}"),
        ] {
            args.extend(["--annotation".to_string(), a]);
        }
        for l in [
            format!("io.kubernetes.container.name={container}"),
            format!("io.kubernetes.pod.name={pod}"),
            format!("io.kubernetes.pod.namespace={namespace}"),
            format!("io.kubernetes.pod.uid={uid}"),
            "io.cri-containerd.kind=container".to_string(),
        ] {
            args.extend(["--label".to_string(), l]);
        }
        Self::run("k8s.io", names, &args)
    }

    /// A plain `ctr run` in containerd namespace `ns` with no Kubernetes in sight: ctr's own
    /// cgroup (`/<ns>/<id>`), an id its user chose.
    fn plain(ns: &str, id: &str) -> CtrJvm {
        let names = PodNames {
            namespace: String::new(),
            pod: String::new(),
            container: String::new(),
            uid: String::new(),
            id: id.to_string(),
        };
        Self::run(ns, names, &[])
    }

    fn run(ns: &str, names: PodNames, extra: &[String]) -> CtrJvm {
        let dir = scratch_dir("ctr-rootfs");
        let rootfs = jvm_rootfs(dir.path());
        let id = &names.id;
        let mut cmd = Command::new("ctr");
        cmd.args(["-n", ns, "run", "--rm", "--rootfs"]).args(extra);
        for (src, dst) in [
            ("/usr".to_string(), "/usr"),
            ("/etc".to_string(), "/etc"),
            (test_classes().display().to_string(), "/classes"),
        ] {
            cmd.arg("--mount")
                .arg(format!("type=bind,src={src},dst={dst},options=rbind:ro"));
        }
        cmd.arg(&rootfs)
            .arg(id)
            .args(java_in_container())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("running ctr");
        wait_ready(&mut child, "ctr run");
        let init = format!("/run/containerd/io.containerd.runtime.v2.task/{ns}/{id}/init.pid");
        let pid = std::fs::read_to_string(&init)
            .unwrap_or_else(|e| panic!("{init}: {e}"))
            .trim()
            .parse()
            .unwrap();
        CtrJvm {
            child,
            pid,
            ns: ns.to_string(),
            names,
            _dir: dir,
        }
    }
}

impl Drop for CtrJvm {
    fn drop(&mut self) {
        // Closing stdin ends the test program; ctr's --rm removes the container.
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut exited = false;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                exited = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // ctr may also have ended with its task still running (its connection lost): the
        // JVM must not outlive the test either way.
        if exited && !Path::new(&format!("/proc/{}", self.pid)).exists() {
            return;
        }
        let id = &self.names.id;
        let ctr = |args: &[&str]| {
            let _ = Command::new("ctr")
                .args(["-n", &self.ns])
                .args(args)
                .output();
        };
        ctr(&["task", "kill", "-s", "SIGKILL", id]);
        let _ = self.child.wait();
        ctr(&["task", "delete", "--force", id]);
        ctr(&["container", "rm", id]);
    }
}

/// A JVM in a podman container (private storage, the settings that work on this kernel: see
/// tests/integration/image.rs).
struct PodmanJvm {
    child: Child,
    pid: i32,
    name: String,
    id: String,
    dir: tempfile::TempDir,
}

impl PodmanJvm {
    fn podman(dir: &Path) -> Command {
        let mut cmd = Command::new("podman");
        cmd.env("CONTAINERS_CONF", dir.join("containers.conf"))
            .env("TMPDIR", dir)
            .arg("--storage-driver=vfs")
            .arg(format!("--root={}", dir.join("storage").display()))
            .arg(format!("--runroot={}", dir.join("run").display()))
            .args(["--cgroup-manager=cgroupfs", "--runtime=runc"]);
        cmd
    }

    fn start(name: &str) -> PodmanJvm {
        assert!(
            have("podman") && have("runc"),
            "podman or runc not found: {HOW}"
        );
        let dir = scratch_dir("podman-jvm");
        std::fs::write(
            dir.path().join("containers.conf"),
            "[containers]\ndefault_ulimits = []\n[engine]\nevents_logger = \"file\"\n",
        )
        .unwrap();
        let rootfs = jvm_rootfs(dir.path());
        let classes = format!("{}:/classes:ro", test_classes().display());
        let mut child = PodmanJvm::podman(dir.path())
            .args(["run", "-i", "--rm", "--network=host", "--name", name])
            .args(["-v", "/usr:/usr:ro", "-v", "/etc:/etc:ro", "-v", &classes])
            .arg("--rootfs")
            .arg(&rootfs)
            .args(java_in_container())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("running podman");
        wait_ready(&mut child, "podman run");
        let out = run_ok(PodmanJvm::podman(dir.path()).args([
            "inspect",
            "--format",
            "{{.State.Pid}} {{.Id}}",
            name,
        ]));
        let text = String::from_utf8(out.stdout).unwrap();
        let (pid, id) = text.trim().split_once(' ').unwrap();
        PodmanJvm {
            child,
            pid: pid.parse().unwrap(),
            name: name.to_string(),
            id: id.to_string(),
            dir,
        }
    }
}

impl Drop for PodmanJvm {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = PodmanJvm::podman(self.dir.path())
            .args(["rm", "--force", "--time=2", &self.name])
            .output();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running `inspect serve` on a free loopback port.
struct Serve {
    child: Child,
    port: u16,
}

impl Serve {
    fn start(args: &[&str]) -> Serve {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_inspect"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting inspect serve");
        Serve { child, port }
    }

    fn metrics(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::Write;
                s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
                s.write_all(b"GET /metrics HTTP/1.0\r\nHost: t\r\n\r\n")
                    .unwrap();
                let mut all = String::new();
                s.read_to_string(&mut all).unwrap();
                let (head, body) = all.split_once("\r\n\r\n").unwrap();
                assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                return body.to_string();
            }
            assert!(Instant::now() < deadline, "serve did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The label sets of the samples of `family` on `page` whose `pid` label is `pid`.
fn series_of(page: &str, family: &str, pid: i32) -> Vec<BTreeMap<String, String>> {
    let (samples, _) = prom::parse(page);
    samples
        .into_iter()
        .filter(|s| s.name == family && s.labels.get("pid") == Some(&pid.to_string()))
        .map(|s| s.labels)
        .collect()
}

/// Every label in `want` with its value, and none of `absent`, on every series of the JVM.
fn assert_labels(page: &str, family: &str, pid: i32, want: &[(&str, &str)], absent: &[&str]) {
    let series = series_of(page, family, pid);
    assert!(!series.is_empty(), "no {family} of pid {pid} in:\n{page}");
    for labels in series {
        for (k, v) in want {
            assert_eq!(
                labels.get(*k).map(String::as_str),
                Some(*v),
                "{family} of pid {pid}: label {k} in {labels:?}"
            );
        }
        for k in absent {
            assert!(
                !labels.contains_key(*k),
                "{family} of pid {pid}: {k} in {labels:?}"
            );
        }
    }
}

const K8S_LABELS: [&str; 5] = ["namespace", "pod", "container", "container_id", "pod_uid"];

#[test]
#[ignore = "requires root, containerd, podman, JDK 17, Prometheus (scripts/test.sh)"]
fn jvms_in_containerd_podman_and_unshare_are_named_by_their_pods() {
    let _containerd = Containerd::ensure();
    let tag = random_hex(6);
    let names = PodNames {
        namespace: format!("shop-{tag}"),
        pod: format!("orders-7d9f8b6c5-{tag}"),
        container: "orders".into(),
        uid: random_uid(),
        id: random_hex(64),
    };
    let ctr = CtrJvm::start(names.clone());
    let podman = PodmanJvm::start(&format!("billing-{tag}"));
    let plain = start_in_own_namespaces(&[]);
    let pids = [ctr.pid, podman.pid, plain.pid];

    // The cgroups as the runtimes made them (what the parser's unit tests hold).
    let cgroup = std::fs::read_to_string(format!("/proc/{}/cgroup", ctr.pid)).unwrap();
    assert!(
        cgroup.contains(&format!(
            "/kubepods/burstable/pod{}/{}",
            names.uid, names.id
        )),
        "{cgroup}"
    );
    let cgroup = std::fs::read_to_string(format!("/proc/{}/cgroup", podman.pid)).unwrap();
    assert!(
        cgroup.contains(&format!("libpod-{}", podman.id)),
        "{cgroup}"
    );

    // serve as the DaemonSet runs it (its --names), the three JVMs only.
    let mut args: Vec<String> = vec!["--names".into(), daemonset_names()];
    for p in pids {
        args.extend(["--pid".into(), p.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let serve = Serve::start(&args);
    let page = serve.metrics();
    prom::check_metrics(&page, "serve with containers");
    let pod_labels = [
        ("namespace", names.namespace.as_str()),
        ("pod", names.pod.as_str()),
        ("container", names.container.as_str()),
        ("container_id", names.id.as_str()),
        ("pod_uid", names.uid.as_str()),
    ];
    for family in ["hotspot_java_threads_live", "process_resident_memory_bytes"] {
        assert_labels(&page, family, ctr.pid, &pod_labels, &[]);
        assert_labels(
            &page,
            family,
            podman.pid,
            &[("container_id", podman.id.as_str())],
            &["namespace", "pod", "container", "pod_uid"],
        );
        assert_labels(&page, family, plain.pid, &[], &K8S_LABELS);
    }
    // client_java's application: the container's name, else the main class.
    assert_labels(
        &page,
        "process_resident_memory_bytes",
        ctr.pid,
        &[("application", "orders")],
        &[],
    );
    assert_labels(
        &page,
        "process_resident_memory_bytes",
        podman.pid,
        &[("application", podman.name.as_str())],
        &[],
    );
    assert_labels(
        &page,
        "process_resident_memory_bytes",
        plain.pid,
        &[("application", "Target")],
        &[],
    );

    // OpenTelemetry's resource attributes, named by the OTLP-to-Prometheus rule.
    for (jvm, want, absent) in [
        (
            ctr.pid,
            vec![
                ("k8s_namespace_name", names.namespace.as_str()),
                ("k8s_pod_name", names.pod.as_str()),
                ("k8s_container_name", "orders"),
                ("container_id", names.id.as_str()),
                ("k8s_pod_uid", names.uid.as_str()),
                ("application", "orders"),
            ],
            vec!["namespace", "pod"],
        ),
        (
            podman.pid,
            vec![
                ("container_id", podman.id.as_str()),
                ("application", podman.name.as_str()),
            ],
            vec!["k8s_pod_name"],
        ),
        (
            plain.pid,
            vec![("application", "Target")],
            vec!["k8s_pod_name", "container_id", "k8s_namespace_name"],
        ),
    ] {
        let otel = inspect_ok(&[
            "--format",
            "prometheus",
            "--names",
            "otel",
            &jvm.to_string(),
        ]);
        assert_labels(&otel, "jvm_thread_count", jvm, &want, &absent);
    }

    // inspect --format prometheus of one JVM: the same labels, Micrometer's application.
    let one = inspect_ok(&[
        "--format",
        "prometheus",
        "--names",
        "hotspot,micrometer",
        &ctr.pid.to_string(),
    ]);
    assert_labels(&one, "hotspot_java_threads_live", ctr.pid, &pod_labels, &[]);
    assert_labels(
        &one,
        "jvm_threads_live_threads",
        ctr.pid,
        &[
            ("application", "orders"),
            ("namespace", names.namespace.as_str()),
        ],
        &[],
    );

    // list: the column, the JSON, the filters.
    let text = inspect_ok(&["list"]);
    let line_of = |pid: i32| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(&pid.to_string()))
            .unwrap_or_else(|| panic!("pid {pid} not in:\n{text}"))
            .to_string()
    };
    assert!(text.lines().next().unwrap().contains("CONTAINER"), "{text}");
    let want = format!("{}/{}/{}", names.namespace, names.pod, names.container);
    assert!(line_of(ctr.pid).contains(&want), "{text}");
    assert!(line_of(podman.pid).contains(&podman.name), "{text}");
    let plain_line = line_of(plain.pid);
    let cells: Vec<&str> = plain_line.split_whitespace().collect();
    assert_eq!(cells[6], "-", "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&inspect_ok(&["list", "--format", "json"])).unwrap();
    let entry = |pid: i32| {
        json.as_array()
            .unwrap()
            .iter()
            .find(|j| j["pid"] == pid)
            .unwrap()
            .clone()
    };
    assert_eq!(
        entry(ctr.pid)["container"],
        serde_json::json!({"id": names.id, "runtime": "containerd", "pod": {
            "uid": names.uid, "qos": "burstable", "namespace": names.namespace,
            "pod": names.pod, "container": "orders"}})
    );
    assert_eq!(
        entry(podman.pid)["container"],
        serde_json::json!({"id": podman.id, "runtime": "podman", "name": podman.name})
    );
    assert!(entry(plain.pid).get("container").is_none(), "{json}");
    let only = inspect_ok(&["list", "--namespace", &names.namespace]);
    assert!(
        only.contains(&want) && !only.contains(&podman.name),
        "{only}"
    );
    assert!(!only.contains(&format!("\n{} ", plain.pid)), "{only}");
    let none = inspect_ok(&["list", "--pod", "no-such-pod-*"]);
    assert_eq!(none.lines().count(), 1, "{none}");

    // top: the column and --pod.
    let top = inspect_ok(&["top", "-b", "-n", "1", "--pod", &format!("orders-*-{tag}")]);
    assert!(top.contains("CONTAINER") && top.contains(&want), "{top}");
    assert!(!top.contains(&podman.name), "{top}");

    // A real Prometheus with honor_labels keeps the JVM's namespace and pod (without it they
    // would be the target's, or exported_*).
    let prometheus = Prometheus::start_with(serve.port, true);
    let q = format!("hotspot_java_threads_live{{pid=\"{}\"}}", ctr.pid);
    let r = prometheus.wait_for(&q, |r| !r.is_empty());
    let labels = &r[0].0;
    for (k, v) in pod_labels {
        assert_eq!(labels.get(k).map(String::as_str), Some(v), "{labels:?}");
    }
    assert!(
        !labels.keys().any(|k| k.starts_with("exported_")),
        "{labels:?}"
    );
    let r = prometheus.wait_for(
        &format!(
            "count by (namespace, pod, container) (hotspot_java_threads_live{{namespace=\"{}\"}})",
            names.namespace
        ),
        |r| !r.is_empty(),
    );
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].1, 1.0, "{r:?}");

    // Every query of the dashboard, its variables set to the pod: series of that pod's JVM
    // only (the rates once Prometheus has two scrapes in the window).
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/grafana/jvms-by-pod.json"),
        )
        .unwrap(),
    )
    .unwrap();
    // As Grafana does with one value of each (the names are DNS labels: no regex metacharacter
    // but `.`, which matches itself).
    let substitute = |q: &str| {
        q.replace("$namespace", &names.namespace)
            .replace("$pod", &names.pod)
            .replace("$container", &names.container)
            .replace("$__rate_interval", "15s")
    };
    let mut queries = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let q = substitute(target["expr"].as_str().unwrap());
            let r = prometheus.wait_for(&q, |r| !r.is_empty());
            let pods: std::collections::BTreeSet<_> = r
                .iter()
                .map(|(l, _)| (l.get("namespace").cloned(), l.get("pod").cloned()))
                .collect();
            assert_eq!(
                pods.into_iter().collect::<Vec<_>>(),
                vec![(Some(names.namespace.clone()), Some(names.pod.clone()))],
                "{}: {q}: {r:?}",
                panel["title"]
            );
            for (l, _) in &r {
                assert_eq!(l.get("pid"), Some(&ctr.pid.to_string()), "{q}: {r:?}");
            }
            queries += 1;
        }
    }
    assert!(queries >= 15, "{queries} queries");
    // The variables' own queries list the pod's names.
    for var in dashboard["templating"]["list"].as_array().unwrap() {
        let Some(q) = var["query"]["query"].as_str() else {
            continue;
        };
        let (series, label) = q
            .strip_prefix("label_values(")
            .and_then(|r| r.strip_suffix(')'))
            .and_then(|r| r.rsplit_once(", "))
            .unwrap_or_else(|| panic!("variable query {q}"));
        let r = prometheus.wait_for(
            &format!("count by ({label}) ({})", substitute(series)),
            |r| !r.is_empty(),
        );
        let values: Vec<&str> = r
            .iter()
            .filter_map(|(l, _)| l.get(label).map(String::as_str))
            .collect();
        let want = match label {
            "namespace" => names.namespace.as_str(),
            "pod" => names.pod.as_str(),
            _ => names.container.as_str(),
        };
        assert!(values.contains(&want), "{q}: {values:?}");
    }

    // The clock HsinspectJvmStoppedAnswering watches (deploy/prometheus/rules.yml; its windows
    // shortened): it runs while the JVM runs and stands still while it is stopped.
    let clock = format!(
        "rate(hotspot_sun_os_hrt_ticks_seconds_total{{pid=\"{}\"}}[4s])",
        ctr.pid
    );
    prometheus.wait_for(&format!("{clock} > 0.5"), |r| r.len() == 1);
    {
        let _stopped = Stopped::stop(ctr.pid);
        prometheus.wait_for(&format!("{clock} == 0"), |r| r.len() == 1);
    }
    prometheus.wait_for(&format!("{clock} > 0.5"), |r| r.len() == 1);
}

/// A process stopped with SIGSTOP, continued on drop (whatever happens to the test).
struct Stopped(i32);

impl Stopped {
    fn stop(pid: i32) -> Stopped {
        send_signal(pid, libc::SIGSTOP);
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        send_signal(self.0, libc::SIGCONT);
    }
}

/// The `--names` of deploy/kubernetes/daemonset.yaml's serve.
fn daemonset_names() -> String {
    let manifest = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes/daemonset.yaml"),
    )
    .unwrap();
    manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("- --names="))
        .expect("daemonset.yaml runs serve with --names=")
        .to_string()
}

#[test]
#[ignore = "requires root, containerd, JDK 17 (scripts/test.sh)"]
fn a_plain_ctr_run_jvm_gets_its_container_id() {
    // `ctr run` outside Kubernetes: cgroup `/<namespace>/<id>`, no pod, an id of the user's.
    let _containerd = Containerd::ensure();
    let id = format!("jvm-{}", random_hex(6));
    let ctr = CtrJvm::plain("default", &id);
    let cgroup = std::fs::read_to_string(format!("/proc/{}/cgroup", ctr.pid)).unwrap();
    assert!(cgroup.contains(&format!("/default/{id}")), "{cgroup}");
    let json: serde_json::Value =
        serde_json::from_str(&inspect_ok(&["list", "--format", "json"])).unwrap();
    let entry = json
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["pid"] == ctr.pid)
        .unwrap_or_else(|| panic!("pid {} not listed: {json:#}", ctr.pid))
        .clone();
    assert_eq!(
        entry["container"],
        serde_json::json!({"id": id, "runtime": "containerd"}),
        "{entry:#}"
    );
}
