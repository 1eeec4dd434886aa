//! The heap summary that `jcmd <pid> GC.heap_info` prints (`CollectedHeap::print_on`), read
//! from vmStructs: each generation's reservation and commit, each space's bounds, G1's region
//! counts, ZGC's used and capacity, then Metaspace's used, committed and reserved.
//!
//! * Serial (`gc/serial/defNewGeneration.cpp`, `tenuredGeneration.cpp`, `generation.cpp`,
//!   `gc/shared/space.cpp`): `Generation::_virtual_space` (`VirtualSpace::_low_boundary`,
//!   `_high`, `_high_boundary`); `DefNewGeneration::_eden_space`, `_from_space`, `_to_space`
//!   and `TenuredGeneration::_the_space`, each `[_bottom, _top, _end)`; up to JDK 21 the tenured
//!   space also prints its block-offset threshold
//!   (`OffsetTableContigSpace::_offsets` / JDK 21 `TenuredSpace::_offsets`,
//!   `BlockOffsetArrayContigSpace::_next_offset_threshold`).
//! * Parallel (`gc/parallel/psYoungGen.cpp`, `psOldGen.cpp`, `mutableSpace.cpp`):
//!   `PSYoungGen::_virtual_space`/`PSOldGen::_virtual_space` (`PSVirtualSpace::_reserved_low_addr`,
//!   `_committed_high_addr`, `_reserved_high_addr`), the `MutableSpace`s (JDK 11:
//!   `ImmutableSpace::_bottom/_end`).
//! * G1 (`gc/g1/g1CollectedHeap.cpp`): `CollectedHeap::_reserved`, the committed regions (JDK 11:
//!   `HeapRegionManager::_num_committed`; later the regions whose memory is committed: readable live, `PF_W` in a core), used as
//!   the sum of the regions' `top - bottom` (what `used()` gives under the `Heap_lock`; JDK 11
//!   prints `_summary_bytes_used`), young and survivor regions counted by their `_type._tag`.
//! * ZGC, single generation (`gc/z/zPageAllocator.cpp`, JDK 21: `gc/x/`):
//!   `ZCollectedHeap::_heap` → `ZHeap::_page_allocator` → `ZPageAllocator::_used`, `_capacity`,
//!   `_max_capacity`.
//! * Metaspace, JDK 16+ (`memory/metaspace/runningCounters.hpp`, `virtualSpaceList.hpp`,
//!   `metaspaceContext.hpp`): not in vmStructs; read through libjvm's `.symtab`
//!   (`metaspace::RunningCounters::_used_class_counter`, `_used_nonclass_counter`, and each
//!   `MetaspaceContext`'s `VirtualSpaceList` reserved and committed word counters).
//! * Metaspace, JDK 11 to 15 (`memory/metaspace.cpp`, `memory/metaspace/virtualSpaceList.hpp`):
//!   likewise through `.symtab`: `MetaspaceUtils::_used_words[]` and `_capacity_words[]` (indexed
//!   by `Metaspace::MetadataType`: class 0, non-class 1) and `Metaspace::_space_list` /
//!   `_class_space_list`'s reserved and committed word counters.

use crate::error::{Error, VmError};
use crate::memory::ReadMemory;
use crate::vm::flags::FlagValue;
use crate::vm::rd;
use crate::vm::{Collector, VmModel};

/// One space of a generation: `[bottom, top)` holds objects, `[bottom, end)` is committed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SpaceUsage {
    /// jcmd's word for it: `eden`, `from`, `to`, `the` (Serial's tenured space), `object`
    /// (Parallel's old space).
    pub name: &'static str,
    /// `_bottom`.
    pub bottom: u64,
    /// `_top`.
    pub top: u64,
    /// `_end`.
    pub end: u64,
    /// Serial's tenured space up to JDK 21: the block-offset table's next threshold.
    pub threshold: Option<u64>,
}

impl SpaceUsage {
    /// `end - bottom`, in bytes.
    pub fn capacity(&self) -> u64 {
        self.end.saturating_sub(self.bottom)
    }
    /// `top - bottom`, in bytes.
    pub fn used(&self) -> u64 {
        self.top.saturating_sub(self.bottom)
    }
}

/// A generation of Serial or Parallel: its reservation, how much of it is committed, and its
/// spaces (young: eden, from, to; old: one).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GenerationUsage {
    /// The start of the reservation (`low_boundary`).
    pub low_boundary: u64,
    /// The end of what is committed (`high`).
    pub high: u64,
    /// The end of the reservation (`high_boundary`).
    pub high_boundary: u64,
    /// The spaces, in jcmd's order.
    pub spaces: Vec<SpaceUsage>,
}

impl GenerationUsage {
    /// What jcmd counts: every space but a young generation's to-space (empty between
    /// collections), in bytes: (capacity, used).
    pub fn totals(&self) -> (u64, u64) {
        self.spaces
            .iter()
            .filter(|s| s.name != "to")
            .fold((0, 0), |(c, u), s| (c + s.capacity(), u + s.used()))
    }
}

