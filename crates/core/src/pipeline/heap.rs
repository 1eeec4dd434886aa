//! The heap pipeline (`inspect histo <pid>`, `inspect histo --core <core>`): target → VM model
//! (read with the JVM running) → stop → spaces, TLABs, object walk → release → histogram.
//! The open, stop and release are the thread dump's ([`super::threads`]).

use std::time::{Duration, Instant};

use super::jvm::Jvm;
use super::{Detail, Warning};
use crate::error::Error;
use crate::heap::Histogram;
use crate::memory::ReadMemory;
use crate::vm::VmModel;

/// A class histogram and how it was taken.
#[derive(Debug, Clone)]
pub struct HeapHistogram {
    /// The classes and what the walk skipped.
    pub histogram: Histogram,
    /// Facts for `-v` (path, model, walk figures, stop).
    pub details: Vec<Detail>,
    /// Things the user should know even without `-v` (a truncated core, threads not stopped).
    pub warnings: Vec<Warning>,
}

/// Options of `inspect histo`.
#[derive(Debug, Clone)]
pub struct HeapOptions {
    /// Stop the target's threads while reading (`false`: `--no-stop`, the walk may meet
    /// objects being written and stop a space early).
    pub stop: bool,
    /// How long to wait for every thread to stop.
    pub stop_timeout: Duration,
    /// How long to wait for another tracer's hold to end (another `inspect` reading the JVM)
    /// before giving [`Error::AlreadyTraced`] (`--wait`), as for `-F`.
    pub wait: Duration,
}

impl Default for HeapOptions {
    fn default() -> Self {
        HeapOptions {
            stop: true,
            stop_timeout: super::DEFAULT_STOP_TIMEOUT,
            wait: Duration::from_secs(5),
        }
    }
}

/// What a heap read needs of a minidump.
const HEAP_NEEDS: &str = "jvm.dll's image, the VM's tables and the Java heap are";

fn walk(
    vm: &VmModel,
    mem: &(dyn ReadMemory + Sync),
    details: &mut Vec<Detail>,
) -> Result<Histogram, Error> {
    let began = Instant::now();
    let h = crate::heap::histogram::histogram(vm, mem)?;
    let took = began.elapsed();
    let s = &h.stats;
    details.push(Detail::Heap(format!(
        "heap walk: {} spaces, {} objects, {} bytes in {:.1} ms ({:.0} MB/s); {} bytes of TLAB tails skipped, {} objects being allocated skipped, {} bytes of free chunks (CMS) stepped over; {} reads, {} bytes read; {} objects of classes without a mirror not counted",
        h.spaces.len(),
        s.objects,
        s.bytes,
        took.as_secs_f64() * 1e3,
        s.bytes_read as f64 / took.as_secs_f64().max(1e-9) / 1e6,
        s.tlab_bytes,
        s.torn,
        s.free_bytes,
        s.reads,
        s.bytes_read,
        h.dormant,
    )));
    Ok(h)
}

/// Opens live process `pid` (its VM model read with the JVM running), runs `prepare` (what
/// needs no hold, such as reading libjvm's file), then holds its threads as `opts` says while
/// `read` runs (given the JVM, what `prepare` gave, the stop's registers by thread id, and the
/// details so far), outside any stop-the-world collection ([`held_outside_collections`]),
/// releases them, and records the stop. Returns what `read` gave, the details and the warnings.
fn live_held<P, R>(
    pid: crate::process::Pid,
    opts: &HeapOptions,
    prepare: impl FnOnce(&Jvm) -> P,
    read: impl FnOnce(
        &Jvm,
        P,
        &dyn Fn(crate::pid::Pid) -> Option<crate::registers::ThreadRegisters>,
        &mut Vec<Detail>,
    ) -> Result<R, Error>,
) -> Result<(R, Vec<Detail>, Vec<Warning>), Error> {
    let jvm = Jvm::live(pid)?;
    let prepared = prepare(&jvm);
    let mut details = vec![jvm.path_detail(), jvm.model_fact()];
    let stop = super::hold::StopOptions {
        stop: opts.stop,
        timeout: opts.stop_timeout,
        wait: opts.wait,
    };
    let host_tids = crate::process::namespace_tids(pid);
    let host = |tid| host_tids.get(&tid).copied().unwrap_or(tid);
    let (read, report, wait) = super::hold::held_outside_collections(&jvm, &stop, |stopped| {
        let registers = |tid| stopped.and_then(|s| s.registers(host(tid)));
        read(&jvm, prepared, &registers, &mut details)
    })?;
    let read = read?;
    let mut warnings = Vec::new();
    wait.record(opts.stop, &mut details, &mut warnings);
    if let Some(r) = report {
        super::record_stop(r, opts.stop_timeout, &mut details, &mut warnings);
    }
    Ok((read, details, warnings))
}

