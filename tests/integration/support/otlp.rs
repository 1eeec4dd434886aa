//! The OTLP receiver of the tests that push (`otlp`, `formats`): `tests/otlp/receiver.py` on a
//! loopback port, decoding each request with the official OTLP definitions (`opentelemetry-proto`
//! from PyPI, installed by `scripts/python-deps.sh`), and the reading of what it recorded.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::scratch_dir;

/// How to get the receiver's Python packages.
pub const HOW: &str = "run scripts/python-deps.sh (or scripts/setup-test-deps.sh): it installs \
                   opentelemetry-proto from PyPI into ~/.cache/hsinspect/python";

/// Where scripts/python-deps.sh installed the receiver's Python packages.
pub fn python_dir() -> PathBuf {
    let dir = std::env::var_os("HSINSPECT_PYTHON_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/hsinspect/python")
        });
    assert!(
        dir.join("opentelemetry/proto/collector/metrics/v1")
            .is_dir(),
        "opentelemetry-proto is not in {}: {HOW}",
        dir.display()
    );
    dir
}

/// The receiver: a Python process on a loopback port, one JSON line per request in `out`.
pub struct Receiver {
    child: Child,
    /// Its loopback port.
    pub port: u16,
    /// Its JSON Lines file.
    pub out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Receiver {
    /// Starts `tests/otlp/receiver.py <args>` and waits until it says its port.
    pub fn start(args: &[&str]) -> Receiver {
        let dir = scratch_dir("otlp-receiver");
        let out = dir.path().join("requests.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otlp/receiver.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .arg("--out")
            .arg(&out)
            .args(args)
            .env("PYTHONPATH", python_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting python3 tests/otlp/receiver.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("receiver said {line:?} ({HOW})"));
        Receiver {
            child,
            port,
            out,
            _dir: dir,
        }
    }

    /// The requests recorded so far: the complete lines only (the receiver may be writing the
    /// last one while it is read).
    pub fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .map(|l| serde_json::from_str(l.trim_end()).unwrap())
            .collect()
    }

    /// Waits until `n` requests have come (at most `limit`).
    pub fn wait_for(&self, n: usize, limit: Duration) -> Vec<Value> {
        let t0 = Instant::now();
        loop {
            let r = self.records();
            if r.len() >= n {
                return r;
            }
            assert!(
                t0.elapsed() < limit,
                "{} of {n} requests after {limit:?}",
                r.len()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A JSON int64 (protobuf's JSON writes them as strings); absent is 0.
pub fn int(v: &Value) -> i64 {
    match v {
        Value::Null => 0,
        Value::String(s) => s.parse().unwrap(),
        v => v.as_i64().unwrap(),
    }
}

/// An attribute's value as the page's label value.
pub fn attr_text(v: &Value) -> String {
    if let Some(s) = v.get("string_value") {
        s.as_str().unwrap().to_string()
    } else if let Some(b) = v.get("bool_value") {
        b.as_bool().unwrap().to_string()
    } else if let Some(i) = v.get("int_value") {
        int(i).to_string()
    } else if v.as_object().is_some_and(|o| o.is_empty()) {
        // proto3 JSON omits a false bool_value's field... but keeps the oneof: {} is never sent.
        panic!("empty attribute value")
    } else {
        panic!("attribute value {v}")
    }
}

/// A list of OTLP `KeyValue`s as a map of their values as text.
pub fn attrs(list: &Value) -> BTreeMap<String, String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .map(|kv| {
                    (
                        kv["key"].as_str().unwrap().to_string(),
                        attr_text(&kv["value"]),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The resources of one request, by `process.pid`.
pub fn resources(record: &Value) -> BTreeMap<i64, (BTreeMap<String, String>, Value)> {
    record["request"]["resource_metrics"]
        .as_array()
        .unwrap_or_else(|| panic!("no resource_metrics in {record}"))
        .iter()
        .map(|rm| {
            let a = attrs(&rm["resource"]["attributes"]);
            let pid = a["process.pid"].parse().unwrap();
            (pid, (a, rm.clone()))
        })
        .collect()
}
