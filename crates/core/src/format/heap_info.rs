//! The heap summary as `jcmd <pid> GC.heap_info` prints it (`CollectedHeap::print_on` and the
//! collectors' `print_on`: `gc/serial/defNewGeneration.cpp`, `tenuredGeneration.cpp`,
//! `gc/shared/space.cpp`, `gc/parallel/psYoungGen.cpp`, `psOldGen.cpp`, `mutableSpace.cpp`,
//! `psVirtualspace.cpp`, `gc/g1/g1CollectedHeap.cpp`, `gc/z/zCollectedHeap.cpp`,
//! `memory/metaspace.cpp`'s `MetaspaceUtils::print_on`). JDK 25 prints one level less indented,
//! names Serial's generations `DefNew` and `Tenured`, gives G1's reservation, and leaves
//! Metaspace out.

use std::io::{self, Write};

use crate::heap::summary::{CollectorUsage, GenerationUsage, HeapInfo, MetaspaceUsage, SpaceUsage};

const K: u64 = 1024;

/// HotSpot's `INTPTR_FORMAT`: `0x` and 16 hex digits.
struct Ptr(u64);

impl std::fmt::Display for Ptr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "0x{:016x}", self.0)
    }
}

/// A size as `byte_size_in_proper_unit` and `proper_unit_for_byte_size` give it
/// (`utilities/globalDefinitions.hpp`): in G from 100 GiB, M from 100 MiB, K from 100 KiB, else B.
struct Proper(u64);

impl std::fmt::Display for Proper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (g, m) = (K * K * K, K * K);
        match self.0 {
            b if b >= 100 * g => write!(f, "{}G", b / g),
            b if b >= 100 * m => write!(f, "{}M", b / m),
            b if b >= 100 * K => write!(f, "{}K", b / K),
            b => write!(f, "{b}B"),
        }
    }
}

/// A size as `EXACTFMT` prints it (`byte_size_in_exact_unit`, `exact_unit_for_byte_size`): in
/// the largest unit that divides it, a space between number and unit (`256 K`).
struct Exact(u64);

impl std::fmt::Display for Exact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (g, m) = (K * K * K, K * K);
        match self.0 {
            b if b >= g && b % g == 0 => write!(f, "{} G", b / g),
            b if b >= m && b % m == 0 => write!(f, "{} M", b / m),
            b if b >= K && b % K == 0 => write!(f, "{} K", b / K),
            b => write!(f, "{b} B"),
        }
    }
}

/// `(int) ((double) used * 100 / capacity)`, as `Space::print_short_on` computes it.
fn percent(s: &SpaceUsage) -> i64 {
    if s.capacity() == 0 {
        return 0;
    }
    (s.used() as f64 * 100.0 / s.capacity() as f64) as i64
}

