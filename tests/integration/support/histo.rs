//! Class histograms compared with jcmd's (`heap::`, `jdk8::`): HeapTarget's rows, parsed
//! `GC.class_histogram` / `jmap -histo` text, and the before/ours/after comparison.

use std::collections::BTreeMap;

/// How many of each known kind HeapTarget makes.
pub const COUNT: u64 = 20_000;

/// Rows of a histogram by `class name (module)` (the text after the bytes column): instances
/// and bytes, summed over classes of one name in several loaders; and the header lines.
pub fn parse(text: &str) -> (Vec<String>, BTreeMap<String, (u64, u64)>) {
    let mut rows = BTreeMap::new();
    let mut header = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        let Some((rank, rest)) = t.split_once(": ") else {
            if t.starts_with("num") || t.starts_with("---") {
                header.push(line.to_string());
            }
            continue;
        };
        if rank.parse::<u64>().is_err() {
            continue;
        }
        let mut parts = rest.trim_start().splitn(2, ' ');
        let instances: u64 = parts.next().unwrap().parse().unwrap();
        let rest = parts.next().unwrap().trim_start();
        let (bytes, name) = rest.split_once("  ").unwrap();
        let e = rows.entry(name.to_string()).or_insert((0, 0));
        e.0 += instances;
        e.1 += bytes.parse::<u64>().unwrap();
    }
    (header, rows)
}

/// Compares ours with jcmd's `before` and `after`.
pub fn compare(before: &str, ours: &str, after: &str) {
    compare_as(before, ours, after, false);
}

/// As [`compare`]; with `reachable_only` (Shenandoah and ZGC, whose `object_iterate` visits only
/// the objects reachable from the roots, while a walk from outside also meets the unreachable ones
/// not collected yet) a stable class may have more instances and bytes in ours, never fewer;
/// HeapTarget's own classes must still be exact.
pub fn compare_as(before: &str, ours: &str, after: &str, reachable_only: bool) {
    let ours = agree_rows(before, ours, after, reachable_only);
    // A class's row: `name (java.base@...)`, or `name` alone from a JDK 8 target.
    let row = |class: &str| {
        ours.iter()
            .find(|(n, _)| *n == class || n.starts_with(&format!("{class} (java.base@")))
            .map(|(_, r)| *r)
            .unwrap_or_else(|| panic!("no row {class} in ours"))
    };
    assert_eq!(row("HeapTarget$Node").0, COUNT);
    assert!(row("[B").0 >= COUNT / 10);
    assert!(row("java.lang.String").0 >= COUNT);
    assert!(row("[J").0 >= COUNT / 100);
    assert!(row("[Ljava.lang.Object;").0 >= COUNT / 100);
    // A hidden class (the capturing lambda), named as jcmd names it (`/0x<address>`; JDK 8
    // `/<identity hash>`).
    let lambda = ours
        .iter()
        .find(|(n, _)| n.starts_with("HeapTarget$$Lambda") && n.contains('/'))
        .unwrap_or_else(|| panic!("no lambda row in ours"));
    assert_eq!(lambda.1.0, COUNT / 100, "{}", lambda.0);
}

/// The rows of any target's histograms: the header lines are jcmd's, and every class whose row
/// is the same in jcmd's `before` and `after` is the same in ours (a filler class's row may only
/// be smaller in ours; `reachable_only` as in [`compare_as`]), those classes holding at least
/// 90 % of the bytes. Returns our rows.
pub fn agree_rows(
    before: &str,
    ours: &str,
    after: &str,
    reachable_only: bool,
) -> BTreeMap<String, (u64, u64)> {
    let (jcmd_header, before) = parse(before);
    let (_, after) = parse(after);
    let (header, ours) = parse(ours);
    assert_eq!(header, jcmd_header, "header lines");
    let fillers = [
        "[I",
        "[Ljdk.internal.vm.FillerElement;",
        "jdk.internal.vm.FillerArray",
    ];
    let is_filler = |name: &str| {
        let class = name.split(" (").next().unwrap_or(name);
        fillers.contains(&class)
    };
    let total: u64 = after
        .iter()
        .filter(|(n, _)| !is_filler(n))
        .map(|(_, r)| r.1)
        .sum();
    let mut stable_bytes = 0;
    let mut wrong = Vec::new();
    let names: std::collections::BTreeSet<&String> = before
        .keys()
        .chain(after.keys())
        .chain(ours.keys())
        .collect();
    for name in names {
        let b = before.get(name).copied().unwrap_or_default();
        let a = after.get(name).copied().unwrap_or_default();
        let o = ours.get(name).copied().unwrap_or_default();
        if b != a {
            continue;
        }
        if is_filler(name) {
            // Unreachable fillers (retired TLABs' tails) are met by a walk of a heap whose
            // jcmd counts only reachable objects.
            if !reachable_only && (o.0 > a.0 || o.1 > a.1) {
                wrong.push(format!(
                    "{name}: jcmd {a:?}, ours {o:?} (a filler class: ours may only be smaller)"
                ));
            }
            continue;
        }
        stable_bytes += a.1;
        let superset =
            reachable_only && !name.starts_with("HeapTarget") && o.0 >= a.0 && o.1 >= a.1;
        if o != a && !superset {
            wrong.push(format!("{name}: jcmd {a:?}, ours {o:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "rows differ from jcmd's:\n{}",
        wrong.join("\n")
    );
    assert!(
        stable_bytes * 10 >= total * 9,
        "the stable classes hold {stable_bytes} of {total} bytes: too few to judge"
    );
    ours
}
