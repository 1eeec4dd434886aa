//! The thread-dump pipeline (`inspect threads <pid>`, `inspect threads --core <core>`, also a
//! Windows minidump): target → VM model → stop → threads → frames → release → format.
//!
//! Everything that needs no stop runs first with the JVM running: libjvm's exported symbols
//! (its `_DYNAMIC` read from the target's memory, `elf/dynamic.rs`) and the VM model
//! ([`crate::vm::VmModel`]: the vmStructs tables, flags, version), which do not change once the
//! VM is up. Then the threads are held exactly as `-F` holds them (`process::stop`), the thread
//! list, each thread and its frames are read through one page cache, the threads are released,
//! and only then is anything formatted.

use std::time::{Duration, Instant};

use super::jvm::Jvm;
use super::{Detail, Warning};
use crate::error::Error;
use crate::memory::ReadMemory;
use crate::threads::dump::{self, Dump};
use crate::vm::paged::Paged;

/// A thread dump and how it was taken.
#[derive(Debug, Clone)]
pub struct ThreadDump {
    /// The threads and their frames.
    pub dump: Dump,
    /// Facts for `-v` (path, library, stop figures, reads).
    pub details: Vec<Detail>,
    /// Things the user should know even without `-v`.
    pub warnings: Vec<Warning>,
}

/// Options of `inspect threads`.
#[derive(Debug, Clone)]
pub struct ThreadsOptions {
    /// Stop the target's threads while reading (`false`: `--no-stop`, frames may be torn).
    pub stop: bool,
    /// How long to wait for every thread to stop.
    pub stop_timeout: Duration,
    /// Also read the virtual threads no carrier runs (`--virtual`, JDK 21+), while the
    /// threads are held ([`Dump::read_virtual_threads`]).
    pub virtual_threads: bool,
    /// How long to wait for another tracer's hold to end (another `inspect` reading the JVM)
    /// before giving [`Error::AlreadyTraced`] (`--wait`), as for `-F`.
    pub wait: Duration,
    /// Hold only the threads that run (`--hold-threads running`, the default; Linux): every
    /// thread is walked with the JVM running, and those that provably did not run during the
    /// walk ([`TaskStat::quiet_until`](crate::TaskStat::quiet_until)) are kept; the others are
    /// held, each for a second walk, with the lock facts read while they are held. Every thread
    /// is held instead (a [`Detail::HeldAll`] says why) when a collection ran during the
    /// unheld walk, under ZGC and Shenandoah (which move objects while the JVM runs), with
    /// `ownable_synchronizers`, and on Windows; with `stop` false, nothing is held.
    pub hold_running: bool,
    /// Also walk the heap for every owned ownable synchronizer (`--locks`, as `jcmd
    /// Thread.print -l`: [`crate::heap::ownable`]), with every thread held and outside any
    /// stop-the-world collection; a thread that owns none then says `- None`.
    pub ownable_synchronizers: bool,
}

impl Default for ThreadsOptions {
    fn default() -> Self {
        ThreadsOptions {
            stop: true,
            stop_timeout: super::DEFAULT_STOP_TIMEOUT,
            virtual_threads: false,
            wait: Duration::from_secs(5),
            hold_running: true,
            ownable_synchronizers: false,
        }
    }
}

/// A thread dump of live process `pid` (`inspect threads <pid>`): the VM model is read with the
/// JVM running (`Jvm::live`: libjvm from `/proc/<pid>/maps`, or `jvm.dll` from the toolhelp
/// module list with its PE exports, `locate/pe.rs`), then its threads are held for the walk
/// only (as `-F` holds them: ptrace; on Windows the debug attach, every thread suspended by the
/// system while the attach's breakpoint event is pending, released on every path, the JVM never
/// killed with the debugger), a thread that was running Java code walked from its registers
/// (`process::Stopped::registers`, by `OSThread::_thread_id`), released, and the process is
/// checked to be the same one.
///
/// # Errors
/// [`Error::NotAJvm`], [`Error::PermissionDenied`], [`Error::NoSuchProcess`],
/// [`Error::ProcessExited`], [`Error::PidReused`], [`Error::Os`] for a 32-bit (WOW64) Windows
/// process or a failed attach, [`Error::Pe`], [`Error::Vm`] when the model cannot be
/// read, [`Error::Unsupported`] without a live backend.
pub fn dump_threads(pid: crate::process::Pid, opts: &ThreadsOptions) -> Result<ThreadDump, Error> {
    let jvm = Jvm::live(pid)?;
    held_walk(&jvm, opts)
}

