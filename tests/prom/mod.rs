//! Helpers for tests of the Prometheus output: promtool, and a reader of the text format.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

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
    let mut child = Command::new(tool("promtool"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
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