/// CMS's old generation (`ConcurrentMarkSweepGeneration`): a free-list space whose used
/// bytes are its capacity less its free lists (`CompactibleFreeListSpace::used`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FreeListGeneration {
    /// The start of the reservation (`Generation::_virtual_space`'s `_low_boundary`).
    pub low_boundary: u64,
    /// The end of what is committed (`_high`).
    pub high: u64,
    /// The end of the reservation (`_high_boundary`).
    pub high_boundary: u64,
    /// The space's `end - bottom`, bytes.
    pub capacity: u64,
    /// `capacity` less the free chunks: the indexed free lists (`_indexedFreeList[i]`, each
    /// `_count` chunks of `i` words), the dictionary of larger chunks
    /// (`AFLBinaryTreeDictionary::_total_size`, words) and the linear allocation block
    /// (`_smallLinearAllocBlock._word_size`), bytes.
    pub used: u64,
}

/// The collector's part of the summary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "collector")]
pub enum CollectorUsage {
    /// `-XX:+UseSerialGC`: `def new generation` and `tenured generation`.
    Serial {
        /// The young generation (eden, from, to).
        young: GenerationUsage,
        /// The tenured generation (one space).
        old: GenerationUsage,
    },
    /// `-XX:+UseConcMarkSweepGC` (JDK 9 to 13): `par new generation` and `concurrent
    /// mark-sweep generation`.
    ConcMarkSweep {
        /// The young generation (ParNew: eden, from, to).
        young: GenerationUsage,
        /// The old generation: its reservation and commit, with no space line.
        old: FreeListGeneration,
    },
    /// `-XX:+UseParallelGC`: `PSYoungGen` and `ParOldGen`.
    Parallel {
        /// The young generation (eden, from, to).
        young: GenerationUsage,
        /// The old generation (one space).
        old: GenerationUsage,
    },
    /// `-XX:+UseG1GC`: `garbage-first heap`.
    G1 {
        /// The reservation's start.
        reserved_start: u64,
        /// The reservation's end.
        reserved_end: u64,
        /// Committed bytes (committed regions × region size).
        committed: u64,
        /// Used bytes (every region's `top - bottom`).
        used: u64,
        /// `HeapRegion::GrainBytes`.
        region_size: u64,
        /// Eden and survivor regions.
        young_regions: u64,
        /// Survivor regions.
        survivor_regions: u64,
    },
    /// `-XX:+UseShenandoahGC`: `Shenandoah Heap`.
    Shenandoah {
        /// `max_capacity()`: `_num_regions × RegionSizeBytes`, bytes.
        max_capacity: u64,
        /// `soft_max_capacity()`, bytes: the `SoftMaxHeapSize` flag, which the heap follows
        /// (clamped to its minimum and maximum); `None` before JDK 13, which has no such flag.
        soft_max_capacity: Option<u64>,
        /// `ShenandoahHeap::_committed`, bytes.
        committed: u64,
        /// `used()`, bytes: `ShenandoahHeap::_used` (up to JDK 24), the free set's
        /// `_total_global_used` (later), or the non-empty regions' `top - bottom`.
        used: u64,
        /// `_num_regions`.
        regions: u64,
        /// `ShenandoahHeapRegion::RegionSizeBytes`.
        region_size: u64,
        /// The reservation's start (`CollectedHeap::_reserved`).
        reserved_start: u64,
        /// The reservation's end.
        reserved_end: u64,
    },
    /// `-XX:+UseEpsilonGC`: `Epsilon Heap` and its one allocation space.
    Epsilon {
        /// `EpsilonHeap::_space` (named `space`).
        space: SpaceUsage,
    },
    /// `-XX:+UseZGC` (single generation): `ZHeap`.
    Z {
        /// `ZPageAllocator::_used`, bytes.
        used: u64,
        /// `ZPageAllocator::_capacity`, bytes.
        capacity: u64,
        /// `ZPageAllocator::_max_capacity`, bytes.
        max_capacity: u64,
    },
}

/// Metaspace's bytes, all of it or its class space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MetaspaceUsage {
    /// Bytes handed out to class loaders.
    pub used: u64,
    /// Bytes of the chunks the class loaders hold (JDK 11 to 15 print it; `None` from JDK 16,
    /// whose metaspace no longer counts it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u64>,
    /// Bytes committed.
    pub committed: u64,
    /// Bytes reserved.
    pub reserved: u64,
}

/// What `jcmd <pid> GC.heap_info` prints, as data.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HeapInfo {
    /// The JDK feature release (the layout of the text differs between 21 and 25).
    pub jdk: u32,
    /// The collector's generations, spaces or regions.
    pub heap: CollectorUsage,
    /// Metaspace in total, when read (JDK 16 to 24 print it; JDK 25 no longer does).
    pub metaspace: Option<MetaspaceUsage>,
    /// The class space part of it, when compressed class pointers are on.
    pub class_space: Option<MetaspaceUsage>,
    /// What jcmd prints that is not read, in jcmd's words (the printer leaves those lines out):
    /// Shenandoah's `Status:` (its GC state bits) and `Collection set:` (the map's address),
    /// ZGC's `Cache` (JDK 25's mapped cache), which vmStructs does not export.
    pub left_out: Vec<&'static str>,
}

