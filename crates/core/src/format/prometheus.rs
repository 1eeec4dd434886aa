//! The Prometheus text exposition format 0.0.4 of PerfData counters (`--format prometheus`, and
//! `inspect serve`'s `/metrics`).
//!
//! # Naming rule
//!
//! A PerfData counter `a.b.N.cD` (HotSpot's dotted names, `perfData.hpp`) becomes one series:
//!
//! 1. Every segment made only of digits is taken out of the name and becomes a label named after
//!    the segment before it, its value the number in decimal: `sun.gc.collector.0.time` →
//!    `collector="0"`; `sun.gc.generation.1.space.0.used` → `generation="1",space="0"`. The age
//!    table's `sun.gc.generation.0.agetable.bytes.03` gets `age="3"`.
//! 2. The other segments are turned to snake_case (`loadedClasses` → `loaded_classes`,
//!    `_sync_ContendedLockAttempts` → `sync_contended_lock_attempts`; any character outside
//!    `[a-z0-9]` becomes `_`, runs of `_` are folded), joined with `_`, and prefixed with
//!    `hotspot_`: `sun.gc.collector.0.time` → `hotspot_sun_gc_collector_time`. A word promtool's
//!    lint reads as an abbreviated unit or a metric type ([`LINT_WORDS`]: `b`, `ms`, `s`,
//!    `counter`, ...) is joined to the word before it: JDK 8's `sun.rt._sync_PrivateB` →
//!    `hotspot_sun_rt_sync_privateb_total`.
//! 3. Units become base units with the unit as a suffix (Prometheus's naming rules): Ticks are
//!    divided by the JVM's `sun.os.hrt.frequency` and get `_seconds` (raw ticks and `_ticks`
//!    when the region has no usable frequency); Bytes get `_bytes`; Hertz `_hertz`; a suffix
//!    already at the end of the name is not repeated (`sun.cls.loadedBytes` →
//!    `hotspot_sun_cls_loaded_bytes`). HotSpot's three wall-clock times `sun.rt.createVmBeginTime`,
//!    `sun.rt.createVmEndTime` and `sun.rt.vmInitDoneTime` (units None, but milliseconds since the
//!    epoch: `os::javaTimeMillis()` in `management.cpp`) become seconds since the epoch with
//!    `_seconds`, like `process_start_time_seconds`.
//! 4. Monotonic counters are typed `counter` and end in `_total`; Constant and Variable ones are
//!    `gauge`s.
//! 5. String counters are never values. Only the allow-list of [`super::allow`] is exported, as
//!    labels of info metrics (value 1): the JVM's identity (`java.vm.name`, `java.vm.vendor`,
//!    `java.vm.version`, `java.vm.info`, `java.version`, `java.vm.specification.version`) on
//!    `hotspot_jvm_info`, and each GC object's name (`sun.gc.<...>.name`) as `name` on the
//!    info metric of that object, e.g. `hotspot_sun_gc_collector_info{collector="0",name="G1
//!    young collection pauses"}`. Arguments, flags, the command line and system properties are
//!    never exported.
//!
//! So `sun.gc.collector.0.time` (Ticks, Monotonic) is
//! `hotspot_sun_gc_collector_time_seconds_total{collector="0"}` and
//! `sun.gc.generation.0.space.0.used` (Bytes, Variable) is
//! `hotspot_sun_gc_generation_space_used_bytes{generation="0",space="0"}`. Every family has
//! `# HELP` (naming the PerfData counter) and `# TYPE` lines, and its samples are consecutive,
//! whatever order the JVMs' counters were added in. A series whose name another counter already
//! took with another type, or with the same labels (possible only in a damaged region), is
//! left out and counted in [`Exposition::skipped`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{self, Write};

use super::allow;
use crate::perfdata::{Counter, Snapshot, Units, Value, Variability};