/// The live dump's stop, walk and release, the same on every OS with a live backend: the
/// threads held (`process::stop`, unless `--no-stop`), walked, given their CPU times and
/// priorities as the stop read them (Linux: each thread's `stat` before its interrupt; Windows:
/// `GetThreadTimes`, `GetThreadPriority`), released, and the process checked to be the same one.
fn held_walk(jvm: &Jvm, opts: &ThreadsOptions) -> Result<ThreadDump, Error> {
    use crate::process;
    let Some(process) = jvm.process() else {
        unreachable!("held_walk is given a live JVM");
    };
    // ZGC and Shenandoah move objects while the JVM runs: a thread walked without a hold may
    // have its java.lang.Thread read mid-relocation (seen: a thread missing from the dump under
    // generational ZGC), so under them every thread is held, as without the option.
    let relocates_concurrently = matches!(
        jvm.vm.layout.collector,
        Some(crate::vm::Collector::Z | crate::vm::Collector::Shenandoah)
    );
    // The heap walk of `--locks` needs every thread held; so does an OS that holds a process
    // only as a whole (Windows' debug attach).
    let mut held_all_because = None;
    if opts.stop
        && opts.hold_running
        && !relocates_concurrently
        && !opts.ownable_synchronizers
        && process::holds_single_threads().is_ok()
    {
        match running_held_walk(jvm, process, opts)? {
            Ok(dump) => return Ok(dump),
            Err(why) => held_all_because = Some(why),
        }
    }
    let vm = &jvm.vm;
    let pid = process.pid();
    let mut details = vec![jvm.path_detail()];
    if let Some(why) = held_all_because {
        details.push(Detail::HeldAll(why));
    }
    // The JVM knows its threads by its own pid namespace's ids (a container's): the host's
    // ids the stop and /proc use are mapped from them.
    let host_tids = process::namespace_tids(pid);
    let host = |tid| host_tids.get(&tid).copied().unwrap_or(tid);
    let paged = Paged::new(jvm.memory());
    let stop = super::hold::StopOptions {
        stop: opts.stop,
        timeout: opts.stop_timeout,
        wait: opts.wait,
    };
    let mut heap_walk = None;
    let read = |stopped: Option<&process::Stopped>| {
        let walk_began = Instant::now();
        let registers = |tid| stopped.and_then(|s| s.registers(host(tid)));
        let mut walked = dump::walk(vm, &paged, &registers);
        if let Ok(dump) = &mut walked {
            dump.taken_at = Some(std::time::SystemTime::now());
        }
        if opts.virtual_threads
            && let Ok(dump) = &mut walked
        {
            dump.read_virtual_threads(vm, &paged);
        }
        // The thread walk's time; the heap walk's own is on its line.
        let walk_time = walk_began.elapsed();
        if opts.ownable_synchronizers
            && let Ok(dump) = &mut walked
        {
            heap_walk = Some(read_synchronizers(vm, jvm.memory_sync(), dump));
        }
        // CPU times as the stop read them; without a stop, read now.
        if let Ok(dump) = &mut walked {
            // jcmd's `os_prio=` is the nice value only when the JVM uses the OS's priorities,
            // else 0 (`os::get_native_priority`, Linux); Windows: `GetThreadPriority`.
            let normal = (process::OS_PRIORITY_IS_NICE && !vm.os_thread_priorities).then_some(0);
            match stopped {
                Some(s) => dump.set_task_stats(&|tid| s.task_stat(host(tid)), normal),
                None => dump.set_task_stats(&|tid| process::task_stat(pid, host(tid)), normal),
            }
        }
        (walked, walk_time)
    };
    let mut warnings = Vec::new();
    let ((walked, walk_time), report) = if opts.ownable_synchronizers {
        let (out, report, wait) = super::hold::held_outside_collections(jvm, &stop, read)?;
        wait.record(opts.stop, &mut details, &mut warnings);
        (out, report)
    } else {
        super::hold::held(process, &stop, read)?
    };
    let dump = walked?;
    details.push(jvm.model_fact());
    details.push(walk_detail(&dump, walk_time, paged.reads()));
    if let Some(walk) = heap_walk {
        synchronizers_detail(walk, &mut details, &mut warnings);
    }
    if let Some(r) = report {
        super::record_stop(r, opts.stop_timeout, &mut details, &mut warnings);
    }
    Ok(ThreadDump {
        dump,
        details,
        warnings,
    })
}

