//! The PerfData parser and `inspect <file>` against the committed test data (testdata/README.md):
//! real captures from JDK 17 and 21, their big-endian rewrites, and files with one defect each.
//! jstat (jvmstat, the JDK's own reader, via its `file:` protocol) is the reference for the output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use hsinspect::perfdata::{self, ByteOrder, Counter, Snapshot, Value};

fn testdata(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(sub)
}

/// The `*.hsperf` files of a testdata directory, sorted.
fn files(sub: &str) -> Vec<PathBuf> {
    let dir = testdata(sub);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hsperf"))
        .collect();
    out.sort();
    out
}

fn stem(path: &Path) -> String {
    path.file_name()
        .unwrap()
        .to_string_lossy()
        .replace(".hsperf", "")
}

fn parse_file(path: &Path) -> Snapshot {
    let bytes = std::fs::read(path).unwrap();
    perfdata::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The counters that are entries of the region (not jvmstat pseudo counters).
fn entries(s: &Snapshot) -> Vec<&Counter> {
    s.counters.iter().filter(|c| c.offset.is_some()).collect()
}

/// `jstat -snap` of JDK 17 reading the file through jvmstat's `file:` protocol: every counter as
/// jcmd `PerfCounter.print` prints it.
fn jstat_snap(path: &Path) -> String {
    let out = Command::new(crate::support::jdk17().join("bin/jstat"))
        .arg(crate::support::TOOL_NO_PERFDATA)
        .arg("-J-Djstat.showUnsupported=true")
        .arg("-snap")
        .arg(format!("file://{}", path.canonicalize().unwrap().display()))
        .output()
        .expect("running jstat");
    assert!(
        out.status.success(),
        "jstat -snap {} failed: {}{}",
        path.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn inspect_file(path: &Path) -> String {
    crate::support::inspect_ok(&[path.to_str().unwrap()])
}

#[test]
fn every_capture_parses_as_the_jvm_its_name_says() {
    let captures = files("captures");
    let names: Vec<String> = captures.iter().map(|p| stem(p)).collect();
    for needed in ["jdk17-serial", "jdk17-g1", "jdk21-serial", "jdk21-g1"] {
        assert!(
            names.iter().any(|n| n == needed),
            "testdata/captures/{needed}.hsperf missing: run scripts/capture-testdata.sh"
        );
    }
    for path in &captures {
        let s = parse_file(path);
        let name = stem(path);
        assert_eq!(s.prologue.byte_order, ByteOrder::Little, "{name}");
        assert!(!s.tail_in_progress, "{name}");
        assert_eq!(
            entries(&s).len(),
            s.prologue.num_entries as usize,
            "{name}: every entry read"
        );
        // The capture is the JVM its name says: that JDK, that collector.
        let java_version = match &s.get("java.property.java.version").unwrap().value {
            Value::String(v) => v.clone(),
            v => panic!("{name}: java.version is {v:?}"),
        };
        let major = name[3..5].to_string();
        assert!(java_version.starts_with(&major), "{name}: {java_version}");
        let gc = name.split('-').nth(1).unwrap();
        let flag = match gc {
            "serial" => "-XX:+UseSerialGC",
            "g1" => "-XX:+UseG1GC",
            "parallel" => "-XX:+UseParallelGC",
            other => panic!("{name}: unknown collector {other}"),
        };
        let Value::String(args) = &s.get("java.rt.vmArgs").unwrap().value else {
            panic!("{name}: java.rt.vmArgs not a string")
        };
        assert!(args.contains(flag), "{name}: vmArgs {args}");

        let ours = inspect_file(path);
        assert_eq!(
            ours.lines().count(),
            s.counters.len(),
            "{name}: one line per counter"
        );
    }
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn every_capture_prints_as_jstat_reads_it() {
    for path in &files("captures") {
        let name = stem(path);
        assert_eq!(
            inspect_file(path),
            jstat_snap(path),
            "{name}: inspect vs jstat -snap"
        );
    }
}

#[test]
fn big_endian_rewrites_give_exactly_the_source_counters() {
    let captures = files("captures");
    for path in &captures {
        let name = stem(path);
        let be_path = testdata("derived").join(format!("{name}.be.hsperf"));
        assert!(
            be_path.exists(),
            "{} missing: run python3 scripts/make-testdata.py",
            be_path.display()
        );
        let le = parse_file(path);
        let be = parse_file(&be_path);
        assert_eq!(be.prologue.byte_order, ByteOrder::Big, "{name}");
        let mut le_prologue = le.prologue.clone();
        le_prologue.byte_order = ByteOrder::Big;
        assert_eq!(be.prologue, le_prologue, "{name}: prologue");
        assert_eq!(be.counters, le.counters, "{name}: counters");
        assert!(be.counters.len() > 100, "{name}");
        assert_eq!(
            inspect_file(&be_path),
            inspect_file(path),
            "{name}: inspect output"
        );
    }
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn big_endian_rewrites_print_as_jstat_reads_them() {
    for path in &files("captures") {
        let name = stem(path);
        let be_path = testdata("derived").join(format!("{name}.be.hsperf"));
        assert_eq!(
            inspect_file(&be_path),
            jstat_snap(&be_path),
            "{name}: inspect vs jstat -snap"
        );
    }
}

#[test]
fn derived_files_are_reproducible_from_the_captures() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/make-testdata.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("--check")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "running python3 {}: {e} (apt-get install -y python3)",
                script.display()
            )
        });
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tail_in_progress_keeps_every_written_entry() {
    let source = parse_file(&testdata("captures/jdk17-serial.hsperf"));
    let path = testdata("derived/jdk17-serial.tail-in-progress.hsperf");
    let tail = parse_file(&path);
    assert!(tail.tail_in_progress);
    assert_eq!(
        tail.prologue.num_entries,
        source.prologue.num_entries + 1,
        "the file claims one entry more than is written"
    );
    assert_eq!(entries(&tail), entries(&source));
}

#[test]
#[ignore = "requires JDK 17 (scripts/test.sh)"]
fn tail_in_progress_prints_as_jstat_reads_it() {
    // jvmstat also stops at the zero entry_length.
    let path = testdata("derived/jdk17-serial.tail-in-progress.hsperf");
    assert_eq!(inspect_file(&path), jstat_snap(&path));
}

#[test]
fn unknown_type_is_reported_not_decoded() {
    let source = parse_file(&testdata("captures/jdk17-serial.hsperf"));
    let path = testdata("derived/jdk17-serial.unknown-type.hsperf");
    let s = parse_file(&path);
    let odd: Vec<&Counter> = s
        .counters
        .iter()
        .filter(|c| matches!(c.value, Value::Unsupported { .. }))
        .collect();
    assert_eq!(odd.len(), 1, "{odd:?}");
    assert_eq!(odd[0].name, "sun.os.hrt.frequency");
    assert_eq!(
        odd[0].value,
        Value::Unsupported {
            type_code: b'Q',
            vector_length: 0
        }
    );
    let was = source.get("sun.os.hrt.frequency").unwrap();
    assert_eq!(odd[0].offset, was.offset);
    for (a, b) in s.counters.iter().zip(&source.counters) {
        if a.name != "sun.os.hrt.frequency" {
            assert_eq!(a, b);
        }
    }
    // inspect prints every other counter and says which one it left out.
    let out = crate::support::inspect(&[path.to_str().unwrap()]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("counter sun.os.hrt.frequency has a value jcmd cannot show"),
        "{stderr}"
    );
    let expected: String = inspect_file(&testdata("captures/jdk17-serial.hsperf"))
        .lines()
        .filter(|l| !l.starts_with("sun.os.hrt.frequency="))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
}

/// Which entry the error must name, besides the reason.
#[derive(Clone, Copy)]
enum Names {
    /// A prologue defect: no entry.
    Prologue,
    /// The entry named at the start of the manifest's description (`<name>: ...`).
    Entry,
    /// The entry after that one.
    NextEntry,
    /// The first entry (index 0).
    FirstEntry,
}

/// Every malformed file, what the error must say, and which entry it must name. The offset comes
/// from testdata/malformed/MANIFEST.tsv, where the generator records the field it broke.
const MALFORMED: &[(&str, &[&str], Names)] = &[
    (
        "truncated-prologue",
        &["buffer is 20 bytes, shorter than the 32-byte prologue"],
        Names::Prologue,
    ),
    (
        "truncated-below-used",
        &["used = ", "is outside [32, 6064] (the buffer size)"],
        Names::Prologue,
    ),
    (
        "zero-filled",
        &["bad magic [00, 00, 00, 00]", "not a PerfData region"],
        Names::Prologue,
    ),
    (
        "bad-magic",
        &["bad magic [cb, fe, c0, c0]"],
        Names::Prologue,
    ),
    (
        "magic-reversed",
        &["bad magic [c0, c0, fe, ca]"],
        Names::Prologue,
    ),
    ("bad-byte-order", &["unknown byte order 2"], Names::Prologue),
    (
        "wrong-major-version",
        &["PerfData version 1.0 is not supported"],
        Names::Prologue,
    ),
    (
        "wrong-minor-version",
        &["PerfData version 2.1 is not supported"],
        Names::Prologue,
    ),
    (
        "used-negative",
        &["used = -1 is outside [32, 32768]"],
        Names::Prologue,
    ),
    (
        "used-huge",
        &["used = 2147483647 is outside [32, 32768]"],
        Names::Prologue,
    ),
    (
        "used-inside-prologue",
        &["used = 16 is outside [32, 32768]"],
        Names::Prologue,
    ),
    (
        "overflow-negative",
        &["overflow is negative (-1)"],
        Names::Prologue,
    ),
    (
        "entry-offset-negative",
        &["entry_offset = -4 is outside [32, used = "],
        Names::Prologue,
    ),
    (
        "entry-offset-past-used",
        &["entry_offset = ", "is outside [32, used = "],
        Names::Prologue,
    ),
    (
        "entry-offset-misaligned",
        &["entry 0 is misaligned"],
        Names::FirstEntry,
    ),
    (
        "num-entries-negative",
        &["num_entries is negative (-1)"],
        Names::Prologue,
    ),
    (
        "num-entries-huge",
        &["num_entries = 2147483647, but entry ", "before used = "],
        Names::Prologue,
    ),
    (
        "entry-length-negative",
        &["entry_length is negative (-8)"],
        Names::Entry,
    ),
    (
        "entry-length-huge",
        &["entry_length 2147483647 is outside [20, "],
        Names::Entry,
    ),
    (
        "entry-length-short",
        &["entry_length 12 is outside [20, "],
        Names::Entry,
    ),
    (
        "entry-misaligned",
        &["is misaligned (offset not a multiple of 4)"],
        Names::NextEntry,
    ),
    (
        "name-offset-negative",
        &["name_offset is negative (-1)"],
        Names::Entry,
    ),
    (
        "name-offset-huge",
        &["name_offset ", "is outside [20, "],
        Names::Entry,
    ),
    (
        "name-offset-in-header",
        &["name_offset 8 is outside [20, "],
        Names::Entry,
    ),
    (
        "data-offset-negative",
        &["data_offset is negative (-1)"],
        Names::Entry,
    ),
    (
        "data-offset-huge",
        &[
            "data_offset ",
            "is outside [name_offset = 20, entry_length = ",
        ],
        Names::Entry,
    ),
    (
        "data-offset-before-name",
        &["data_offset 16 is outside [name_offset = 20, "],
        Names::Entry,
    ),
    (
        "name-without-nul",
        &["name has no NUL before data_offset"],
        Names::Entry,
    ),
    ("name-empty", &["empty name"], Names::Entry),
    ("name-not-utf8", &["name is not UTF-8"], Names::Entry),
    (
        "vector-length-negative",
        &["vector_length is negative (-1)"],
        Names::Entry,
    ),
    (
        "vector-length-huge",
        &["vector_length ", "runs past entry_length "],
        Names::Entry,
    ),
    (
        "unknown-units",
        &["(sun.os.hrt.frequency): unknown data_units 0"],
        Names::Entry,
    ),
    (
        "unknown-variability",
        &["(sun.os.hrt.frequency): unknown data_variability 4"],
        Names::Entry,
    ),
    (
        "long-data-past-entry",
        &[
            "(sun.os.hrt.frequency): data_offset ",
            "too few for a jlong",
        ],
        Names::Entry,
    ),
    (
        "be-used-huge",
        &["used = 2147483647 is outside [32, 32768]"],
        Names::Prologue,
    ),
    (
        "be-entry-length-negative",
        &["entry_length is negative (-8)"],
        Names::Entry,
    ),
];

/// testdata/malformed/MANIFEST.tsv: file stem -> (offset, description).
fn manifest() -> BTreeMap<String, (usize, String)> {
    let text = std::fs::read_to_string(testdata("malformed/MANIFEST.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 3, "bad manifest line {l:?}");
            (
                f[0].replace(".hsperf", ""),
                (f[1].parse().unwrap(), f[2].to_string()),
            )
        })
        .collect()
}

#[test]
fn every_malformed_file_fails_naming_the_fault_and_its_offset() {
    let manifest = manifest();
    let on_disk: Vec<String> = files("malformed").iter().map(|p| stem(p)).collect();
    let listed: Vec<String> = manifest.keys().cloned().collect();
    let mut tested: Vec<String> = MALFORMED.iter().map(|(n, ..)| n.to_string()).collect();
    tested.sort();
    assert_eq!(on_disk, listed, "files vs MANIFEST.tsv");
    assert_eq!(tested, listed, "this test's table vs MANIFEST.tsv");

    // Entry indices of the source capture, to check the error names the right entry.
    let source = parse_file(&testdata("captures/jdk17-serial.hsperf"));
    let index_of = |name: &str| {
        entries(&source)
            .iter()
            .position(|c| c.name == name)
            .unwrap_or_else(|| panic!("no entry {name} in the source capture"))
    };

    for &(name, reasons, names) in MALFORMED {
        let (offset, what) = &manifest[name];
        let path = testdata("malformed").join(format!("{name}.hsperf"));
        let bytes = std::fs::read(&path).unwrap();
        let e = perfdata::parse(&bytes).expect_err(name);
        assert_eq!(e.offset, *offset, "{name} ({what}): {e}");
        assert!(e.offset < bytes.len(), "{name}: offset outside the buffer");
        for r in reasons {
            assert!(e.reason.contains(r), "{name} ({what}): {e:?} lacks {r:?}");
        }
        let entry = what.split(':').next().unwrap();
        match names {
            Names::Prologue => assert!(!e.reason.starts_with("entry "), "{name}: {e}"),
            Names::Entry => {
                let expected = format!("entry {} ", index_of(entry));
                let expected_colon = format!("entry {}:", index_of(entry));
                assert!(
                    e.reason.starts_with(&expected) || e.reason.starts_with(&expected_colon),
                    "{name}: {e} does not name entry {} ({entry})",
                    index_of(entry)
                );
            }
            Names::FirstEntry => assert!(e.reason.starts_with("entry 0 "), "{name}: {e}"),
            Names::NextEntry => {
                let expected = format!("entry {} is misaligned", index_of(entry) + 1);
                assert!(e.reason.starts_with(&expected), "{name}: {e}");
            }
        }
        let message = e.to_string();
        assert!(
            message.contains(&format!("at offset {offset:#x}")),
            "{name}: {message}"
        );

        // The CLI: non-zero exit, the same message, nothing on stdout, no panic.
        let out = crate::support::inspect(&[path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: inspect succeeded");
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(out.stdout.is_empty(), "{name}: printed counters");
        assert!(stderr.contains(&message), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

/// A region whose `used` is its whole length, as a reader that copies only `used` bytes gets it.
fn capture_cut_at_used() -> Vec<u8> {
    let bytes = std::fs::read(testdata("captures/jdk17-serial.hsperf")).unwrap();
    let used = parse_file(&testdata("captures/jdk17-serial.hsperf"))
        .prologue
        .used as usize;
    let cut = bytes[..used].to_vec();
    assert!(perfdata::parse(&cut).is_ok());
    cut
}

#[test]
fn too_many_entries_at_the_buffer_end_is_reported_at_num_entries() {
    // Before the fix the error lay at offset `used`, one past the last byte of this buffer.
    let mut buf = capture_cut_at_used();
    let n = i32::from_le_bytes(buf[28..32].try_into().unwrap());
    buf[28..32].copy_from_slice(&(n + 1).to_le_bytes());
    let e = perfdata::parse(&buf).unwrap_err();
    assert_eq!(e.offset, 28, "{e}");
    assert!(e.offset < buf.len());
    assert!(
        e.reason.starts_with(&format!(
            "num_entries = {}, but entry {n} would start at offset {:#x}",
            n + 1,
            buf.len()
        )),
        "{e}"
    );
}

#[test]
fn jlong_past_the_last_entry_is_reported_at_its_data_offset_field() {
    // The last entry's data_offset moved to its end: before the fix the error lay at
    // `entry + data_offset`, the buffer's length.
    let mut buf = capture_cut_at_used();
    let s = perfdata::parse(&buf).unwrap();
    let last = entries(&s).into_iter().last().unwrap().clone();
    let Value::Long(_) = last.value else {
        panic!(
            "the last entry of the capture is {:?}, expected a jlong",
            last.value
        )
    };
    let at = last.offset.unwrap();
    let length = i32::from_le_bytes(buf[at..at + 4].try_into().unwrap());
    assert_eq!(
        at + length as usize,
        buf.len(),
        "the last entry ends the buffer"
    );
    buf[at + 16..at + 20].copy_from_slice(&length.to_le_bytes());
    let e = perfdata::parse(&buf).unwrap_err();
    assert_eq!(e.offset, at + 16, "{e}");
    assert!(
        e.reason.contains(&format!(
            "({}): data_offset {length} leaves 0 bytes before entry_length {length}, too few for a jlong",
            last.name
        )),
        "{e}"
    );
}