/// Prefix of every family derived from a PerfData counter.
pub const PREFIX: &str = "hotspot_";
/// The info metric holding the JVM's identity strings as labels.
pub const JVM_INFO: &str = "hotspot_jvm_info";
/// The `Content-Type` of the text exposition format 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A Prometheus metric type (the `# TYPE` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricType {
    /// Only grows (PerfData `V_Monotonic`); the name ends in `_total`.
    Counter,
    /// Goes up and down, or is constant.
    Gauge,
    /// Samples `<name>_count` and `<name>_sum` (no quantiles): a client library's summary of
    /// events, here a collector's count and total time.
    Summary,
    /// Samples `<name>_bucket{le=...}`, `<name>_sum` and `<name>_count`.
    Histogram,
}

impl MetricType {
    fn as_str(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Summary => "summary",
            MetricType::Histogram => "histogram",
        }
    }
}

/// Counters HotSpot declares with units None that hold `os::javaTimeMillis()` (`management.cpp`).
const EPOCH_MILLIS: &[&str] = &[
    "sun.rt.createVmBeginTime",
    "sun.rt.createVmEndTime",
    "sun.rt.vmInitDoneTime",
];

/// Where one PerfData counter goes in the exposition: family name, index labels and how to turn
/// its value into base units.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    /// The family name, e.g. `hotspot_sun_gc_collector_time_seconds_total`.
    pub family: String,
    /// Labels taken from the name's numeric segments, in name order, e.g. `[("collector", "0")]`.
    pub labels: Vec<(String, String)>,
    /// Counter or gauge.
    pub metric_type: MetricType,
    /// Divide the raw value by this to get base units (the tick frequency for Ticks).
    pub divisor: Option<i64>,
    /// The counter's name with each index replaced by `<label>`, for `# HELP`.
    pub pattern: String,
}

/// Maps a numeric counter's name, units and variability to its series (the naming rule of the
/// module documentation). `frequency` is the JVM's `sun.os.hrt.frequency` (ticks per second).
pub fn mapping(
    name: &str,
    units: Units,
    variability: Variability,
    frequency: Option<i64>,
) -> Mapping {
    let (stem, labels, pattern) = split_indices(name);
    let mut family = join_lint_words(&format!("{PREFIX}{stem}"));
    let frequency = frequency.filter(|f| *f > 0);
    let mut divisor = None;
    let suffix = match units {
        Units::Bytes => Some("_bytes"),
        Units::Hertz => Some("_hertz"),
        Units::Ticks if frequency.is_some() => {
            divisor = frequency;
            Some("_seconds")
        }
        Units::Ticks => Some("_ticks"),
        Units::None if EPOCH_MILLIS.contains(&name) => {
            divisor = Some(1000);
            Some("_seconds")
        }
        Units::None | Units::Events | Units::String => None,
    };
    if let Some(s) = suffix
        && !family.ends_with(s)
    {
        family.push_str(s);
    }
    let metric_type = match variability {
        Variability::Monotonic => MetricType::Counter,
        Variability::Constant | Variability::Variable => MetricType::Gauge,
    };
    if metric_type == MetricType::Counter && !family.ends_with("_total") {
        family.push_str("_total");
    }
    Mapping {
        family,
        labels,
        metric_type,
        divisor,
        pattern,
    }
}

/// Splits a dotted name into the snake_case stem (numeric segments removed), the labels those
/// segments become, and the name with each index shown as `<label>`.
fn split_indices(name: &str) -> (String, Vec<(String, String)>, String) {
    let segments: Vec<&str> = name.split('.').collect();
    let mut stem = String::new();
    let mut labels: Vec<(String, String)> = Vec::new();
    let mut pattern = Vec::with_capacity(segments.len());
    for (i, seg) in segments.iter().enumerate() {
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            let mut label = match i {
                _ if i >= 2 && segments[i - 1] == "bytes" && segments[i - 2] == "agetable" => {
                    "age".to_string()
                }
                0 => "index".to_string(),
                _ => snake(segments[i - 1]),
            };
            if label.is_empty() || label.starts_with(|c: char| c.is_ascii_digit()) {
                label = "index".to_string();
            }
            while labels.iter().any(|(l, _)| *l == label) {
                label.push_str("_index");
            }
            let value = seg
                .trim_start_matches('0')
                .parse::<u64>()
                .map_or_else(|_| seg.to_string(), |n| n.to_string());
            pattern.push(format!("<{label}>"));
            labels.push((label, value));
        } else {
            let s = snake(seg);
            if !s.is_empty() {
                if !stem.is_empty() {
                    stem.push('_');
                }
                stem.push_str(&s);
            }
            pattern.push((*seg).to_string());
        }
    }
    (stem, labels, pattern.join("."))
}

