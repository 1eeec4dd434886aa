//! The class histogram as `jcmd <pid> GC.class_histogram` prints it
//! (`KlassInfoHisto::print_histo_on`, `KlassInfoEntry::print_on`, `memory/heapInspection.cpp`):
//! a header, a line of 55 dashes, one line a class (`%4d: ` rank, `%13d` instances, two spaces,
//! `%13d` bytes, two spaces, the external name, ` (module@version)` for a named module), and the
//! `Total` line.

use std::io::{self, Write};

use crate::heap::Histogram;

/// Writes `histogram` as jcmd does; without `modules`, or for a JDK 8 target, the `(module)`
/// column is left out and the rule is JDK 8's 46 dashes (as its `jmap -histo` prints it).
///
/// # Errors
/// Those of `out`.
pub fn write_histogram(
    out: &mut dyn Write,
    histogram: &Histogram,
    modules: bool,
) -> io::Result<()> {
    let modules = modules && histogram.jdk != 8;
    if modules {
        writeln!(
            out,
            " num     #instances         #bytes  class name (module)"
        )?;
    } else {
        writeln!(out, " num     #instances         #bytes  class name")?;
    }
    writeln!(out, "{}", "-".repeat(if modules { 55 } else { 46 }))?;
    for (i, r) in histogram.rows.iter().enumerate() {
        write!(
            out,
            "{:>4}: {:>13}  {:>13}  {}",
            i + 1,
            r.instances,
            r.bytes,
            r.class_name
        )?;
        match (&r.module, modules) {
            (Some(m), true) => writeln!(out, " ({m})")?,
            _ => writeln!(out)?,
        }
    }
    let (instances, bytes) = histogram.total();
    writeln!(out, "Total {instances:>13}  {bytes:>13}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::Row;

    #[test]
    fn prints_as_jcmd() {
        let h = Histogram {
            rows: vec![
                Row {
                    instances: 12345,
                    bytes: 1_234_567,
                    class_name: "[B".into(),
                    module: Some("java.base@17.0.15".into()),
                    klass: 1,
                },
                Row {
                    instances: 3,
                    bytes: 72,
                    class_name: "HeapTarget$Node".into(),
                    module: None,
                    klass: 2,
                },
            ],
            ..Histogram::default()
        };
        let mut out = Vec::new();
        write_histogram(&mut out, &h, true).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            " num     #instances         #bytes  class name (module)\n\
             -------------------------------------------------------\n   \
             1:         12345        1234567  [B (java.base@17.0.15)\n   \
             2:             3             72  HeapTarget$Node\n\
             Total         12348        1234639\n"
        );
    }
}
