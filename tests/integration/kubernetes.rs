//! deploy/kubernetes/ checked offline: `kubectl kustomize` builds it, every object of a built-in
//! kind passes kubernetes-validate's bundled schemas in strict mode (a misspelt field is an
//! error, as a negative case shows), the fields the exporter relies on are there (hostPID, the
//! two capabilities and nothing more, read-only runtime directories, honorLabels on both
//! monitors), and the DaemonSet's own arguments start the binary under test and serve a page.
//!
//! Needs: kubectl (any recent one: `apt-get install kubernetes-client`, or the static binary of
//! https://dl.k8s.io/release/<version>/bin/linux/amd64/kubectl), kubernetes-validate and
//! python3-yaml (scripts/setup-test-deps.sh installs both).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::*;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes")
}

fn tool(name: &str, how: &str) -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{name} not found: {how}");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn kubectl() -> PathBuf {
    tool(
        "kubectl",
        "install kubectl (`apt-get install kubernetes-client`, or the static binary from \
         https://dl.k8s.io/release/$(curl -Ls https://dl.k8s.io/release/stable.txt)/bin/linux/amd64/kubectl \
         into /usr/local/bin)",
    )
}

fn validator() -> PathBuf {
    tool(
        "kubernetes-validate",
        "run scripts/setup-test-deps.sh (python3 -m pip install kubernetes-validate)",
    )
}

/// `kubectl kustomize deploy/kubernetes`.
fn built() -> String {
    let out = run_ok(Command::new(kubectl()).arg("kustomize").arg(dir()));
    String::from_utf8(out.stdout).unwrap()
}

fn validate(file: &Path) -> Output {
    Command::new(validator())
        .args(["--strict", "--no-warn"])
        .arg(file)
        .output()
        .expect("running kubernetes-validate")
}

/// A python3 check over the YAML documents of `file` (python3-yaml).
fn python(script: &str, args: &[&Path]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{} (python3-yaml missing? run scripts/setup-test-deps.sh)",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[ignore = "requires kubectl, kubernetes-validate (scripts/test.sh)"]
fn manifests_build_and_pass_the_kubernetes_schemas() {
    let scratch = scratch_dir("kustomize");
    let all = scratch.path().join("all.yaml");
    let text = built();
    std::fs::write(&all, &text).unwrap();
    let out = validate(&all);
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "kubernetes-validate: {said}");
    for kind in [
        "daemonset",
        "service",
        "serviceaccount",
        "priorityclass",
        "secret",
    ] {
        assert!(
            said.contains(&format!("passed for resource {kind}/hsinspect")),
            "{kind} not validated: {said}"
        );
    }
    // The checker is real: a misspelt field fails strict validation.
    std::fs::write(&all, text.replacen("hostPID: true", "hostPid: true", 1)).unwrap();
    let out = validate(&all);
    assert!(!out.status.success(), "a misspelt field passed");
    // The alternative monitor builds too, in place of the Service and the ServiceMonitor.
    let alt = scratch.path().join("alt");
    std::fs::create_dir(&alt).unwrap();
    for f in std::fs::read_dir(dir()).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, alt.join(f.file_name().unwrap())).unwrap();
    }
    let k = std::fs::read_to_string(alt.join("kustomization.yaml")).unwrap();
    std::fs::write(
        alt.join("kustomization.yaml"),
        k.replace(
            "  - service.yaml\n  - servicemonitor.yaml\n",
            "  - podmonitor.yaml\n",
        ),
    )
    .unwrap();
    let out = run_ok(Command::new(kubectl()).arg("kustomize").arg(&alt));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("kind: PodMonitor") && !text.contains("kind: ServiceMonitor"));
}

/// deploy/prometheus/rules.yml: `promtool check rules`, and its unit tests
/// (`promtool test rules`: two JVMs' series, one in each kind of trouble, one fine).
#[test]
#[ignore = "requires promtool (scripts/test.sh)"]
fn prometheus_rules_check_and_pass_their_unit_tests() {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus");
    for (args, file) in [
        (["check", "rules"], "rules.yml"),
        (["test", "rules"], "rules-test.yml"),
    ] {
        let out = Command::new(crate::support::prom::tool("promtool"))
            .args(args)
            .arg(file)
            .current_dir(&rules)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && said.contains("SUCCESS"),
            "promtool {} {file}: {said}",
            args.join(" ")
        );
    }
}

