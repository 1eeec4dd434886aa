//! A JVM's PerfData as `java.lang.management` names it: memory pools under their
//! `MemoryPoolMXBean` names, collectors under their `GarbageCollectorMXBean` names, threads,
//! classes, JIT time and the runtime's identity. This is what the metric dialects of
//! [`crate::format::dialect`] (Micrometer, Prometheus client_java, OpenTelemetry) export.
//!
//! Pure: a [`Snapshot`] in, a [`JvmMetrics`] out. Every rule below was checked against the MXBeans
//! of live JVMs (JDK 8 to 25, every collector: `tests/integration/dialects.rs`); the sources are HotSpot's
//! `gc/*/*MemoryPool.cpp`, `gc/*/*MonitoringSupport.cpp`, `services/classLoadingService.cpp`,
//! `services/threadService.cpp` and `runtime/statSampler.cpp`.
//!
//! # Collectors
//! PerfData names the collector objects (`sun.gc.collector.<n>.name`) differently from JMX, and
//! differently in each JDK; [`collector_bean`] maps each known name to the bean and the action
//! string its GC notifications carry (`"end of minor GC"`, ...). A PerfData collector without a
//! bean twin is left out: Shenandoah's "partial"/"full" counters count other events than its
//! "Shenandoah Cycles"/"Shenandoah Pauses" beans, JDK 11's "G1 stop-the-world phases" has no bean,
//! and "G1 concurrent cycle pauses" has one ("G1 Concurrent GC") only from JDK 20.
//!
//! # Pools
//! Chosen by the collector in use ([`Gc`], told by the collector names): the generation spaces
//! (`sun.gc.generation.<g>.space.<s>.*`) under the pool names of that collector, and Metaspace and
//! Compressed Class Space (`sun.gc.metaspace.*`, `sun.gc.compressedclassspace.*`). Code cache
//! pools (`CodeHeap '...'`, JDK 8's `Code Cache`) have no PerfData and are absent, so a non-heap
//! total would be short by them: none is given.

use crate::perfdata::{Snapshot, Value};

/// `heap` or `nonheap`: a pool's `MemoryType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `MemoryType.HEAP`.
    Heap,
    /// `MemoryType.NON_HEAP`.
    NonHeap,
}

/// One memory pool, as its `MemoryPoolMXBean.getUsage()` reports it. Bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    /// The bean's name: `G1 Eden Space`, `PS Old Gen`, `Metaspace`, ...
    pub name: &'static str,
    /// Heap or non-heap.
    pub area: Area,
    /// `MemoryUsage.getUsed()`.
    pub used: u64,
    /// `MemoryUsage.getCommitted()`.
    pub committed: u64,
    /// `MemoryUsage.getMax()`: `None` where JMX says -1 (undefined: G1's eden and survivor,
    /// Metaspace without `-XX:MaxMetaspaceSize`).
    pub max: Option<u64>,
}

/// One collector, as its `GarbageCollectorMXBean` reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Collector {
    /// The bean's name: `G1 Young Generation`, `PS Scavenge`, `ZGC Major Pauses`, ...
    pub name: &'static str,
    /// The action of its GC notifications (`GarbageCollectionNotificationInfo.getGcAction()`):
    /// `end of minor GC`, `end of major GC`, `end of GC pause`, `end of concurrent GC pause`.
    pub action: &'static str,
    /// Whether Micrometer files its notifications as concurrent phases (`jvm.gc.concurrent.phase.time`)
    /// rather than pauses (`jvm.gc.pause`): G1 Concurrent GC, whose cause is "No GC".
    pub concurrent: bool,
    /// `getCollectionCount()`: `sun.gc.collector.<n>.invocations`.
    pub count: u64,
    /// `getCollectionTime()` in seconds: `sun.gc.collector.<n>.time` over `sun.os.hrt.frequency`.
    pub seconds: f64,
}