/// Writes `info` as jcmd's `GC.heap_info` does (without jcmd's `<pid>:` line).
///
/// # Errors
/// Those of `out`.
pub fn write_heap_info(out: &mut dyn Write, info: &HeapInfo) -> io::Result<()> {
    let modern = info.jdk >= 25;
    // The indent of a top-level line: one space before JDK 25, none from it.
    let i0 = if modern { "" } else { " " };
    let generation = |out: &mut dyn Write, name: &str, width: usize, g: &GenerationUsage| {
        let (capacity, used) = g.totals();
        writeln!(
            out,
            "{i0}{name:<width$} total {}K, used {}K [{}, {}, {})",
            capacity / K,
            used / K,
            Ptr(g.low_boundary),
            Ptr(g.high),
            Ptr(g.high_boundary)
        )
    };
    match &info.heap {
        CollectorUsage::Serial { young, old } => {
            let (young_name, old_name, width) = if modern {
                ("DefNew", "Tenured", 10)
            } else {
                ("def new generation", "tenured generation", 20)
            };
            generation(out, young_name, width, young)?;
            for s in &young.spaces {
                serial_space(out, s, i0, modern)?;
            }
            generation(out, old_name, width, old)?;
            for s in &old.spaces {
                serial_space(out, s, i0, modern)?;
            }
        }
        CollectorUsage::ConcMarkSweep { young, old } => {
            generation(out, "par new generation", 20, young)?;
            for s in &young.spaces {
                serial_space(out, s, i0, modern)?;
            }
            writeln!(
                out,
                "{i0}concurrent mark-sweep generation total {}K, used {}K [{}, {}, {})",
                old.capacity / K,
                old.used / K,
                Ptr(old.low_boundary),
                Ptr(old.high),
                Ptr(old.high_boundary)
            )?;
        }
        CollectorUsage::Parallel { young, old } => {
            generation(out, "PSYoungGen", 15, young)?;
            for s in &young.spaces {
                parallel_space(out, s, i0)?;
            }
            generation(out, "ParOldGen", 15, old)?;
            for s in &old.spaces {
                parallel_space(out, s, i0)?;
            }
        }
        CollectorUsage::G1 {
            reserved_start,
            reserved_end,
            committed,
            used,
            region_size,
            young_regions,
            survivor_regions,
        } => {
            if modern {
                writeln!(
                    out,
                    "{:<20} total reserved {}K, committed {}K, used {}K [{}, {})",
                    "garbage-first heap",
                    (reserved_end - reserved_start) / K,
                    committed / K,
                    used / K,
                    Ptr(*reserved_start),
                    Ptr(*reserved_end)
                )?;
            } else {
                writeln!(
                    out,
                    " {:<20} total {}K, used {}K [{}, {})",
                    "garbage-first heap",
                    committed / K,
                    used / K,
                    Ptr(*reserved_start),
                    Ptr(*reserved_end)
                )?;
            }
            writeln!(
                out,
                "{i0} region size {}K, {young_regions} young ({}K), {survivor_regions} survivors ({}K)",
                region_size / K,
                young_regions * region_size / K,
                survivor_regions * region_size / K
            )?;
        }
        CollectorUsage::Epsilon { space } => {
            // JDK 25 indents the space and its heading under `Epsilon Heap`.
            let i1 = if modern { " " } else { "" };
            writeln!(out, "Epsilon Heap")?;
            writeln!(out, "{i1}Allocation space:")?;
            writeln!(
                out,
                "{i1} space {}K, {:>3}% used [{}, {}, {})",
                space.capacity() / K,
                percent(space),
                Ptr(space.bottom),
                Ptr(space.top),
                Ptr(space.end)
            )?;
        }
        CollectorUsage::Shenandoah {
            max_capacity,
            soft_max_capacity,
            committed,
            used,
            regions,
            region_size,
            reserved_start,
            reserved_end,
        } => {
            writeln!(out, "Shenandoah Heap")?;
            match soft_max_capacity {
                Some(soft) => writeln!(
                    out,
                    " {} max, {} soft max, {} committed, {} used",
                    Proper(*max_capacity),
                    Proper(*soft),
                    Proper(*committed),
                    Proper(*used)
                )?,
                None => writeln!(
                    out,
                    " {} total, {} committed, {} used",
                    Proper(*max_capacity),
                    Proper(*committed),
                    Proper(*used)
                )?,
            }
            if modern {
                writeln!(out, " {regions} x {} regions", Exact(*region_size))?;
            } else {
                writeln!(out, " {regions} x {} regions", Proper(*region_size))?;
            }
            // `Status:` and `Collection set:` are not read (`HeapInfo::left_out`).
            writeln!(out, "Reserved region:")?;
            writeln!(
                out,
                " - [{}, {}) ",
                Ptr(*reserved_start),
                Ptr(*reserved_end)
            )?;
            writeln!(out)?;
        }
        CollectorUsage::Z {
            used,
            capacity,
            max_capacity,
        } => {
            const M: u64 = K * K;
            // JDK 25 widens the label by one; its `Cache` lines are not read.
            let w = if modern { 17 } else { 16 };
            writeln!(
                out,
                "{i0}{:<w$}used {}M, capacity {}M, max capacity {}M",
                "ZHeap",
                used / M,
                capacity / M,
                max_capacity / M
            )?;
        }
    }
    // JDK 11 to 15 print the capacity between used and committed.
    let line = |m: &MetaspaceUsage| match m.capacity {
        Some(c) => format!(
            "used {}K, capacity {}K, committed {}K, reserved {}K",
            m.used / K,
            c / K,
            m.committed / K,
            m.reserved / K
        ),
        None => format!(
            "used {}K, committed {}K, reserved {}K",
            m.used / K,
            m.committed / K,
            m.reserved / K
        ),
    };
    if let Some(m) = &info.metaspace {
        writeln!(out, " Metaspace       {}", line(m))?;
        if let Some(c) = &info.class_space {
            writeln!(out, "  class space    {}", line(c))?;
        }
    }
    Ok(())
}

/// `  eden space 17472K,   4% used [bottom, top, end)` (`ContiguousSpace::print_on`; the
/// tenured space up to JDK 21 adds its block-offset threshold before `end`).
fn serial_space(out: &mut dyn Write, s: &SpaceUsage, i0: &str, modern: bool) -> io::Result<()> {
    let label = match (s.name, modern) {
        ("to", _) => "to  ",
        ("the", false) => " the",
        ("the", true) => "the ",
        (n, _) => n,
    };
    write!(
        out,
        "{i0} {label} space {}K, {:>3}% used [{}, {}, ",
        s.capacity() / K,
        percent(s),
        Ptr(s.bottom),
        Ptr(s.top)
    )?;
    if let Some(t) = s.threshold {
        write!(out, "{}, ", Ptr(t))?;
    }
    writeln!(out, "{})", Ptr(s.end))
}

/// `  eden space 16384K, 4% used [bottom,top,end)` (`MutableSpace::print_on`).
fn parallel_space(out: &mut dyn Write, s: &SpaceUsage, i0: &str) -> io::Result<()> {
    let label = if s.name == "to" { "to  " } else { s.name };
    writeln!(
        out,
        "{i0} {label} space {}K, {}% used [{},{},{})",
        s.capacity() / K,
        percent(s),
        Ptr(s.bottom),
        Ptr(s.top),
        Ptr(s.end)
    )
}

#[cfg(test)]
mod tests {
    use super::{Exact, Proper};

    #[test]
    fn sizes_print_in_hotspots_proper_and_exact_units() {
        // byte_size_in_proper_unit: the unit changes at 100 of it.
        assert_eq!(Proper(99 * 1024).to_string(), "101376B");
        assert_eq!(Proper(2048 * 1024).to_string(), "2048K");
        assert_eq!(Proper(256 << 20).to_string(), "256M");
        assert_eq!(Proper(6319125504).to_string(), "6026M");
        assert_eq!(Proper(100 << 30).to_string(), "100G");
        // EXACTFMT: the largest unit that divides the size, after a space.
        assert_eq!(Exact(256 * 1024).to_string(), "256 K");
        assert_eq!(Exact(2 << 20).to_string(), "2 M");
        assert_eq!(Exact(1 << 30).to_string(), "1 G");
        assert_eq!(Exact(1536 << 20).to_string(), "1536 M");
        assert_eq!(Exact(1000).to_string(), "1000 B");
    }
}
