//! The collector's spaces, read from vmStructs: the `[bottom, top)` ranges that hold objects,
//! and the unused parts of the threads' TLABs inside them.
//!
//! * Heap: `Universe::_collectedHeap` (`gc/shared/collectedHeap.hpp`); the collector from the
//!   flags ([`crate::vm::Collector`]).
//! * Serial (`gc/serial/serialHeap.hpp`; `gc/shared/genCollectedHeap.hpp` up to JDK 22):
//!   `SerialHeap::_young_gen`/`_old_gen` (JDK 17: `GenCollectedHeap::`), then
//!   `DefNewGeneration::_eden_space`, `_from_space` and `TenuredGeneration::_the_space`, each a
//!   `ContiguousSpace` (`ContiguousSpace::_bottom/_top`; JDK 17: `Space::_bottom`).
//!   To-space is empty outside a scavenge.
//! * Parallel (`gc/parallel/parallelScavengeHeap.hpp`): the static
//!   `ParallelScavengeHeap::_young_gen`/`_old_gen`, `PSYoungGen::_eden_space`, `_from_space`,
//!   `PSOldGen::_object_space`, each a `MutableSpace` (`_bottom`, `_top`).
//! * G1 (`gc/g1/g1CollectedHeap.hpp`, `g1HeapRegionManager.hpp`, `g1HeapRegion.hpp`):
//!   `G1CollectedHeap::_hrm` (embedded) → `G1HeapRegionManager::_regions` (JDK ≤ 22:
//!   `HeapRegionManager::`, embedded `G1HeapRegionTable`) → `_base[0.._length)`, region
//!   pointers (null: uncommitted); each `G1HeapRegion` (`HeapRegion` ≤ 22) `_bottom`, `_top`,
//!   `_type._tag`. Free regions are skipped, a continues-humongous region is covered by its
//!   starts-humongous region's one object, as `G1CollectedHeap::object_iterate` does.
//! * TLABs: `Thread::_tlab` (`ThreadLocalAllocBuffer::_start/_top/_end`,
//!   `gc/shared/threadLocalAllocBuffer.hpp`): `[top, end + alignment_reserve)` is not parsable.

use crate::error::Error;
use crate::memory::ReadMemory;
use crate::vm::rd;
use crate::vm::{Collector, VmModel};

/// The most G1 regions read (a 2 TiB heap of 1 MiB regions has about two million).
pub const MAX_REGIONS: u64 = 1 << 22;

/// How a space's objects are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum SpaceKind {
    /// Objects back to back from `bottom` to `top`.
    Contiguous,
    /// A G1 starts-humongous region: one object at `bottom`, which may run on into the next
    /// (continues-humongous) regions.
    HumongousStart,
}

/// A range of the heap that holds objects.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Space {
    /// HotSpot's name for it (`eden`, `from`, `old`, `region 12`).
    pub name: String,
    /// `_bottom`: the first object.
    pub bottom: u64,
    /// `_top`: the end of the last object (exclusive).
    pub top: u64,
    /// How the objects are laid out.
    pub kind: SpaceKind,
}

/// The spaces of the heap of `vm`, in address order within each generation.
///
/// # Errors
/// [`Error::Unsupported`] for a collector not walked yet (ZGC, Shenandoah, Epsilon, none);
/// [`Error::VmStructs`] when an entry is missing or a count implausible; [`Error::Memory`].
pub fn spaces(vm: &VmModel, mem: &dyn ReadMemory) -> Result<Vec<Space>, Error> {
    let heap = rd(
        mem,
        vm.static_address("Universe", "_collectedHeap")?,
        "Universe::_collectedHeap",
    )?;
    if heap == 0 {
        return Err(Error::VmStructs(
            "Universe::_collectedHeap is NULL (the VM is not initialized yet?)".into(),
        ));
    }
    let out = match vm.layout.collector {
        Some(Collector::Serial) => serial(vm, mem, heap)?,
        Some(Collector::Parallel) => parallel(vm, mem)?,
        Some(Collector::G1) => g1(vm, mem, heap)?,
        other => {
            return Err(Error::Unsupported {
                what: match other {
                    Some(Collector::Z) => "walking a ZGC heap",
                    Some(Collector::Shenandoah) => "walking a Shenandoah heap",
                    Some(Collector::Epsilon) => "walking an Epsilon heap",
                    _ => "walking a heap whose collector the flags do not name",
                },
                os: std::env::consts::OS,
            });
        }
    };
    for s in &out {
        if s.top < s.bottom {
            return Err(Error::VmStructs(format!(
                "space {}: top {:#x} below bottom {:#x}",
                s.name, s.top, s.bottom
            )));
        }
    }
    Ok(out)
}

