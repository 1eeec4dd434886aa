//! `cargo bench -p hsinspect-core`: the parse of one sample, the hot path of `inspect
//! --interval`, `inspect stat` and every `inspect serve` scrape, on real regions from
//! testdata/ (JDK 11 to 25, several collectors; 32 KiB each).
//!
//! `parse_reusing` is what the sampler runs: the region parsed again with the counters of the
//! previous snapshot of the same region handed back (names and string buffers reused). `parse`
//! is the first sample of a region (everything allocated). The counters to reuse are made
//! outside the timed part, and each result is dropped outside it, as divan does for values.

use std::path::Path;

use divan::{Bencher, black_box};
use hsinspect_core::perfdata::{parse, parse_reusing};

fn main() {
    divan::main();
}

/// Regions under testdata/: idle JVMs (captures/) and JVMs that collected, loaded classes and
/// compiled (stat/), little- and big-endian.
const REGIONS: &[&str] = &[
    "captures/jdk17-serial",
    "captures/jdk21-g1",
    "derived/jdk17-serial.be",
    "stat/jdk11-parallel",
    "stat/jdk17-g1",
    "stat/jdk25-zgc",
];

fn region(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(format!("{name}.hsperf"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[divan::bench(args = REGIONS)]
fn parse_reusing_the_previous_sample(bencher: Bencher, name: &str) {
    let buf = region(name);
    let previous = parse(&buf).expect("a valid region").counters;
    bencher
        .counter(divan::counter::BytesCount::new(buf.len()))
        .with_inputs(|| previous.clone())
        .bench_local_values(|spare| parse_reusing(black_box(&buf), spare));
}

#[divan::bench(args = REGIONS)]
fn parse_first_sample(bencher: Bencher, name: &str) {
    let buf = region(name);
    bencher
        .counter(divan::counter::BytesCount::new(buf.len()))
        .bench_local(|| parse(black_box(&buf)));
}