/// The class histogram of live process `pid`: the VM model read with the JVM running, then its
/// threads held (ptrace, as `inspect threads` holds them) for the heap walk only, released, and
/// the process checked to be the same one.
///
/// # Errors
/// As [`super::dump_threads`] for the open and the stop; [`Error::Unsupported`] for a collector
/// not walked (ZGC); [`Error::Vm`] when the heap's entries are
/// missing.
pub fn heap_histogram(
    pid: crate::process::Pid,
    opts: &HeapOptions,
) -> Result<HeapHistogram, Error> {
    let (histogram, details, warnings) = live_held(
        pid,
        opts,
        |_| (),
        |jvm, (), _, details| walk(&jvm.vm, jvm.memory_sync(), details),
    )?;
    Ok(HeapHistogram {
        histogram,
        details,
        warnings,
    })
}

/// The class histogram of an ELF core (`inspect histo --core <core>`), libjvm found as for
/// [`super::dump_threads_core`] (`exe`, `sysroot` likewise).
///
/// # Errors
/// [`Error::Core`] when the file is not a usable ELF core of a JVM (a Windows minidump is not
/// read yet); as [`heap_histogram`] for the walk.
pub fn heap_histogram_core(
    core_path: &std::path::Path,
    exe: Option<&std::path::Path>,
    sysroot: Option<&std::path::Path>,
) -> Result<HeapHistogram, Error> {
    let jvm = Jvm::open_file(core_path, exe, sysroot, HEAP_NEEDS)?;
    let mut details = vec![jvm.path_detail(), jvm.model_fact()];
    let histogram = walk(&jvm.vm, jvm.memory_sync(), &mut details)?;
    Ok(HeapHistogram {
        histogram,
        details,
        warnings: super::hold::core_warnings(jvm),
    })
}

/// A heap summary (`inspect heap`) and how it was taken.
#[derive(Debug, Clone)]
pub struct HeapSummary {
    /// What `jcmd GC.heap_info` prints, as data.
    pub info: crate::heap::summary::HeapInfo,
    /// Facts for `-v` (path, model, stop).
    pub details: Vec<Detail>,
    /// Things the user should know even without `-v`.
    pub warnings: Vec<Warning>,
}

/// Metaspace is not in vmStructs: a note when libjvm's `.symtab` did not give it.
/// What jcmd prints and the summary does not hold is said too.
fn metaspace_note(info: &crate::heap::summary::HeapInfo, warnings: &mut Vec<Warning>) {
    if info.metaspace.is_none() && info.jdk < 25 {
        warnings.push(Warning::MetaspaceNotRead { jdk: info.jdk });
    }
    if !info.left_out.is_empty() {
        warnings.push(Warning::SummaryLinesLeftOut {
            lines: info.left_out.clone(),
        });
    }
}

