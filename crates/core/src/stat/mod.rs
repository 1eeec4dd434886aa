//! jstat's views (`jstat -gcutil`, `-class`, ...) of a [`Snapshot`]: the option table as data
//! ([`OPTIONS`], from JDK 17's `jstat_options`, and JDK 8's and 11's layouts as their differences:
//! [`Layout`]), one small expression evaluator (`expr`), and a formatter that prints jstat's
//! exact bytes ([`View`]).
//!
//! The rules are jstat's (JDK 17/21/25 `src/jdk.jcmd/share/classes/sun/tools/jstat/`):
//!
//! - **Header** (`HeaderClosure.java`): a header `^X^` is centred, `^X` left-aligned, `X^`
//!   right-aligned; the column's width becomes at least the header's length (without the marks)
//!   and the format pattern's length. Columns are separated by one space.
//! - **Cells** (`RowClosure.java`): the expression's value is divided by the scale's factor
//!   (`Scale.java`: `raw` 1, `K` 1024, `sec` 1), formatted with the pattern ([`number`]: NaN
//!   is `-`), then aligned to the width (`Alignment.java`); a string counter is printed as is.
//! - **Missing counters** (`ExpressionResolver.java`): NaN (`-`), or 0 in a `required` column.
//! - **`-t`** (`OptionFinder.java`): the `timestamp` column ([`TIMESTAMP`]) goes first.
//!
//! Everything here is pure: a [`Snapshot`] in, strings and numbers out.

pub(crate) mod expr;
pub mod number;
mod options;

use thiserror::Error;

use crate::perfdata::{Counter, Snapshot};
pub use expr::{Expr, Val};
pub use number::NumberFormat;
pub use options::{GCT_JDK8, NARROW, OPTIONS, TIMESTAMP};

use std::sync::LazyLock;

/// Errors of this module.
#[derive(Debug, Error, PartialEq)]
pub enum StatError {
    /// The option is not one of [`OPTIONS`].
    #[error("unknown option -{0} (`inspect stat -options` lists them)")]
    UnknownOption(String),
    /// A column's data expression does not parse.
    #[error("bad expression {expression:?}: {problem}")]
    Expression {
        /// The expression text.
        expression: String,
        /// What is wrong.
        problem: String,
    },
    /// A column's number pattern is outside the supported DecimalFormat subset.
    #[error("unsupported number format {0:?}")]
    Format(String),
}

/// What a column's value is divided by before formatting (`Scale.java`; the three the options
/// use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// `raw`: 1.
    Raw,
    /// `K`: 1024 (bytes to KiB).
    Kilo,
    /// `sec`: 1 (the expression already divides ticks by `sun.os.hrt.frequency`).
    Sec,
}

impl Scale {
    /// The divisor.
    pub fn factor(self) -> f64 {
        match self {
            Scale::Raw | Scale::Sec => 1.0,
            Scale::Kilo => 1024.0,
        }
    }
}

/// How a cell is padded to its column's width (`Alignment.java`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Padding on the left.
    Right,
    /// Padding on the right.
    Left,
    /// Half the padding on each side, the odd space on the right.
    Center,
}

impl Align {
    /// `s` padded with spaces to `width` characters (unchanged when it is already as wide).
    pub fn pad(self, s: &str, width: usize) -> String {
        let len = s.chars().count();
        if len >= width {
            return s.to_owned();
        }
        let pad = width - len;
        let (before, after) = match self {
            Align::Right => (pad, 0),
            Align::Left => (0, pad),
            Align::Center => (pad / 2, pad - pad / 2),
        };
        let mut out = String::with_capacity(s.len() + pad);
        out.extend(std::iter::repeat_n(' ', before));
        out.push_str(s);
        out.extend(std::iter::repeat_n(' ', after));
        out
    }
}

/// One column of a view, as `jstat_options` defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSpec {
    /// The header with jstat's alignment marks (`^S0^`, `^LGCC`).
    pub header: &'static str,
    /// The data expression over counter names (`expr`).
    pub data: &'static str,
    /// What the value is divided by.
    pub scale: Scale,
    /// How cells are aligned.
    pub align: Align,
    /// The minimum width in characters.
    pub width: usize,
    /// The DecimalFormat pattern (`"0"` when `jstat_options` gives none).
    pub format: &'static str,
    /// Missing counters are 0 instead of NaN.
    pub required: bool,
    /// The column's key in machine output when its header repeats in its view (`-class` has two
    /// `Bytes`); otherwise the header without marks.
    pub key: Option<&'static str>,
}