/// Reads the heap summary of the VM `vm`. `local` resolves a libjvm `.symtab` symbol to its
/// run-time address (for Metaspace; `None` everywhere leaves Metaspace out).
///
/// # Errors
/// [`Error::Unsupported`] for JDK 8's CMS (JDK 8's jcmd has no `GC.heap_info`); [`Error::Vm`] when an entry is missing or a bound is
/// implausible; [`Error::Memory`].
pub fn heap_info(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    local: &dyn Fn(&str) -> Option<u64>,
) -> Result<HeapInfo, Error> {
    let heap = super::spaces::collected_heap(vm, mem)?;
    let unsupported = |what| Error::Unsupported {
        what,
        os: std::env::consts::OS,
    };
    let mut left_out = Vec::new();
    let usage = match vm.layout.collector {
        Some(Collector::Serial) => serial(vm, mem, heap)?,
        Some(Collector::Parallel) => parallel(vm, mem)?,
        Some(Collector::G1) => g1(vm, mem, heap)?,
        Some(Collector::Z) => {
            if vm.has_type("ZPartition") {
                // JDK 25: the page cache's lines (`ZMappedCache`, not exported).
                left_out.extend(["Cache", "size classes"]);
            }
            z(vm, mem, heap)?
        }
        Some(Collector::Shenandoah) => {
            left_out.extend(["Status", "Collection set"]);
            shenandoah(vm, mem, heap)?
        }
        Some(Collector::Epsilon) => {
            let space = rd(
                mem,
                heap.wrapping_add(vm.offset("EpsilonHeap", "_space")?),
                "EpsilonHeap::_space",
            )?;
            CollectorUsage::Epsilon {
                space: self::space(mem, space, "space", contiguous_bounds(vm)?)?,
            }
        }
        Some(Collector::ConcMarkSweep) if vm.major >= 9 => cms(vm, mem, heap)?,
        Some(Collector::ConcMarkSweep) => {
            return Err(unsupported(
                "a heap summary of JDK 8 (its jcmd has no GC.heap_info)",
            ));
        }
        None => {
            return Err(unsupported(
                "a heap summary of a heap whose collector the flags do not name",
            ));
        }
    };
    let read = match vm.major {
        11..=15 => metaspace_before_16(mem, local),
        16..=24 => metaspace(mem, local),
        _ => None,
    };
    let (metaspace, class_space) = match read {
        Some((all, class)) => (
            Some(all),
            class.filter(|_| vm.layout.compressed_class_pointers),
        ),
        None => (None, None),
    };
    Ok(HeapInfo {
        jdk: vm.major,
        heap: usage,
        metaspace,
        class_space,
        left_out,
    })
}

/// Checks that `[low, high)` is an ordered range.
fn ordered(what: &str, low: u64, high: u64) -> Result<(), Error> {
    if high < low {
        return Err(VmError::Implausible {
            what: what.to_owned().into(),
            detail: format!("{high:#x} below {low:#x}"),
        }
        .into());
    }
    Ok(())
}

fn space(
    mem: &dyn ReadMemory,
    at: u64,
    name: &'static str,
    (bottom, top, end): (u64, u64, u64),
) -> Result<SpaceUsage, Error> {
    let s = SpaceUsage {
        name,
        bottom: rd(mem, at.wrapping_add(bottom), "space's _bottom")?,
        top: rd(mem, at.wrapping_add(top), "space's _top")?,
        end: rd(mem, at.wrapping_add(end), "space's _end")?,
        threshold: None,
    };
    ordered(name, s.bottom, s.top)?;
    ordered(name, s.top, s.end)?;
    Ok(s)
}

/// A young generation's eden, from and to spaces (`ty::_eden_space`, ...: `DefNewGeneration`'s
/// `ContiguousSpace*`s or `PSYoungGen`'s `MutableSpace*`s, `bounds` their `_bottom`, `_top`,
/// `_end`).
fn young_spaces(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    ty: &str,
    young: u64,
    bounds: (u64, u64, u64),
) -> Result<Vec<SpaceUsage>, Error> {
    let mut out = Vec::new();
    for (field, name) in [
        ("_eden_space", "eden"),
        ("_from_space", "from"),
        ("_to_space", "to"),
    ] {
        let p = rd(
            mem,
            young.wrapping_add(vm.offset(ty, field)?),
            "the young generation's space",
        )?;
        out.push(space(mem, p, name, bounds)?);
    }
    Ok(out)
}

/// The offsets of a `ContiguousSpace`'s `_bottom`, `_top` and `_end` (`gc/shared/space.hpp`;
/// up to JDK 21 `_bottom` and `_end` are its superclass `Space`'s).
fn contiguous_bounds(vm: &VmModel) -> Result<(u64, u64, u64), Error> {
    Ok((
        vm.offset("ContiguousSpace", "_bottom")
            .or_else(|_| vm.offset("Space", "_bottom"))?,
        vm.offset("ContiguousSpace", "_top")?,
        vm.offset("ContiguousSpace", "_end")
            .or_else(|_| vm.offset("Space", "_end"))?,
    ))
}

