//! `perfdata::parse_reusing` (the sampler's parse that reuses an earlier snapshot's allocations)
//! gives exactly what `perfdata::parse` gives, counters or error, whatever the earlier snapshot:
//! every pair of files under testdata/ (real captures of JDK 11 to 25, their big-endian
//! rewrites, and the malformed files), plus snapshots whose names were altered.

use std::path::{Path, PathBuf};

use hsinspect_core::perfdata::{Counter, Value, parse, parse_reusing};

fn testdata_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut files = Vec::new();
    for dir in ["captures", "stat", "derived", "malformed"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "hsperf") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(
        files.len() > 40,
        "testdata is missing files: {}",
        files.len()
    );
    files
}

#[test]
fn reusing_any_earlier_snapshot_gives_exactly_the_fresh_parse() {
    let files = testdata_files();
    let buffers: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let spares: Vec<Vec<Counter>> = buffers
        .iter()
        .filter_map(|b| parse(b).ok())
        .map(|s| s.counters)
        .collect();
    assert!(spares.len() > 15);
    for (path, buf) in files.iter().zip(&buffers) {
        let fresh = parse(buf);
        for spare in spares.iter().chain(std::iter::once(&Vec::new())) {
            assert_eq!(
                parse_reusing(buf, spare.clone()),
                fresh,
                "{} parsed reusing a snapshot of {} counters",
                path.display(),
                spare.len()
            );
        }
    }
}

#[test]
fn altered_names_and_values_in_the_spare_are_not_kept() {
    let buf = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/stat/jdk17-g1.hsperf"),
    )
    .unwrap();
    let mut spare = parse(&buf).unwrap().counters;
    for (i, c) in spare.iter_mut().enumerate() {
        match i % 4 {
            // A prefix of the real name, the name plus a byte, another name, an empty string.
            0 => c.name.truncate(c.name.len() - 1),
            1 => c.name.push('x'),
            2 => c.name = "sun.gc.other".into(),
            _ => c.name.clear(),
        }
        c.value = match &c.value {
            Value::String(s) => Value::String(format!("{s} and more")),
            _ => Value::String("was a string".into()),
        };
    }
    for path in testdata_files() {
        let buf = std::fs::read(&path).unwrap();
        assert_eq!(
            parse_reusing(&buf, spare.clone()),
            parse(&buf),
            "{}",
            path.display()
        );
    }
}
