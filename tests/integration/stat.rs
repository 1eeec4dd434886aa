//! `inspect stat` against jstat: every option on every captured region byte for byte (in JDK
//! 17's layout against JDK 17's jstat; in the region's own JDK's layout against JDK 11's jstat
//! and JDK 8's jstat outputs saved in testdata/stat/jdk8-golden/), sampling (count, interval,
//! header repeat) on files, and the JSON output against the text. Live targets are in
//! tests/integration/stat_live.rs and tests/integration/jdk8.rs. The comparisons with jstat need JDKs and run in
//! scripts/test.sh; the JSON and argument checks run in plain `cargo test`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::*;

/// Every region the golden tests cover: the idle captures (testdata/captures/) and the ones from
/// JVMs that collected, loaded classes and compiled (testdata/stat/).
fn regions() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files = Vec::new();
    for dir in ["captures", "stat"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "hsperf") {
                files.push(p);
            }
        }
    }
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for needed in [
        "jdk11-parallel",
        "jdk11-shenandoah",
        "jdk17-zgc",
        "jdk17-shenandoah",
        "jdk21-zgc",
        "jdk25-g1",
        "jdk25-zgc",
        "jdk25-serial",
        "jdk21-serial",
        "jdk17-parallel",
        "jdk8-parallel",
        "jdk8-g1",
        "jdk8-cms",
    ] {
        assert!(
            names.iter().any(|n| n == needed),
            "testdata/*/{needed}.hsperf missing: run scripts/capture-stat-testdata.sh"
        );
    }
    files
}