/// The heap summary of live process `pid` (as `jcmd <pid> GC.heap_info`): the VM model read
/// with the JVM running, its threads held only while the collector's few words are read.
///
/// # Errors
/// As [`heap_histogram`]; [`Error::Unsupported`] for a collector not summarized yet.
pub fn heap_summary(pid: crate::process::Pid, opts: &HeapOptions) -> Result<HeapSummary, Error> {
    let jvm = Jvm::live(pid)?;
    let Some(process) = jvm.process() else {
        unreachable!("Jvm::live opens a process");
    };
    // libjvm's `.symtab` is read before the hold.
    let symbols = jvm.symtab_addresses(&crate::heap::summary::METASPACE_SYMBOLS);
    let mut details = vec![jvm.path_detail(), jvm.model_fact()];
    let stop = super::hold::StopOptions {
        stop: opts.stop,
        timeout: opts.stop_timeout,
        wait: opts.wait,
    };
    let (read, report) = super::hold::held(process, &stop, |_| {
        crate::heap::summary::heap_info(&jvm.vm, jvm.memory(), &|n| symbols.get(n).copied())
    })?;
    let info = read?;
    let mut warnings = Vec::new();
    if let Some(r) = report {
        super::record_stop(r, opts.stop_timeout, &mut details, &mut warnings);
    }
    metaspace_note(&info, &mut warnings);
    Ok(HeapSummary {
        info,
        details,
        warnings,
    })
}

/// The heap summary of an ELF core (`inspect heap --core <core>`), libjvm found as for
/// [`super::dump_threads_core`].
///
/// # Errors
/// As [`heap_histogram_core`]; [`Error::Unsupported`] for a collector not summarized yet.
pub fn heap_summary_core(
    core_path: &std::path::Path,
    exe: Option<&std::path::Path>,
    sysroot: Option<&std::path::Path>,
) -> Result<HeapSummary, Error> {
    let jvm = Jvm::open_file(core_path, exe, sysroot, HEAP_NEEDS)?;
    let details = vec![jvm.path_detail(), jvm.model_fact()];
    let symbols = jvm.symtab_addresses(&crate::heap::summary::METASPACE_SYMBOLS);
    let info =
        crate::heap::summary::heap_info(&jvm.vm, jvm.memory(), &|n| symbols.get(n).copied())?;
    let mut warnings = jvm.warnings;
    metaspace_note(&info, &mut warnings);
    Ok(HeapSummary {
        info,
        details,
        warnings,
    })
}

/// A heap dump written (`inspect heapdump`) and how it was taken.
#[derive(Debug, Clone)]
pub struct HeapDumpReport {
    /// What the dump held and skipped.
    pub stats: crate::heap::dump::DumpStats,
    /// Facts for `-v` (path, model, walk figures, stop).
    pub details: Vec<Detail>,
    /// Things the user should know even without `-v`.
    pub warnings: Vec<Warning>,
}