/// The collector in use, told by the PerfData collector names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gc {
    /// `-XX:+UseSerialGC`.
    Serial,
    /// `-XX:+UseParallelGC`.
    Parallel,
    /// `-XX:+UseConcMarkSweepGC` (JDK 8 to 13): ParNew and CMS.
    Cms,
    /// `-XX:+UseG1GC`.
    G1,
    /// ZGC, single generation (JDK 11 to 22 without `-XX:+ZGenerational`). JDK 11 to 16 publish
    /// no collector counters for it: its `ZGC` bean (cycles) has no twin.
    Z,
    /// Generational ZGC (JDK 21 with `-XX:+ZGenerational`, the only ZGC from JDK 23).
    ZGenerational,
    /// Shenandoah.
    Shenandoah,
}

/// Thread counts (`ThreadMXBean`): `java.threads.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threads {
    /// `getThreadCount()`: `java.threads.live`.
    pub live: u64,
    /// `getDaemonThreadCount()`: `java.threads.daemon`.
    pub daemon: u64,
    /// `getPeakThreadCount()`: `java.threads.livePeak`.
    pub peak: u64,
    /// `getTotalStartedThreadCount()`: `java.threads.started`.
    pub started: u64,
}

/// Class counts (`ClassLoadingMXBean`), each the sum of the counter and its `shared` twin
/// (classes from the CDS archive), as `classLoadingService.cpp` adds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classes {
    /// `getLoadedClassCount()`: loaded minus unloaded.
    pub loaded: u64,
    /// `getTotalLoadedClassCount()`: `java.cls.loadedClasses + sharedLoadedClasses`.
    pub total_loaded: u64,
    /// `getUnloadedClassCount()`: `java.cls.unloadedClasses + sharedUnloadedClasses`.
    pub unloaded: u64,
}

/// Safepoints since the JVM started (`runtime/safepoint.cpp`'s PerfData counters).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Safepoints {
    /// Safepoints reached: `sun.rt.safepoints`.
    pub count: u64,
    /// Seconds spent at safepoints, the threads stopped: `sun.rt.safepointTime` (Ticks).
    pub seconds: f64,
    /// Seconds spent reaching them (synchronizing the threads): `sun.rt.safepointSyncTime` (Ticks).
    pub sync_seconds: f64,
}

/// The runtime's identity as `jvm_info`/`jvm_runtime_info` label it (`java.runtime.name`,
/// `java.vm.vendor`, `java.runtime.version`). PerfData publishes `java.vm.*` and `java.version`
/// only (`statSampler.cpp`), so two of the three are derived: see each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    /// `java.runtime.name`: "OpenJDK Runtime Environment" for a VM named "OpenJDK ...", "Java(TM)
    /// SE Runtime Environment" for "Java HotSpot(TM) ..." (what those builds set), else
    /// "unknown" (client_java's word for a missing property).
    pub name: String,
    /// `java.vm.vendor`, exactly.
    pub vendor: String,
    /// `java.runtime.version`: `java.vm.version` from JDK 9 (both are the JEP 223 version
    /// string); on JDK 8 `java.version` plus `-b<build>` from `java.vm.version` (upstream
    /// builds' form; a distribution that adds its own suffix differs).
    pub version: String,
    /// `java.vm.name` (`OpenJDK 64-Bit Server VM`), exactly; empty when the region lacks it.
    pub vm_name: String,
    /// `java.vm.version` (`17.0.15+6-Debian-1deb12u1`, JDK 8's `25.504-b01`), exactly.
    pub vm_version: String,
}

/// What [`JvmMetrics::from_snapshot`] reads; fields the JVM does not publish are `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct JvmMetrics {
    /// The collector in use, when the collector names tell it.
    pub gc: Option<Gc>,
    /// Memory pools: the collector's, then Metaspace and Compressed Class Space.
    pub pools: Vec<Pool>,
    /// `MemoryMXBean.getHeapMemoryUsage()`: used, committed and max of the heap (max `None` when
    /// undefined); `None` when the collector is not known.
    pub heap: Option<(u64, u64, Option<u64>)>,
    /// Collectors with a bean twin.
    pub collectors: Vec<Collector>,
    /// Threads.
    pub threads: Option<Threads>,
    /// Classes.
    pub classes: Option<Classes>,
    /// `CompilationMXBean.getTotalCompilationTime()` in seconds: `java.ci.totalTime`.
    pub jit_seconds: Option<f64>,
    /// Safepoints (no MXBean has them: HotSpot's `sun.rt.safepoints`, `sun.rt.safepointTime`,
    /// `sun.rt.safepointSyncTime`; `runtime/safepoint.cpp`).
    pub safepoints: Option<Safepoints>,
    /// Seconds spent loading classes: `sun.cls.time` over `sun.os.hrt.frequency`
    /// (`classfile/classLoader.cpp`; no MXBean has it).
    pub class_load_seconds: Option<f64>,
    /// `RuntimeMXBean.getStartTime()` in seconds since the epoch: `sun.rt.vmInitDoneTime` (`jmm_GetLongAttribute(JMM_JVM_INIT_DONE_TIME_MS)` in `management.cpp`).
    pub start_time_seconds: Option<f64>,
    /// Identity.
    pub runtime: Runtime,
}