/// The live dump holding only the threads that run ([`ThreadsOptions::hold_running`]): each
/// thread's `TaskStat` read, every thread walked unheld, the `TaskStat`s read again; the threads
/// that ran (or whose stat could not be read, or that are in Java code with no frame anchor, so
/// that their walk needs their registers) held together (`process::stop_threads`), walked
/// again with their registers, and the lock facts of the whole dump read while they are held.
/// Linux: the caller asks `process::holds_single_threads` first.
///
/// Under the collectors this runs under (Serial, Parallel, G1, CMS) objects move only in a
/// stop-the-world collection, which a parked thread does not hold up: so the collections so
/// far and the collection flag ([`collections`]) are read before the unheld walk and after
/// the dump is read, and a dump that began inside a collection or saw one begin is not kept:
/// `Ok(Err(why))`, and the caller holds every thread instead.
fn running_held_walk(
    jvm: &Jvm,
    process: &crate::process::Process,
    opts: &ThreadsOptions,
) -> Result<Result<ThreadDump, &'static str>, Error> {
    use crate::process::{self, TaskStat};
    use std::collections::HashMap;
    let vm = &jvm.vm;
    let counter = || collections(vm, jvm.memory());
    let began = match counter() {
        Some((total, false)) => (total, false),
        Some(_) => return Ok(Err("the JVM was inside a stop-the-world collection")),
        None => return Ok(Err("the collection counter could not be read")),
    };
    let pid = process.pid();
    let mut details = vec![jvm.path_detail()];
    let host_tids = process::namespace_tids(pid);
    let host = |tid: crate::pid::Pid| host_tids.get(&tid).copied().unwrap_or(tid);
    let walk_began = Instant::now();
    let tids = process::list_tasks(pid).unwrap_or_default();
    let watch = process::RunWatch::start(pid, &tids);
    let paged = Paged::new(jvm.memory());
    let (list, addresses) = dump::thread_list(vm, &paged)?;
    let mut threads = dump::walk_at(vm, &paged, &|_| None, &addresses)?;
    let after: HashMap<crate::pid::Pid, TaskStat> = tids
        .iter()
        .filter_map(|&tid| Some((tid, watch.again(tid)?)))
        .collect();
    if counter() != Some(began) {
        return Ok(Err(
            "a collection ran during the unheld walk (objects may have moved)",
        ));
    }
    let os_tid = |t: &dump::DumpThread| {
        t.vm.os_tid
            .and_then(|id| crate::pid::Pid::try_from(id).ok())
            .map(host)
    };
    // Held too: a thread in Java code with no frame anchor, whose walk needs its registers
    // even if it did not run (descheduled, or the whole JVM SIGSTOPped).
    let needs_registers = |t: &dump::DumpThread| {
        t.vm.anchor.sp == 0
            && t.vm
                .vm_state_name
                .is_some_and(|s| s.starts_with("_thread_in_Java"))
    };
    let moved: Vec<usize> = threads
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            needs_registers(t)
                || !os_tid(t).is_some_and(|tid| match (watch.first(tid), after.get(&tid)) {
                    (Some(b), Some(a)) => b.quiet_until(a),
                    _ => false,
                })
        })
        .map(|(i, _)| i)
        .collect();
    let hold: Vec<crate::pid::Pid> = moved.iter().filter_map(|&i| os_tid(&threads[i])).collect();
    let mut report = None;
    let mut reads = paged.reads();
    let dump = if hold.is_empty() {
        dump::assemble(vm, &paged, list, threads)
    } else {
        // Held together for the second walk and the lock facts; the process checked after.
        let stopped =
            super::live::stop_threads_when_free(process, &hold, opts.stop_timeout, opts.wait)?;
        let paged = Paged::new(jvm.memory());
        let again: Vec<u64> = moved.iter().map(|&i| threads[i].vm.address).collect();
        let rewalked = dump::walk_at(vm, &paged, &|tid| stopped.registers(host(tid)), &again);
        let assembled = rewalked.map(|rewalked| {
            for (&i, t) in moved.iter().zip(rewalked) {
                threads[i] = t;
            }
            dump::assemble(vm, &paged, list, std::mem::take(&mut threads))
        });
        reads += paged.reads();
        report = Some(stopped.release());
        assembled?
    };
    process.check_same()?;
    let mut dump = dump;
    dump.taken_at = Some(std::time::SystemTime::now());
    if opts.virtual_threads {
        let paged = Paged::new(jvm.memory());
        dump.read_virtual_threads(vm, &paged);
    }
    // The lock facts and the virtual threads were read after the walk, the JVM not held
    // throughout: they stand only if still no collection began.
    if counter() != Some(began) {
        return Ok(Err(
            "a collection began while the dump was read (objects may have moved)",
        ));
    }
    let normal = (process::OS_PRIORITY_IS_NICE && !vm.os_thread_priorities).then_some(0);
    dump.set_task_stats(&|tid| after.get(&host(tid)).copied(), normal);
    let walk_time = walk_began.elapsed();
    let mut warnings = Vec::new();
    details.push(jvm.model_fact());
    details.push(walk_detail(&dump, walk_time, reads));
    details.push(Detail::HeldRunning {
        held: hold.len(),
        threads: dump.threads.len(),
    });
    if let Some(r) = report {
        super::record_stop(r, opts.stop_timeout, &mut details, &mut warnings);
    }
    Ok(Ok(ThreadDump {
        dump,
        details,
        warnings,
    }))
}