impl ColumnSpec {
    /// The header text without jstat's `^` alignment marks.
    pub fn title(&self) -> &'static str {
        self.header.trim_matches('^')
    }

    /// The key of this column in machine output (JSON): its own key where its header repeats in
    /// its view (`-class`'s second `Bytes` is `UnloadedBytes`), else the title.
    pub fn json_key(&self) -> &'static str {
        self.key.unwrap_or_else(|| self.title())
    }
}

/// One view: `jstat -<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatOption {
    /// The option name without the dash (`gcutil`).
    pub name: &'static str,
    /// Its columns, left to right.
    pub columns: &'static [ColumnSpec],
}

/// Whose jstat a view's layout is: `jstat_options` changed its columns twice. The twelve options
/// and what each column computes are the same in all three; columns, widths and alignments differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// JDK 8's jstat (also JDK 9 and 10's): no `CGC`/`CGCT`, `GCT` = young + full time, the
    /// narrow widths of [`NARROW`].
    Jdk8,
    /// JDK 11's jstat: `CGC`/`CGCT` added, the narrow widths of [`NARROW`].
    Jdk11,
    /// JDK 17's jstat (also 21's and 25's): [`OPTIONS`] as written.
    Jdk17,
}

impl Layout {
    /// The layout of JDK `major`'s jstat: JDK 8's up to 10, JDK 11's for 11 to 14, JDK 17's from
    /// 15 on. Checked on JDK 8, 11, 17, 21 and 25, not on 9, 10 or 12 to 16: the 8 → 11 step is
    /// placed at 11 (CGC is new in its file), the 11 → 17 step at 15 from the year JDK 17's file
    /// was last changed (2020).
    pub fn of_major(major: u32) -> Layout {
        match major {
            0..=10 => Layout::Jdk8,
            11..=14 => Layout::Jdk11,
            _ => Layout::Jdk17,
        }
    }

    /// The layout of the jstat of the JDK that wrote `snapshot`, by its
    /// `java.property.java.vm.specification.version` (`1.8`, `11`, `17`); JDK 17's when the
    /// region does not say.
    pub fn of_snapshot(snapshot: &Snapshot) -> Layout {
        match snapshot
            .get("java.property.java.vm.specification.version")
            .map(|c| &c.value)
        {
            Some(crate::perfdata::Value::String(v)) => {
                java_major(v).map_or(Layout::Jdk17, Layout::of_major)
            }
            _ => Layout::Jdk17,
        }
    }

    /// The JDK whose jstat this is, as `--jstat` takes it: `8`, `11` or `17`.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Jdk8 => "8",
            Layout::Jdk11 => "11",
            Layout::Jdk17 => "17",
        }
    }

    /// The twelve views in this layout, in `jstat_options` order.
    pub fn options(self) -> &'static [StatOption] {
        static JDK8: LazyLock<Vec<StatOption>> = LazyLock::new(|| older_layout(true));
        static JDK11: LazyLock<Vec<StatOption>> = LazyLock::new(|| older_layout(false));
        match self {
            Layout::Jdk8 => &JDK8,
            Layout::Jdk11 => &JDK11,
            Layout::Jdk17 => OPTIONS,
        }
    }
}

/// The major version in a Java version string: `1.8` and `1.8.0_504` → 8, `11`, `17.0.15` → 17.
pub fn java_major(version: &str) -> Option<u32> {
    let v = version.strip_prefix("1.").unwrap_or(version);
    let digits: &str = &v[..v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len())];
    digits.parse().ok()
}

/// JDK 11's views (`jdk8` false) or JDK 8's (`jdk8` true) from JDK 17's: [`NARROW`]'s widths
/// and alignments; for JDK 8 also without `CGC`/`CGCT` and with [`GCT_JDK8`]. Built once per
/// process (the column lists live as long as the program, as [`OPTIONS`]'s do).
fn older_layout(jdk8: bool) -> Vec<StatOption> {
    OPTIONS
        .iter()
        .map(|o| {
            let columns: Vec<ColumnSpec> = o
                .columns
                .iter()
                .filter(|c| !(jdk8 && matches!(c.title(), "CGC" | "CGCT")))
                .map(|c| {
                    let mut c = if jdk8 && c.title() == "GCT" {
                        GCT_JDK8
                    } else {
                        *c
                    };
                    if let Some(&(_, _, width, align)) = NARROW
                        .iter()
                        .find(|(opt, header, ..)| *opt == o.name && *header == c.header)
                    {
                        c.width = width;
                        c.align = align;
                    }
                    c
                })
                .collect();
            StatOption {
                name: o.name,
                columns: columns.leak(),
            }
        })
        .collect()
}

/// The option named `name` (without the dash), in JDK 17's layout.
pub fn find_option(name: &str) -> Option<&'static StatOption> {
    Layout::Jdk17.options().iter().find(|o| o.name == name)
}