/// What the exporter relies on, in the built objects.
#[test]
#[ignore = "requires kubectl, python3-yaml (scripts/test.sh)"]
fn daemonset_and_monitors_have_what_the_exporter_needs() {
    let scratch = scratch_dir("kustomize");
    let all = scratch.path().join("all.yaml");
    std::fs::write(&all, built()).unwrap();
    let script = r#"
import sys, yaml
docs = {d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
pm = yaml.safe_load(open(sys.argv[2]))
ds = docs["DaemonSet"]
assert ds["metadata"]["namespace"] == "monitoring"
pod = ds["spec"]["template"]["spec"]
assert pod["hostPID"] is True
assert pod.get("hostNetwork") is not True
assert pod["automountServiceAccountToken"] is False
assert pod["priorityClassName"] == docs["PriorityClass"]["metadata"]["name"]
assert {"operator": "Exists"} in pod["tolerations"]
[c] = pod["containers"]
sc = c["securityContext"]
assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False, sc
assert sc["readOnlyRootFilesystem"] is True, sc
assert sc["capabilities"] == {"drop": ["ALL"], "add": ["SYS_PTRACE", "DAC_READ_SEARCH"]}, sc
assert c["resources"]["requests"] and c["resources"]["limits"]["memory"], c["resources"]
args = c["args"]
assert args[0] == "serve" and "--host-root=/host" in args, args
# every host directory is mounted read-only, under the host root serve is given
vols = {v["name"]: v for v in pod["volumes"]}
for m in c["volumeMounts"]:
    v = vols[m["name"]]
    if "hostPath" in v:
        assert m["readOnly"] is True, m
        assert m["mountPath"] == "/host" + v["hostPath"]["path"], (m, v)
# the web config from the Secret the kustomization generates
web = [a for a in args if a.startswith("--web.config.file=")][0].split("=", 1)[1]
wm = [m for m in c["volumeMounts"] if web.startswith(m["mountPath"] + "/")][0]
assert vols[wm["name"]]["secret"]["secretName"] == docs["Secret"]["metadata"]["name"]
assert web.rsplit("/", 1)[1] in docs["Secret"]["data"]
port = c["ports"][0]
svc = docs["Service"]
assert svc["spec"]["selector"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()
assert svc["spec"]["ports"][0]["targetPort"] == port["name"]
sm = docs["ServiceMonitor"]["spec"]
assert sm["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
for e in sm["endpoints"]:
    assert e["honorLabels"] is True and e["port"] == svc["spec"]["ports"][0]["name"], e
for e in pm["spec"]["podMetricsEndpoints"]:
    assert e["honorLabels"] is True and e["port"] == port["name"], e
assert pm["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()
print("\0".join(args))
"#;
    let args = python(script, &[&all, &dir().join("podmonitor.yaml")]);
    let args: Vec<&str> = args.trim_end().split('\0').collect();
    // The DaemonSet's own arguments start the binary under test (a free port, the host's root as
    // /, the kustomization's web config file): it serves a page.
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if a.starts_with("--listen=") {
                "--listen=127.0.0.1:0".to_string()
            } else if a.starts_with("--host-root=") {
                "--host-root=/".to_string()
            } else if a.starts_with("--web.config.file=") {
                format!(
                    "--web.config.file={}",
                    dir().join("web-config.yml").display()
                )
            } else {
                a.to_string()
            }
        })
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_inspect"))
        .args(&args)
        .env("HSINSPECT_CACHE_DIR", scratch.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .trim()
        .strip_prefix("inspect serve: http://127.0.0.1:")
        .and_then(|r| r.strip_suffix("/metrics"))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("serve {args:?} said {line:?}"));
    let body = {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(b"GET /metrics HTTP/1.0\r\nHost: t\r\n\r\n")
            .unwrap();
        let mut all = String::new();
        s.read_to_string(&mut all).unwrap();
        all
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    assert!(body.contains("hsinspect_scan_up 1"), "{body}");
}
