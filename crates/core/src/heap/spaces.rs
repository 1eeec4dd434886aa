//! The collector's spaces, read from vmStructs: the `[bottom, top)` ranges that hold objects,
//! and the unused parts of the threads' TLABs inside them.
//!
//! * Heap: `Universe::_collectedHeap` (`gc/shared/collectedHeap.hpp`); the collector from the
//!   flags (`vm::Collector`).
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
//! * Shenandoah (`gc/shenandoah/shenandoahHeap.hpp`, `shenandoahHeapRegion.hpp`):
//!   `ShenandoahHeap::_regions[0.._num_regions)` by `_state` (see `shenandoah` below).
//! * Epsilon (`gc/epsilon/epsilonHeap.hpp`): `EpsilonHeap::_space`, one `ContiguousSpace`.
//! * ZGC (`gc/z/zPageTable.hpp`, `zPage.hpp`, `zGranuleMap.hpp`, `zAddress.hpp`; JDK 21's
//!   single generation: `gc/x/`, classes `X*`): see `z` below.
//! * TLABs: `Thread::_tlab` (`ThreadLocalAllocBuffer::_start/_top/_end`,
//!   `gc/shared/threadLocalAllocBuffer.hpp`): `[top, end + alignment_reserve)` is not parsable.

use crate::error::{Error, VmEntry, VmError};
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
    /// A G1 starts-humongous region, a Shenandoah humongous start or a ZGC large page: one
    /// object at `bottom`, which may run on into the next (continues-humongous) regions.
    HumongousStart,
    /// A ZGC medium page: objects one after another, each at an address aligned to this many
    /// bytes (`ZObjectAlignmentMedium`); the gaps hold nothing.
    Aligned(u64),
    /// A Shenandoah region in the collection set: back to back like
    /// [`SpaceKind::Contiguous`], but an object whose mark word is forwarded has been copied
    /// out and is stepped over.
    CollectionSet,
    /// CMS's old generation (a `CompactibleFreeListSpace`, JDK 8 to 13): objects and free
    /// chunks one after another from `bottom` to `top` (the space's `_end`), a free chunk
    /// stepped over by its own size, an object's block at least the smallest chunk.
    FreeList(FreeChunks),
}

/// How a CMS space tells its free chunks (`FreeChunk`, `gc/cms/freeChunk.hpp`:
/// `FreeChunk::is_free` and `size`; `markOopDesc::is_cms_free_chunk` and `get_size`,
/// `oops/markOop.hpp`) and sizes its blocks (`CompactibleFreeListSpace::adjustObjectSize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FreeChunks {
    /// With compressed oops a free chunk says so in its mark word, which holds its size in
    /// words: `Some((cms_shift, size_shift))` (the chunk is free when the word is neutral, lock
    /// bits `0b01`, and bit `cms_shift` is set). Without, `None`: a free chunk's `_prev` (the
    /// second word) has its low bit set, and its `_size` (the first) is in words.
    pub in_mark: Option<(u32, u32)>,
    /// The smallest block, in bytes (`MinChunkSize`: a `FreeChunk`'s size, aligned to
    /// `ObjectAlignmentInBytes`): a smaller object still takes this much.
    pub min_block: u64,
}