/// `CollectedHeap::_reserved` (a `MemRegion`: `_start`, `_word_size`) as `[start, end)`.
fn reserved(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<(u64, u64), Error> {
    let reserved = heap.wrapping_add(vm.offset("CollectedHeap", "_reserved")?);
    let start = rd(
        mem,
        reserved.wrapping_add(vm.offset("MemRegion", "_start")?),
        "CollectedHeap::_reserved",
    )?;
    let words = rd(
        mem,
        reserved.wrapping_add(vm.offset("MemRegion", "_word_size")?),
        "CollectedHeap::_reserved",
    )?;
    let end = words
        .checked_mul(8)
        .and_then(|b| start.checked_add(b))
        .ok_or_else(|| VmError::Implausible {
            what: "CollectedHeap::_reserved".into(),
            detail: format!("{words} words from {start:#x}"),
        })?;
    Ok((start, end))
}

/// A `Generation`'s `_virtual_space` (`memory/virtualspace.hpp`): `_low_boundary`, `_high`,
/// `_high_boundary`, checked to be in order.
fn virtual_space(vm: &VmModel, mem: &dyn ReadMemory, g: u64) -> Result<(u64, u64, u64), Error> {
    let at = g.wrapping_add(vm.offset("Generation", "_virtual_space")?);
    let word = |field: &str| -> Result<u64, Error> {
        rd(
            mem,
            at.wrapping_add(vm.offset("VirtualSpace", field)?),
            "Generation::_virtual_space",
        )
    };
    let out = (
        word("_low_boundary")?,
        word("_high")?,
        word("_high_boundary")?,
    );
    ordered("generation", out.0, out.1)?;
    ordered("generation", out.1, out.2)?;
    Ok(out)
}

/// A `Generation` (Serial's, ParNew's, CMS's) with its `_virtual_space` and `spaces`.
fn generation(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    g: u64,
    spaces: Vec<SpaceUsage>,
) -> Result<GenerationUsage, Error> {
    let (low_boundary, high, high_boundary) = virtual_space(vm, mem, g)?;
    Ok(GenerationUsage {
        low_boundary,
        high,
        high_boundary,
        spaces,
    })
}

/// CMS (`gc/cms/concurrentMarkSweepGeneration.cpp`, `compactibleFreeListSpace.cpp`): ParNew's
/// young generation as Serial's, and the old generation's free-list space
/// (`ConcurrentMarkSweepGeneration::_cmsSpace`), its used bytes its capacity less its free
/// chunks, as the Serviceability Agent's `CompactibleFreeListSpace.free` sums them.
fn cms(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<CollectorUsage, Error> {
    let (young, old) = super::spaces::serial_generations(vm, mem, heap)?;
    let bounds = contiguous_bounds(vm)?;
    let spaces = young_spaces(vm, mem, "DefNewGeneration", young, bounds)?;
    let young = generation(vm, mem, young, spaces)?;
    let (space, bottom, end) = super::spaces::cms_space(vm, mem, old)?;
    ordered("CompactibleFreeListSpace", bottom, end)?;
    let capacity = end - bottom;
    let ty = "CompactibleFreeListSpace";
    // The indexed lists: `IndexSetSize` (257) `AdaptiveFreeList<FreeChunk>`s, list i holding
    // chunks of i words (`compactibleFreeListSpace.hpp`; the SA's `IndexSetSize`).
    const INDEX_SET_SIZE: u64 = 257;
    let list_type = "AdaptiveFreeList<FreeChunk>";
    let stride = vm.size_of(list_type)?;
    if !(16..=1024).contains(&stride) {
        return Err(VmError::Implausible {
            what: format!("sizeof({list_type})").into(),
            detail: format!("{stride} bytes"),
        }
        .into());
    }
    let lists = space.wrapping_add(vm.offset(ty, "_indexedFreeList[0]")?);
    let count_at = vm.offset(list_type, "_count")?;
    let mut free_words = 0u64;
    for i in 0..INDEX_SET_SIZE {
        let count = rd(
            mem,
            lists.wrapping_add(i * stride + count_at),
            "AdaptiveFreeList<FreeChunk>::_count",
        )? as i64;
        if count < 0 {
            return Err(VmError::Implausible {
                what: format!("free list {i}'s _count").into(),
                detail: format!("{count}"),
            }
            .into());
        }
        free_words = free_words.saturating_add(i.saturating_mul(count as u64));
    }
    let dictionary = rd(
        mem,
        space.wrapping_add(vm.offset(ty, "_dictionary")?),
        "CompactibleFreeListSpace::_dictionary",
    )?;
    if dictionary != 0 {
        free_words = free_words.saturating_add(rd(
            mem,
            dictionary.wrapping_add(vm.offset("AFLBinaryTreeDictionary", "_total_size")?),
            "AFLBinaryTreeDictionary::_total_size",
        )?);
    }
    let lab = space.wrapping_add(vm.offset(ty, "_smallLinearAllocBlock")?);
    free_words = free_words.saturating_add(rd(
        mem,
        lab.wrapping_add(vm.offset("LinearAllocBlock", "_word_size")?),
        "LinearAllocBlock::_word_size",
    )?);
    let free = free_words.saturating_mul(8);
    if free > capacity {
        return Err(VmError::Implausible {
            what: "CMS's free lists".into(),
            detail: format!("{free} bytes free in a space of {capacity}"),
        }
        .into());
    }
    let (low_boundary, high, high_boundary) = virtual_space(vm, mem, old)?;
    Ok(CollectorUsage::ConcMarkSweep {
        young,
        old: FreeListGeneration {
            low_boundary,
            high,
            high_boundary,
            capacity,
            used: capacity - free,
        },
    })
}

fn serial(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<CollectorUsage, Error> {
    let (young, old) = super::spaces::serial_generations(vm, mem, heap)?;
    let bounds = contiguous_bounds(vm)?;
    let young_spaces = young_spaces(vm, mem, "DefNewGeneration", young, bounds)?;
    let the = rd(
        mem,
        old.wrapping_add(vm.offset("TenuredGeneration", "_the_space")?),
        "TenuredGeneration::_the_space",
    )?;
    let mut tenured = space(mem, the, "the", bounds)?;
    // Up to JDK 21 the tenured space is an offset-table space that prints its threshold.
    if let Ok(offsets) = vm
        .offset("TenuredSpace", "_offsets")
        .or_else(|_| vm.offset("OffsetTableContigSpace", "_offsets"))
    {
        let t = vm.offset("BlockOffsetArrayContigSpace", "_next_offset_threshold")?;
        tenured.threshold = Some(rd(
            mem,
            the.wrapping_add(offsets).wrapping_add(t),
            "BlockOffsetArrayContigSpace::_next_offset_threshold",
        )?);
    }
    Ok(CollectorUsage::Serial {
        young: generation(vm, mem, young, young_spaces)?,
        old: generation(vm, mem, old, vec![tenured])?,
    })
}

fn parallel(vm: &VmModel, mem: &dyn ReadMemory) -> Result<CollectorUsage, Error> {
    let gen_at = |field: &str| -> Result<u64, Error> {
        rd(
            mem,
            vm.static_address("ParallelScavengeHeap", field)?,
            "ParallelScavengeHeap's generation",
        )
    };
    let (young, old) = (gen_at("_young_gen")?, gen_at("_old_gen")?);
    // JDK 11: MutableSpace's bounds are its superclass ImmutableSpace's.
    let member = |name: &str| {
        vm.offset("MutableSpace", name)
            .or_else(|_| vm.offset("ImmutableSpace", name))
    };
    let bounds = (
        member("_bottom")?,
        vm.offset("MutableSpace", "_top")?,
        member("_end")?,
    );
    let generation = |ty: &str, g: u64, spaces| -> Result<GenerationUsage, Error> {
        let vs = rd(
            mem,
            g.wrapping_add(vm.offset(ty, "_virtual_space")?),
            "the generation's PSVirtualSpace",
        )?;
        let word = |field: &str| -> Result<u64, Error> {
            rd(
                mem,
                vs.wrapping_add(vm.offset("PSVirtualSpace", field)?),
                "PSVirtualSpace",
            )
        };
        let out = GenerationUsage {
            low_boundary: word("_reserved_low_addr")?,
            high: word("_committed_high_addr")?,
            high_boundary: word("_reserved_high_addr")?,
            spaces,
        };
        ordered(ty, out.low_boundary, out.high)?;
        ordered(ty, out.high, out.high_boundary)?;
        Ok(out)
    };
    let young_spaces = young_spaces(vm, mem, "PSYoungGen", young, bounds)?;
    let object = rd(
        mem,
        old.wrapping_add(vm.offset("PSOldGen", "_object_space")?),
        "PSOldGen::_object_space",
    )?;
    let old_spaces = vec![space(mem, object, "object", bounds)?];
    Ok(CollectorUsage::Parallel {
        young: generation("PSYoungGen", young, young_spaces)?,
        old: generation("PSOldGen", old, old_spaces)?,
    })
}

fn g1(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<CollectorUsage, Error> {
    let table = super::spaces::G1Table::read(vm, mem, heap)?;
    let region = if vm.has_type("G1HeapRegion") {
        "G1HeapRegion"
    } else {
        "HeapRegion"
    };
    let (reserved_start, reserved_end) = reserved(vm, mem, heap)?;
    let region_size = rd(
        mem,
        vm.static_address(region, "GrainBytes")?,
        "HeapRegion::GrainBytes",
    )?;
    if !region_size.is_power_of_two() || !(1 << 20..=1 << 29).contains(&region_size) {
        return Err(VmError::Implausible {
            what: format!("{region}::GrainBytes").into(),
            detail: format!("{region_size} (a power of two, 1 MiB to 512 MiB)"),
        }
        .into());
    }
    let (free, eden, survivor) = (
        table.constant(vm, "FreeTag")?,
        table.constant(vm, "EdenTag")?,
        table.constant(vm, "SurvTag")?,
    );
    let manager = if vm.has_type("G1HeapRegionManager") {
        "G1HeapRegionManager"
    } else {
        "HeapRegionManager"
    };
    let hrm = heap.wrapping_add(vm.offset("G1CollectedHeap", "_hrm")?);
    // JDK 11 counts the committed regions; later JDKs keep a bitmap that vmStructs does not
    // export, so a region is committed when its memory can be read.
    let num_committed = vm
        .offset(manager, "_num_committed")
        .ok()
        .map(|o| mem.read_u32(hrm.wrapping_add(o)).map(u64::from))
        .transpose()
        .map_err(|e| Error::memory("HeapRegionManager::_num_committed", e))?;
    let (mut used, mut committed, mut young, mut survivors) = (0u64, 0u64, 0u64, 0u64);
    for &r in &table.regions {
        if r == 0 {
            continue;
        }
        let b = rd(mem, r.wrapping_add(table.bottom), "HeapRegion::_bottom")?;
        let t = rd(mem, r.wrapping_add(table.top), "HeapRegion::_top")?;
        if t < b || t - b > region_size {
            return Err(VmError::Implausible {
                what: format!("G1 region at {b:#x}").into(),
                detail: format!("top {t:#x} outside it"),
            }
            .into());
        }
        let k = table.tag_of(mem, r)?;
        if num_committed.is_none() && mem.committed(b) {
            committed += 1;
        }
        if k == free {
            continue;
        }
        used += t - b;
        if k == eden || k == survivor {
            young += 1;
        }
        if k == survivor {
            survivors += 1;
        }
    }
    // JDK 11 prints `used_unlocked()`: `_summary_bytes_used`, which leaves out the mutator's
    // current allocation region; from JDK 17 (12 to 16 are not tested) the regions' sum.
    if vm.major <= 11 {
        used = rd(
            mem,
            heap.wrapping_add(vm.offset("G1CollectedHeap", "_summary_bytes_used")?),
            "G1CollectedHeap::_summary_bytes_used",
        )?;
    }
    Ok(CollectorUsage::G1 {
        reserved_start,
        reserved_end,
        committed: num_committed.unwrap_or(committed) * region_size,
        used,
        region_size,
        young_regions: young,
        survivor_regions: survivors,
    })
}

/// Shenandoah (`gc/shenandoah/shenandoahHeap.cpp`'s `print_on`): the region table's size,
/// `_committed`, the used bytes and the reservation; `SoftMaxHeapSize` from the flag table.
fn shenandoah(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<CollectorUsage, Error> {
    let regions = rd(
        mem,
        heap.wrapping_add(vm.offset("ShenandoahHeap", "_num_regions")?),
        "ShenandoahHeap::_num_regions",
    )?;
    let region_size = rd(
        mem,
        vm.static_address("ShenandoahHeapRegion", "RegionSizeBytes")?,
        "ShenandoahHeapRegion::RegionSizeBytes",
    )?;
    if !region_size.is_power_of_two() || !(1 << 18..=1 << 30).contains(&region_size) {
        return Err(VmError::Implausible {
            what: "ShenandoahHeapRegion::RegionSizeBytes".into(),
            detail: format!("{region_size} (a power of two, 256 KiB to 1 GiB)"),
        }
        .into());
    }
    let (reserved_start, reserved_end) = reserved(vm, mem, heap)?;
    let max_capacity = regions
        .checked_mul(region_size)
        .filter(|&m| m <= reserved_end - reserved_start)
        .ok_or_else(|| VmError::Implausible {
            what: "ShenandoahHeap::_num_regions".into(),
            detail: format!(
                "{regions} regions of {region_size} bytes beyond the reservation [{reserved_start:#x}, {reserved_end:#x})"
            ),
        })?;
    let committed = rd(
        mem,
        heap.wrapping_add(vm.offset("ShenandoahHeap", "_committed")?),
        "ShenandoahHeap::_committed",
    )?;
    let used = if let Ok(o) = vm.offset("ShenandoahHeap", "_used") {
        rd(mem, heap.wrapping_add(o), "ShenandoahHeap::_used")?
    } else if let (Ok(f), Ok(u)) = (
        vm.offset("ShenandoahHeap", "_free_set"),
        vm.offset("ShenandoahFreeSet", "_total_global_used"),
    ) {
        let set = rd(mem, heap.wrapping_add(f), "ShenandoahHeap::_free_set")?;
        rd(
            mem,
            set.wrapping_add(u),
            "ShenandoahFreeSet::_total_global_used",
        )?
    } else {
        shenandoah_regions_used(vm, mem, heap)?
    };
    for (what, v) in [("_committed", committed), ("used", used)] {
        if v > max_capacity {
            return Err(VmError::Implausible {
                what: format!("ShenandoahHeap's {what}").into(),
                detail: format!("{v} bytes, above the heap's {max_capacity}"),
            }
            .into());
        }
    }
    // `_soft_max_size` is not exported; it follows the manageable flag (ShenandoahControlThread
    // applies a change), between the heap's minimum (`MinHeapSize`) and maximum.
    let flags = crate::vm::flags::read_flags(vm, mem)?;
    let size = |name: &str| {
        flags
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| match f.value {
                FlagValue::SizeT(v) | FlagValue::Uintx(v) => Some(v),
                _ => None,
            })
    };
    // JDK 11 backports it as `ShenandoahSoftMaxHeapSize`.
    let soft_max_capacity = size("SoftMaxHeapSize")
        .or_else(|| size("ShenandoahSoftMaxHeapSize"))
        .map(|soft| {
            let min = size("MinHeapSize").unwrap_or(0).min(max_capacity);
            soft.clamp(min, max_capacity)
        });
    Ok(CollectorUsage::Shenandoah {
        max_capacity,
        soft_max_capacity,
        committed,
        used,
        regions,
        region_size,
        reserved_start,
        reserved_end,
    })
}

/// JDK 25 exports no used counter: the sum of `top - bottom` of every region that is neither
/// empty nor trash (`ShenandoahHeapRegion::used()`, which `ShenandoahHeap::used()` accounts).
fn shenandoah_regions_used(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<u64, Error> {
    let table = super::spaces::ShenandoahTable::read(vm, mem, heap)?;
    let constant = |name: &str| super::spaces::ShenandoahTable::constant(vm, name);
    let empty = [
        constant("_empty_uncommitted")?,
        constant("_empty_committed")?,
        constant("_trash")?,
    ];
    let mut used = 0u64;
    for &r in table.regions.iter().filter(|&&r| r != 0) {
        if empty.contains(&table.state_of(mem, r)?) {
            continue;
        }
        let (bottom, top) = table.bounds(mem, r)?;
        used = used.saturating_add(top.saturating_sub(bottom));
    }
    Ok(used)
}

fn z(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<CollectorUsage, Error> {
    // JDK 21 names the single-generation classes X*.
    let p = if vm.has_type("XCollectedHeap") && vm.layout.zpointer_load_shift.is_none() {
        "X"
    } else {
        "Z"
    };
    let allocator = heap
        .wrapping_add(vm.offset(&format!("{p}CollectedHeap"), "_heap")?)
        .wrapping_add(vm.offset(&format!("{p}Heap"), "_page_allocator")?);
    let ty = format!("{p}PageAllocator");
    let word = |at: u64, ty: &str, field: &str| -> Result<u64, Error> {
        rd(
            mem,
            at.wrapping_add(vm.offset(ty, field)?),
            "ZPageAllocator",
        )
    };
    // Later JDKs name it `_static_max_capacity`.
    let max_capacity = word(allocator, &ty, "_max_capacity")
        .or_else(|_| word(allocator, &ty, "_static_max_capacity"))?;
    let (used, capacity) = if vm.field(&ty, "_used").is_some() {
        (
            word(allocator, &ty, "_used")?,
            word(allocator, &ty, "_capacity")?,
        )
    } else {
        // JDK 25: one `ZPartition` per NUMA node, in a `ZPerNUMA` array whose values are
        // `ZValueStorage`'s 4 KiB apart (`gc/z/zValue.hpp`; the SA's `ZPerNUMAZPartition`).
        let nodes = mem
            .read_u32(vm.static_address("ZNUMA", "_count")?)
            .map_err(|e| Error::memory("ZNUMA::_count", e))?;
        if !(1..=1024).contains(&nodes) {
            return Err(VmError::Implausible {
                what: "ZNUMA::_count".into(),
                detail: format!("{nodes} (1 to 1024)"),
            }
            .into());
        }
        let values = word(
            allocator.wrapping_add(vm.offset(&ty, "_partitions")?),
            "ZPerNUMAZPartition",
            "_addr",
        )?;
        let (mut used, mut capacity) = (0u64, 0u64);
        for node in 0..u64::from(nodes) {
            let partition = values.wrapping_add(node * 4096);
            used = used.saturating_add(word(partition, "ZPartition", "_used")?);
            capacity = capacity.saturating_add(word(partition, "ZPartition", "_capacity")?);
        }
        (used, capacity)
    };
    if used > capacity || capacity > max_capacity {
        return Err(VmError::Implausible {
            what: "ZPageAllocator".into(),
            detail: format!(
                "used {used} above capacity {capacity}, or capacity above max capacity {max_capacity}"
            ),
        }
        .into());
    }
    Ok(CollectorUsage::Z {
        used,
        capacity,
        max_capacity,
    })
}

/// Metaspace through libjvm's local symbols (JDK 16+'s metaspace): the used counters (words)
/// and each context's `VirtualSpaceList` reserved (at +40) and committed (at +48) word
/// counters (`memory/metaspace/virtualSpaceList.hpp`: name, first node, node counter,
/// can-expand, commit limiter, then the two `SizeCounter`s). `None` when a symbol is missing
/// or a figure implausible.
fn metaspace(
    mem: &dyn ReadMemory,
    local: &dyn Fn(&str) -> Option<u64>,
) -> Option<(MetaspaceUsage, Option<MetaspaceUsage>)> {
    let word = |a: u64| mem.read_u64(a).ok();
    let used = |sym: &str| word(local(sym)?);
    let context = |sym: &str| -> Option<(u64, u64)> {
        let ctx = word(local(sym)?)?;
        if ctx == 0 {
            return None;
        }
        let list = word(ctx.checked_add(8)?)?;
        let reserved = word(list.checked_add(40)?)?;
        let committed = word(list.checked_add(48)?)?;
        (committed <= reserved && reserved < 1 << 40).then_some((reserved, committed))
    };
    let nonclass_used = used(METASPACE_SYMBOLS[0])?;
    let (nonclass_reserved, nonclass_committed) = context(METASPACE_SYMBOLS[2])?;
    let class = match (used(METASPACE_SYMBOLS[1]), context(METASPACE_SYMBOLS[3])) {
        (Some(u), Some((r, c))) if u <= c => Some(MetaspaceUsage {
            used: u * 8,
            capacity: None,
            committed: c * 8,
            reserved: r * 8,
        }),
        _ => None,
    };
    if nonclass_used > nonclass_committed {
        return None;
    }
    let c = class.unwrap_or(MetaspaceUsage {
        used: 0,
        capacity: None,
        committed: 0,
        reserved: 0,
    });
    Some((
        MetaspaceUsage {
            used: nonclass_used * 8 + c.used,
            capacity: None,
            committed: nonclass_committed * 8 + c.committed,
            reserved: nonclass_reserved * 8 + c.reserved,
        },
        class,
    ))
}

/// Metaspace through libjvm's local symbols (JDK 11 to 15's metaspace, `memory/metaspace.cpp`):
/// `MetaspaceUtils::_used_words[2]` and `_capacity_words[2]` (words; index 0 the class space,
/// 1 the rest: `Metaspace::MetadataType`), and the `VirtualSpaceList`s that
/// `Metaspace::_space_list` and `_class_space_list` point at
/// (`memory/metaspace/virtualSpaceList.hpp`: first node, current node, `_is_class` (a bool),
/// then `_reserved_words` at +24 and `_committed_words` at +32). The class list is absent
/// (null) without compressed class pointers. `None` when a symbol is missing, a list's
/// `_is_class` is not the list's kind, or a figure is implausible (used above capacity above
/// committed above reserved).
fn metaspace_before_16(
    mem: &dyn ReadMemory,
    local: &dyn Fn(&str) -> Option<u64>,
) -> Option<(MetaspaceUsage, Option<MetaspaceUsage>)> {
    let word = |a: u64| mem.read_u64(a).ok();
    let used = local(METASPACE_SYMBOLS[4])?;
    let capacity = local(METASPACE_SYMBOLS[5])?;
    // `kind` 0 is the class space (`Metaspace::ClassType`), 1 the rest.
    let usage = |kind: u64, list_symbol: &str| -> Option<Option<MetaspaceUsage>> {
        let list = word(local(list_symbol)?)?;
        if list == 0 {
            return Some(None);
        }
        let is_class = mem.read_u8(list.checked_add(16)?).ok()?;
        let reserved = word(list.checked_add(24)?)?;
        let committed = word(list.checked_add(32)?)?;
        let used = word(used.checked_add(kind * 8)?)?;
        let capacity = word(capacity.checked_add(kind * 8)?)?;
        let plausible = u64::from(is_class) == 1 - kind
            && used <= capacity
            && capacity <= committed
            && committed <= reserved
            && reserved < 1 << 40;
        plausible.then_some(Some(MetaspaceUsage {
            used: used * 8,
            capacity: Some(capacity * 8),
            committed: committed * 8,
            reserved: reserved * 8,
        }))
    };
    let nonclass = usage(1, METASPACE_SYMBOLS[6])??;
    let class = usage(0, METASPACE_SYMBOLS[7])?;
    let sum = |f: fn(&MetaspaceUsage) -> u64| f(&nonclass) + class.as_ref().map_or(0, f);
    Some((
        MetaspaceUsage {
            used: sum(|m| m.used),
            capacity: Some(sum(|m| m.capacity.unwrap_or(0))),
            committed: sum(|m| m.committed),
            reserved: sum(|m| m.reserved),
        },
        class,
    ))
}

/// The libjvm `.symtab` symbols [`heap_info`] asks its `local` resolver for: JDK 16 to 24's
/// four, then JDK 11 to 15's four.
pub const METASPACE_SYMBOLS: [&str; 8] = [
    "_ZN9metaspace15RunningCounters22_used_nonclass_counterE",
    "_ZN9metaspace15RunningCounters19_used_class_counterE",
    "_ZN9metaspace16MetaspaceContext23_nonclass_space_contextE",
    "_ZN9metaspace16MetaspaceContext20_class_space_contextE",
    "_ZN14MetaspaceUtils11_used_wordsE",
    "_ZN14MetaspaceUtils15_capacity_wordsE",
    "_ZN9Metaspace11_space_listE",
    "_ZN9Metaspace17_class_space_listE",
];