/// What `jstat -options` prints: one `-<name>` line per option, sorted by name
/// (`OptionLister.java`), each ending in `\n`.
pub fn options_listing() -> String {
    let mut names: Vec<&str> = OPTIONS.iter().map(|o| o.name).collect();
    names.sort_unstable();
    names.iter().map(|n| format!("-{n}\n")).collect()
}

/// One cell's value before alignment.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A number after scaling; NaN when jstat prints `-`.
    Number(f64),
    /// A string counter's text.
    Text(String),
}

/// A column ready to evaluate: parsed expression, number format, effective width.
#[derive(Debug, Clone)]
struct Column {
    spec: &'static ColumnSpec,
    expr: Expr,
    format: NumberFormat,
    width: usize,
    header: String,
}

/// A view (one option, optionally with the Timestamp column) compiled for repeated samples:
/// expressions parsed once, each counter name looked up through a remembered index.
#[derive(Debug, Clone)]
pub struct View {
    option: &'static StatOption,
    layout: Layout,
    columns: Vec<Column>,
    /// Whether the first column is the Timestamp.
    timestamp: bool,
    /// Every counter name the expressions use.
    names: Vec<String>,
    /// Where each name was found in the last snapshot's counter list.
    hints: Vec<usize>,
}

impl View {
    /// Compiles the option named `name` (without the dash); `timestamp` adds the `-t` column.
    ///
    /// # Errors
    /// [`StatError::UnknownOption`]; the others only for a broken table (tested).
    pub fn new(name: &str, timestamp: bool) -> Result<View, StatError> {
        View::with_layout(name, timestamp, Layout::Jdk17)
    }

    /// [`View::new`] in the given jstat layout.
    ///
    /// # Errors
    /// As [`View::new`].
    pub fn with_layout(name: &str, timestamp: bool, layout: Layout) -> Result<View, StatError> {
        let option = layout
            .options()
            .iter()
            .find(|o| o.name == name)
            .ok_or_else(|| StatError::UnknownOption(name.to_owned()))?;
        let specs = timestamp
            .then_some(&TIMESTAMP)
            .into_iter()
            .chain(option.columns.iter());
        let mut names = Vec::new();
        let mut columns = Vec::new();
        for spec in specs {
            let expr = expr::parse(spec.data, &mut names)?;
            let format = NumberFormat::parse(spec.format)?;
            let (width, header) = header_cell(spec);
            columns.push(Column {
                spec,
                expr,
                format,
                width,
                header,
            });
        }
        let hints = vec![0; names.len()];
        Ok(View {
            option,
            layout,
            columns,
            timestamp,
            names,
            hints,
        })
    }

    /// Whose jstat this view prints.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Every counter name the view's expressions use (the Timestamp column's too, with `-t`),
    /// each once, in the order the columns first use them.
    pub fn counter_names(&self) -> &[String] {
        &self.names
    }

    /// The option this view shows.
    pub fn option(&self) -> &'static StatOption {
        self.option
    }

    /// The column definitions, Timestamp first with `-t`.
    pub fn specs(&self) -> impl Iterator<Item = &'static ColumnSpec> + '_ {
        self.columns.iter().map(|c| c.spec)
    }

    /// The header line, without the newline.
    pub fn header(&self) -> String {
        self.columns
            .iter()
            .map(|c| c.header.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The cells of one sample, one per column. `uptime`: the Timestamp column's value in
    /// seconds when the caller knows it better than the region does (a live JVM's uptime);
    /// `None` evaluates jstat's expression (`sun.os.hrt.ticks / sun.os.hrt.frequency`).
    pub fn cells(&mut self, snapshot: &Snapshot, uptime: Option<f64>) -> Vec<Cell> {
        let bound = self.bind(snapshot);
        self.columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if let (0, true, Some(secs)) = (i, self.timestamp, uptime) {
                    return Cell::Number(secs / c.spec.scale.factor());
                }
                match c.expr.eval(&bound, c.spec.required) {
                    Val::Number(n) => Cell::Number(n / c.spec.scale.factor()),
                    Val::Text(t) => Cell::Text(t.to_owned()),
                }
            })
            .collect()
    }

    /// The cell as jstat prints it, before alignment (`-` for NaN).
    pub fn text(&self, column: usize, cell: &Cell) -> String {
        match cell {
            Cell::Number(n) => self.columns[column].format.format(*n),
            Cell::Text(t) => t.clone(),
        }
    }

    /// The row line for `cells` (from [`View::cells`]), without the newline.
    pub fn row(&self, cells: &[Cell]) -> String {
        let mut line = String::new();
        for (i, (c, cell)) in self.columns.iter().zip(cells).enumerate() {
            if i > 0 {
                line.push(' ');
            }
            line.push_str(&c.spec.align.pad(&self.text(i, cell), c.width));
        }
        line
    }

    /// The counters each name refers to in `snapshot`, found through the index where the name
    /// was last seen (a region's entries keep their order), else by a scan.
    fn bind<'s>(&mut self, snapshot: &'s Snapshot) -> Vec<Option<&'s Counter>> {
        let counters = &snapshot.counters;
        self.names
            .iter()
            .zip(self.hints.iter_mut())
            .map(|(name, hint)| {
                if let Some(c) = counters.get(*hint).filter(|c| c.name == *name) {
                    return Some(c);
                }
                let i = counters.iter().position(|c| c.name == *name)?;
                *hint = i;
                Some(&counters[i])
            })
            .collect()
    }
}

