//! `inspect serve` against real JVMs, a real Prometheus server and promtool; the HTTP surface;
//! load; the deploy/ files against their checkers.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::support::prom::Prometheus;
use crate::support::serve::{Serve, http};
use crate::support::{Jvm, jdk17, scratch_dir, start_in_own_namespaces, test_classes};

/// Tests that start JVMs hold this for reading; the memory test holds it for writing, so the JVMs
/// its scans see (and so its heap's high-water mark) do not change under it.
static JVMS_CHANGE: RwLock<()> = RwLock::new(());

fn jvms_may_change() -> std::sync::RwLockReadGuard<'static, ()> {
    JVMS_CHANGE.read().unwrap_or_else(|e| e.into_inner())
}

fn rss_kib(pid: i32) -> u64 {
    crate::support::status_field(pid, "VmRSS")
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .unwrap()
}

fn open_fds(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// A jar of the test program at `dir/name`.
fn jar_at(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let jar = dir.join(name);
    crate::support::run_ok(
        Command::new(jdk17().join("bin/jar"))
            .arg("cfe")
            .arg(&jar)
            .arg("Target")
            .arg("-C")
            .arg(test_classes())
            .arg("Target.class"),
    );
    jar
}

fn start_jar(jar: &Path, extra: &[&str], app_args: &[&str]) -> Jvm {
    let mut cmd = Command::new(jdk17().join("bin/java"));
    cmd.args(["-Xmx32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
        .args(extra)
        .arg("-jar")
        .arg(jar)
        .arg("0")
        .args(app_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Jvm::spawn(cmd, &jdk17())
}

/// The samples of a page that belong to `pid`.
fn of_pid(
    samples: &[crate::support::prom::Sample],
    pid: i32,
) -> Vec<&crate::support::prom::Sample> {
    let pid = pid.to_string();
    samples
        .iter()
        .filter(|s| s.labels.get("pid") == Some(&pid))
        .collect()
}

#[test]
#[ignore = "requires root, JDK 17, Prometheus (scripts/test.sh)"]
fn prometheus_scrapes_three_jvms_file_memory_and_namespaced() {
    let _jvms = jvms_may_change();
    let plain = Jvm::start(&[]);
    let no_file = Jvm::start(&["-XX:+PerfDisableSharedMem"]);
    let contained = start_in_own_namespaces(&[]);
    let pids = [plain.pid, no_file.pid, contained.pid];
    let serve = Serve::for_pids(&[plain.pid, no_file.pid, contained.pid]);
    let page = serve.metrics();
    crate::support::prom::check_metrics(&page, "three JVMs");

    let prometheus = Prometheus::start(serve.port());
    prometheus.wait_for("up{job=\"hsinspect\"}", |r| r.len() == 1 && r[0].1 == 1.0);
    // Each JVM's pid label, with its identity; the namespaced one also with its container pid.
    let info = prometheus.wait_for("hotspot_jvm_info", |r| r.len() == 3);
    let found: BTreeSet<i32> = info
        .iter()
        .map(|(l, _)| l["pid"].parse().unwrap())
        .collect();
    assert_eq!(found, pids.into_iter().collect(), "{info:?}");
    for (labels, _) in &info {
        assert_eq!(labels["main"], "Target", "{labels:?}");
        assert_eq!(labels["user"], "root", "{labels:?}");
        assert!(labels["jvm_version"].starts_with("17."), "{labels:?}");
        let in_ns = labels["pid"] == contained.pid.to_string();
        assert_eq!(
            labels.get("container_pid").map(String::as_str),
            in_ns.then_some("1"),
            "{labels:?}"
        );
    }
    // A Monotonic counter grows between scrapes, for each JVM.
    let q = "hotspot_sun_os_hrt_ticks_seconds_total";
    let first = prometheus.wait_for(q, |r| r.len() == 3);
    for (labels, v0) in first {
        let pid = &labels["pid"];
        prometheus.wait_for(&format!("{q}{{pid=\"{pid}\"}}"), |r| {
            r.len() == 1 && r[0].1 > v0
        });
    }
    assert!(serve.terminate(), "serve did not exit 0 on SIGTERM");
}

#[test]
#[ignore = "requires root, JDK 17, promtool (scripts/test.sh)"]
fn page_escapes_a_hostile_jar_path_and_never_shows_secrets() {
    let _jvms = jvms_may_change();
    let dir = scratch_dir("serve-jar");
    let hostile = dir.path().join("we\"ird\\dir\nname");
    let jar = jar_at(&hostile, "app.jar");
    let jvm = start_jar(
        &jar,
        &["-Dpassword=hunter2-S3CRET", "-XX:+PerfDisableSharedMem"],
        &["--token=tok-S3CRET"],
    );
    let other = start_jar(
        &jar,
        &["-Dpassword=hunter2-S3CRET"],
        &["--token=tok-S3CRET"],
    );
    let serve = Serve::for_pids(&[jvm.pid, other.pid]);
    let page = serve.metrics();
    crate::support::prom::check_metrics(&page, "a jar path with \", \\ and a newline");
    assert!(!page.contains("S3CRET"), "a secret on the page");
    assert!(!page.contains("-Dpassword"), "JVM flags on the page");
    let (samples, _) = crate::support::prom::parse(&page);
    for pid in [jvm.pid, other.pid] {
        let mine = of_pid(&samples, pid);
        assert!(mine.len() > 150, "{pid}: {} samples", mine.len());
        for s in mine {
            assert_eq!(s.labels["main"], jar.to_str().unwrap(), "{s:?}");
        }
    }
    let (status, _, html) = serve.get("/");
    assert_eq!(status, 200);
    assert!(!html.contains("S3CRET"), "{html}");
    assert!(
        html.contains("we&quot;ird") && html.contains("href=\"/metrics\""),
        "{html}"
    );
    // The reference: the JVM did get the secrets (jcmd's view of its file).
    let text = crate::support::inspect_ok(&[&other.pid.to_string()]);
    assert!(text.contains("hunter2-S3CRET") && text.contains("tok-S3CRET"));
}

#[test]
#[ignore = "requires promtool (scripts/test.sh)"]
fn http_surface_is_get_on_two_paths_with_bounded_heads() {
    let serve = Serve::start(&["--pid", "999999999"]);
    let page = serve.metrics();
    crate::support::prom::check_metrics(&page, "no JVM selected");
    assert!(page.contains("hsinspect_jvms 0\n"), "{page}");
    assert_eq!(serve.get("/metrics?x=1").0, 200);
    let (status, head, body) = serve.get("/");
    assert_eq!(status, 200);
    assert!(
        head.contains("text/html") && body.contains("<a href=\"/metrics\">"),
        "{body}"
    );
    assert_eq!(serve.get("/nothing").0, 404);
    assert_eq!(serve.get("/metrics/x").0, 404);
    for method in ["POST", "PUT", "DELETE", "HEAD", "OPTIONS"] {
        let raw = format!("{method} /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
        let (status, head, _) = serve.request(raw.as_bytes());
        assert_eq!(status, 405, "{method}");
        assert!(head.contains("Allow: GET"), "{head}");
    }
    // A request head over 8 KiB, or with too many headers: refused, not buffered.
    let long = format!(
        "GET /metrics HTTP/1.1\r\nX-Long: {}\r\n\r\n",
        "a".repeat(9000)
    );
    assert_eq!(serve.request(long.as_bytes()).0, 431);
    let long_line = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(9000));
    assert_eq!(serve.request(long_line.as_bytes()).0, 431);
    let many: String = (0..40).map(|i| format!("X-{i}: v\r\n")).collect();
    let raw = format!("GET /metrics HTTP/1.1\r\n{many}\r\n");
    assert_eq!(serve.request(raw.as_bytes()).0, 431);
    assert_eq!(serve.request(b"\x01\x02garbage\r\n\r\n").0, 400);
    // Still serving after all that.
    assert_eq!(serve.get("/metrics").0, 200);
    assert!(serve.terminate(), "serve did not exit 0 on SIGTERM");
}

#[test]
fn silent_and_trickling_clients_get_408_within_the_bound() {
    let serve = Serve::start(&["--pid", "999999999"]);
    let port = serve.port();
    let began = Instant::now();
    let slow = |trickle: bool| {
        std::thread::spawn(move || {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            if trickle {
                // One byte a second: never a whole head.
                for b in b"GET /metrics HTTP/1.1\r\nX: yyyyyyyyyyyyyyyyyyyy" {
                    if s.write_all(&[*b]).is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
            let mut answer = String::new();
            let _ = s.read_to_string(&mut answer);
            (answer, began.elapsed())
        })
    };
    let (silent, trickling) = (slow(false), slow(true));
    // Others are answered meanwhile.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(serve.get("/metrics").0, 200);
    for client in [silent, trickling] {
        let (answer, after) = client.join().unwrap();
        assert!(answer.starts_with("HTTP/1.1 408 "), "{answer:?}");
        assert!(after < Duration::from_secs(8), "answered after {after:?}");
    }
}

#[test]
#[ignore = "requires root, JDK 17, promtool (scripts/test.sh)"]
fn a_jvm_that_cannot_be_read_is_counted_not_fatal() {
    let _jvms = jvms_may_change();
    // -XX:-UsePerfData: a JVM (maps libjvm) with no region at all.
    let no_perf = Jvm::start(&["-XX:-UsePerfData"]);
    let fine = Jvm::start(&[]);
    // A JVM younger than 2 s with no region yet is "starting", not "perf data disabled": let it
    // age past that.
    std::thread::sleep(Duration::from_millis(2500));
    let serve = Serve::for_pids(&[no_perf.pid, fine.pid]);
    let page = serve.metrics();
    crate::support::prom::check_metrics(&page, "one unreadable JVM");
    let (samples, _) = crate::support::prom::parse(&page);
    assert!(of_pid(&samples, no_perf.pid).is_empty());
    assert!(of_pid(&samples, fine.pid).len() > 150);
    let failures = |samples: &[crate::support::prom::Sample], cause: &str| {
        samples
            .iter()
            .find(|s| {
                s.name == "hsinspect_jvm_read_failures_total"
                    && s.labels.get("cause").map(String::as_str) == Some(cause)
            })
            .map(|s| s.value)
            .unwrap_or_else(|| panic!("no failure counter for {cause}"))
    };
    assert_eq!(failures(&samples, "perf_data_disabled"), 1.0, "{page}");
    let jvms = samples.iter().find(|s| s.name == "hsinspect_jvms").unwrap();
    assert_eq!(jvms.value, 2.0);
    // Counted again on the next scrape (a counter), and the page still whole.
    let (samples, _) = crate::support::prom::parse(&serve.metrics());
    assert_eq!(failures(&samples, "perf_data_disabled"), 2.0);
}

#[test]
#[ignore = "requires root, JDK 17, test users, promtool (scripts/test.sh)"]
fn ptrace_and_dac_read_search_are_enough_to_export_other_users_jvms() {
    let _jvms = jvms_may_change();
    // Root's JVMs: one read through its file, one only through its memory.
    let file = Jvm::start(&[]);
    let memory = Jvm::start(&["-XX:+PerfDisableSharedMem"]);
    let user = "hsinspect-other";
    crate::support::require_user(user);
    let as_user = [
        "setpriv",
        "--reuid=hsinspect-other",
        "--regid=hsinspect-other",
        "--clear-groups",
    ];
    let pids = [file.pid, memory.pid];
    let args = [
        "--no-cache",
        "--pid",
        &file.pid.to_string(),
        "--pid",
        &memory.pid.to_string(),
    ];
    let exported = |wrapper: &[&str]| {
        let page = Serve::start_with(wrapper, &args, &[]).metrics();
        crate::support::prom::check_metrics(&page, "serve as another user");
        let (samples, _) = crate::support::prom::parse(&page);
        pids.iter()
            .filter(|p| of_pid(&samples, **p).len() > 150)
            .count()
    };
    // With the two capabilities the README names, both; without them, neither.
    let caps = "+sys_ptrace,+dac_read_search";
    let mut with_caps = as_user.to_vec();
    let (inh, amb) = (
        format!("--inh-caps={caps}"),
        format!("--ambient-caps={caps}"),
    );
    with_caps.extend([inh.as_str(), amb.as_str(), "--"]);
    assert_eq!(exported(&with_caps), 2);
    let mut without = as_user.to_vec();
    without.push("--");
    assert_eq!(exported(&without), 0);
}

#[test]
#[ignore = "requires root, JDK 17, promtool (scripts/test.sh)"]
fn pid_user_and_match_select_jvms() {
    let _jvms = jvms_may_change();
    let jvm = Jvm::start(&[]);
    let pid = jvm.pid.to_string();
    let exported = |args: &[&str]| {
        let page = Serve::start(args).metrics();
        let (samples, _) = crate::support::prom::parse(&page);
        let jvms = samples.iter().find(|s| s.name == "hsinspect_jvms").unwrap();
        (of_pid(&samples, jvm.pid).len() > 150, jvms.value)
    };
    assert_eq!(exported(&["--pid", &pid, "--user", "root"]), (true, 1.0));
    assert_eq!(exported(&["--pid", &pid, "--user", "0"]), (true, 1.0));
    assert_eq!(exported(&["--pid", &pid, "--match", "Targ*"]), (true, 1.0));
    assert_eq!(
        exported(&["--pid", &pid, "--match", "Other*"]),
        (false, 0.0)
    );
    assert_eq!(
        exported(&["--pid", &pid, "--user", "hsinspect-jvm"]),
        (false, 0.0)
    );
}

/// Starts and stops JVMs (from `jar`) until `stop` is set: at most three at a time.
fn churn(jar: PathBuf, stop: Arc<AtomicBool>, started: Arc<Mutex<usize>>) {
    let mut running: Vec<Jvm> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        if running.len() >= 3 {
            running.remove(0); // dropped: killed and reaped
        }
        running.push(start_jar(&jar, &[], &[]));
        *started.lock().unwrap() += 1;
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
#[ignore = "requires root, JDK 17, promtool (scripts/test.sh)"]
fn load_8_clients_200_scrapes_each_while_jvms_start_and_exit() {
    let _jvms = jvms_may_change();
    let dir = scratch_dir("serve-load");
    let jar = jar_at(dir.path(), "load.jar");
    let glob = format!("{}/*", dir.path().display());
    let serve = Serve::start(&["--match", &glob]);
    let port = serve.port();
    let scrape_concurrently = |n: usize| {
        let clients: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(move || {
                    (0..n).for_each(|_| {
                        assert_eq!(http(port, b"GET /metrics HTTP/1.1\r\n\r\n").0, 200)
                    })
                })
            })
            .collect();
        clients.into_iter().for_each(|c| c.join().unwrap());
    };
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(Mutex::new(0));
    let churner = {
        let (jar, stop, started) = (jar.clone(), Arc::clone(&stop), Arc::clone(&started));
        std::thread::spawn(move || churn(jar, stop, started))
    };
    // The baseline: warmed up by the same load (JVMs coming and going, concurrent clients).
    scrape_concurrently(25);
    std::thread::sleep(Duration::from_millis(300)); // the last connections' lingering reads end
    let (rss0, fds0) = (rss_kib(serve.pid()), open_fds(serve.pid()));

    // 8 clients x 200 scrapes, in 4 rounds of 50 with RSS taken after each round.
    let mut counts = BTreeSet::new();
    let mut rss_after_round = Vec::new();
    for round in 0..4 {
        let clients: Vec<_> = (0..8)
            .map(|c| {
                std::thread::spawn(move || {
                    let mut jvm_counts = BTreeSet::new();
                    for i in round * 50..(round + 1) * 50 {
                        let (status, head, body) =
                            http(port, b"GET /metrics HTTP/1.1\r\nHost: load\r\n\r\n");
                        assert_eq!(status, 200, "client {c} scrape {i}: {head}");
                        assert!(body.ends_with('\n'));
                        let (samples, types) = crate::support::prom::parse(&body);
                        assert!(types.contains_key("hsinspect_scrape_duration_seconds"));
                        let jvms = samples.iter().find(|s| s.name == "hsinspect_jvms").unwrap();
                        jvm_counts.insert(jvms.value as u32);
                        if i % 100 == 0 {
                            crate::support::prom::check_metrics(
                                &body,
                                &format!("client {c} scrape {i}"),
                            );
                        }
                    }
                    jvm_counts
                })
            })
            .collect();
        for c in clients {
            counts.extend(c.join().expect("a client failed"));
        }
        std::thread::sleep(Duration::from_millis(300)); // the last connections' lingering reads end
        rss_after_round.push(rss_kib(serve.pid()));
    }
    stop.store(true, Ordering::SeqCst);
    churner.join().unwrap();
    let started = *started.lock().unwrap();
    assert!(started >= 3, "only {started} JVMs started during the load");
    assert!(counts.len() > 1, "JVM count never changed: {counts:?}");
    // Concurrent scrapes shared scans: far fewer scans than requests.
    let (samples, _) = crate::support::prom::parse(&serve.metrics());
    let scans = samples
        .iter()
        .find(|s| s.name == "hsinspect_scans_total")
        .unwrap()
        .value;
    let requests = (8 * 25 + 8 * 200 + 1) as f64;
    eprintln!("{requests} requests, {scans} scans");
    assert!(
        scans < requests / 2.0,
        "{scans} scans for {requests} requests: not coalesced"
    );

    // After the storm: no descriptor left open, memory where it was.
    std::thread::sleep(Duration::from_millis(300));
    let (rss1, fds1) = (rss_kib(serve.pid()), open_fds(serve.pid()));
    eprintln!(
        "serve RSS {rss0} -> {rss_after_round:?} -> {rss1} KiB, fds {fds0} -> {fds1}, {started} JVMs started"
    );
    assert_eq!(fds1, fds0, "file descriptors leaked");
    // A leak grows with every round. One step up is not one: a debug build's threads (the scan's
    // workers reuse glibc's cached stacks) can touch deeper stack once and keep those pages
    // resident (the release binary, under this same load by hand, stayed at 6.3 -> 6.6 MiB);
    // memory_and_fds_flat_over_10000_scrapes holds the build to 1 MiB over 10,000 scrapes.
    let mut before = rss0;
    let growing_rounds = rss_after_round
        .iter()
        .filter(|&&after| {
            let grew = after > before + 1024;
            before = after;
            grew
        })
        .count();
    assert!(
        growing_rounds <= 1,
        "RSS grew by over 1 MiB in {growing_rounds} of 4 rounds: {rss0} -> {rss_after_round:?} KiB"
    );
    assert!(serve.terminate(), "serve did not exit 0 on SIGTERM");
}

#[test]
#[ignore = "requires root, JDK 17 (scripts/test.sh)"]
fn memory_and_fds_flat_over_10000_scrapes() {
    let _quiet = JVMS_CHANGE.write().unwrap_or_else(|e| e.into_inner());
    let jvm = Jvm::start(&[]);
    let serve = Serve::for_pids(&[jvm.pid]);
    let port = serve.port();
    let scrape_n = |n: usize| {
        let clients: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(move || {
                    for _ in 0..n / 8 {
                        let (status, _, body) =
                            http(port, b"GET /metrics HTTP/1.1\r\nHost: flat\r\n\r\n");
                        assert_eq!(status, 200);
                        assert!(body.contains("hotspot_jvm_info{"));
                    }
                })
            })
            .collect();
        for c in clients {
            c.join().expect("a client failed");
        }
    };
    // Measured once the last connections' lingering reads (100 ms) are over. What a leak grows
    // is the anonymous memory (heap, stacks): VmRSS also counts the binary's own pages
    // (RssFile), which rise as code paths run for the first time and fall when the kernel
    // reclaims them (14.6 of 17.6 MiB of a debug build's VmRSS here), so it is shown, not judged.
    let settle = || std::thread::sleep(Duration::from_millis(300));
    let anon = |pid: i32| -> u64 {
        crate::support::status_field(pid, "RssAnon")
            .trim_end_matches(" kB")
            .trim()
            .parse()
            .unwrap()
    };
    // Warm-up: every worker's malloc arena reaches its working size.
    scrape_n(2000);
    settle();
    let fds0 = open_fds(serve.pid());
    let mut anons = vec![anon(serve.pid())];
    let rss0 = rss_kib(serve.pid());
    // Then five stretches of 2000: a leak grows in every one; a plateau does not.
    for _ in 0..5 {
        scrape_n(2000);
        settle();
        anons.push(anon(serve.pid()));
    }
    let (rss1, fds1) = (rss_kib(serve.pid()), open_fds(serve.pid()));
    eprintln!(
        "serve RssAnon after 2000, 4000, ... 12000 scrapes: {anons:?} KiB; \
         VmRSS {rss0} -> {rss1} KiB; fds {fds0} -> {fds1}"
    );
    assert_eq!(fds1, fds0, "file descriptors leaked");
    let grew_every_time = anons.windows(2).all(|w| w[1] > w[0]);
    let first = anons[0];
    let last = *anons.last().unwrap();
    assert!(
        last <= first + 512 && !(grew_every_time && last > first + 128),
        "serve's anonymous memory grew over 10,000 scrapes after warm-up: {anons:?} KiB"
    );
}

// ---- deploy/ ----

fn deploy(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(name)
}

#[test]
#[ignore = "requires systemd-analyze (scripts/test.sh)"]
fn deploy_systemd_unit_verifies() {
    let tool = Path::new("/usr/bin/systemd-analyze");
    assert!(
        tool.exists(),
        "systemd-analyze not found: install Debian's `systemd` package (scripts/setup-test-deps.sh)"
    );
    // The unit names the installed path; verify it against the binary under test.
    let unit = std::fs::read_to_string(deploy("hsinspect-serve.service")).unwrap();
    assert!(unit.contains("ExecStart=/usr/local/bin/inspect serve"));
    let dir = scratch_dir("unit");
    let path = dir.path().join("hsinspect-serve.service");
    std::fs::write(
        &path,
        unit.replace("/usr/local/bin/inspect", env!("CARGO_BIN_EXE_inspect")),
    )
    .unwrap();
    let out = Command::new(tool)
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !said.contains("hsinspect-serve.service"),
        "systemd-analyze verify: {said}"
    );
}

#[test]
#[ignore = "requires promtool (scripts/test.sh)"]
fn deploy_prometheus_config_checks() {
    let out = Command::new(crate::support::prom::tool("promtool"))
        .args(["check", "config"])
        .arg(deploy("prometheus.yml"))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && said.contains("SUCCESS"), "{said}");
}

/// Dashboard queries in each metric dialect, through a real Prometheus with `honor_labels` (the
/// README's scrape config): one series per JVM, per pool and per collector, and two JVMs of one
/// application never merge (each is its own `instance`).
#[test]
#[ignore = "requires root, JDK 17, Prometheus (scripts/test.sh)"]
fn dashboard_queries_in_every_dialect_keep_each_jvm_apart() {
    let _jvms = jvms_may_change();
    let dir = scratch_dir("dialects");
    let a = start_jar(&jar_at(&dir.path().join("a"), "orders-1.0.jar"), &[], &[]);
    let b = start_jar(
        &jar_at(&dir.path().join("b"), "orders-1.0.jar"),
        &["-XX:+PerfDisableSharedMem"],
        &[],
    );
    let c = Jvm::start(&[]);
    let pids = [a.pid, b.pid, c.pid];
    let pid_args: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let instances: BTreeSet<String> = pids
        .iter()
        .map(|p| format!("{}/{p}", host.trim()))
        .collect();
    // (dialect, [(query, series it must return)]): each JVM runs Serial (Copy, MarkSweepCompact;
    // Eden Space, Survivor Space, Tenured Gen, Metaspace, Compressed Class Space).
    let cases: &[(&str, &[(&str, usize)])] = &[
        (
            "micrometer",
            &[
                (
                    "sum by (instance, area) (jvm_memory_used_bytes{application=\"orders-1.0\"})",
                    4,
                ),
                ("jvm_memory_max_bytes{id=\"Tenured Gen\"}", 3),
                ("jvm_gc_pause_seconds_count", 6),
                ("jvm_threads_live_threads", 3),
                ("rate(process_cpu_time_ns_total[1m])", 3),
                ("process_uptime_seconds{application=\"Target\"}", 1),
            ],
        ),
        (
            "client_java",
            &[
                (
                    "sum by (instance) (jvm_memory_used_bytes{area=\"heap\",application=\"orders-1.0\"})",
                    2,
                ),
                ("jvm_memory_pool_used_bytes", 15),
                ("rate(jvm_gc_collection_seconds_sum[1m])", 6),
                ("jvm_threads_current", 3),
                ("jvm_classes_currently_loaded", 3),
                ("rate(process_cpu_seconds_total[1m])", 3),
            ],
        ),
        (
            "client_java_0",
            &[
                ("jvm_memory_bytes_used{area=\"heap\"}", 3),
                ("jvm_memory_pool_bytes_committed{pool=\"Eden Space\"}", 3),
                ("jvm_gc_collection_seconds_count", 6),
                ("jvm_info", 3),
            ],
        ),
        (
            "otel",
            &[
                (
                    "sum by (instance, jvm_memory_type) (jvm_memory_used_bytes)",
                    6,
                ),
                ("jvm_gc_duration_seconds_bucket{le=\"+Inf\"}", 6),
                ("jvm_thread_count", 6),
                ("rate(jvm_cpu_time_seconds_total[1m])", 3),
            ],
        ),
    ];
    for (names, queries) in cases {
        let mut args: Vec<&str> = vec!["--names", names];
        for p in &pid_args {
            args.extend(["--pid", p.as_str()]);
        }
        let serve = Serve::start(&args);
        let page = serve.metrics();
        // Micrometer's own names for JIT and CPU time keep its units' abbreviations, and
        // OpenTelemetry's `jvm.thread.count`/`jvm.class.count` (and `process.thread.count`,
        // `process.unix.file_descriptor.count`) end in `_count`: promtool's lint flags those
        // names, kept so that dashboards find them; anything else must pass.
        crate::support::prom::check_metrics_allowing(
            &page,
            names,
            &[
                "jvm_compilation_time_ms_total",
                "process_cpu_time_ns_total",
                "jvm_class_count",
                "jvm_thread_count",
                "process_thread_count",
                "process_unix_file_descriptor_count",
            ],
        );
        let prometheus = Prometheus::start_with(serve.port(), true);
        for (q, want) in *queries {
            let r = prometheus.wait_for(q, |r| r.len() == *want);
            if q.contains("instance") {
                let got: BTreeSet<String> = r.iter().map(|(l, _)| l["instance"].clone()).collect();
                assert!(got.is_subset(&instances), "{names}: {q}: {r:?}");
            }
        }
        // Every series carries its JVM's own instance, kept by honor_labels.
        let all = prometheus.wait_for("count by (instance, application) ({pid!=\"\"})", |r| {
            r.len() == 3
        });
        let got: BTreeSet<String> = all.iter().map(|(l, _)| l["instance"].clone()).collect();
        assert_eq!(got, instances, "{names}: {all:?}");
        assert!(serve.terminate(), "serve did not exit 0 on SIGTERM");
    }
}
