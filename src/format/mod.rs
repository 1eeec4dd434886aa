//! Output formats for a [`crate::perfdata::Snapshot`], and counter selection.
//!
//! The default format is the body of `jcmd <pid> PerfCounter.print` (the same as
//! `jstat -J-Djstat.showUnsupported=true -snap`): every counter, pseudo counters included, sorted by
//! name as Java's `String.compareTo` sorts, one `name=value` a line, longs in decimal and strings
//! in double quotes exactly as stored (jvmstat does not escape them).
//!
//! The machine formats are [`json`] (JSON Lines) and [`prometheus`] (text exposition format
//! 0.0.4); both export only the string counters [`allow`] lists.

pub mod allow;
pub mod json;
pub mod prometheus;

use std::io::{self, Write};

use crate::perfdata::{Counter, Snapshot, Value};

/// Selects counters by name: a pattern with `*`, `?` or `[` is a glob over the whole name, any
/// other pattern is a name prefix. No patterns select every counter.
#[derive(Debug, Default)]
pub struct Filter {
    prefixes: Vec<String>,
    globs: Option<globset::GlobSet>,
}

impl Filter {
    /// Builds a filter from command-line patterns.
    ///
    /// # Errors
    /// A glob that does not compile (e.g. an unclosed `[`), with the pattern named.
    pub fn new(patterns: &[String]) -> Result<Self, globset::Error> {
        let mut prefixes = Vec::new();
        let mut builder = globset::GlobSetBuilder::new();
        let mut any_glob = false;
        for p in patterns {
            if p.contains(['*', '?', '[']) {
                builder.add(
                    globset::GlobBuilder::new(p)
                        .literal_separator(false)
                        .build()?,
                );
                any_glob = true;
            } else {
                prefixes.push(p.clone());
            }
        }
        let globs = if any_glob {
            Some(builder.build()?)
        } else {
            None
        };
        Ok(Filter { prefixes, globs })
    }

    /// True when no pattern was given.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty() && self.globs.is_none()
    }

    /// Whether `name` is selected.
    pub fn matches(&self, name: &str) -> bool {
        self.is_empty()
            || self.prefixes.iter().any(|p| name.starts_with(p.as_str()))
            || self.globs.as_ref().is_some_and(|g| g.is_match(name))
    }
}

/// The selected counters in jvmstat's order: by name, comparing UTF-16 code units as Java does.
pub fn sorted<'a>(snapshot: &'a Snapshot, filter: &Filter) -> Vec<&'a Counter> {
    let mut out: Vec<&Counter> = snapshot
        .counters
        .iter()
        .filter(|c| filter.matches(&c.name))
        .collect();
    out.sort_by(|a, b| a.name.encode_utf16().cmp(b.name.encode_utf16()));
    out
}

/// Writes the counters as jcmd `PerfCounter.print` does. Entries of a type jvmstat cannot show
/// (non-string byte vectors, unsupported types) are left out and returned, so the caller can warn.
///
/// # Errors
/// Any error from `out`.
pub fn write_jcmd<'a, W: Write>(
    out: &mut W,
    counters: &[&'a Counter],
) -> io::Result<Vec<&'a Counter>> {
    let mut skipped = Vec::new();
    for c in counters {
        match &c.value {
            Value::Long(v) => writeln!(out, "{}={v}", c.name)?,
            Value::String(s) => writeln!(out, "{}=\"{s}\"", c.name)?,
            Value::Bytes(_) | Value::Unsupported { .. } => skipped.push(*c),
        }
    }
    Ok(skipped)
}