fn string<'a>(s: &'a Snapshot, name: &str) -> Option<&'a str> {
    match &s.get(name)?.value {
        Value::String(v) => Some(v.as_str()),
        _ => None,
    }
}

fn unsigned(s: &Snapshot, name: &str) -> Option<u64> {
    s.long(name).map(|v| v.max(0) as u64)
}

/// The bean a PerfData collector name stands for: (bean name, notification action, whether
/// Micrometer files it as a concurrent phase). `spec` is `java.vm.specification.version`'s major.
///
/// Sources: HotSpot's `CollectorCounters` names (`gc/*/`, and JDK 8's `PSScavenge`, `PCopy`,
/// ...), and each collector's `GCMemoryManager` names and end messages (`g1MonitoringSupport.cpp`,
/// `psMemoryPool.cpp`/`parallelScavengeHeap.cpp`, `serialHeap.cpp`, `zServiceability.cpp`).
pub fn collector_bean(
    perfdata_name: &str,
    spec: u32,
) -> Option<(&'static str, &'static str, bool)> {
    const MINOR: &str = "end of minor GC";
    const MAJOR: &str = "end of major GC";
    const PAUSE: &str = "end of GC pause";
    Some(match perfdata_name {
        "Copy" | "Serial young collection pauses" => ("Copy", MINOR, false),
        "MSC" | "Serial full collection pauses" => ("MarkSweepCompact", MAJOR, false),
        "PSScavenge" | "Parallel young collection pauses" => ("PS Scavenge", MINOR, false),
        "PSParallelCompact" | "Parallel full collection pauses" => ("PS MarkSweep", MAJOR, false),
        "PCopy" => ("ParNew", MINOR, false),
        "CMS" => ("ConcurrentMarkSweep", MAJOR, false),
        "G1 incremental collections" | "G1 young collection pauses" => {
            ("G1 Young Generation", MINOR, false)
        }
        "G1 stop-the-world full collections" | "G1 full collection pauses" => {
            ("G1 Old Generation", MAJOR, false)
        }
        "G1 concurrent cycle pauses" if spec >= 20 => {
            ("G1 Concurrent GC", "end of concurrent GC pause", true)
        }
        "Z concurrent cycle pauses" => ("ZGC Pauses", PAUSE, false),
        "ZGC minor collection pauses" => ("ZGC Minor Pauses", PAUSE, false),
        "ZGC major collection pauses" => ("ZGC Major Pauses", PAUSE, false),
        _ => return None,
    })
}

/// The collector in use, from the PerfData collector names (and, for ZGC, the generations).
fn which_gc(s: &Snapshot, names: &[String]) -> Option<Gc> {
    let has = |n: &str| names.iter().any(|x| x == n);
    if has("Copy") || has("Serial young collection pauses") {
        Some(Gc::Serial)
    } else if has("PSScavenge") || has("Parallel young collection pauses") {
        Some(Gc::Parallel)
    } else if has("PCopy") || has("CMS") {
        Some(Gc::Cms)
    } else if names.iter().any(|n| n.starts_with("G1 ")) {
        Some(Gc::G1)
    } else if has("ZGC minor collection pauses") || has("ZGC major collection pauses") {
        Some(Gc::ZGenerational)
    } else if has("Z concurrent cycle pauses")
        // JDK 11 to 16's ZGC publishes no collector counters: one generation, one space.
        || names.is_empty()
            && s.get("sun.gc.generation.0.name").is_none()
            && string(s, "sun.gc.generation.1.name") == Some("old")
            && string(s, "sun.gc.generation.1.space.0.name") == Some("space")
    {
        Some(Gc::Z)
    } else if names.iter().any(|n| n.starts_with("Shenandoah"))
        || string(s, "sun.gc.generation.1.name") == Some("Heap")
            && string(s, "sun.gc.generation.1.space.0.name") == Some("Heap")
    {
        Some(Gc::Shenandoah)
    } else {
        None
    }
}