/// The collections so far and whether one runs: `CollectedHeap::_total_collections` (an
/// `unsigned int`, incremented as each collection begins; `gc/shared/collectedHeap.hpp`) and
/// the stop-the-world flag ([`crate::heap::spaces::stw_collection_flag`]). `None` when either
/// is not exported or cannot be read.
pub(super) fn collections(
    vm: &crate::vm::VmModel,
    mem: &dyn crate::memory::ReadMemory,
) -> Option<(u32, bool)> {
    let heap = crate::heap::spaces::collected_heap(vm, mem).ok()?;
    let total = mem
        .read_u32(heap.wrapping_add(vm.offset("CollectedHeap", "_total_collections").ok()?))
        .ok()?;
    let flag = crate::heap::spaces::stw_collection_flag(vm, mem)?;
    let active = crate::heap::spaces::stw_collection_active(mem, flag).ok()?;
    Some((total, active))
}

/// A thread dump of a JVM saved in a file (an ELF core, a minidump), walked with each running
/// thread's registers as the file saved them; `what` names the walk for a failure's message.
fn file_walk(jvm: Jvm, opts: &ThreadsOptions) -> Result<ThreadDump, Error> {
    let walk_began = Instant::now();
    let paged = Paged::new(jvm.memory());
    let mut dump = dump::walk(&jvm.vm, &paged, &|tid| jvm.saved_registers(tid))
        .map_err(|e| jvm.explain(e, "the thread list"))?;
    if opts.virtual_threads {
        dump.read_virtual_threads(&jvm.vm, &paged);
    }
    let walk_time = walk_began.elapsed();
    let heap_walk = opts
        .ownable_synchronizers
        .then(|| read_synchronizers(&jvm.vm, jvm.memory_sync(), &mut dump));
    let mut details = vec![jvm.path_detail()];
    details.extend(jvm.dump_contents());
    details.push(jvm.model_fact());
    details.push(walk_detail(&dump, walk_time, paged.reads()));
    let mut warnings = Vec::new();
    if let Some(walk) = heap_walk {
        synchronizers_detail(walk, &mut details, &mut warnings);
    }
    details.extend(jvm.backed_reads());
    // A heap walked inside a collection is said so, as for `histo --core`.
    let mut all = if opts.ownable_synchronizers {
        super::hold::core_warnings(jvm)
    } else {
        jvm.warnings
    };
    all.extend(warnings);
    Ok(ThreadDump {
        dump,
        details,
        warnings: all,
    })
}