/// The column's effective width and its header cell (`HeaderClosure.java`).
fn header_cell(spec: &ColumnSpec) -> (usize, String) {
    let h = spec.header;
    let len = h.chars().count();
    let fmt = spec.format.len();
    let (starts, ends) = (h.starts_with('^'), h.ends_with('^') && len > 1);
    let (align, text) = match (starts, ends) {
        (true, true) => (Align::Center, &h[1..h.len() - 1]),
        (true, false) => (Align::Left, &h[1..]),
        (false, true) => (Align::Right, &h[..h.len() - 1]),
        // No marks, or only inside: printed as given, at the given width.
        (false, false) => return (spec.width, h.to_owned()),
    };
    let width = spec.width.max(fmt.max(text.chars().count()));
    (width, align.pad(text, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_of_the_table_compiles() {
        for layout in [Layout::Jdk8, Layout::Jdk11, Layout::Jdk17] {
            for o in layout.options() {
                View::with_layout(o.name, true, layout)
                    .unwrap_or_else(|e| panic!("-{} ({layout:?}): {e}", o.name));
            }
        }
    }

    /// Every row of [`NARROW`] names a column of JDK 17's views (no typo leaves one unchanged),
    /// and JDK 8's views are JDK 11's without the two concurrent-collection columns.
    #[test]
    fn older_layouts_are_differences_from_jdk17() {
        for (option, header, ..) in NARROW {
            assert!(
                find_option(option).is_some_and(|o| o.columns.iter().any(|c| c.header == *header)),
                "{option} {header}"
            );
        }
        let titles = |l: Layout, name: &str| -> Vec<&str> {
            l.options()
                .iter()
                .find(|o| o.name == name)
                .unwrap()
                .columns
                .iter()
                .map(|c| c.title())
                .collect()
        };
        for o in OPTIONS {
            let mut eleven = titles(Layout::Jdk11, o.name);
            assert_eq!(eleven, titles(Layout::Jdk17, o.name));
            eleven.retain(|t| !matches!(*t, "CGC" | "CGCT"));
            assert_eq!(eleven, titles(Layout::Jdk8, o.name));
        }
        let gcutil8 = View::with_layout("gcutil", false, Layout::Jdk8).unwrap();
        assert_eq!(
            gcutil8.header(),
            "  S0     S1     E      O      M     CCS    YGC     YGCT    FGC    FGCT     GCT   "
        );
        assert_eq!(Layout::of_major(8), Layout::Jdk8);
        assert_eq!(Layout::of_major(11), Layout::Jdk11);
        assert_eq!(Layout::of_major(25), Layout::Jdk17);
        assert_eq!(java_major("1.8"), Some(8));
        assert_eq!(java_major("17.0.15"), Some(17));
        assert_eq!(java_major("x"), None);
    }

    #[test]
    fn twelve_options_listed_sorted_without_timestamp() {
        let listing = options_listing();
        assert_eq!(listing.lines().count(), 12);
        assert!(listing.starts_with("-class\n-compiler\n-gc\n"));
        assert!(!listing.contains("timestamp"));
        assert_eq!(
            View::new("nope", false).unwrap_err(),
            StatError::UnknownOption("nope".into())
        );
    }

    #[test]
    fn json_keys_are_unique_within_each_view() {
        for o in OPTIONS {
            let mut keys: Vec<_> = o.columns.iter().map(|c| c.json_key()).collect();
            keys.push(TIMESTAMP.json_key());
            let n = keys.len();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), n, "-{}", o.name);
        }
    }

    #[test]
    fn alignment_as_jstat() {
        assert_eq!(Align::Center.pad("S0", 6), "  S0  ");
        assert_eq!(Align::Center.pad("CCS", 6), " CCS  ");
        assert_eq!(Align::Center.pad("E", 2), "E ");
        assert_eq!(Align::Left.pad("ab", 4), "ab  ");
        assert_eq!(Align::Right.pad("ab", 4), "  ab");
        assert_eq!(Align::Right.pad("abcdef", 4), "abcdef");
    }
}
