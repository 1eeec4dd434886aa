//! `inspect record`'s files, from a [`Profile`]: collapsed stacks (`frame;frame;frame count`,
//! root first: what `flamegraph.pl` and inferno read), a speedscope file (its JSON file format,
//! `https://www.speedscope.app/file-format-schema.json`: one sampled profile per thread, as
//! py-spy writes them) and an SVG flame graph drawn by the `inferno` crate.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use crate::cpu::Profile;

/// Writes the collapsed stacks, one line per distinct stack: frames root first, `;` between
/// them, a space and the count.
///
/// # Errors
/// Those of `out`.
pub fn write_collapsed(out: &mut dyn Write, profile: &Profile) -> io::Result<()> {
    for (stack, count) in profile.sorted() {
        writeln!(out, "{} {count}", collapsed_line(stack))?;
    }
    Ok(())
}

/// A stack's frames joined by `;` (a `;` inside a name becomes `:`, which the format cannot
/// hold).
fn collapsed_line(stack: &[String]) -> String {
    stack
        .iter()
        .map(|f| f.replace(';', ":"))
        .collect::<Vec<_>>()
        .join(";")
}

/// Writes a speedscope file: the frames shared, one `sampled` profile per root (the thread's
/// name when the profile is by thread, else one profile), weights in samples. `name` names the
/// file (the JVM).
///
/// # Errors
/// Those of `out`.
pub fn write_speedscope(out: &mut dyn Write, profile: &Profile, name: &str) -> io::Result<()> {
    use serde_json::{Value, json};
    let mut frames: Vec<Value> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut per_profile: BTreeMap<String, (Vec<Vec<usize>>, Vec<u64>)> = BTreeMap::new();
    for (stack, count) in profile.sorted() {
        let (root, body) = if profile.by_thread {
            (stack[0].clone(), &stack[1..])
        } else {
            ("all threads".to_string(), &stack[..])
        };
        let ids: Vec<usize> = body
            .iter()
            .map(|f| {
                *index.entry(f.as_str()).or_insert_with(|| {
                    frames.push(json!({ "name": f }));
                    frames.len() - 1
                })
            })
            .collect();
        let entry = per_profile.entry(root).or_default();
        entry.0.push(ids);
        entry.1.push(count);
    }
    let profiles: Vec<Value> = per_profile
        .into_iter()
        .map(|(root, (samples, weights))| {
            let total: u64 = weights.iter().sum();
            json!({
                "type": "sampled",
                "name": root,
                "unit": "none",
                "startValue": 0,
                "endValue": total,
                "samples": samples,
                "weights": weights,
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": { "frames": frames },
        "profiles": profiles,
        "name": name,
        "activeProfileIndex": 0,
        "exporter": concat!("hsinspect ", env!("CARGO_PKG_VERSION")),
    });
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)
}

/// Writes an SVG flame graph of the profile (inferno's `flamegraph`), titled `title`.
///
/// # Errors
/// Those of `out`; [`io::ErrorKind::InvalidData`] when the profile has no sample (inferno draws
/// nothing from nothing).
pub fn write_svg(out: &mut dyn Write, profile: &Profile, title: &str) -> io::Result<()> {
    let lines: Vec<String> = profile
        .sorted()
        .into_iter()
        .map(|(stack, count)| format!("{} {count}", collapsed_line(stack)))
        .collect();
    if lines.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "no stack was sampled: no Java thread ran while recording",
        ));
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = "samples".to_string();
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), out)
        .map_err(io::Error::other)
}
