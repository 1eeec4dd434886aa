//! One handle on a running `inspect serve` for every test that starts one (`serve`,
//! `serve_tls`, `otlp`, `jdk8`, `thread_states`): on a free loopback port, its stderr kept in a
//! file, stopped with SIGTERM or killed on drop.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::scratch_dir;

/// A running `inspect serve`.
pub struct Serve {
    /// The process.
    pub child: Child,
    /// Where it listens (`None` with `--no-metrics`).
    port: Option<u16>,
    /// `http` or `https`, as its first line said.
    pub scheme: String,
    stderr: PathBuf,
    _dir: tempfile::TempDir,
}

impl Serve {
    /// `inspect serve <args>` on a free loopback port.
    pub fn start(args: &[&str]) -> Serve {
        Serve::start_with(&[], args, &[])
    }

    /// Serves only these JVMs (`--pid` each).
    pub fn for_pids(pids: &[i32]) -> Serve {
        let pids: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
        let args: Vec<&str> = pids.iter().flat_map(|p| ["--pid", p.as_str()]).collect();
        Serve::start(&args)
    }

    /// `inspect serve <args>` under a wrapper command (e.g. `setpriv ... --`; none: `&[]`), with
    /// these environment variables, a symbol cache of its own, and `--listen 127.0.0.1:0` unless
    /// `args` give the address. Returns once it said where it listens (with `--no-metrics`:
    /// once it said it pushes).
    pub fn start_with(wrapper: &[&str], args: &[&str], env: &[(&str, &str)]) -> Serve {
        let dir = scratch_dir("serve");
        let stderr = dir.path().join("stderr");
        let binary = env!("CARGO_BIN_EXE_inspect");
        let mut cmd = match wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(binary);
                c
            }
            None => Command::new(binary),
        };
        cmd.arg("serve");
        if !args
            .iter()
            .any(|a| *a == "--listen" || *a == "--web.listen-address")
        {
            cmd.args(["--listen", "127.0.0.1:0"]);
        }
        cmd.args(args)
            .env("HSINSPECT_CACHE_DIR", scratch_dir("serve-cache").keep())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("starting inspect serve");
        let listens = !args.contains(&"--no-metrics");
        let t0 = Instant::now();
        let (scheme, port) = loop {
            let text = std::fs::read_to_string(&stderr).unwrap_or_default();
            if !listens && text.contains("pushing OTLP to") {
                break (String::new(), None);
            }
            let said = text.lines().find_map(|l| {
                let (scheme, rest) = l
                    .strip_prefix("inspect serve: ")?
                    .split_once("://127.0.0.1:")?;
                let port = rest.strip_suffix("/metrics")?.parse().ok()?;
                Some((scheme.to_string(), Some(port)))
            });
            if let Some(said) = said {
                break said;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("serve exited {status}; it said {text:?}");
            }
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "serve said {text:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Serve {
            child,
            port,
            scheme,
            stderr,
            _dir: dir,
        }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port.expect("serve listens (not --no-metrics)")
    }

    /// Its pid.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// What it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// A request: (status, head, body).
    pub fn request(&self, raw: &[u8]) -> (u16, String, String) {
        http(self.port(), raw)
    }

    /// `GET path`: (status, head, body).
    pub fn get(&self, path: &str) -> (u16, String, String) {
        self.request(format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").as_bytes())
    }

    /// The /metrics page, asserting 200 and a well-formed response.
    pub fn metrics(&self) -> String {
        let (status, head, body) = self.get("/metrics");
        assert_eq!(status, 200, "{head}\n{body}");
        assert!(
            head.contains("Content-Type: text/plain; version=0.0.4"),
            "{head}"
        );
        body
    }

    /// `/metrics`, with the times (seconds since the epoch) just before the request and just
    /// after the answer.
    pub fn page(&self) -> (f64, String, f64) {
        let t0 = now();
        let mut s = TcpStream::connect(("127.0.0.1", self.port())).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut all = String::new();
        s.read_to_string(&mut all).unwrap();
        let body = all.split_once("\r\n\r\n").unwrap().1.to_string();
        (t0, body, now())
    }

    /// Stops it with SIGTERM; returns whether it exited 0 within 10 s.
    pub fn terminate(mut self) -> bool {
        super::send_signal(self.pid(), libc::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Stops it with SIGTERM, asserting it exits 0 within 15 s; returns its stderr.
    pub fn stop(mut self) -> String {
        super::send_signal(self.pid(), libc::SIGTERM);
        let t0 = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "serve exited {status}: {}", self.stderr());
                return self.stderr();
            }
            assert!(
                t0.elapsed() < Duration::from_secs(15),
                "serve did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Seconds since the epoch.
fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// One HTTP exchange on a fresh connection: (status, head, body); the body's length is checked
/// against Content-Length.
pub fn http(port: u16, raw: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connecting");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(raw).unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).expect("reading the response");
    let text = String::from_utf8(all).expect("UTF-8 response");
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no head: {text:?}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("status line: {head}"));
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no Content-Length: {head}"));
    assert_eq!(body.len(), length, "body length");
    (status, head.to_string(), body.to_string())
}
