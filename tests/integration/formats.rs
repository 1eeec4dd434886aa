//! `--format json` and `--format prometheus` of the plain counter listing: against the text
//! output of the same region, against promtool, and against secrets in a real JVM's arguments
//! and properties, which no machine format carries (`inspect serve` in every dialect, `top -b`
//! and the OTLP push included).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::{COMMAND_LIMIT, Jvm, counters, inspect_ok, jdk17, output_within};
use hsinspect::format::prometheus::mapping;
use hsinspect::perfdata::{Units, Variability};

fn captures() -> Vec<PathBuf> {
    regions("testdata/captures")
}

fn regions(under: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(under);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hsperf"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "regions missing in {}", dir.display());
    files
}

fn units(s: &str) -> Units {
    match s {
        "none" => Units::None,
        "bytes" => Units::Bytes,
        "ticks" => Units::Ticks,
        "events" => Units::Events,
        "string" => Units::String,
        "hertz" => Units::Hertz,
        _ => panic!("unknown units {s}"),
    }
}

fn variability(s: &str) -> Variability {
    match s {
        "constant" => Variability::Constant,
        "monotonic" => Variability::Monotonic,
        "variable" => Variability::Variable,
        _ => panic!("unknown variability {s}"),
    }
}

/// The one JSON Lines record of `inspect --format json args...`.
fn json_record(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let out = inspect_ok(&all);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "one sample, one line: {out}");
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
#[ignore = "requires promtool (scripts/test.sh)"]
fn prometheus_output_of_every_capture_passes_promtool() {
    // The captures, the regions derived from them (big-endian, a tail being written, an entry
    // of an unknown type), and the stat regions of JDK 8, 11, 17, 21 and 25 with every collector.
    for file in captures()
        .into_iter()
        .chain(regions("testdata/derived"))
        .chain(regions("testdata/stat"))
    {
        let page = inspect_ok(&["--format", "prometheus", file.to_str().unwrap()]);
        crate::support::prom::check_metrics(&page, &file.display().to_string());
        let (samples, types) = crate::support::prom::parse(&page);
        assert!(
            samples.len() > 100,
            "{}: {} samples",
            file.display(),
            samples.len()
        );
        for (family, t) in &types {
            assert_eq!(
                t == "counter",
                family.ends_with("_total"),
                "{family} is a {t}"
            );
        }
    }
}

