//! Helpers for tests of the Prometheus output: promtool, a reader of the text format, and a real
//! Prometheus server that scrapes a target.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// How to get Prometheus's tools on this project's test machines.
pub const HOW: &str = "install Debian's `prometheus` package (`apt-get install -y prometheus`, \
                       or run scripts/setup-test-deps.sh)";

/// The path of a Prometheus tool (`promtool`, `prometheus`), or a panic that says how to get it.
pub fn tool(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/usr/local/bin"] {
        let p = PathBuf::from(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} not found: {HOW}");
}

/// Runs `promtool check metrics` (format and lint) on a page; panics with promtool's words and
/// the page when it complains.
pub fn check_metrics(page: &str, what: &str) {
    check_metrics_allowing(page, what, &[]);
}

/// [`check_metrics`], except lint findings about these families (another library's own names
/// that promtool's lint dislikes, kept so that dashboards find them): each must be a lint line
/// naming one of them, never a format error.
pub fn check_metrics_allowing(page: &str, what: &str, allowed: &[&str]) {
    let out = match super::try_output_within(
        Command::new(tool("promtool")).args(["check", "metrics"]),
        page.as_bytes(),
        super::COMMAND_LIMIT,
        None,
    ) {
        Ok(Ok(out)) => out,
        Ok(Err(hang)) => panic!("{}", hang.report),
        Err(e) => panic!("running promtool: {e}"),
    };
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let only_allowed = !said.trim().is_empty()
        && said.lines().filter(|l| !l.trim().is_empty()).all(|l| {
            allowed.iter().any(|a| {
                l.strip_prefix(a).is_some_and(|rest| {
                    rest.starts_with(" metric names should not contain")
                        || rest
                            .starts_with(" non-histogram and non-summary metrics should not have")
                })
            })
        });
    assert!(
        (out.status.success() && said.trim().is_empty()) || only_allowed,
        "promtool check metrics on {what}: {said}\n--- page ---\n{page}"
    );
}

/// One sample of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Reads the samples of a text-format page (labels unescaped), and the `# TYPE` of each family.
pub fn parse(page: &str) -> (Vec<Sample>, BTreeMap<String, String>) {
    let mut samples = Vec::new();
    let mut types = BTreeMap::new();
    for line in page.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (n, t) = rest.split_once(' ').unwrap();
            types.insert(n.to_string(), t.to_string());
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let name_end = line.find(['{', ' ']).unwrap();
        let name = line[..name_end].to_string();
        let mut labels = BTreeMap::new();
        let mut rest = &line[name_end..];
        if rest.starts_with('{') {
            rest = &rest[1..];
            loop {
                if let Some(r) = rest.strip_prefix('}') {
                    rest = r;
                    break;
                }
                let eq = rest.find('=').unwrap();
                let key = rest[..eq].trim_start_matches(',').to_string();
                let mut chars = rest[eq + 2..].char_indices();
                let mut value = String::new();
                let end = loop {
                    let (i, c) = chars.next().expect("unterminated label value");
                    match c {
                        '"' => break i,
                        '\\' => match chars.next().unwrap().1 {
                            'n' => value.push('\n'),
                            c => value.push(c),
                        },
                        c => value.push(c),
                    }
                };
                labels.insert(key, value);
                rest = &rest[eq + 2 + end + 1..];
                rest = rest.strip_prefix(',').unwrap_or(rest);
            }
        }
        let value = rest.trim().split(' ').next().unwrap();
        samples.push(Sample {
            name,
            labels,
            value: value.parse().unwrap_or_else(|_| panic!("value of {line}")),
        });
    }
    (samples, types)
}

/// A real Prometheus server on a free loopback port, its config and data in a temp dir; killed
/// on drop.
pub struct Prometheus {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts Prometheus on loopback, scraping `target_port` every second.
    pub fn start(target_port: u16) -> Prometheus {
        Prometheus::start_with(target_port, false)
    }

    /// Starts Prometheus on loopback, scraping `target_port` every second; with `honor_labels`
    /// the target's own `instance` (and `job`) labels are kept (the README's scrape config for
    /// the metric dialects).
    pub fn start_with(target_port: u16, honor_labels: bool) -> Prometheus {
        let bin = tool("prometheus");
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        std::fs::create_dir_all(&base).unwrap();
        let dir = tempfile::Builder::new()
            .prefix("prometheus-")
            .tempdir_in(base)
            .unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: hsinspect\n    scrape_interval: 1s\n    scrape_timeout: 1s\n    honor_labels: {honor_labels}\n    static_configs:\n      - targets: ['127.0.0.1:{target_port}']\n"
            ),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("starting prometheus");
        Prometheus {
            child,
            port,
            _dir: dir,
        }
    }

    /// `GET /api/v1/query?query=q`: the result vector (label sets and values).
    pub fn query(&self, q: &str) -> Vec<(BTreeMap<String, String>, f64)> {
        let encoded: String = q
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"_.-".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return Vec::new(); // not listening yet
        };
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // HTTP/1.0: the answer is never chunked (a large one would be with HTTP/1.1).
        write!(
            s,
            "GET /api/v1/query?query={encoded} HTTP/1.0\r\nHost: p\r\n\r\n"
        )
        .unwrap();
        let mut all = String::new();
        let _ = s.read_to_string(&mut all);
        let Some((_, body)) = all.split_once("\r\n\r\n") else {
            return Vec::new();
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
            return Vec::new();
        };
        v["data"]["result"]
            .as_array()
            .map(|r| {
                r.iter()
                    .map(|e| {
                        let labels = e["metric"]
                            .as_object()
                            .unwrap()
                            .iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                            .collect();
                        let value = e["value"][1].as_str().unwrap().parse().unwrap();
                        (labels, value)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Polls `q` until `done` accepts the result (up to 60 s).
    pub fn wait_for(
        &self,
        q: &str,
        done: impl Fn(&[(BTreeMap<String, String>, f64)]) -> bool,
    ) -> Vec<(BTreeMap<String, String>, f64)> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let r = self.query(q);
            if done(&r) {
                return r;
            }
            assert!(
                Instant::now() < deadline,
                "Prometheus never answered {q} as expected; last: {r:?}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