/// A thread dump of an ELF core (`inspect threads --core <core>`): libjvm found as for
/// [`super::read_core`] (the core's `NT_FILE` note or the `link_map` walk, `exe` and `sysroot`
/// as there), the bytes the core lacks of libjvm read from a file of the same build, then the
/// model and the walk as for a live process (`Jvm::core`). Of `opts`, `virtual_threads` and
/// `ownable_synchronizers` apply (a file is not held).
///
/// A Windows minidump (a file that starts with `MDMP`) is read by [`dump_threads_minidump`].
///
/// # Errors
/// [`Error::Core`] when the file is not a usable core of a JVM, or is a minidump and `exe` or
/// `sysroot` is given; [`Error::Vm`] or [`Error::Memory`] when the model cannot be read
/// from it; for a minidump, [`dump_threads_minidump`]'s errors.
pub fn dump_threads_core(
    core_path: &std::path::Path,
    exe: Option<&std::path::Path>,
    sysroot: Option<&std::path::Path>,
    opts: &ThreadsOptions,
) -> Result<ThreadDump, Error> {
    file_walk(Jvm::open_file(core_path, exe, sysroot, THREADS_NEED)?, opts)
}

/// What a thread dump needs of a minidump.
const THREADS_NEED: &str = "jvm.dll's image, the VM's tables and the Java threads' memory are";

/// A thread dump of a Windows JVM's full-memory minidump (`inspect threads --core <dump>` when
/// the file starts with `MDMP`), read on any OS (`Jvm::minidump`): `jvm.dll` from the dump's
/// module list, its PE headers and export table (`gHotSpotVMStructs` and the other vmStructs
/// tables are exported, `locate/pe.rs`) read from the dump's memory, then the model and the walk
/// as for an ELF core; a thread that was running Java code is walked from its `CONTEXT` in the
/// dump's `ThreadListStream` (`MinidumpMemory::thread_registers`, by `OSThread::_thread_id`, the
/// Windows thread id). The frame layouts are the target's own
/// (`frame::entry_frame_call_wrapper_offset` is 2 words on Windows x64, -6 on Linux).
///
/// # Errors
/// [`Error::Core`] when the file is not a usable minidump, its process has no `jvm.dll`, or it
/// lacks the memory the model needs (a dump without full memory: said so, with how to write
/// one); [`Error::Pe`] when `jvm.dll`'s headers or exports are not as expected;
/// [`Error::Vm`] or [`Error::Memory`] when the model cannot be read.
pub fn dump_threads_minidump(
    path: &std::path::Path,
    opts: &ThreadsOptions,
) -> Result<ThreadDump, Error> {
    file_walk(Jvm::minidump(path, THREADS_NEED)?, opts)
}

/// `--locks`: walks the heap for the owned ownable synchronizers ([`crate::heap::ownable`])
/// and gives them to `dump`'s threads; what the walk found and how long it took.
fn read_synchronizers(
    vm: &crate::vm::VmModel,
    mem: &(dyn ReadMemory + Sync),
    dump: &mut Dump,
) -> (
    Result<crate::heap::ownable::OwnableSynchronizers, Error>,
    Duration,
) {
    let began = Instant::now();
    let found = crate::heap::ownable::ownable_synchronizers(vm, mem);
    if let Ok(found) = &found {
        dump.set_owned_synchronizers(
            found
                .owned
                .iter()
                .map(|o| (o.object, o.class.as_str(), o.owner)),
        );
    }
    (found, began.elapsed())
}

/// The `-v` line of [`read_synchronizers`]'s walk, and a warning when it failed or stopped
/// early.
fn synchronizers_detail(
    (found, took): (
        Result<crate::heap::ownable::OwnableSynchronizers, Error>,
        Duration,
    ),
    details: &mut Vec<Detail>,
    warnings: &mut Vec<Warning>,
) {
    match found {
        Ok(f) => {
            details.push(Detail::Heap(format!(
                "ownable synchronizers: {} owned, {} unowned, in {} spaces walked in {:.1} ms ({} objects, {} bytes read)",
                f.owned.len(),
                f.unowned,
                f.spaces,
                took.as_secs_f64() * 1e3,
                f.stats.objects,
                f.stats.bytes_read,
            )));
            if !f.notes.is_empty() || f.dropped > 0 {
                let mut why: Vec<String> = f.notes.iter().map(ToString::to_string).collect();
                if f.dropped > 0 {
                    why.push(format!("{} synchronizers past the most kept", f.dropped));
                }
                warnings.push(Warning::SynchronizersIncomplete {
                    why: why.join("; "),
                });
            }
        }
        Err(e) => warnings.push(Warning::SynchronizersIncomplete {
            why: crate::error::with_causes(&e),
        }),
    }
}