impl FreeChunks {
    /// The size in bytes of the free chunk whose first two words are `word0` and `word1`, or
    /// `None` when the block is an object.
    pub fn free_chunk(&self, word0: u64, word1: u64) -> Option<u64> {
        match self.in_mark {
            Some((cms_shift, size_shift)) => {
                let neutral = word0 & 0b111 == 0b001;
                (neutral && (word0 >> cms_shift) & 1 == 1)
                    .then(|| (word0 >> size_shift).saturating_mul(8))
            }
            None => (word1 & 1 == 1).then(|| word0.saturating_mul(8)),
        }
    }
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

/// `Universe::_collectedHeap`: the address of the VM's `CollectedHeap`.
///
/// # Errors
/// [`Error::Vm`] when it is not exported or still NULL (a VM starting);
/// [`Error::Memory`].
pub(crate) fn collected_heap(vm: &VmModel, mem: &dyn ReadMemory) -> Result<u64, Error> {
    let heap = rd(
        mem,
        vm.static_address("Universe", "_collectedHeap")?,
        "Universe::_collectedHeap",
    )?;
    if heap == 0 {
        return Err(VmError::NotInitialized {
            what: "Universe::_collectedHeap".into(),
        }
        .into());
    }
    Ok(heap)
}

/// The address of the flag HotSpot sets for the length of a stop-the-world collection:
/// `CollectedHeap::_is_gc_active` (JDK 8 to 20) or `_is_stw_gc_active` (renamed in JDK 21;
/// `gc/shared/collectedHeap.hpp`, set by `IsGCActiveMark` / `IsSTWGCActiveMark`). While it is
/// set, Serial, Parallel and G1 may be moving objects, and a walk of the heap would meet them
/// half copied. ZGC's and Shenandoah's concurrent phases never set it. `None` when neither name
/// is exported or the heap is not there yet.
pub fn stw_collection_flag(vm: &VmModel, mem: &dyn ReadMemory) -> Option<u64> {
    let heap = collected_heap(vm, mem).ok()?;
    let (offset, _) = vm
        .offset_any("CollectedHeap", &["_is_stw_gc_active", "_is_gc_active"])
        .ok()?;
    Some(heap.wrapping_add(offset))
}

/// Whether a stop-the-world collection runs: the byte at `flag` (see [`stw_collection_flag`])
/// is not 0.
///
/// # Errors
/// [`Error::Memory`] when the byte cannot be read.
pub fn stw_collection_active(mem: &dyn ReadMemory, flag: u64) -> Result<bool, Error> {
    let mut b = [0u8; 1];
    mem.read_exact_at(flag, &mut b)
        .map_err(|e| Error::memory("CollectedHeap::_is_stw_gc_active", e))?;
    Ok(b[0] != 0)
}

/// The spaces of the heap of `vm`, in address order within each generation.
///
/// # Errors
/// [`Error::Unsupported`] for a collector not walked yet (JDK 8's CMS) or none named;
/// [`Error::Vm`] when an entry is missing or a count implausible; [`Error::Memory`].
pub fn spaces(vm: &VmModel, mem: &dyn ReadMemory) -> Result<Vec<Space>, Error> {
    let heap = collected_heap(vm, mem)?;
    let out = match vm.layout.collector {
        Some(Collector::Serial) => serial(vm, mem, heap)?,
        Some(Collector::Parallel) => parallel(vm, mem)?,
        Some(Collector::G1) => g1(vm, mem, heap)?,
        Some(Collector::Shenandoah) => shenandoah(vm, mem, heap)?,
        Some(Collector::Z) => z(vm, mem, heap)?,
        Some(Collector::ConcMarkSweep) => cms(vm, mem, heap)?,
        Some(Collector::Epsilon) => {
            let space = rd(
                mem,
                heap.wrapping_add(vm.offset("EpsilonHeap", "_space")?),
                "EpsilonHeap::_space",
            )?;
            vec![contiguous(vm, mem, space, "space")?]
        }
        None => {
            return Err(Error::Unsupported {
                what: if vm.has_type("CompactibleFreeListSpace") {
                    "walking a CMS heap (JDK 8 to 13's -XX:+UseConcMarkSweepGC)"
                } else {
                    "walking a heap whose collector the flags do not name"
                },
                os: std::env::consts::OS,
            });
        }
    };
    for s in &out {
        if s.top < s.bottom {
            return Err(VmError::Implausible {
                what: format!("space {}", s.name).into(),
                detail: format!("top {:#x} below bottom {:#x}", s.top, s.bottom),
            }
            .into());
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

/// Serial's `DefNewGeneration*` and `TenuredGeneration*` (`SerialHeap::_young_gen`/`_old_gen`;
/// JDK 17: `GenCollectedHeap::`).
pub(crate) fn serial_generations(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    heap: u64,
) -> Result<(u64, u64), Error> {
    let (young, old) = match (
        vm.offset("SerialHeap", "_young_gen"),
        vm.offset("SerialHeap", "_old_gen"),
        vm.offset("GenCollectedHeap", "_young_gen"),
        vm.offset("GenCollectedHeap", "_old_gen"),
    ) {
        (Ok(y), Ok(o), _, _) | (_, _, Ok(y), Ok(o)) => (y, o),
        // JDK 8: `Generation* _gens[max_gens]`, young first.
        _ => {
            let gens = vm.offset("GenCollectedHeap", "_gens")?;
            (gens, gens + 8)
        }
    };
    Ok((
        rd(mem, heap.wrapping_add(young), "SerialHeap::_young_gen")?,
        rd(mem, heap.wrapping_add(old), "SerialHeap::_old_gen")?,
    ))
}

/// A `DefNewGeneration`'s (Serial's, ParNew's) eden and from spaces.
fn young_spaces(vm: &VmModel, mem: &dyn ReadMemory, young: u64) -> Result<Vec<Space>, Error> {
    let mut out = Vec::new();
    for (field, name) in [("_eden_space", "eden"), ("_from_space", "from")] {
        let at = vm.offset("DefNewGeneration", field)?;
        let space = rd(mem, young.wrapping_add(at), "DefNewGeneration's space")?;
        out.push(contiguous(vm, mem, space, name)?);
    }
    Ok(out)
}

fn serial(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<Vec<Space>, Error> {
    let (young, old) = serial_generations(vm, mem, heap)?;
    let mut out = young_spaces(vm, mem, young)?;
    let at = vm.offset("TenuredGeneration", "_the_space")?;
    let space = rd(mem, old.wrapping_add(at), "TenuredGeneration::_the_space")?;
    out.push(contiguous(vm, mem, space, "old")?);
    Ok(out)
}

/// CMS's old generation's space (`ConcurrentMarkSweepGeneration::_cmsSpace`, a
/// `CompactibleFreeListSpace`): its address, `_bottom` and `_end`.
pub(crate) fn cms_space(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    old: u64,
) -> Result<(u64, u64, u64), Error> {
    let space = rd(
        mem,
        old.wrapping_add(vm.offset("ConcurrentMarkSweepGeneration", "_cmsSpace")?),
        "ConcurrentMarkSweepGeneration::_cmsSpace",
    )?;
    let bottom = rd(
        mem,
        space.wrapping_add(vm.offset("Space", "_bottom")?),
        "CompactibleFreeListSpace::_bottom",
    )?;
    let end = rd(
        mem,
        space.wrapping_add(vm.offset("Space", "_end")?),
        "CompactibleFreeListSpace::_end",
    )?;
    Ok((space, bottom, end))
}

/// CMS (JDK 8 to 13): ParNew's young generation (a `DefNewGeneration`: eden, from) as
/// Serial's, then the old generation's `CompactibleFreeListSpace`
/// (`ConcurrentMarkSweepGeneration::_cmsSpace`) from its `_bottom` to its `_end`, objects and
/// free chunks interleaved ([`SpaceKind::FreeList`]), as the Serviceability Agent's
/// `CompactibleFreeListSpace.getLiveRegions` walks it.
fn cms(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<Vec<Space>, Error> {
    let (young, old) = serial_generations(vm, mem, heap)?;
    let mut out = young_spaces(vm, mem, young)?;
    let (_, bottom, end) = cms_space(vm, mem, old)?;
    let in_mark = if vm.layout.compressed_oops {
        let shift = |name: &str| -> Result<u32, Error> {
            // An int constant, or (JDK 8's) a long one.
            let key = format!("markOopDesc::{name}");
            let v = match vm.int(&key) {
                Ok(v) => v,
                Err(_) => vm.long(&key)? as i64,
            };
            u32::try_from(v).ok().filter(|&v| v < 64).ok_or_else(|| {
                VmError::Implausible {
                    what: format!("markOopDesc::{name}").into(),
                    detail: format!("{v}"),
                }
                .into()
            })
        };
        Some((shift("cms_shift")?, shift("size_shift")?))
    } else {
        None
    };
    // A FreeChunk is three words (`_size`, `_prev`, `_next`) on 64-bit.
    let align = u64::from(vm.layout.object_alignment.max(8));
    let chunk = vm.size_of("FreeChunk").unwrap_or(24).clamp(16, 64);
    out.push(Space {
        name: "old".into(),
        bottom,
        top: end,
        kind: SpaceKind::FreeList(FreeChunks {
            in_mark,
            min_block: chunk.div_ceil(align) * align,
        }),
    });
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
    // JDK 11: MutableSpace's bottom is its superclass ImmutableSpace's.
    let bottom = vm
        .offset("MutableSpace", "_bottom")
        .or_else(|_| vm.offset("ImmutableSpace", "_bottom"))?;
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

/// G1's region table as the walk and the summary read it: the `G1HeapRegion*` of each region
/// (0: never committed) and where a region keeps its bounds and type tag.
pub(crate) struct G1Table {
    /// One pointer a region, by region number.
    pub regions: Vec<u64>,
    /// Offset of `_bottom` (JDK 8 and 11: `Space::_bottom`).
    pub bottom: u64,
    /// Offset of `_top` (JDK 11: `G1ContiguousSpace::`, JDK 8: `G1OffsetTableContigSpace::`).
    pub top: u64,
    /// Offset of `_type._tag`; `None` on JDK 8, whose vmStructs do not export the type.
    tag: Option<u64>,
    /// `G1HeapRegionType` (JDK 23+) or `HeapRegionType`, for the tag constants.
    region_type: &'static str,
}

impl G1Table {
    /// Reads `G1CollectedHeap::_hrm`'s `G1HeapRegionTable` (`_base[0.._length)`).
    ///
    /// # Errors
    /// [`Error::Vm`] for a missing entry or more than [`MAX_REGIONS`] regions;
    /// [`Error::Memory`].
    pub(crate) fn read(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<Self, Error> {
        // JDK 23+ prefixes the region types with `G1`.
        let (manager, region, region_type) = if vm.has_type("G1HeapRegion") {
            ("G1HeapRegionManager", "G1HeapRegion", "G1HeapRegionType")
        } else {
            ("HeapRegionManager", "HeapRegion", "HeapRegionType")
        };
        let tag = match vm.field(region, "_type") {
            Some(_) => Some(vm.offset(region, "_type")? + vm.offset(region_type, "_tag")?),
            None => None,
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
            return Err(VmError::Bound {
                what: "G1HeapRegionTable::_length".into(),
                count: length,
                max: MAX_REGIONS,
            }
            .into());
        }
        let regions = mem
            .read_pointers(base, length as usize, MAX_REGIONS as usize)
            .map_err(|e| Error::memory("G1HeapRegionTable::_base", e))?;
        Ok(G1Table {
            regions,
            // JDK 11: a region is a G1ContiguousSpace (JDK 8: G1OffsetTableContigSpace), its
            // bounds are Space's.
            bottom: vm
                .offset(region, "_bottom")
                .or_else(|_| vm.offset("Space", "_bottom"))?,
            top: vm
                .offset(region, "_top")
                .or_else(|_| vm.offset("G1ContiguousSpace", "_top"))
                .or_else(|_| vm.offset("G1OffsetTableContigSpace", "_top"))?,
            tag,
            region_type,
        })
    }

    /// The region type constant `name` (`FreeTag`, `EdenTag`, ...).
    ///
    /// # Errors
    /// [`Error::Vm`] when the constant is not exported.
    pub(crate) fn constant(&self, vm: &VmModel, name: &str) -> Result<i64, Error> {
        vm.int(&format!("{}::{name}", self.region_type))
    }

    /// The type tag of the region at `r` (a small enum: its low byte holds every value,
    /// little-endian).
    ///
    /// # Errors
    /// [`Error::Unsupported`] on JDK 8 (no types exported); [`Error::Memory`].
    pub(crate) fn tag_of(&self, mem: &dyn ReadMemory, r: u64) -> Result<i64, Error> {
        let Some(tag) = self.tag else {
            return Err(Error::Unsupported {
                what: "G1 region types on JDK 8 (its vmStructs do not export them)",
                os: std::env::consts::OS,
            });
        };
        mem.read_u8(r.wrapping_add(tag))
            .map(i64::from)
            .map_err(|e| Error::memory("G1HeapRegionType::_tag", e))
    }
}

fn g1(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<Vec<Space>, Error> {
    let table = G1Table::read(vm, mem, heap)?;
    if table.tag.is_none() {
        return g1_untyped(mem, &table);
    }
    let free = table.constant(vm, "FreeTag")?;
    let starts = table.constant(vm, "StartsHumongousTag")?;
    let continues = table.constant(vm, "ContinuesHumongousTag")?;
    let (bottom, top) = (table.bottom, table.top);
    let mut out = Vec::new();
    for (i, &r) in table.regions.iter().enumerate() {
        if r == 0 {
            continue;
        }
        let t = table.tag_of(mem, r)?;
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

/// JDK 8's G1, whose regions' types vmStructs do not export: every region from its `_bottom`
/// to its `_top`, in address order, but a region that starts below the end of the space before
/// it: a starts-humongous region's `_end` and `_top` run to the end of its object
/// (`HeapRegion::set_startsHumongous`, JDK 8), which covers its continues-humongous regions. A
/// free region is empty (`_top` at `_bottom`).
fn g1_untyped(mem: &dyn ReadMemory, table: &G1Table) -> Result<Vec<Space>, Error> {
    let mut regions = Vec::new();
    for (i, &r) in table.regions.iter().enumerate() {
        if r == 0 {
            continue;
        }
        let bottom = rd(mem, r.wrapping_add(table.bottom), "HeapRegion::_bottom")?;
        let top = rd(mem, r.wrapping_add(table.top), "HeapRegion::_top")?;
        regions.push((bottom, top, i));
    }
    regions.sort_unstable();
    let mut out: Vec<Space> = Vec::new();
    let mut covered = 0u64;
    for (bottom, top, i) in regions {
        if bottom < covered || top <= bottom {
            continue;
        }
        covered = top;
        out.push(Space {
            name: format!("region {i}"),
            bottom,
            top,
            kind: SpaceKind::Contiguous,
        });
    }
    Ok(out)
}

/// Shenandoah's region table as the walk and the summary read it
/// (`gc/shenandoah/shenandoahHeap.hpp`, `shenandoahHeapRegion.hpp`):
/// `ShenandoahHeap::_regions[0.._num_regions)`, the `ShenandoahHeapRegion*` of each region, and
/// where a region keeps its `_bottom`, `_top` and `_state`.
pub(crate) struct ShenandoahTable {
    /// One pointer a region, by region number (0: none).
    pub regions: Vec<u64>,
    /// Offset of `_bottom`.
    pub bottom: u64,
    /// Offset of `_top`.
    pub top: u64,
    /// Offset of `_state` (a `RegionState`, 4 bytes).
    state: u64,
}

impl ShenandoahTable {
    /// Reads the table (`_num_regions` pointers from `_regions`).
    ///
    /// # Errors
    /// [`Error::Vm`] for a missing entry or more than [`MAX_REGIONS`] regions;
    /// [`Error::Memory`].
    pub(crate) fn read(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<Self, Error> {
        let count = rd(
            mem,
            heap.wrapping_add(vm.offset("ShenandoahHeap", "_num_regions")?),
            "ShenandoahHeap::_num_regions",
        )?;
        if count > MAX_REGIONS {
            return Err(VmError::Bound {
                what: "ShenandoahHeap::_num_regions".into(),
                count,
                max: MAX_REGIONS,
            }
            .into());
        }
        let table = rd(
            mem,
            heap.wrapping_add(vm.offset("ShenandoahHeap", "_regions")?),
            "ShenandoahHeap::_regions",
        )?;
        let regions = mem
            .read_pointers(table, count as usize, MAX_REGIONS as usize)
            .map_err(|e| Error::memory("ShenandoahHeap::_regions", e))?;
        Ok(ShenandoahTable {
            regions,
            bottom: vm.offset("ShenandoahHeapRegion", "_bottom")?,
            top: vm.offset("ShenandoahHeapRegion", "_top")?,
            state: vm.offset("ShenandoahHeapRegion", "_state")?,
        })
    }

    /// A `ShenandoahHeapRegion::RegionState` constant (`_regular`, `_trash`, ...).
    ///
    /// # Errors
    /// [`Error::Vm`] when vmStructs does not export it.
    pub(crate) fn constant(vm: &VmModel, name: &str) -> Result<i64, Error> {
        vm.int(&format!("ShenandoahHeapRegion::{name}"))
    }

    /// The state of region `r` (a pointer of [`Self::regions`]).
    ///
    /// # Errors
    /// [`Error::Memory`].
    pub(crate) fn state_of(&self, mem: &dyn ReadMemory, r: u64) -> Result<i64, Error> {
        mem.read_u32(r.wrapping_add(self.state))
            .map(i64::from)
            .map_err(|e| Error::memory("ShenandoahHeapRegion::_state", e))
    }

    /// Region `r`'s `_bottom` and `_top`.
    ///
    /// # Errors
    /// [`Error::Memory`].
    pub(crate) fn bounds(&self, mem: &dyn ReadMemory, r: u64) -> Result<(u64, u64), Error> {
        Ok((
            rd(
                mem,
                r.wrapping_add(self.bottom),
                "ShenandoahHeapRegion::_bottom",
            )?,
            rd(mem, r.wrapping_add(self.top), "ShenandoahHeapRegion::_top")?,
        ))
    }
}

/// Shenandoah's spaces: each region of [`ShenandoahTable`] by its state. Empty and trash
/// regions hold nothing; a humongous start's one object runs on into its continuations (which
/// are skipped); a collection-set region is walked stepping over its forwarded objects, as the
/// Serviceability Agent's `ShenandoahHeapRegion.getLiveRegions` does.
fn shenandoah(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<Vec<Space>, Error> {
    let table = ShenandoahTable::read(vm, mem, heap)?;
    let constant = |name: &str| ShenandoahTable::constant(vm, name);
    let regular = [constant("_regular")?, constant("_pinned")?];
    let humongous = [
        constant("_humongous_start")?,
        constant("_pinned_humongous_start")?,
    ];
    let cset = [constant("_cset")?, constant("_pinned_cset")?];
    let mut out = Vec::new();
    for (i, &r) in table.regions.iter().enumerate() {
        if r == 0 {
            continue;
        }
        let s = table.state_of(mem, r)?;
        let kind = if regular.contains(&s) {
            SpaceKind::Contiguous
        } else if humongous.contains(&s) {
            SpaceKind::HumongousStart
        } else if cset.contains(&s) {
            SpaceKind::CollectionSet
        } else {
            continue;
        };
        let (bottom, top) = table.bounds(mem, r)?;
        out.push(Space {
            name: format!("region {i}"),
            bottom,
            top,
            kind,
        });
    }
    Ok(out)
}

/// The most ZGC page-table entries read (a 16 TiB offset space of 2 MiB granules).
const MAX_GRANULES: u64 = 1 << 23;

/// The class-name prefix of ZGC's vmStructs entries: `X` for JDK 21's single generation
/// (`gc/x/`), `Z` otherwise.
fn z_prefix(vm: &VmModel) -> &'static str {
    if vm.layout.zpointer_load_shift.is_none() && vm.has_type("XCollectedHeap") {
        "X"
    } else {
        "Z"
    }
}

/// A ZGC global through `ZGlobalsForVMStructs::_instance_p` (each member a pointer to it).
fn z_global(vm: &VmModel, mem: &dyn ReadMemory, p: &str, field: &str) -> Result<u64, Error> {
    let globals = rd(
        mem,
        vm.static_address(&format!("{p}GlobalsForVMStructs"), "_instance_p")?,
        "ZGlobalsForVMStructs::_instance_p",
    )?;
    let at = rd(
        mem,
        globals.wrapping_add(vm.offset(&format!("{p}GlobalsForVMStructs"), field)?),
        "ZGlobalsForVMStructs",
    )?;
    rd(mem, at, "a ZGC global")
}

/// Single-generation ZGC's view of the heap (JDK 15-21): a reference may carry any colour; the
/// walk addresses objects through the good one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZView {
    /// `ZAddressOffsetMask`.
    pub mask: u64,
    /// `ZAddressGoodMask`.
    pub good: u64,
}

impl ZView {
    /// The address the walk sees for `a` in any colour: `(a & mask) | good`; null stays null.
    pub fn recolour(self, a: u64) -> u64 {
        if a == 0 {
            0
        } else {
            (a & self.mask) | self.good
        }
    }
}

/// `a` through `view` when there is one (single-generation ZGC), else `a` itself.
pub fn recolour(view: Option<ZView>, a: u64) -> u64 {
    view.map_or(a, |v| v.recolour(a))
}

/// Single-generation ZGC's [`ZView`] (`*ZGlobalsForVMStructs::_ZAddressOffsetMask` and
/// `_ZAddressGoodMask`). `None` for other collectors, generational ZGC included (whose
/// references `Layout::heap_oop` uncolours).
///
/// # Errors
/// [`Error::Vm`] when ZGC's globals are missing; [`Error::Memory`].
pub fn z_single_generation_view(
    vm: &VmModel,
    mem: &dyn ReadMemory,
) -> Result<Option<ZView>, Error> {
    if vm.layout.collector != Some(Collector::Z) || vm.layout.zpointer_load_shift.is_some() {
        return Ok(None);
    }
    let p = z_prefix(vm);
    let mask = z_global(vm, mem, p, &format!("_{p}AddressOffsetMask"))?;
    let good = z_global(vm, mem, p, &format!("_{p}AddressGoodMask"))?;
    Ok(Some(ZView { mask, good }))
}

/// ZGC's pages in use (`ZCollectedHeap::_heap` → `ZHeap::_page_table` → `ZPageTable::_map` →
/// `ZGranuleMapForPageTable::_map`: one `ZPage*` per 2 MiB granule (`ZGranuleSizeShift`) of the
/// offset space `[0, *ZGlobalsForVMStructs::_ZAddressOffsetMask]`, a page filling several
/// granules listed in each). A page's `_virtual._start` and `_top` are offsets: the single
/// generation (JDK 15-21) addresses them through the current good colour (offset |
/// `*_ZAddressGoodMask`, as the Serviceability Agent's `ZPage` does); generational ZGC
/// (JDK 21+) adds `ZAddressHeapBase`, which vmStructs does not export: it is the bits above the
/// offset mask of any heap address, taken from a thread's TLAB. Small pages hold objects back to
/// back, medium pages at `ZObjectAlignmentMedium` (from `MaxHeapSize` as
/// `ZHeuristics::set_medium_page_size` computes it), large pages one object.
fn z(vm: &VmModel, mem: &dyn ReadMemory, heap: u64) -> Result<Vec<Space>, Error> {
    let generational = vm.layout.zpointer_load_shift.is_some();
    let p = z_prefix(vm);
    let global = |field: &str| z_global(vm, mem, p, field);
    let offset_mask = global(&format!("_{p}AddressOffsetMask"))?;
    if offset_mask == 0 || !(offset_mask + 1).is_power_of_two() {
        return Err(VmError::Implausible {
            what: "ZAddressOffsetMask".into(),
            detail: format!("{offset_mask:#x} (a power of two less one)"),
        }
        .into());
    }
    let granule_shift = vm.long("ZGranuleSizeShift").unwrap_or(21);
    if !(16..=30).contains(&granule_shift) {
        return Err(VmError::Implausible {
            what: "ZGranuleSizeShift".into(),
            detail: format!("{granule_shift} (16 to 30)"),
        }
        .into());
    }
    let granules = (offset_mask + 1) >> granule_shift;
    if granules > MAX_GRANULES {
        return Err(VmError::Bound {
            what: "the ZGC page table's granules".into(),
            count: granules,
            max: MAX_GRANULES,
        }
        .into());
    }
    // How an offset becomes an address.
    let colour = if generational {
        heap_base(vm, mem, offset_mask)?
    } else {
        global(&format!("_{p}AddressGoodMask"))?
    };
    let granule_map = heap
        .wrapping_add(vm.offset(&format!("{p}CollectedHeap"), "_heap")?)
        .wrapping_add(vm.offset(&format!("{p}Heap"), "_page_table")?)
        .wrapping_add(vm.offset(&format!("{p}PageTable"), "_map")?);
    let map_at = vm.offset(&format!("{p}GranuleMapForPageTable"), "_map")?;
    let map = rd(
        mem,
        granule_map.wrapping_add(map_at),
        "ZGranuleMapForPageTable::_map",
    )?;
    // `ZGranuleMap::_size` (the entries: the offsets the heap may use, `ZAddressOffsetMax`
    // granules) comes before `_map`; vmStructs does not export it.
    let granules = if map_at == 8 {
        rd(mem, granule_map, "ZGranuleMap::_size")?.min(granules)
    } else {
        granules
    };
    let page = format!("{p}Page");
    let virtual_at = vm.offset(&page, "_virtual")?;
    let start_at = virtual_at + vm.offset(&format!("{p}VirtualMemory"), "_start")?;
    let top_at = vm.offset(&page, "_top")?;
    let type_at = vm.offset(&page, "_type")?;
    let constant = |names: [&str; 2]| {
        names
            .iter()
            .find_map(|n| vm.int_opt(n))
            .ok_or_else(|| VmError::NoneOf {
                entries: names
                    .iter()
                    .map(|n| VmEntry::IntConstant((*n).to_owned()))
                    .collect(),
            })
    };
    let prefix = |n: &str| format!("{p}{n}");
    let medium = constant([&prefix("PageTypeMedium"), "ZPageType::medium"])?;
    let large = constant([&prefix("PageTypeLarge"), "ZPageType::large"])?;
    let medium_alignment = medium_alignment(vm, mem);
    let mut out = Vec::new();
    let mut last = 0u64;
    // The table is committed as it is used: a 4 KiB part that cannot be read lists no page.
    const CHUNK: u64 = 512;
    let mut index = 0u64;
    while index < granules {
        let n = CHUNK.min(granules - index);
        let Ok(pages) = mem.read_pointers(map.wrapping_add(index * 8), n as usize, CHUNK as usize)
        else {
            index += n;
            last = 0;
            continue;
        };
        for (i, &pg) in pages.iter().enumerate() {
            if pg == 0 || pg == last {
                last = pg;
                continue;
            }
            last = pg;
            let start = rd(mem, pg.wrapping_add(start_at), "ZPage::_virtual._start")?;
            let top = rd(mem, pg.wrapping_add(top_at), "ZPage::_top")?;
            if top < start || top - start > offset_mask {
                return Err(VmError::Implausible {
                    what: format!("ZGC page at granule {}", index + i as u64).into(),
                    detail: format!("top {top:#x}, start {start:#x}"),
                }
                .into());
            }
            let kind = i64::from(
                mem.read_u8(pg.wrapping_add(type_at))
                    .map_err(|e| Error::memory("ZPage::_type", e))?,
            );
            let bottom = (start & offset_mask) | colour;
            out.push(Space {
                name: format!("page {:#x}", start & offset_mask),
                bottom,
                top: bottom + (top - start),
                kind: if kind == large {
                    SpaceKind::HumongousStart
                } else if kind == medium {
                    SpaceKind::Aligned(medium_alignment)
                } else {
                    SpaceKind::Contiguous
                },
            });
        }
        index += n;
    }
    out.sort_unstable_by_key(|s| s.bottom);
    Ok(out)
}

/// `ZObjectAlignmentMedium`: `ZHeuristics::set_medium_page_size` makes the medium page size
/// `MaxHeapSize` / 32 clamped to 2-32 MiB and rounded down to a power of two (JDK 25: the
/// largest medium page), and the alignment that size / 8192. 8 when the flag is not read.
fn medium_alignment(vm: &VmModel, mem: &dyn ReadMemory) -> u64 {
    let max_heap = crate::vm::flags::rows(vm, mem, false)
        .ok()
        .and_then(|rows| {
            rows.into_iter()
                .find(|r| r.name == b"MaxHeapSize")
                .and_then(|r| mem.read_u64(r.addr).ok())
        });
    let Some(max_heap) = max_heap else {
        return 8;
    };
    let size = (max_heap / 32).clamp(2 << 20, 32 << 20);
    let size = 1u64 << (63 - size.leading_zeros());
    (size >> 13).max(8)
}

/// Generational ZGC's `ZAddressHeapBase`: the bits above `offset_mask` of a thread's TLAB start
/// (a `zaddress`), a power of two above the offsets.
fn heap_base(vm: &VmModel, mem: &dyn ReadMemory, offset_mask: u64) -> Result<u64, Error> {
    let threads = crate::threads::list::ThreadLayout::new(vm)?
        .thread_addresses(mem)
        .map(|(_, t)| t)
        .unwrap_or_default();
    let found = tlabs(vm, mem, &threads)?
        .iter()
        .map(|t| t.start & !offset_mask)
        .find(|&b| b.is_power_of_two() && b > offset_mask);
    found.ok_or_else(|| {
        VmError::NoTlab {
            what: "generational ZGC's heap base",
        }
        .into()
    })
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
/// [`Error::Vm`] when the TLAB entries are missing.
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
    // Single-generation ZGC hands out TLABs in the good colour of their time: seen through
    // today's, as the walk sees the pages.
    let view = z_single_generation_view(vm, mem).ok().flatten();
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
        let (s, p, e) = (recolour(view, s), recolour(view, p), recolour(view, e));
        out.push(Tlab {
            start: s,
            top: p,
            end: e.saturating_add(reserve),
        });
    }
    out.sort_unstable_by_key(|t| (t.top, t.end));
    Ok(out)
}