/// Words of a metric name that promtool's lint (`promlint`, client_golang
/// `testutil/promlint/validations`) rejects when they stand alone between `_`s or at the end:
/// the abbreviated units it discourages ("metric names should not contain abbreviated units") and
/// the metric types ("metric name should not include type").
pub const LINT_WORDS: &[&str] = &[
    "s",
    "ms",
    "us",
    "ns",
    "sec",
    "b",
    "kb",
    "mb",
    "gb",
    "tb",
    "pb",
    "m",
    "h",
    "d",
    "counter",
    "gauge",
    "histogram",
    "summary",
];

/// Joins each word of a snake_case stem that is in [`LINT_WORDS`] to the word before it (to the
/// word after it when it is the first), so no such word stands alone: JDK 8's
/// `sun.rt._sync_PrivateB` is `sync_privateb`, not `sync_private_b` (which promtool reads as "B",
/// bytes). HotSpot names no unit this way: its units are the counter's `Units`.
fn join_lint_words(stem: &str) -> String {
    if !stem.split('_').any(|w| LINT_WORDS.contains(&w)) {
        return stem.to_string();
    }
    let mut words: Vec<String> = Vec::new();
    let mut carry = String::new();
    for w in stem.split('_') {
        if LINT_WORDS.contains(&w) {
            match words.last_mut() {
                Some(prev) => prev.push_str(w),
                None => carry.push_str(w),
            }
        } else {
            words.push(format!("{}{w}", std::mem::take(&mut carry)));
        }
    }
    if !carry.is_empty() {
        words.push(carry);
    }
    words.join("_")
}

/// `camelCase` and `ACRONYMWord` to `snake_case`; every character outside `[A-Za-z0-9]` becomes
/// `_`; runs of `_` are folded and `_` at either end dropped.
fn snake(seg: &str) -> String {
    let chars: Vec<char> = seg.chars().collect();
    let mut out = String::with_capacity(seg.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1);
            let boundary = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase())
                    && next.is_some_and(|n| n.is_ascii_lowercase()));
            if boundary {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    let mut folded = String::with_capacity(out.len());
    for c in out.chars() {
        if c == '_' && (folded.is_empty() || folded.ends_with('_')) {
            continue;
        }
        folded.push(c);
    }
    while folded.ends_with('_') {
        folded.pop();
    }
    folded
}