fn walk_detail(dump: &Dump, took: Duration, reads: u64) -> Detail {
    Detail::ThreadWalk {
        threads: dump.threads.len(),
        frames: dump.threads.iter().map(|t| t.frames.len()).sum(),
        virtual_threads: dump
            .virtual_threads
            .as_ref()
            .map(|v| super::VirtualThreadsWalk {
                threads: v.threads.len(),
                frames: v.threads.iter().map(|t| t.frames.len()).sum(),
                distinct_frames: v.frames.len(),
            }),
        took,
        reads,
    }
}

/// How long a JVM whose model could not be read is left alone before the next try.
pub const STATES_RETRY: Duration = Duration::from_secs(30);

/// Thread states of live JVMs read again and again without a stop (`serve --thread-states`,
/// `top`): target → VM model (read once per JVM, kept) → thread list → each thread's
/// `java.lang.Thread` → counts ([`crate::threads::states::count_states`]). What the counts need of a
/// JVM's model (a [`crate::threads::states::StatesLayout`], a few hundred bytes, with the
/// process's memory; the model itself is dropped) is kept while the same process (pid and start time) is asked for; a JVM whose model
/// cannot be read is not tried again for 30 s (`STATES_RETRY`).
#[derive(Default)]
pub struct StatesSampler {
    jvms: std::collections::HashMap<crate::pid::Pid, StatesEntry>,
}

struct StatesEntry {
    start: u64,
    /// The layout the counts need and the JVM's memory, or why the model could not be read
    /// and when.
    model: Result<StatesJvm, (Instant, std::sync::Arc<Error>)>,
}

impl StatesSampler {
    /// A sampler with nothing cached.
    pub fn new() -> Self {
        StatesSampler::default()
    }

    /// The thread states of process `pid`, whose start time (Linux: `starttime` of
    /// `/proc/<pid>/stat`, in clock ticks) is `start`.
    ///
    /// # Errors
    /// As [`crate::threads::states::count_states`]; for the model, [`Error::NotAJvm`],
    /// [`Error::PermissionDenied`], [`Error::NoSuchProcess`], [`Error::Vm`] (the cached
    /// error again, shared, until 30 s (`STATES_RETRY`) have passed); [`Error::Unsupported`] where
    /// live processes cannot be read.
    pub fn read(
        &mut self,
        pid: crate::pid::Pid,
        start: u64,
    ) -> Result<crate::threads::states::ThreadStates, std::sync::Arc<Error>> {
        let fresh = match self.jvms.get(&pid) {
            Some(e) if e.start != start => true,
            Some(StatesEntry {
                model: Err((at, _)),
                ..
            }) => at.elapsed() >= STATES_RETRY,
            Some(_) => false,
            None => true,
        };
        if fresh {
            let model = states_model(pid).map_err(|e| (Instant::now(), std::sync::Arc::new(e)));
            self.jvms.insert(pid, StatesEntry { start, model });
        }
        let Some(entry) = self.jvms.get_mut(&pid) else {
            return Err(std::sync::Arc::new(Error::NoSuchProcess(pid)));
        };
        match &mut entry.model {
            Ok((layout, mem)) => crate::threads::states::count_states(mem.as_ref(), layout)
                .map_err(std::sync::Arc::new),
            Err((_, e)) => Err(std::sync::Arc::clone(e)),
        }
    }

    /// Forgets the JVMs `keep` does not keep (those gone since).
    pub fn retain(&mut self, keep: impl Fn(crate::pid::Pid) -> bool) {
        self.jvms.retain(|pid, _| keep(*pid));
    }
}

/// What the counts of one live JVM need: the layout from its model, and its memory.
type StatesJvm = (
    crate::threads::states::StatesLayout,
    Box<dyn ReadMemory + Send>,
);

/// The thread states layout of live JVM `pid`, and its memory to count with.
fn states_model(pid: crate::pid::Pid) -> Result<StatesJvm, Error> {
    let jvm = Jvm::live(pid)?;
    let layout = crate::threads::states::StatesLayout::new(&jvm.vm)?;
    Ok((layout, jvm.into_memory()))
}