/// `[bottom, top)` of the `ContiguousSpace` at `space` (JDK 17: `Space::_bottom`).
fn contiguous(vm: &VmModel, mem: &dyn ReadMemory, space: u64, name: &str) -> Result<Space, Error> {
    let bottom = vm
        .offset("ContiguousSpace", "_bottom")
        .or_else(|_| vm.offset("Space", "_bottom"))?;
    let top = vm.offset("ContiguousSpace", "_top")?;
    Ok(Space {
        name: name.to_string(),
        bottom: rd(mem, space.wrapping_add(bottom), "ContiguousSpace::_bottom")?,
        top: rd(mem, space.wrapping_add(top), "ContiguousSpace::_top")?,
        kind: SpaceKind::Contiguous,
    })
}

fn serial(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<Vec<Space>, Error> {
    let (young, old) = match (
        vm.offset("SerialHeap", "_young_gen"),
        vm.offset("SerialHeap", "_old_gen"),
    ) {
        (Ok(y), Ok(o)) => (y, o),
        _ => (
            vm.offset("GenCollectedHeap", "_young_gen")?,
            vm.offset("GenCollectedHeap", "_old_gen")?,
        ),
    };
    let young = rd(mem, heap.wrapping_add(young), "SerialHeap::_young_gen")?;
    let old = rd(mem, heap.wrapping_add(old), "SerialHeap::_old_gen")?;
    let mut out = Vec::new();
    for (field, name) in [("_eden_space", "eden"), ("_from_space", "from")] {
        let at = vm.offset("DefNewGeneration", field)?;
        let space = rd(mem, young.wrapping_add(at), "DefNewGeneration's space")?;
        out.push(contiguous(vm, mem, space, name)?);
    }
    let at = vm.offset("TenuredGeneration", "_the_space")?;
    let space = rd(mem, old.wrapping_add(at), "TenuredGeneration::_the_space")?;
    out.push(contiguous(vm, mem, space, "old")?);
    Ok(out)
}

fn parallel(vm: &VmModel, mem: &dyn ReadMemory) -> Result<Vec<Space>, Error> {
    let young = rd(
        mem,
        vm.static_address("ParallelScavengeHeap", "_young_gen")?,
        "ParallelScavengeHeap::_young_gen",
    )?;
    let old = rd(
        mem,
        vm.static_address("ParallelScavengeHeap", "_old_gen")?,
        "ParallelScavengeHeap::_old_gen",
    )?;
    let bottom = vm.offset("MutableSpace", "_bottom")?;
    let top = vm.offset("MutableSpace", "_top")?;
    let mutable = |space: u64, name: &str| -> Result<Space, Error> {
        Ok(Space {
            name: name.to_string(),
            bottom: rd(mem, space.wrapping_add(bottom), "MutableSpace::_bottom")?,
            top: rd(mem, space.wrapping_add(top), "MutableSpace::_top")?,
            kind: SpaceKind::Contiguous,
        })
    };
    let mut out = Vec::new();
    for (field, name) in [("_eden_space", "eden"), ("_from_space", "from")] {
        let at = vm.offset("PSYoungGen", field)?;
        out.push(mutable(
            rd(mem, young.wrapping_add(at), "PSYoungGen's space")?,
            name,
        )?);
    }
    let at = vm.offset("PSOldGen", "_object_space")?;
    out.push(mutable(
        rd(mem, old.wrapping_add(at), "PSOldGen::_object_space")?,
        "old",
    )?);
    Ok(out)
}

fn g1(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<Vec<Space>, Error> {
    // JDK 23+ prefixes the region types with `G1`.
    let (manager, region, region_type) = if vm.has_type("G1HeapRegion") {
        ("G1HeapRegionManager", "G1HeapRegion", "G1HeapRegionType")
    } else {
        ("HeapRegionManager", "HeapRegion", "HeapRegionType")
    };
    let hrm = heap.wrapping_add(vm.offset("G1CollectedHeap", "_hrm")?);
    let table = hrm.wrapping_add(vm.offset(manager, "_regions")?);
    let base = rd(
        mem,
        table.wrapping_add(vm.offset("G1HeapRegionTable", "_base")?),
        "G1HeapRegionTable::_base",
    )?;
    let length = u64::from(
        mem.read_u32(table.wrapping_add(vm.offset("G1HeapRegionTable", "_length")?))
            .map_err(|e| Error::memory("G1HeapRegionTable::_length", e))?,
    );
    if length > MAX_REGIONS {
        return Err(Error::VmStructs(format!(
            "G1HeapRegionTable::_length is {length}, more than {MAX_REGIONS}"
        )));
    }
    let regions = mem
        .read_pointers(base, length as usize, MAX_REGIONS as usize)
        .map_err(|e| Error::memory("G1HeapRegionTable::_base", e))?;
    let bottom = vm.offset(region, "_bottom")?;
    let top = vm.offset(region, "_top")?;
    let tag = vm.offset(region, "_type")? + vm.offset(region_type, "_tag")?;
    let constant = |name: &str| vm.int(&format!("{region_type}::{name}"));
    let free = constant("FreeTag")?;
    let starts = constant("StartsHumongousTag")?;
    let continues = constant("ContinuesHumongousTag")?;
    let mut out = Vec::new();
    for (i, r) in regions.into_iter().enumerate() {
        if r == 0 {
            continue;
        }
        // The tag is a small enum; its low byte holds every value (little-endian).
        let t = i64::from(
            mem.read_u8(r.wrapping_add(tag))
                .map_err(|e| Error::memory("G1HeapRegionType::_tag", e))?,
        );
        if t == free || t == continues {
            continue;
        }
        out.push(Space {
            name: format!("region {i}"),
            bottom: rd(mem, r.wrapping_add(bottom), "G1HeapRegion::_bottom")?,
            top: rd(mem, r.wrapping_add(top), "G1HeapRegion::_top")?,
            kind: if t == starts {
                SpaceKind::HumongousStart
            } else {
                SpaceKind::Contiguous
            },
        });
    }
    Ok(out)
}

/// A thread's TLAB: `[start, top)` holds its objects, `[top, end)` (its `_end` plus the
/// alignment reserve: the hard end) is not parsable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Tlab {
    /// `ThreadLocalAllocBuffer::_start`.
    pub start: u64,
    /// `ThreadLocalAllocBuffer::_top`.
    pub top: u64,
    /// `_end` + the alignment reserve.
    pub end: u64,
}

/// The TLABs of the JavaThreads at `threads` (`Thread::_tlab`), sorted by `top`; a TLAB with a
/// null start or a top outside `[start, end]` is left out. The reserve is `align_object_size(max(lab_alignment_reserve,
/// _reserve_for_allocation_prefetch))` words (`ThreadLocalAllocBuffer::end_reserve`): JDK 25's
/// static `CollectedHeap::_lab_alignment_reserve`, before it the `int[]` header in words.
///
/// # Errors
/// [`Error::VmStructs`] when the TLAB entries are missing.
pub fn tlabs(vm: &VmModel, mem: &dyn ReadMemory, threads: &[u64]) -> Result<Vec<Tlab>, Error> {
    let tlab = vm.offset("Thread", "_tlab")?;
    let start = vm.offset("ThreadLocalAllocBuffer", "_start")?;
    let top = vm.offset("ThreadLocalAllocBuffer", "_top")?;
    let end = vm.offset("ThreadLocalAllocBuffer", "_end")?;
    let prefetch = vm
        .static_address("ThreadLocalAllocBuffer", "_reserve_for_allocation_prefetch")
        .ok()
        .and_then(|a| mem.read_u32(a).ok())
        .map_or(0, u64::from)
        .min(1 << 16);
    let align_words = u64::from(vm.layout.object_alignment / 8).max(1);
    // Before the static (JDK 21): `CollectedHeap::tlab_alloc_reserve()`, room for the smallest
    // filler (`min_dummy_object_size()`: an object header, 2 words), when that is more than
    // the object alignment.
    let lab = vm
        .static_address("CollectedHeap", "_lab_alignment_reserve")
        .ok()
        .and_then(|a| mem.read_u64(a).ok())
        .filter(|&w| w < 1 << 16)
        .unwrap_or_else(|| {
            let min = if vm.layout.compact_headers { 1 } else { 2 };
            if min > align_words { min } else { 0 }
        });
    let reserve = prefetch.max(lab).div_ceil(align_words) * align_words * 8;
    let mut out = Vec::new();
    for &t in threads {
        let at = t.wrapping_add(tlab);
        let (Ok(s), Ok(p), Ok(e)) = (
            mem.read_u64(at.wrapping_add(start)),
            mem.read_u64(at.wrapping_add(top)),
            mem.read_u64(at.wrapping_add(end)),
        ) else {
            continue;
        };
        if s == 0 || p < s || p > e {
            continue;
        }
        out.push(Tlab {
            start: s,
            top: p,
            end: e.saturating_add(reserve),
        });
    }
    out.sort_unstable_by_key(|t| (t.top, t.end));
    Ok(out)
}