/// Escapes a label value as the text format requires: `\`, `"` and newline.
pub fn escape_label_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes `# HELP` text: `\` and newline.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Writes `{a="x",b="y"}` (nothing for no labels). A label name given twice (a counter's index
/// named like a JVM label, e.g. `x.pid.0`) keeps the first; later ones get `_index` appended.
fn render_labels<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    LabelPrefix::new(&[]).render(labels)
}

/// Labels shared by many series (a JVM's `pid`, `main`, ...), escaped and rendered once.
struct LabelPrefix {
    rendered: String,
    names: Vec<String>,
}

impl LabelPrefix {
    fn new(labels: &[(&str, &str)]) -> Self {
        let mut rendered = String::new();
        let mut names: Vec<String> = Vec::new();
        for (k, v) in labels {
            let name = unique(k, |n| names.contains(n));
            if !rendered.is_empty() {
                rendered.push(',');
            }
            let _ = write!(rendered, "{name}=\"{}\"", escape_label_value(v));
            names.push(name);
        }
        LabelPrefix { rendered, names }
    }

    /// `{prefix,more...}`, later names made unique against the prefix's and each other.
    fn render<'a>(&self, more: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
        let mut out = String::with_capacity(self.rendered.len() + 48);
        out.push('{');
        out.push_str(&self.rendered);
        let mut extra: Vec<String> = Vec::new();
        for (k, v) in more {
            let name = unique(k, |n| self.names.contains(n) || extra.contains(n));
            if out.len() > 1 {
                out.push(',');
            }
            let _ = write!(out, "{name}=\"{}\"", escape_label_value(v));
            extra.push(name);
        }
        if out.len() == 1 {
            return String::new();
        }
        out.push('}');
        out
    }
}

/// `k`, or `k` with `_index` appended until `taken` says it is free.
fn unique(k: &str, taken: impl Fn(&String) -> bool) -> String {
    let mut name = k.to_string();
    while taken(&name) {
        name.push_str("_index");
    }
    name
}

#[derive(Debug)]
struct Family {
    metric_type: MetricType,
    help: String,
    /// Rendered `labels value` lines' heads (`{..}`) and values, in insertion order.
    samples: Vec<(String, String)>,
    series: HashSet<String>,
}

/// An exposition page being assembled: families in name order, each with its samples from every
/// snapshot added (so several JVMs' counters share one `# HELP`/`# TYPE` per family).
#[derive(Debug, Default)]
pub struct Exposition {
    families: BTreeMap<String, Family>,
    skipped: usize,
    /// The naming rule's answers by counter name (the same names recur in every JVM), each for
    /// the units, variability and whether a tick frequency was known.
    mappings: HashMap<String, Vec<(Units, Variability, bool, Mapping)>>,
}

impl Exposition {
    /// An empty page.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds every counter of `snapshot`, each series with `labels` first (e.g. `pid`).
    pub fn add_snapshot(&mut self, snapshot: &Snapshot, labels: &[(&str, &str)]) {
        let all: Vec<&Counter> = snapshot.counters.iter().collect();
        self.add_counters(&all, snapshot.long("sun.os.hrt.frequency"), labels);
    }

    /// The mapping of a numeric counter, from the cache; its divisor for this JVM's frequency.
    fn cached_mapping(&mut self, c: &Counter, frequency: Option<i64>) -> (Mapping, Option<i64>) {
        let has_freq = frequency.is_some_and(|f| f > 0);
        let entries = match self.mappings.get_mut(c.name.as_str()) {
            Some(e) => e,
            None => self.mappings.entry(c.name.clone()).or_default(),
        };
        let m = match entries
            .iter()
            .find(|(u, v, f, _)| *u == c.units && *v == c.variability && *f == has_freq)
        {
            Some((_, _, _, m)) => m.clone(),
            None => {
                let m = mapping(&c.name, c.units, c.variability, frequency);
                entries.push((c.units, c.variability, has_freq, m.clone()));
                m
            }
        };
        let divisor = match (c.units, m.divisor) {
            (Units::Ticks, Some(_)) => frequency,
            (_, d) => d,
        };
        (m, divisor)
    }