/// `jstat -options` of JDK 17, without the dashes.
fn jstat_options() -> Vec<String> {
    let out = run_ok(
        Command::new(jdk17().join("bin/jstat"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .arg("-options"),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|l| l.trim_start_matches('-').to_owned())
        .collect()
}

/// `inspect stat -options`, without the dashes: the same list as [`jstat_options`]
/// (`options_listing_is_jstats` checks it byte for byte), for the tests that need no JDK.
fn options() -> Vec<String> {
    inspect_ok(&["stat", "-options"])
        .lines()
        .map(|l| l.trim_start_matches('-').to_owned())
        .collect()
}

/// JDK 17's `jstat <args> file:///<path>`, stdout as text.
fn jstat_file(args: &[&str], path: &Path, after: &[&str]) -> String {
    let out = run_ok(
        Command::new(jdk17().join("bin/jstat"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .args(args)
            .arg(format!("file://{}", path.canonicalize().unwrap().display()))
            .args(after),
    );
    String::from_utf8(out.stdout).unwrap()
}

fn inspect_stat(args: &[&str], path: &Path, after: &[&str]) -> String {
    let mut all = vec!["stat"];
    all.extend_from_slice(args);
    all.push(path.to_str().unwrap());
    all.extend_from_slice(after);
    inspect_ok(&all)
}

/// Runs `f` over `items` on two threads (the jstat runs dominate the test's time).
fn on_two_threads<T: Sync>(items: &[T], f: impl Fn(&T) + Sync) {
    let (a, b) = items.split_at(items.len() / 2);
    std::thread::scope(|s| {
        s.spawn(|| a.iter().for_each(&f));
        b.iter().for_each(&f);
    });
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn options_listing_is_jstats() {
    let out = run_ok(
        Command::new(jdk17().join("bin/jstat"))
            .arg(crate::support::TOOL_NO_PERFDATA)
            .arg("-options"),
    );
    assert_eq!(inspect_ok(&["stat", "-options"]).as_bytes(), out.stdout);
    assert_eq!(jstat_options().len(), 12);
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn every_option_on_every_region_is_byte_identical_to_jstat() {
    let options = jstat_options();
    let mut cases = Vec::new();
    for region in regions() {
        let name = region.file_stem().unwrap().to_string_lossy().into_owned();
        for o in &options {
            // Every option on every region; with -t (the Timestamp column first) for two
            // options on every region, and for every option on a JDK 17 and a JDK 25 region.
            cases.push((region.clone(), o.clone(), false));
            if o == "gcutil" || o == "class" || name == "jdk17-g1" || name == "jdk25-zgc" {
                cases.push((region.clone(), o.clone(), true));
            }
        }
    }
    assert!(cases.len() > 250, "{} cases", cases.len());
    on_two_threads(&cases, |(region, option, t)| {
        let flag = format!("-{option}");
        let args: Vec<&str> = if *t { vec![&flag, "-t"] } else { vec![&flag] };
        // JDK 8 and 11 regions get their own JDK's layout by default (the tests below): here
        // JDK 17's is asked for, as JDK 17's jstat prints it for every region.
        let mut ours_args = args.clone();
        ours_args.extend(["--jstat", "17"]);
        let ours = inspect_stat(&ours_args, region, &[]);
        let theirs = jstat_file(&args, region, &[]);
        assert_eq!(
            ours,
            theirs,
            "inspect stat {args:?} {} differs from jstat",
            region.display()
        );
        assert_eq!(ours.lines().count(), 2);
    });
}

/// JDK 8's layout by default on JDK 8 regions: every option on every JDK 8 region (Parallel,
/// Serial, G1, CMS) equals what JDK 8's jstat printed for it (testdata/stat/jdk8-golden/, written
/// by scripts/capture-stat-testdata.sh; tests/integration/jdk8.rs checks them against JDK 8's jstat again).
/// Needs no JDK.
#[test]
fn jdk8_regions_print_jdk8_jstats_layout() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/stat/jdk8-golden");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let golden = e.unwrap().path();
        let name = golden.file_name().unwrap().to_string_lossy().into_owned();
        let (region, option) = name.rsplit_once('.').unwrap();
        let region = dir.parent().unwrap().join(format!("{region}.hsperf"));
        let want = std::fs::read_to_string(&golden).unwrap();
        // `<region>.t-<option>`: with -t.
        let mut args = match option.strip_prefix("t-") {
            Some(o) => vec![format!("-{o}"), "-t".to_owned()],
            None => vec![format!("-{option}")],
        };
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let ours = inspect_stat(&argv, &region, &[]);
        assert_eq!(ours, want, "inspect stat {argv:?} {}", region.display());
        // --jstat 8 asks for the same layout explicitly.
        args.extend(["--jstat".to_owned(), "8".to_owned()]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let explicit = inspect_stat(&argv, &region, &[]);
        assert_eq!(explicit, want, "{argv:?} {}", region.display());
        checked += 1;
    }
    assert_eq!(
        checked, 56,
        "twelve options, and two with -t, on four JDK 8 regions"
    );
    // And a JDK 17 region in JDK 8's layout: no CGC/CGCT, GCT without collector 2.
    let r17 = dir.parent().unwrap().join("jdk17-g1.hsperf");
    let gcutil = inspect_stat(&["-gcutil", "--jstat", "8"], &r17, &[]);
    assert!(!gcutil.contains("CGC"), "{gcutil}");
}

/// JDK 11's layout by default on JDK 11 regions, against JDK 11's own jstat, every option.
#[test]
#[ignore = "requires JDK 11 runtime (scripts/test.sh)"]
fn jdk11_regions_print_jdk11_jstats_layout() {
    let jstat11 = jdk(11).join("bin/jstat");
    let mut cases = Vec::new();
    for region in regions() {
        let name = region.file_stem().unwrap().to_string_lossy().into_owned();
        if name.starts_with("jdk11-") {
            for o in jstat_options() {
                cases.push((region.clone(), o));
            }
        }
    }
    assert_eq!(cases.len(), 24, "twelve options on two JDK 11 regions");
    on_two_threads(&cases, |(region, option)| {
        let flag = format!("-{option}");
        let ours = inspect_stat(&[&flag], region, &[]);
        let theirs = String::from_utf8(
            run_ok(Command::new(&jstat11).arg(&flag).arg(format!(
                "file://{}",
                region.canonicalize().unwrap().display()
            )))
            .stdout,
        )
        .unwrap();
        assert_eq!(ours, theirs, "inspect stat {flag} {}", region.display());
        let explicit = inspect_stat(&[&flag, "--jstat", "11"], region, &[]);
        assert_eq!(explicit, theirs, "--jstat 11 {flag} {}", region.display());
    });
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn sampling_a_file_with_header_repeat_matches_jstat() {
    let region = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/stat/jdk17-g1.hsperf");
    let began = Instant::now();
    let ours = inspect_stat(&["-gcutil", "-h2"], &region, &["100ms", "5"]);
    let took = began.elapsed();
    let theirs = jstat_file(&["-gcutil", "-h2"], &region, &["100ms", "5"]);
    assert_eq!(ours, theirs);
    // 5 samples, header before the 1st, 3rd and 5th.
    assert_eq!(ours.lines().count(), 8);
    assert_eq!(ours.lines().filter(|l| l.contains("YGCT")).count(), 3);
    // Four intervals between five samples, on a monotonic schedule.
    assert!(took >= Duration::from_millis(400), "took {took:?}");
    assert!(took < Duration::from_millis(2000), "took {took:?}");
    // -h0 and no -h: the header once.
    let once = inspect_stat(&["-class", "-h0"], &region, &["10", "3"]);
    assert_eq!(once, jstat_file(&["-class", "-h0"], &region, &["10", "3"]));
    assert_eq!(once.lines().count(), 4);
}

/// The cells of a jstat row: numbers first (whitespace-separated), string columns last.
fn check_json_against_text(json: &serde_json::Value, header: &str, row: &str, what: &str) {
    let columns = json["columns"].as_object().expect("columns object");
    let titles: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        columns.keys().count(),
        titles.len(),
        "{what}: one key per column"
    );
    let tokens: Vec<&str> = row.split_whitespace().collect();
    for (i, (key, value)) in columns.iter().enumerate() {
        match value {
            serde_json::Value::String(s) => {
                assert!(
                    row.contains(s.as_str()),
                    "{what}: {key} {s:?} not in {row:?}"
                )
            }
            serde_json::Value::Null => assert_eq!(tokens[i], "-", "{what}: {key}"),
            serde_json::Value::Number(n) => {
                let shown: f64 = tokens[i].parse().unwrap_or_else(|_| {
                    panic!("{what}: {key}: text {:?} is not a number", tokens[i])
                });
                assert_eq!(n.as_f64().unwrap(), shown, "{what}: {key}");
                // Integers print as JSON integers.
                assert_eq!(
                    n.is_i64() || n.is_u64(),
                    !tokens[i].contains('.'),
                    "{what}: {key}"
                );
            }
            other => panic!("{what}: {key} is {other}"),
        }
        if i < titles.len() && !matches!(value, serde_json::Value::String(_)) {
            let title = titles[i];
            assert!(
                key == title || (title == "Bytes" && key == "UnloadedBytes"),
                "{what}: key {key} for column {title}"
            );
        }
    }
}

#[test]
fn json_lines_parse_and_equal_the_text_values() {
    for region in regions() {
        for option in options() {
            let flag = format!("-{option}");
            let what = format!("{option} {}", region.display());
            let text = inspect_stat(&[&flag, "-t"], &region, &[]);
            let mut lines = text.lines();
            let (header, row) = (lines.next().unwrap(), lines.next().unwrap());
            let json = inspect_stat(&[&flag, "-t", "--format", "json"], &region, &["1", "2"]);
            let objects: Vec<serde_json::Value> = json
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: {e}: {l}")))
                .collect();
            assert_eq!(objects.len(), 2, "{what}: one object a sample");
            for o in &objects {
                assert_eq!(o["option"], option.as_str());
                assert!(o["pid"].is_null(), "{what}: a file has no pid");
                assert!(o["timestamp"].as_u64().unwrap() > 1_600_000_000_000);
                check_json_against_text(o, header, row, &what);
            }
        }
    }
}

#[test]
fn bad_arguments_fail_cleanly() {
    let region = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/stat/jdk17-g1.hsperf");
    let r = region.to_str().unwrap();
    for (args, says) in [
        (vec!["stat", "-gcutilx", r], "unknown option -gcutilx"),
        (vec!["stat", r], "-<option> required"),
        (vec!["stat", "-gcutil", r, "1x"], "bad interval"),
        (vec!["stat", "-gcutil", r, "1", "0"], "bad count"),
        (vec!["stat", "-gcutil", "-F", r], "-F reads a live process"),
        (vec!["stat", "-gcutil", "/nonexistent/x"], "No such file"),
        (
            vec!["stat", "-gcutil", "--format", "xml", r],
            "give text, json or prometheus",
        ),
        (
            vec!["stat", "-gcutil", "--jstat", "eight", r],
            "give a JDK's major version",
        ),
        (vec!["stat", "-gcutil", "--jstat"], "--jstat needs a value"),
    ] {
        let out = inspect(&args);
        let err = inspect_err(&out);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: partial output");
    }
}

#[test]
#[ignore = "requires promtool (scripts/test.sh)"]
fn prometheus_output_is_the_views_counters_as_the_listing_names_them() {
    let options = options();
    let regions = regions();
    on_two_threads(&regions, |region| {
        // The plain listing's page: the reference for names, labels and values.
        let all = inspect_ok(&["--format", "prometheus", region.to_str().unwrap()]);
        let (all_samples, all_types) = crate::support::prom::parse(&all);
        let snapshot = hsinspect::perfdata::parse(&std::fs::read(region).unwrap()).unwrap();
        for option in &options {
            let what = format!("stat -{option} on {}", region.display());
            let page = inspect_stat(
                &[&format!("-{option}"), "--format", "prometheus"],
                region,
                &[],
            );
            crate::support::prom::check_metrics(&page, &what);
            let (samples, types) = crate::support::prom::parse(&page);
            for s in &samples {
                assert!(
                    all_samples.contains(s),
                    "{what}: {s:?} is not in the listing's page"
                );
            }
            for (family, t) in &types {
                assert_eq!(all_types.get(family), Some(t), "{what}: TYPE of {family}");
            }
            // Exactly the counters the view reads: one sample for each of its numeric counters
            // the region has (strings such as GC causes and method names are not exported), in
            // the layout of the region's JDK.
            let view = hsinspect::stat::View::with_layout(
                option,
                false,
                hsinspect::stat::Layout::of_snapshot(&snapshot),
            )
            .unwrap();
            let numeric = view
                .counter_names()
                .iter()
                .filter(|n| {
                    matches!(
                        snapshot.get(n).map(|c| &c.value),
                        Some(hsinspect::perfdata::Value::Long(_))
                    )
                })
                .count();
            assert!(
                numeric > 0,
                "{what}: the view reads no numeric counter here"
            );
            assert_eq!(
                samples.len(),
                numeric,
                "{what}: samples vs the view's counters"
            );
        }
    });
}