/// The threads' stacks for a heap dump, from the thread walk of `inspect threads` (frames top
/// first, the monitors each frame holds); empty when the walk fails (the dump then lists the
/// threads' objects without frames).
fn stacks(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    registers: &dyn Fn(crate::pid::Pid) -> Option<crate::registers::ThreadRegisters>,
    details: &mut Vec<Detail>,
) -> Vec<crate::heap::dump::StackThread> {
    use crate::heap::dump::{StackFrame, StackThread};
    use crate::threads::frames::{FrameKind, FrameMonitor};
    let paged = crate::vm::paged::Paged::new(mem);
    let walked = match crate::threads::dump::walk(vm, &paged, registers) {
        Ok(d) => d,
        Err(e) => {
            details.push(Detail::Heap(format!(
                "thread walk failed, the dump's threads have no frames: {e}"
            )));
            return Vec::new();
        }
    };
    walked
        .threads
        .into_iter()
        .map(|t| StackThread {
            object: t.vm.thread_obj,
            java_thread: t.vm.address,
            // From the top Java frame (a mounted virtual thread's sit above the carrier's own)
            // to the stack's base.
            stack: t
                .frames
                .iter()
                .chain(t.virtual_thread.iter().flat_map(|v| &v.frames))
                .map(|f| f.sp)
                .filter(|&sp| sp != 0)
                .min()
                .filter(|&low| low < t.vm.stack.0)
                .map_or((0, 0), |low| (low, t.vm.stack.0)),
            frames: t
                .frames
                .into_iter()
                .map(|f| StackFrame {
                    holder: f.holder,
                    line: match (f.kind, f.line) {
                        (FrameKind::Native, _) => -3,
                        (_, Some(l)) => l,
                        _ => -1,
                    },
                    sp: f.sp,
                    method: f.method.to_string(),
                    signature: f.signature.as_deref().unwrap_or_default().to_string(),
                    file: f.file.as_deref().map(str::to_string),
                    objects: f
                        .monitors
                        .iter()
                        .filter_map(|m| match m {
                            FrameMonitor::Object {
                                object,
                                eliminated: false,
                            } => Some(*object),
                            _ => None,
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

/// The libjvm `.symtab` symbol of the VM's own global handles (`Universe::_vm_global`, an
/// `OopStorage*`, JDK 16+), which HotSpot's dumper writes as JNI global roots.
const VM_GLOBAL_SYMBOL: &str = "_ZN8Universe10_vm_globalE";

/// `Universe`'s static oops up to JDK 15 (`memory/universe.hpp`, what `Universe::oops_do`
/// visits and HotSpot's dumper writes as JNI global roots), and `_mirrors` (an array of
/// `T_VOID + 1` = 15 oops).
const UNIVERSE_OOPS: [&str; 28] = [
    "_int_mirror",
    "_float_mirror",
    "_double_mirror",
    "_byte_mirror",
    "_bool_mirror",
    "_char_mirror",
    "_long_mirror",
    "_short_mirror",
    "_void_mirror",
    "_main_thread_group",
    "_system_thread_group",
    "_the_empty_class_klass_array",
    "_the_null_sentinel",
    "_the_null_string",
    "_the_min_jint_string",
    "_out_of_memory_error_java_heap",
    "_out_of_memory_error_metaspace",
    "_out_of_memory_error_class_metaspace",
    "_out_of_memory_error_array_size",
    "_out_of_memory_error_gc_overhead_limit",
    "_out_of_memory_error_realloc_objects",
    "_delayed_stack_overflow_error_message",
    "_preallocated_out_of_memory_error_array",
    "_null_ptr_exception_instance",
    "_arithmetic_exception_instance",
    "_virtual_machine_error_instance",
    "_vm_exception",
    "_reference_pending_list",
];

/// The global roots of [`crate::heap::dump::GlobalRoots`] for `jvm`, from libjvm's `.symtab`
/// (none without one): `Universe::_vm_global` from JDK 16, `Universe`'s static oops before.
fn global_roots(jvm: &Jvm) -> crate::heap::dump::GlobalRoots {
    let mut roots = crate::heap::dump::GlobalRoots::default();
    if jvm.vm.major >= 16 {
        roots.storages = jvm
            .symtab_addresses(&[VM_GLOBAL_SYMBOL])
            .into_values()
            .collect();
    } else {
        let mangled = |n: &str| format!("_ZN8Universe{}{n}E", n.len());
        let mut names: Vec<String> = UNIVERSE_OOPS.iter().map(|n| mangled(n)).collect();
        names.push(mangled("_mirrors"));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let found = jvm.symtab_addresses(&refs);
        for (name, &at) in &found {
            if *name == mangled("_mirrors") {
                roots.oops.extend((0..15).map(|i| at + 8 * i));
            } else {
                roots.oops.push(at);
            }
        }
        roots.oops.sort_unstable();
    }
    roots
}

fn write_dump(
    vm: &VmModel,
    mem: &(dyn ReadMemory + Sync),
    globals: &crate::heap::dump::GlobalRoots,
    registers: &dyn Fn(crate::pid::Pid) -> Option<crate::registers::ThreadRegisters>,
    sink: &mut dyn crate::heap::dump::HeapDumpSink,
    details: &mut Vec<Detail>,
) -> Result<crate::heap::dump::DumpStats, Error> {
    let began = Instant::now();
    let stacks = stacks(vm, mem, registers, details);
    let s = crate::heap::dump::dump(vm, mem, &stacks, globals, sink)?;
    let took = began.elapsed();
    details.push(Detail::Heap(format!(
        "heap dump: {} classes, {} instances, {} object arrays, {} primitive arrays, {} roots ({} of them frames' slots, from {} KiB of stacks scanned, {} JNI local and {} JNI global handles) in {:.1} ms; {} objects walked, {} bytes; {} reads, {} bytes read ({:.0} MB/s); {} class mirrors written as classes; {} references to no object start written as null ({} of them inside a walked space); {}",
        s.classes,
        s.instances,
        s.object_arrays,
        s.primitive_arrays,
        s.roots,
        s.stack_slot_roots,
        s.stack_bytes_scanned / 1024,
        s.jni_local_roots,
        s.jni_global_roots,
        took.as_secs_f64() * 1e3,
        s.walk.objects,
        s.walk.bytes,
        s.walk.reads,
        s.walk.bytes_read,
        s.walk.bytes_read as f64 / took.as_secs_f64().max(1e-9) / 1e6,
        s.mirrors,
        s.stale_references,
        s.stale_inside,
        match s.start_map_refused {
            None => format!("a map of object starts of {} bytes", s.start_map_bytes),
            Some(b) => format!(
                "no map of object starts (it would take {b} bytes): references checked against the spaces only"
            ),
        },
    )));
    Ok(s)
}

/// Dumps the heap of live process `pid` into `sink` (`inspect heapdump <pid>`): the VM model
/// read with the JVM running, its threads held (as for [`heap_histogram`]) while the classes
/// and the heap are read and written, released, the process checked to be the same one.
///
/// # Errors
/// As [`heap_histogram`]; [`Error::DumpOutput`] when the sink fails.
pub fn heap_dump(
    pid: crate::process::Pid,
    opts: &HeapOptions,
    sink: &mut dyn crate::heap::dump::HeapDumpSink,
) -> Result<HeapDumpReport, Error> {
    // libjvm's `.symtab` is read before the hold.
    let (stats, details, warnings) = live_held(
        pid,
        opts,
        global_roots,
        |jvm, globals, registers, details| {
            write_dump(
                &jvm.vm,
                jvm.memory_sync(),
                &globals,
                registers,
                sink,
                details,
            )
        },
    )?;
    Ok(HeapDumpReport {
        stats,
        details,
        warnings,
    })
}

/// Dumps the heap of an ELF core into `sink` (`inspect heapdump --core <core>`), libjvm found
/// as for [`super::dump_threads_core`].
///
/// # Errors
/// As [`heap_histogram_core`]; [`Error::DumpOutput`] when the sink fails.
pub fn heap_dump_core(
    core_path: &std::path::Path,
    exe: Option<&std::path::Path>,
    sysroot: Option<&std::path::Path>,
    sink: &mut dyn crate::heap::dump::HeapDumpSink,
) -> Result<HeapDumpReport, Error> {
    let jvm = Jvm::open_file(core_path, exe, sysroot, HEAP_NEEDS)?;
    let mut details = vec![jvm.path_detail(), jvm.model_fact()];
    let registers = |tid| jvm.saved_registers(tid);
    let stats = write_dump(
        &jvm.vm,
        jvm.memory_sync(),
        &global_roots(&jvm),
        &registers,
        sink,
        &mut details,
    )?;
    Ok(HeapDumpReport {
        stats,
        details,
        warnings: super::hold::core_warnings(jvm),
    })
}