/// One generation space's `used`, `capacity` and `maxCapacity`.
fn space(s: &Snapshot, g: u32, sp: u32) -> Option<(u64, u64, u64)> {
    let p = format!("sun.gc.generation.{g}.space.{sp}.");
    Some((
        unsigned(s, &format!("{p}used"))?,
        unsigned(s, &format!("{p}capacity"))?,
        unsigned(s, &format!("{p}maxCapacity"))?,
    ))
}

/// `-XX:MaxMetaspaceSize` from the JVM's flags, in bytes (the last one given wins, as in HotSpot's
/// argument parsing); `None` when not given (JMX then reports Metaspace's max as -1).
fn max_metaspace_size(s: &Snapshot) -> Option<u64> {
    let mut found = None;
    for key in ["java.rt.vmArgs", "java.rt.vmFlags"] {
        for arg in string(s, key).unwrap_or("").split_whitespace() {
            if let Some(v) = arg.strip_prefix("-XX:MaxMetaspaceSize=") {
                found = parse_size(v).or(found);
            }
        }
    }
    found
}

/// A HotSpot size argument: digits with an optional `k`/`m`/`g`/`t` (either case).
fn parse_size(v: &str) -> Option<u64> {
    let (digits, shift) = match v.char_indices().last()? {
        (i, 'k' | 'K') => (&v[..i], 10),
        (i, 'm' | 'M') => (&v[..i], 20),
        (i, 'g' | 'G') => (&v[..i], 30),
        (i, 't' | 'T') => (&v[..i], 40),
        _ => (v, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

fn pool(name: &'static str, area: Area, used: u64, committed: u64, max: Option<u64>) -> Pool {
    Pool {
        name,
        area,
        used,
        committed,
        max,
    }
}

/// The heap pools of `gc` and the heap's own max (`None`: the sum of the pools' max).
fn heap_pools(s: &Snapshot, gc: Gc) -> Option<(Vec<Pool>, Option<u64>)> {
    use Area::Heap;
    Some(match gc {
        Gc::Serial | Gc::Cms | Gc::Parallel => {
            let (eu, ec, em) = space(s, 0, 0)?;
            let (s0u, s0c, s0m) = space(s, 0, 1)?;
            let (s1u, s1c, s1m) = space(s, 0, 2)?;
            let (ou, oc, _) = space(s, 1, 0)?;
            let old_max = unsigned(s, "sun.gc.generation.1.maxCapacity")?;
            // JMX's survivor pool is the from-space; the to-space is empty outside a GC. The
            // counters follow the spaces, not the roles, so take the one in use (else the larger).
            let from = if s0u > 0 || (s1u == 0 && s0c >= s1c) {
                (s0u, s0c, s0m)
            } else {
                (s1u, s1c, s1m)
            };
            let (names, eden_max, surv_max) = match gc {
                // psMemoryPool.cpp: eden's max is the young generation's max less both
                // survivors (at their current size); the survivor's max is its current size.
                Gc::Parallel => {
                    let young_max = unsigned(s, "sun.gc.generation.0.maxCapacity")?;
                    (
                        ["PS Eden Space", "PS Survivor Space", "PS Old Gen"],
                        young_max.saturating_sub(2 * from.1),
                        from.1,
                    )
                }
                Gc::Cms => (
                    ["Par Eden Space", "Par Survivor Space", "CMS Old Gen"],
                    em,
                    from.2,
                ),
                _ => (["Eden Space", "Survivor Space", "Tenured Gen"], em, from.2),
            };
            (
                vec![
                    pool(names[0], Heap, eu, ec, Some(eden_max)),
                    pool(names[1], Heap, from.0, from.1, Some(surv_max)),
                    pool(names[2], Heap, ou, oc, Some(old_max)),
                ],
                None,
            )
        }
        Gc::G1 => {
            // g1MonitoringSupport.cpp pads every capacity it publishes by MinObjAlignmentInBytes
            // (so jstat never divides by 0); space 1 ("s0", the to-space) is always empty, so its
            // capacity is the pad.
            let pad = unsigned(s, "sun.gc.generation.0.space.1.capacity")?;
            let (eu, ec, _) = space(s, 0, 0)?;
            let (su, sc, _) = space(s, 0, 2)?;
            let (ou, oc, om) = space(s, 1, 0)?;
            let old_max = om.saturating_sub(pad);
            (
                vec![
                    pool("G1 Eden Space", Heap, eu, ec.saturating_sub(pad), None),
                    pool("G1 Survivor Space", Heap, su, sc.saturating_sub(pad), None),
                    pool(
                        "G1 Old Gen",
                        Heap,
                        ou,
                        oc.saturating_sub(pad),
                        Some(old_max),
                    ),
                ],
                Some(old_max),
            )
        }
        Gc::Z => {
            let (u, c, m) = space(s, 1, 0)?;
            (vec![pool("ZHeap", Heap, u, c, Some(m))], Some(m))
        }
        Gc::ZGenerational => {
            let (yu, yc, ym) = space(s, 0, 0)?;
            let (ou, oc, om) = space(s, 1, 0)?;
            (
                vec![
                    pool("ZGC Young Generation", Heap, yu, yc, Some(ym)),
                    pool("ZGC Old Generation", Heap, ou, oc, Some(om)),
                ],
                Some(om.max(ym)),
            )
        }
        Gc::Shenandoah => {
            let (u, c, m) = space(s, 1, 0)?;
            (vec![pool("Shenandoah", Heap, u, c, Some(m))], Some(m))
        }
    })
}

/// `java.vm.specification.version`'s major: `1.8` → 8, `17` → 17.
fn spec_major(s: &Snapshot) -> u32 {
    let v = string(s, "java.property.java.vm.specification.version").unwrap_or("");
    let v = v.strip_prefix("1.").unwrap_or(v);
    v.split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

fn runtime(s: &Snapshot, spec: u32) -> Runtime {
    let vm_name = string(s, "java.property.java.vm.name").unwrap_or("");
    let name = if vm_name.starts_with("OpenJDK") {
        "OpenJDK Runtime Environment"
    } else if vm_name.starts_with("Java HotSpot(TM)") {
        "Java(TM) SE Runtime Environment"
    } else {
        "unknown"
    };
    let vm_version = string(s, "java.property.java.vm.version").unwrap_or("");
    let java_version = string(s, "java.property.java.version").unwrap_or("");
    let version = if spec >= 9 || java_version.is_empty() {
        vm_version.to_string()
    } else {
        match vm_version.rsplit_once('-') {
            Some((_, build)) if build.starts_with('b') => format!("{java_version}-{build}"),
            _ => java_version.to_string(),
        }
    };
    let or_unknown = |v: String| if v.is_empty() { "unknown".into() } else { v };
    Runtime {
        name: name.into(),
        vendor: or_unknown(
            string(s, "java.property.java.vm.vendor")
                .unwrap_or("")
                .to_string(),
        ),
        version: or_unknown(version),
        vm_name: vm_name.to_string(),
        vm_version: vm_version.to_string(),
    }
}

impl JvmMetrics {
    /// Reads the JMX view of a snapshot. Never fails: what the region lacks is `None` or absent.
    pub fn from_snapshot(s: &Snapshot) -> JvmMetrics {
        let spec = spec_major(s);
        let frequency = s.long("sun.os.hrt.frequency").filter(|f| *f > 0);
        let ticks = |name: &str| Some(s.long(name)? as f64 / frequency? as f64);
        let mut names = Vec::new();
        let mut collectors = Vec::new();
        for n in 0.. {
            let Some(name) = string(s, &format!("sun.gc.collector.{n}.name")) else {
                // Collector numbers may skip (ZGC publishes 0 and 2): look a little further.
                if n > 3 {
                    break;
                }
                continue;
            };
            names.push(name.to_string());
            let count = unsigned(s, &format!("sun.gc.collector.{n}.invocations"));
            let seconds = ticks(&format!("sun.gc.collector.{n}.time"));
            if let (Some((bean, action, concurrent)), Some(count), Some(seconds)) =
                (collector_bean(name, spec), count, seconds)
            {
                collectors.push(Collector {
                    name: bean,
                    action,
                    concurrent,
                    count,
                    seconds,
                });
            }
        }
        let gc = which_gc(s, &names);
        let mut pools = Vec::new();
        let mut heap = None;
        if let Some((heap_pools, heap_max)) = gc.and_then(|g| heap_pools(s, g)) {
            let used = heap_pools.iter().map(|p| p.used).sum();
            let committed = heap_pools.iter().map(|p| p.committed).sum();
            let max = heap_max.or_else(|| heap_pools.iter().map(|p| p.max).sum());
            heap = Some((used, committed, max));
            pools = heap_pools;
        }
        if let (Some(u), Some(c)) = (
            unsigned(s, "sun.gc.metaspace.used"),
            unsigned(s, "sun.gc.metaspace.capacity"),
        ) {
            pools.push(pool(
                "Metaspace",
                Area::NonHeap,
                u,
                c,
                max_metaspace_size(s),
            ));
        }
        if let (Some(u), Some(c), Some(m)) = (
            unsigned(s, "sun.gc.compressedclassspace.used"),
            unsigned(s, "sun.gc.compressedclassspace.capacity"),
            unsigned(s, "sun.gc.compressedclassspace.maxCapacity"),
        ) && m > 0
        {
            // Without compressed class pointers (JDK 11 to 14's ZGC) the counters are 0 and JMX
            // has no such pool.
            pools.push(pool("Compressed Class Space", Area::NonHeap, u, c, Some(m)));
        }
        let threads = (|| {
            Some(Threads {
                live: unsigned(s, "java.threads.live")?,
                daemon: unsigned(s, "java.threads.daemon")?,
                peak: unsigned(s, "java.threads.livePeak")?,
                started: unsigned(s, "java.threads.started")?,
            })
        })();
        let classes = (|| {
            let shared = |n: &str| unsigned(s, n).unwrap_or(0);
            let total_loaded =
                unsigned(s, "java.cls.loadedClasses")? + shared("java.cls.sharedLoadedClasses");
            let unloaded =
                unsigned(s, "java.cls.unloadedClasses")? + shared("java.cls.sharedUnloadedClasses");
            Some(Classes {
                loaded: total_loaded.saturating_sub(unloaded),
                total_loaded,
                unloaded,
            })
        })();
        JvmMetrics {
            gc,
            pools,
            heap,
            collectors,
            threads,
            classes,
            jit_seconds: ticks("java.ci.totalTime"),
            safepoints: (|| {
                Some(Safepoints {
                    count: unsigned(s, "sun.rt.safepoints")?,
                    seconds: ticks("sun.rt.safepointTime")?,
                    sync_seconds: ticks("sun.rt.safepointSyncTime")?,
                })
            })(),
            class_load_seconds: ticks("sun.cls.time"),
            start_time_seconds: s
                .long("sun.rt.vmInitDoneTime")
                .filter(|t| *t > 0)
                .map(|t| t as f64 / 1000.0),
            runtime: runtime(s, spec),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_hotspot_reads_them() {
        assert_eq!(parse_size("256m"), Some(256 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999t"), None);
    }

    #[test]
    fn every_collector_name_has_its_jdks_bean() {
        assert_eq!(collector_bean("PSScavenge", 8).unwrap().0, "PS Scavenge");
        assert_eq!(
            collector_bean("G1 concurrent cycle pauses", 21).unwrap().0,
            "G1 Concurrent GC"
        );
        assert_eq!(collector_bean("G1 concurrent cycle pauses", 17), None);
        assert_eq!(collector_bean("Shenandoah full", 21), None);
    }
}