    /// Adds these counters (e.g. a [`super::Filter`]'s selection) by the naming rule, each series
    /// with `labels` first. `frequency` is the JVM's `sun.os.hrt.frequency`, for Ticks.
    /// Strings outside the allow-list, byte vectors and unsupported types are left out.
    pub fn add_counters(
        &mut self,
        counters: &[&Counter],
        frequency: Option<i64>,
        labels: &[(&str, &str)],
    ) {
        // The labels every series of this call starts with, rendered once.
        let first = LabelPrefix::new(labels);
        let mut identity: Vec<(&str, &str)> = Vec::new();
        for c in counters {
            match &c.value {
                Value::Long(v) => {
                    let (m, divisor) = self.cached_mapping(c, frequency);
                    let value = match divisor {
                        Some(d) => {
                            let secs = *v as f64 / d as f64;
                            if !secs.is_finite() {
                                continue;
                            }
                            secs.to_string()
                        }
                        None => v.to_string(),
                    };
                    let help = || {
                        format!(
                            "HotSpot PerfData counter {} ({}, {}{})",
                            m.pattern,
                            units_word(c.units),
                            variability_word(c.variability),
                            match (m.divisor, c.units) {
                                (Some(_), Units::Ticks) => {
                                    "; ticks divided by sun.os.hrt.frequency"
                                }
                                (Some(_), _) => "; milliseconds since the epoch divided by 1000",
                                (None, _) => "",
                            }
                        )
                    };
                    let rendered =
                        first.render(m.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                    self.push(&m.family, m.metric_type, help, rendered, value);
                }
                Value::String(s) => match allow::info_label(&c.name) {
                    Some("name") if allow::is_gc_name(&c.name) => {
                        let owner = c.name.strip_suffix(".name").unwrap_or(&c.name);
                        let (stem, idx, pattern) = split_indices(owner);
                        let family = format!("{PREFIX}{stem}_info");
                        let help = || {
                            format!(
                                "Name of a HotSpot GC object: PerfData string {pattern}.name (value 1)"
                            )
                        };
                        let rendered = first.render(
                            idx.iter()
                                .map(|(k, v)| (k.as_str(), v.as_str()))
                                .chain([("name", s.as_str())]),
                        );
                        self.push(&family, MetricType::Gauge, help, rendered, "1".into());
                    }
                    Some(label) => identity.push((label, s)),
                    None => {}
                },
                Value::Bytes(_) | Value::Unsupported { .. } => {}
            }
        }
        if !identity.is_empty() {
            let help = || {
                format!(
                    "Identity of the JVM, from its PerfData strings {} (value 1)",
                    allow::IDENTITY
                        .iter()
                        .map(|(n, _)| n.trim_start_matches("java.property."))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let rendered = first.render(identity);
            self.push(JVM_INFO, MetricType::Gauge, help, rendered, "1".into());
        }
    }

    /// Adds one sample of a family that is not a PerfData counter (the exporter's own metrics).
    /// `family` must be a valid metric name that follows the naming rules (`_total` on counters).
    pub fn add_sample(
        &mut self,
        family: &str,
        metric_type: MetricType,
        help: &str,
        labels: &[(&str, &str)],
        value: f64,
    ) {
        self.push(
            family,
            metric_type,
            || help.to_string(),
            render_labels(labels.iter().copied()),
            value.to_string(),
        );
    }

    /// Adds one sample of a family of a metric dialect ([`super::dialect`]): `suffix` is the
    /// sample's ending (`_count`, `_sum`, `_bucket` of a summary or histogram; empty otherwise),
    /// the series labelled `first` (the JVM's), then `labels`. Values are written as Rust
    /// prints an `f64` (`-1`, `0.25`, `NaN`).
    #[allow(clippy::too_many_arguments)]
    pub fn add_dialect_sample(
        &mut self,
        family: &str,
        metric_type: MetricType,
        help: &str,
        suffix: &str,
        first: &[(&str, &str)],
        labels: &[(&str, &str)],
        value: f64,
    ) {
        let rendered = LabelPrefix::new(first).render(labels.iter().copied());
        self.push(
            family,
            metric_type,
            || help.to_string(),
            format!("{suffix}{rendered}"),
            value.to_string(),
        );
    }

    /// `labels` is the sample's head after the family name: a suffix (summaries and
    /// histograms) and the rendered labels.
    fn push(
        &mut self,
        family: &str,
        metric_type: MetricType,
        help: impl FnOnce() -> String,
        labels: String,
        value: String,
    ) {
        let f = match self.families.get_mut(family) {
            Some(f) => f,
            None => self
                .families
                .entry(family.to_string())
                .or_insert_with(|| Family {
                    metric_type,
                    help: escape_help(&help()),
                    samples: Vec::new(),
                    series: HashSet::new(),
                }),
        };
        if f.metric_type != metric_type || !f.series.insert(labels.clone()) {
            self.skipped += 1;
            return;
        }
        f.samples.push((labels, value));
    }

    /// Series left out because their family had another type, or the same labels were added
    /// twice (only a damaged region has two counters of one name).
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// Writes the page.
    ///
    /// # Errors
    /// Any error from `out`.
    pub fn write<W: Write>(&self, out: &mut W) -> io::Result<()> {
        for (name, f) in &self.families {
            writeln!(out, "# HELP {name} {}", f.help)?;
            writeln!(out, "# TYPE {name} {}", f.metric_type.as_str())?;
            for (labels, value) in &f.samples {
                writeln!(out, "{name}{labels} {value}")?;
            }
        }
        Ok(())
    }
}

/// HotSpot's name of a unit (`perfData.hpp`'s `U_*` without the prefix), lower case.
pub fn units_word(u: Units) -> &'static str {
    match u {
        Units::None => "none",
        Units::Bytes => "bytes",
        Units::Ticks => "ticks",
        Units::Events => "events",
        Units::String => "string",
        Units::Hertz => "hertz",
    }
}

/// HotSpot's name of a variability (`perfData.hpp`'s `V_*` without the prefix), lower case.
pub fn variability_word(v: Variability) -> &'static str {
    match v {
        Variability::Constant => "constant",
        Variability::Monotonic => "monotonic",
        Variability::Variable => "variable",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rule() {
        let m = mapping(
            "sun.gc.collector.0.time",
            Units::Ticks,
            Variability::Monotonic,
            Some(1_000_000_000),
        );
        assert_eq!(m.family, "hotspot_sun_gc_collector_time_seconds_total");
        assert_eq!(m.labels, vec![("collector".into(), "0".into())]);
        assert_eq!(m.pattern, "sun.gc.collector.<collector>.time");
        let m = mapping(
            "sun.gc.generation.0.agetable.bytes.07",
            Units::Bytes,
            Variability::Variable,
            None,
        );
        assert_eq!(m.family, "hotspot_sun_gc_generation_agetable_bytes");
        assert_eq!(
            m.labels,
            vec![
                ("generation".into(), "0".into()),
                ("age".into(), "7".into())
            ]
        );
        let m = mapping(
            "sun.rt._sync_ContendedLockAttempts",
            Units::Events,
            Variability::Monotonic,
            None,
        );
        assert_eq!(
            m.family,
            "hotspot_sun_rt_sync_contended_lock_attempts_total"
        );
        assert_eq!(
            mapping(
                "sun.rt._sync_PrivateB",
                Units::None,
                Variability::Monotonic,
                None
            )
            .family,
            "hotspot_sun_rt_sync_privateb_total"
        );
        assert_eq!(join_lint_words("b_x_ms_counter_y"), "bxmscounter_y");
        assert_eq!(join_lint_words("hotspot_s"), "hotspots");
        assert_eq!(join_lint_words("private_a"), "private_a");
        assert_eq!(snake("URLClassPath"), "url_class_path");
        assert_eq!(snake("appClassLoadTime"), "app_class_load_time");
        assert_eq!(
            mapping(
                "sun.os.hrt.ticks",
                Units::Ticks,
                Variability::Monotonic,
                None
            )
            .family,
            "hotspot_sun_os_hrt_ticks_total"
        );
    }

    /// Every name the rule makes is a valid metric or label name, whatever the counter's name.
    #[test]
    fn odd_names_still_give_valid_names() {
        fn valid(n: &str) -> bool {
            n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !n.starts_with("__")
        }
        for name in [
            "",
            ".",
            "..",
            "0",
            "0.1",
            "a..b",
            "x.pid.0",
            "é.ü.1",
            "a-b.c d.2",
            "_._._",
            "A.B.C",
            "sun.gc.generation.0.agetable.bytes.99999999999999999999999",
            "s",
            "ms.b",
            "x.1.kB.gauge",
            "sun.rt._sync_PrivateB",
        ] {
            let m = mapping(name, Units::Ticks, Variability::Monotonic, Some(1000));
            assert!(valid(&m.family), "{name:?} -> {}", m.family);
            assert!(
                !m.family.split('_').any(|w| LINT_WORDS.contains(&w)),
                "{name:?} -> {}",
                m.family
            );
            for (l, _) in &m.labels {
                assert!(valid(l), "{name:?} -> label {l}");
            }
        }
        let r = render_labels([("pid", "1"), ("pid", "2"), ("pid_index", "3")]);
        assert_eq!(r, "{pid=\"1\",pid_index=\"2\",pid_index_index=\"3\"}");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