/// Every counter of every saved region (JDK 8, 11, 17, 21 and 25; Serial, Parallel, CMS, G1,
/// ZGC, Shenandoah) gets a family name without a word promtool's lint rejects (an abbreviated
/// unit such as JDK 8's `sun.rt._sync_PrivateB` would give: `_b`), checked without promtool.
#[test]
fn every_jdks_counter_names_are_free_of_lint_words() {
    use hsinspect::format::prometheus::LINT_WORDS;
    let mut majors = std::collections::BTreeSet::new();
    let mut names = 0;
    for file in captures().into_iter().chain(regions("testdata/stat")) {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        majors.insert(stem.split('-').next().unwrap().to_owned());
        let snapshot = hsinspect::perfdata::parse(&std::fs::read(&file).unwrap()).unwrap();
        let frequency = snapshot.long("sun.os.hrt.frequency");
        for c in &snapshot.counters {
            let m = mapping(&c.name, c.units, c.variability, frequency);
            let bad: Vec<&str> = m
                .family
                .split('_')
                .filter(|w| LINT_WORDS.contains(w))
                .collect();
            assert!(
                bad.is_empty(),
                "{stem}: {} -> {} has {bad:?}",
                c.name,
                m.family
            );
            names += 1;
        }
    }
    let want: std::collections::BTreeSet<String> = ["jdk8", "jdk11", "jdk17", "jdk21", "jdk25"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(majors, want, "regions of every JDK in the matrix");
    let privateb = mapping(
        "sun.rt._sync_PrivateB",
        Units::None,
        Variability::Monotonic,
        None,
    );
    assert_eq!(privateb.family, "hotspot_sun_rt_sync_privateb_total");
    assert!(names > 3000, "{names} names");
}

#[test]
fn json_and_prometheus_values_equal_the_text_output() {
    for file in captures() {
        let f = file.to_str().unwrap();
        let text = counters(&inspect_ok(&[f]));
        let record = json_record(&[f]);
        assert!(record["pid"].is_null(), "a file has no pid: {record}");
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let taken = record["timestamp"].as_u64().unwrap();
        assert!(
            taken <= now_ms && taken + 60_000 > now_ms,
            "timestamp {taken}, now {now_ms}"
        );
        let json = record["counters"].as_object().unwrap();

        // Every long of the text output is in JSON with the same value; every string in JSON is
        // the text output's, and strings are only the allow-listed ones.
        let mut longs = 0;
        for (name, text_value) in &text {
            match json.get(name) {
                Some(c) if c["value"].is_i64() => {
                    assert_eq!(
                        c["value"].as_i64().unwrap().to_string(),
                        *text_value,
                        "{name}"
                    );
                    longs += 1;
                }
                Some(c) => {
                    assert_eq!(format!("\"{}\"", c["value"].as_str().unwrap()), *text_value);
                    assert!(hsinspect::format::allow::string_exportable(name), "{name}");
                }
                None => assert!(
                    text_value.starts_with('"'),
                    "{f}: long {name} missing from JSON"
                ),
            }
        }
        assert!(json.keys().all(|k| text.contains_key(k)));
        assert!(longs > 150, "{f}: {longs} longs");

        // Every long is one Prometheus sample, named by the rule, in base units.
        let page = inspect_ok(&["--format", "prometheus", f]);
        let (samples, _) = crate::support::prom::parse(&page);
        let frequency = json["sun.os.hrt.frequency"]["value"].as_i64();
        let mut seen = 0;
        for (name, c) in json {
            let Some(raw) = c["value"].as_i64() else {
                continue;
            };
            let m = mapping(
                name,
                units(c["units"].as_str().unwrap()),
                variability(c["variability"].as_str().unwrap()),
                frequency,
            );
            let labels: BTreeMap<String, String> = m.labels.iter().cloned().collect();
            let s = samples
                .iter()
                .find(|s| s.name == m.family && s.labels == labels)
                .unwrap_or_else(|| panic!("{f}: {name} ({} {labels:?}) not on the page", m.family));
            let want = raw as f64 / m.divisor.unwrap_or(1) as f64;
            assert!(
                (s.value - want).abs() <= want.abs() * 1e-12,
                "{f}: {name}: {} on the page, {want} expected",
                s.value
            );
            seen += 1;
        }
        let info = samples.iter().filter(|s| s.name.ends_with("_info")).count();
        assert_eq!(samples.len(), seen + info, "{f}: samples without a counter");
        let gc_names = json
            .keys()
            .filter(|k| k.starts_with("sun.gc.") && k.ends_with(".name"));
        assert_eq!(
            info,
            gc_names.count() + 1,
            "{f}: one info sample per GC name, one jvm_info"
        );
    }
}

/// What every secret of [`jvm_with_secrets`] contains.
const SECRET: &str = "S3CRET";

/// A JDK 17 JVM holding a secret in each place a JVM keeps one: a system property on its command
/// line (`-Dpassword=hunter2-S3CRET`), a `-XX` flag's value (`-XX:OnOutOfMemoryError=echo
/// S3CRET-oom`), an application argument (`--token=tok-S3CRET`), and a system property its
/// program sets at run time (`runtime.password=rt-S3CRET`, `tests/java/RuntimeProperty.java`).
/// Returns it with the text output of `inspect <pid>`, which shows the first three (asserted, as
/// jcmd's `VM.system_properties` shows the fourth), so a check that a format never carries them
/// means something.
fn jvm_with_secrets() -> (Jvm, String) {
    let java_home = jdk17();
    let mut cmd = std::process::Command::new(java_home.join("bin/java"));
    cmd.args([
        "-Xmx32m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Xshare:auto",
        "-Dpassword=hunter2-S3CRET",
        "-XX:OnOutOfMemoryError=echo S3CRET-oom",
        "-cp",
    ])
    .arg(crate::support::test_classes())
    .args(["RuntimeProperty", "--token=tok-S3CRET"])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped());
    let jvm = Jvm::spawn(cmd, &java_home);
    let pid = jvm.pid.to_string();
    let text = inspect_ok(&[&pid]);
    for shown in [
        "-Dpassword=hunter2-S3CRET",
        "S3CRET-oom",
        "--token=tok-S3CRET",
    ] {
        assert!(
            text.contains(shown),
            "inspect {pid} does not show {shown:?}: {text}"
        );
    }
    let props = output_within(
        std::process::Command::new(java_home.join("bin/jcmd"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .args([&pid, "VM.system_properties"]),
        COMMAND_LIMIT,
        Some(jvm.pid),
    );
    assert!(
        props.status.success(),
        "jcmd VM.system_properties failed: {props:?}"
    );
    let props = String::from_utf8_lossy(&props.stdout);
    assert!(
        props.contains("runtime.password=rt-S3CRET"),
        "the program did not set its property: {props}"
    );
    (jvm, text)
}

/// Asserts that `out`, what `what` gave, carries none of [`jvm_with_secrets`]'s secrets, nor the
/// names of its secret properties.
fn assert_no_secret(what: &str, out: &str) {
    for secret in [SECRET, "-Dpassword", "runtime.password"] {
        assert!(!out.contains(secret), "{what} shows {secret:?}: {out}");
    }
}

#[test]
#[ignore = "requires JDK 17, promtool (scripts/test.sh)"]
fn machine_formats_never_show_arguments_or_properties() {
    // The text output shows the secrets (so the check below means something) ...
    let (jvm, text) = jvm_with_secrets();
    let pid = jvm.pid.to_string();

    // ... the machine formats, by file or by memory, never.
    for args in [
        vec![pid.as_str()],
        vec!["-F", &pid],
        vec!["-F", "--no-stop", &pid],
    ] {
        for format in ["json", "prometheus"] {
            let mut all = vec!["--format", format];
            all.extend_from_slice(&args);
            let out = inspect_ok(&all);
            assert_no_secret(&format!("{all:?}"), &out);
            if format == "prometheus" {
                crate::support::prom::check_metrics(&out, &format!("{all:?}"));
                assert!(out.contains(&format!("pid=\"{pid}\"")), "{out}");
                assert!(out.contains("hotspot_jvm_info{"), "{out}");
            }
        }
        let record = json_record(&args);
        assert_eq!(record["pid"].as_i64(), Some(jvm.pid as i64));
        let json = record["counters"].as_object().unwrap();
        for withheld in [
            "java.rt.vmArgs",
            "sun.rt.javaCommand",
            "java.property.java.class.path",
        ] {
            assert!(
                text.contains(withheld) && !json.contains_key(withheld),
                "{withheld}"
            );
        }
    }

    // `inspect info` prints them, asked for by name (text only) ...
    let info = inspect_ok(&["info", &pid]);
    assert!(
        info.contains("-Dpassword=hunter2-S3CRET ")
            && info.contains("-XX:OnOutOfMemoryError=echo S3CRET-oom ")
            && info.contains("--token=tok-S3CRET"),
        "{info}"
    );
    // ... and the other machine formats that name this JVM never do.
    for args in [
        vec!["list", "--format", "json"],
        vec!["top", "-b", "-n", "1", "--format", "json"],
    ] {
        let out = inspect_ok(&args);
        assert!(out.contains(&pid), "{args:?} does not list the JVM: {out}");
        assert_no_secret(&format!("{args:?}"), &out);
    }
}

/// The exporters carry no secret of [`jvm_with_secrets`] either: `inspect serve` in every name
/// dialect, with and without `--thread-states` (which reads the JVM's memory), on `/metrics` and
/// on its index page `/`; `inspect top -b` in every machine format it has, over two refreshes;
/// and the OTLP push (`serve --otlp`, with and without `--thread-states`) as
/// `tests/otlp/receiver.py` decoded it. Each is first seen to carry the JVM (its pid; with
/// `--thread-states`, its thread states), so an empty page or push cannot pass.
#[test]
#[ignore = "requires root, JDK 17, python3, opentelemetry-proto (scripts/test.sh)"]
fn machine_formats_of_serve_top_and_otlp_never_show_arguments_or_properties() {
    use crate::support::otlp::{Receiver, attrs, resources};
    use crate::support::serve::Serve;
    use crate::support::states;
    use hsinspect::format::dialect::Dialect;
    use std::time::{Duration, Instant};

    let (jvm, _) = jvm_with_secrets();
    let pid = jvm.pid.to_string();

    // serve: every dialect, with and without the thread states.
    for dialect in Dialect::ALL {
        let names = dialect.as_str();
        for thread_states in [false, true] {
            let mut args = vec!["--names", names, "--pid", &pid];
            if thread_states {
                args.push("--thread-states");
            }
            let what = format!("serve {args:?}");
            let serve = Serve::start(&args);
            let t0 = Instant::now();
            let page = loop {
                let page = serve.metrics();
                let live = page.contains(&format!("pid=\"{pid}\""))
                    && (!thread_states || !states::from_page(&page, jvm.pid, names).is_empty());
                if live {
                    break page;
                }
                assert!(
                    t0.elapsed() < Duration::from_secs(60),
                    "{what}: JVM {pid} (and its thread states) not on /metrics after 60 s: {page}"
                );
                std::thread::sleep(Duration::from_millis(100));
            };
            assert_no_secret(&format!("{what} /metrics"), &page);
            let (status, head, index) = serve.get("/");
            assert_eq!(status, 200, "{what} /: {head}\n{index}");
            assert!(
                index.contains(&format!("<td>{pid}</td>")),
                "{what}: JVM {pid} not on /: {index}"
            );
            assert_no_secret(&format!("{what} /"), &index);
            serve.stop();
        }
    }

    // top -b: every format but text (the ones a script parses), as clap lists them.
    let refused = crate::support::inspect(&["top", "-b", "--format", "?"]);
    let refused = String::from_utf8_lossy(&refused.stderr).into_owned();
    let formats: Vec<&str> = refused
        .split_once("[possible values: ")
        .and_then(|(_, rest)| rest.split_once(']'))
        .unwrap_or_else(|| panic!("top's formats not listed: {refused}"))
        .0
        .split(", ")
        .filter(|f| *f != "text")
        .collect();
    assert!(formats.contains(&"json"), "{formats:?}");
    for format in formats {
        let args = ["top", "-b", "-n", "2", "-d", "0.2", "--format", format];
        let out = inspect_ok(&args);
        assert!(out.contains(&pid), "{args:?} does not list the JVM: {out}");
        if format == "json" {
            let mine = out
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .filter(|r| r["pid"].as_i64() == Some(jvm.pid as i64))
                .count();
            assert_eq!(mine, 2, "one record of the JVM per refresh: {out}");
        }
        assert_no_secret(&format!("{args:?}"), &out);
    }

    // The OTLP push, decoded: the JVM in every request (with --thread-states, its states too).
    let receiver = Receiver::start(&[]);
    let url = format!("http://127.0.0.1:{}", receiver.port);
    for thread_states in [false, true] {
        let mut args = vec![
            "--otlp",
            &url,
            "--otlp-interval",
            "1s",
            "--no-metrics",
            "--pid",
            &pid,
        ];
        if thread_states {
            args.push("--thread-states");
        }
        let before = receiver.records().len();
        let serve = Serve::start(&args);
        receiver.wait_for(before + 2, Duration::from_secs(60));
        serve.stop();
        for record in &receiver.records()[before..] {
            assert_eq!(record["status"], 200, "{record}");
            let res = resources(record);
            let (_, rm) = res
                .get(&(jvm.pid as i64))
                .unwrap_or_else(|| panic!("{args:?}: JVM {pid} not pushed: {record}"));
            let states_pushed = rm["scope_metrics"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|sm| sm["metrics"].as_array().into_iter().flatten())
                .filter(|m| m["name"] == "jvm.thread.count")
                .flat_map(|m| m["sum"]["data_points"].as_array().into_iter().flatten())
                .any(|p| attrs(&p["attributes"]).contains_key("jvm.thread.state"));
            assert_eq!(
                states_pushed, thread_states,
                "{args:?}: jvm.thread.count by state: {rm}"
            );
        }
    }
    let pushed = std::fs::read_to_string(&receiver.out).unwrap();
    assert_no_secret("the OTLP push", &pushed);
}

#[test]
#[ignore = "requires promtool (scripts/test.sh)"]
fn patterns_select_counters_in_every_format() {
    let f = captures()[0].clone();
    let f = f.to_str().unwrap();
    let record = json_record(&[f, "sun.gc.collector"]);
    let names: Vec<&String> = record["counters"].as_object().unwrap().keys().collect();
    assert!(!names.is_empty() && names.iter().all(|n| n.starts_with("sun.gc.collector.")));
    let page = inspect_ok(&["--format", "prometheus", f, "sun.gc.collector"]);
    crate::support::prom::check_metrics(&page, "a selection");
    let (samples, _) = crate::support::prom::parse(&page);
    assert!(
        samples
            .iter()
            .all(|s| s.name.starts_with("hotspot_sun_gc_collector_"))
    );
    assert!(
        samples
            .iter()
            .any(|s| s.name == "hotspot_sun_gc_collector_info")
    );
}

#[test]
#[ignore = "requires promtool (scripts/test.sh)"]
fn sampling_repeats_each_format() {
    let f = captures()[0].clone();
    let f = f.to_str().unwrap();
    let json = inspect_ok(&["--format", "json", "--interval", "50ms", "--count", "3", f]);
    let records: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(records.len(), 3, "{json}");
    let stamps: Vec<u64> = records
        .iter()
        .map(|r| r["timestamp"].as_u64().unwrap())
        .collect();
    // Sample k is due at start + k x 50 ms (src/sampling.rs): a late sample is followed by a
    // shorter gap, so the schedule shows in the span, not in each gap.
    assert!(
        stamps.windows(2).all(|w| w[1] > w[0]) && stamps[2] >= stamps[0] + 80,
        "{stamps:?}"
    );
    assert!(
        records
            .iter()
            .all(|r| r["counters"] == records[0]["counters"])
    );

    let pages = inspect_ok(&[
        "--format",
        "prometheus",
        "--interval",
        "50ms",
        "--count",
        "2",
        f,
    ]);
    let pages: Vec<&str> = pages.split("\n\n").collect();
    assert_eq!(pages.len(), 2);
    for p in pages {
        crate::support::prom::check_metrics(&format!("{}\n", p.trim_end()), "a sampled page");
    }
}

/// Every dialect of every saved region (JDK 8 to 25, every collector), from the file alone: the
/// pools and collectors under their JMX names for that collector, the heap's used size the sum of
/// its pools', and no `instance` or process values (a file has no process).
#[test]
fn dialects_of_every_saved_region_name_pools_and_collectors_as_jmx() {
    let heap_pools = |file: &str| -> &[&str] {
        match file {
            f if f.contains("serial") => &["Eden Space", "Survivor Space", "Tenured Gen"],
            f if f.contains("parallel") => &["PS Eden Space", "PS Survivor Space", "PS Old Gen"],
            f if f.contains("cms") => &["Par Eden Space", "Par Survivor Space", "CMS Old Gen"],
            f if f.contains("g1") => &["G1 Eden Space", "G1 Survivor Space", "G1 Old Gen"],
            // Both were captured with generational ZGC (`-XX:+ZGenerational` on JDK 21).
            f if f.contains("jdk25-zgc") || f.contains("jdk21-zgc") => {
                &["ZGC Young Generation", "ZGC Old Generation"]
            }
            f if f.contains("zgc") => &["ZHeap"],
            f if f.contains("shenandoah") => &["Shenandoah"],
            f => panic!("no collector in the name {f}"),
        }
    };
    let collectors = |file: &str| -> &[&str] {
        match file {
            f if f.contains("serial") => &["Copy", "MarkSweepCompact"],
            f if f.contains("parallel") => &["PS MarkSweep", "PS Scavenge"],
            f if f.contains("cms") => &["ConcurrentMarkSweep", "ParNew"],
            f if f.contains("jdk25-g1") => &[
                "G1 Concurrent GC",
                "G1 Old Generation",
                "G1 Young Generation",
            ],
            f if f.contains("g1") => &["G1 Old Generation", "G1 Young Generation"],
            f if f.contains("jdk25-zgc") || f.contains("jdk21-zgc") => {
                &["ZGC Major Pauses", "ZGC Minor Pauses"]
            }
            f if f.contains("zgc") => &["ZGC Pauses"],
            _ => &[], // Shenandoah's PerfData collectors have no bean twin
        }
    };
    for file in regions("testdata/stat") {
        let name = file.file_name().unwrap().to_str().unwrap().to_string();
        let page = inspect_ok(&[
            "--format",
            "prometheus",
            "--names",
            "client_java",
            file.to_str().unwrap(),
        ]);
        let (samples, _) = crate::support::prom::parse(&page);
        let pools: BTreeSet<String> = samples
            .iter()
            .filter(|s| s.name == "jvm_memory_pool_used_bytes")
            .map(|s| s.labels["pool"].clone())
            .collect();
        let mut want: BTreeSet<String> = heap_pools(&name).iter().map(|s| s.to_string()).collect();
        want.insert("Metaspace".into());
        // JDK 11 to 14's ZGC runs without compressed class pointers: no such pool.
        if !(name.contains("jdk11") && name.contains("zgc")) {
            want.insert("Compressed Class Space".into());
        }
        assert_eq!(pools, want, "{name}");
        let gcs: BTreeSet<String> = samples
            .iter()
            .filter(|s| s.name == "jvm_gc_collection_seconds_count")
            .map(|s| s.labels["gc"].clone())
            .collect();
        let want: BTreeSet<String> = collectors(&name).iter().map(|s| s.to_string()).collect();
        assert_eq!(gcs, want, "{name}");
        let heap_sum: f64 = samples
            .iter()
            .filter(|s| {
                s.name == "jvm_memory_pool_used_bytes"
                    && heap_pools(&name).contains(&s.labels["pool"].as_str())
            })
            .map(|s| s.value)
            .sum();
        let heap = samples
            .iter()
            .find(|s| s.name == "jvm_memory_used_bytes")
            .unwrap();
        assert_eq!(heap.value, heap_sum, "{name}");
        assert!(
            samples.iter().all(|s| !s.labels.contains_key("instance")
                && s.labels.contains_key("application")
                && !s.name.starts_with("process_cpu")),
            "{name}: {page}"
        );
        // The other dialects carry the same pools.
        for names in ["micrometer", "client_java_0", "otel"] {
            let page = inspect_ok(&[
                "--format",
                "prometheus",
                "--names",
                names,
                file.to_str().unwrap(),
            ]);
            let (other, _) = crate::support::prom::parse(&page);
            let label = match names {
                "micrometer" => "id",
                "otel" => "jvm_memory_pool_name",
                _ => "pool",
            };
            let family = if names == "client_java_0" {
                "jvm_memory_pool_bytes_used"
            } else {
                "jvm_memory_used_bytes"
            };
            let theirs: BTreeSet<String> = other
                .iter()
                .filter(|s| s.name == family)
                .map(|s| s.labels[label].clone())
                .collect();
            assert_eq!(theirs, pools, "{name} {names}");
        }
    }
}
