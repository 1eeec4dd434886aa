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

use super::{Detail, ReadPath, Warning};
use crate::error::Error;
use crate::locate::Module;
use crate::memory::ReadMemory;
use crate::threads::dump::{self, Dump};
use crate::vm::paged::Paged;
use crate::vm::{VmModel, tables};

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

/// Reads the VM model of the JVM whose libjvm is `module`.
fn model(module: &Module, mem: &dyn ReadMemory) -> Result<VmModel, Error> {
    let names: Vec<&'static str> = tables::all_symbols().collect();
    let (_, symbols) = crate::locate::exported_in_memory(module, mem, &names)?;
    let paged = Paged::new(mem);
    VmModel::read(&paged, &|name| symbols.get(name).copied())
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
}

impl Default for ThreadsOptions {
    fn default() -> Self {
        ThreadsOptions {
            stop: true,
            stop_timeout: Duration::from_millis(1000),
            virtual_threads: false,
            wait: Duration::from_secs(5),
        }
    }
}

/// A thread dump of live process `pid` (`inspect threads <pid>`): the VM model is read with the
/// JVM running, then its threads are held (ptrace, as `-F` does) for the walk only, released,
/// and the process is checked to be the same one.
///
/// # Errors
/// [`Error::NotAJvm`], [`Error::PermissionDenied`], [`Error::NoSuchProcess`],
/// [`Error::VmStructs`] when the model cannot be read, [`Error::Unsupported`] without a live
/// backend.
#[cfg(all(feature = "live", target_os = "linux"))]
pub fn dump_threads(pid: crate::process::Pid, opts: &ThreadsOptions) -> Result<ThreadDump, Error> {
    let (process, mem, vm, modelled) = open_live(pid)?;
    held_walk(&process, &mem, &vm, modelled, opts)
}

/// Opens live process `pid` and reads its VM model with the JVM running (the first half of
/// every live pipeline that reads the VM: threads, heap): the process, its memory, the model
/// and how long that took.
///
/// # Errors
/// [`Error::NotAJvm`], [`Error::PermissionDenied`], [`Error::NoSuchProcess`],
/// [`Error::VmStructs`] when the model cannot be read.
#[cfg(all(feature = "live", target_os = "linux"))]
pub(super) fn open_live(
    pid: crate::process::Pid,
) -> Result<
    (
        crate::process::Process,
        crate::read::ProcessMemory,
        VmModel,
        Duration,
    ),
    Error,
> {
    use crate::process::Process;
    use crate::read::ProcessMemory;
    let began = Instant::now();
    let process = Process::open(pid)?;
    let mem = ProcessMemory::open(&process)?;
    let module = crate::locate::os::find_in_process(pid)?;
    let vm = model(&module, &mem)?;
    Ok((process, mem, vm, began.elapsed()))
}

/// How a live read holds the JVM: whether to stop it at all (`false`: `--no-stop`), how long
/// the stop may take (`--stop-timeout`), and how long to wait for another tracer's hold to end
/// (`--wait`).
#[cfg(all(feature = "live", any(target_os = "linux", windows)))]
#[derive(Debug, Clone, Copy)]
pub(super) struct StopOptions {
    pub stop: bool,
    pub timeout: Duration,
    pub wait: Duration,
}

/// Runs `read` with every thread of `process` held (as `-F` holds them, waiting for another
/// reader's hold to end: `forced::stop_when_free`; with `stop.stop` false, running), then
/// releases them and checks the process is the same one: what `read` returned and the stop's
/// report. The stop is released on every path.
///
/// # Errors
/// Those of `process::stop`; [`Error::AlreadyTraced`] after `stop.wait`;
/// [`Error::ProcessExited`], [`Error::PidReused`].
#[cfg(all(feature = "live", any(target_os = "linux", windows)))]
pub(super) fn held<R>(
    process: &crate::process::Process,
    stop: &StopOptions,
    read: impl FnOnce(Option<&crate::process::Stopped>) -> R,
) -> Result<(R, Option<crate::process::StopReport>), Error> {
    let stopped = if stop.stop {
        Some(super::forced::stop_when_free(
            process,
            stop.timeout,
            stop.wait,
            Instant::now(),
        )?)
    } else {
        None
    };
    let out = read(stopped.as_ref());
    let report = stopped.map(|s| s.release());
    process.check_same()?;
    Ok((out, report))
}

/// The live dump's stop, walk and release, the same on every OS with a live backend: the
/// threads held (`process::stop`, unless `--no-stop`), walked, given their CPU times and
/// priorities as the stop read them (Linux: each thread's `stat` before its interrupt; Windows:
/// `GetThreadTimes`, `GetThreadPriority`), released, and the process checked to be the same one.
#[cfg(all(feature = "live", any(target_os = "linux", windows)))]
fn held_walk(
    process: &crate::process::Process,
    mem: &crate::read::ProcessMemory,
    vm: &VmModel,
    modelled: Duration,
    opts: &ThreadsOptions,
) -> Result<ThreadDump, Error> {
    use crate::process;
    let pid = process.pid();
    let mut details = vec![Detail::Path(ReadPath::Forced {
        pid,
        name: process.name().to_string(),
    })];
    // The JVM knows its threads by its own pid namespace's ids (a container's): the host's
    // ids the stop and /proc use are mapped from them.
    let host_tids = process::namespace_tids(pid);
    let host = |tid| host_tids.get(&tid).copied().unwrap_or(tid);
    let paged = Paged::new(mem);
    let stop = StopOptions {
        stop: opts.stop,
        timeout: opts.stop_timeout,
        wait: opts.wait,
    };
    let ((walked, walk_time), report) = held(process, &stop, |stopped| {
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
        let walk_time = walk_began.elapsed();
        // CPU times as the stop read them; without a stop, read now.
        if let Ok(dump) = &mut walked {
            // Linux: jcmd's `os_prio=` is the nice value only when the JVM uses the OS's
            // priorities, else 0 (`os::get_native_priority`); Windows: `GetThreadPriority`.
            let normal = (cfg!(target_os = "linux") && !vm.os_thread_priorities).then_some(0);
            match stopped {
                Some(s) => dump.set_task_stats(&|tid| s.task_stat(host(tid)), normal),
                None => dump.set_task_stats(&|tid| process::task_stat(pid, host(tid)), normal),
            }
        }
        (walked, walk_time)
    })?;
    let dump = walked?;
    let mut warnings = Vec::new();
    details.push(model_detail(vm, modelled));
    details.push(walk_detail(&dump, walk_time, paged.reads()));
    if let Some(r) = report {
        super::record_stop(r, opts.stop_timeout, &mut details, &mut warnings);
    }
    Ok(ThreadDump {
        dump,
        details,
        warnings,
    })
}

/// A thread dump of live Windows process `pid` (`inspect.exe threads <pid>`): `jvm.dll` from the
/// process's module list, its PE headers and exports (`gHotSpotVMStructs` and the other tables,
/// `locate/pe.rs`) and the VM model read with the JVM running; then the process is held by the
/// debug attach `-F` uses (`process::stop`: every thread suspended by the system while the
/// attach's breakpoint event is pending, released on every path, the JVM never killed with the
/// debugger), a thread that was running Java code is walked from its registers
/// (`GetThreadContext` on the thread handle of the attach's debug events,
/// `process::Stopped::registers`, by `OSThread::_thread_id`, the Windows thread id),
/// the process released and checked to be the same one.
///
/// # Errors
/// [`Error::NotAJvm`] (no `jvm.dll` loaded), [`Error::Os`] for a 32-bit (WOW64) process or a
/// failed attach, [`Error::PermissionDenied`], [`Error::NoSuchProcess`],
/// [`Error::ProcessExited`], [`Error::PidReused`], [`Error::Pe`], [`Error::VmStructs`] when the
/// model cannot be read.
#[cfg(all(feature = "live", windows))]
pub fn dump_threads(pid: crate::process::Pid, opts: &ThreadsOptions) -> Result<ThreadDump, Error> {
    use crate::locate::JVM_DLL;
    use crate::locate::pe::{Exports, ImageHeaders};
    use crate::process::Process;
    use crate::read::ProcessMemory;
    let began = Instant::now();
    let process = Process::open(pid)?;
    if process.is_wow64() {
        return Err(Error::Os {
            what: format!(
                "process {pid} is a 32-bit process (WOW64): only 64-bit JVMs can be read; use that JDK's jcmd"
            ),
            source: std::io::Error::from(std::io::ErrorKind::Unsupported),
        });
    }
    let mem = ProcessMemory::open(&process)?;
    let Some(module) = crate::locate::os::find_module(&process, JVM_DLL)? else {
        return Err(Error::NotAJvm {
            pid,
            comm: process.image_name(),
        });
    };
    let name = module.path.display().to_string();
    let headers = ImageHeaders::read(&mem, module.base, &name)?;
    let exports = Exports::read(&mem, &headers, &name)?;
    let vm = VmModel::read(&Paged::new(&mem), &|s| exports.address(s))?;
    let modelled = began.elapsed();
    held_walk(&process, &mem, &vm, modelled, opts)
}

/// A thread dump of an ELF core (`inspect threads --core <core>`): libjvm found as for
/// [`super::read_core`] (the core's `NT_FILE` note or the `link_map` walk, `exe` and `sysroot`
/// as there), the bytes the core lacks of libjvm read from a file of the same build, then the
/// model and the walk as for a live process.
///
/// A Windows minidump (a file that starts with `MDMP`) is read by [`dump_threads_minidump`].
///
/// # Errors
/// [`Error::Core`] when the file is not a usable core of a JVM, or is a minidump and `exe` or
/// `sysroot` is given; [`Error::VmStructs`] or [`Error::Memory`] when the model cannot be read
/// from it; for a minidump, [`dump_threads_minidump`]'s errors.
pub fn dump_threads_core(
    core_path: &std::path::Path,
    exe: Option<&std::path::Path>,
    sysroot: Option<&std::path::Path>,
    virtual_threads: bool,
) -> Result<ThreadDump, Error> {
    // An unreadable file is left to `CoreMemory::open`, which says why.
    if crate::read::is_minidump(core_path).unwrap_or(false) {
        if exe.is_some() || sysroot.is_some() {
            return Err(Error::core(
                core_path,
                "a Windows minidump: --exe and --sysroot are for ELF cores (a full-memory minidump holds jvm.dll itself); leave them out",
            ));
        }
        return dump_threads_minidump(core_path, virtual_threads);
    }
    let (core, vm, warnings, modelled) = open_core(core_path, exe, sysroot)?;
    let cut = |e| truncated_error(core_path, core.truncated(), e);
    let walk_began = Instant::now();
    let paged = Paged::new(&core);
    let mut dump = dump::walk(&vm, &paged, &|tid| core.thread_registers(tid)).map_err(cut)?;
    if virtual_threads {
        dump.read_virtual_threads(&vm, &paged);
    }
    let mut details = vec![Detail::Path(ReadPath::Core {
        path: core_path.to_owned(),
        process: core.process().map(|p| (p.pid, p.command.clone())),
    })];
    details.push(model_detail(&vm, modelled));
    details.push(walk_detail(&dump, walk_began.elapsed(), paged.reads()));
    for (file, bytes) in core.backed_reads() {
        details.push(Detail::CoreBytesFromFile { file, bytes });
    }
    Ok(ThreadDump {
        dump,
        details,
        warnings,
    })
}

/// An ELF core opened for a pipeline that reads the VM model only (`histo`, `info`): a Windows
/// minidump refused (`reads` says what is read from live JVMs and ELF cores only), then
/// [`open_core`]; with the path and model facts for `-v`, `detail` making the model's.
pub(super) fn open_elf_core(
    core_path: &std::path::Path,
    exe: Option<&std::path::Path>,
    sysroot: Option<&std::path::Path>,
    reads: &str,
    detail: fn(String) -> Detail,
) -> Result<(crate::read::CoreMemory, VmModel, Vec<Warning>, Vec<Detail>), Error> {
    if crate::read::is_minidump(core_path).unwrap_or(false) {
        return Err(Error::core(
            core_path,
            format!("a Windows minidump: {reads} read from live JVMs and ELF cores only, so far"),
        ));
    }
    let (core, vm, warnings, modelled) = open_core(core_path, exe, sysroot)?;
    let details = vec![
        Detail::Path(ReadPath::Core {
            path: core_path.to_owned(),
            process: core.process().map(|p| (p.pid, p.command.clone())),
        }),
        detail(model_fact(&vm, modelled)),
    ];
    Ok((core, vm, warnings, details))
}

/// Opens ELF core `core_path` and reads its VM model (the first half of every core pipeline
/// that reads the VM: threads, heap): libjvm found from the core's `NT_FILE` note or its
/// `link_map` (`exe`, `sysroot` as for [`super::read_core`]), the bytes the core lacks of it read
/// from a file of the same build. Returns the core, the model, warnings (a truncated core) and
/// how long it took.
///
/// # Errors
/// [`Error::Core`] when the file is not a usable core of an x86_64 or aarch64 JVM;
/// [`Error::VmStructs`] or [`Error::Memory`] when the model cannot be read from it.
pub(super) fn open_core(
    core_path: &std::path::Path,
    exe: Option<&std::path::Path>,
    sysroot: Option<&std::path::Path>,
) -> Result<(crate::read::CoreMemory, VmModel, Vec<Warning>, Duration), Error> {
    use crate::locate::core_libjvm::{libjvm_from_link_map, libjvm_from_nt_file};
    use crate::read::CoreMemory;
    let began = Instant::now();
    let mut core = CoreMemory::open(core_path)?;
    let mut warnings = Vec::new();
    let truncated = core.truncated();
    if let Some((actual, needed)) = truncated {
        warnings.push(Warning::CoreTruncated { actual, needed });
    }
    let cut = |e| truncated_error(core_path, truncated, e);
    let module = match core.files() {
        Some(_) => libjvm_from_nt_file(&core, exe, sysroot),
        None => libjvm_from_link_map(&core, exe, sysroot),
    }
    .map_err(cut)?;
    super::coredump::back_with_library(&mut core, &module);
    let arch = crate::registers::Arch::from_elf_machine(core.machine()).ok_or_else(|| {
        Error::core(
            core_path,
            format!(
                "a core of a {} process: the VM is read from x86_64 and aarch64 cores",
                crate::read::machine_name(core.machine())
            ),
        )
    })?;
    let vm = model(&module, &core).map_err(cut)?.with_arch(arch);
    Ok((core, vm, warnings, began.elapsed()))
}

/// `e` as it is, or for a truncated core (`truncated`: its (actual, needed) sizes) said to be
/// likely that: in a cut core whatever fails may be missing for that reason, so that comes
/// first.
pub(super) fn truncated_error(
    core_path: &std::path::Path,
    truncated: Option<(u64, u64)>,
    e: Error,
) -> Error {
    match truncated {
        Some((actual, needed)) => Error::core(
            core_path,
            format!(
                "the core file is truncated ({actual} of {needed} bytes), and {}: copy the whole core",
                crate::error::with_causes(&e)
            ),
        ),
        None => e,
    }
}

/// A Windows minidump opened with its VM model: `jvm.dll` found in its module list, its
/// exports read from the image in the dump, the tables walked; the time the model took. `needs`
/// says what the caller reads (for the message of a dump that lacks it).
///
/// # Errors
/// [`Error::Core`] for a file that is not a usable minidump or has no `jvm.dll`; the model's
/// errors, explained by what the dump holds ([`super::minidump::explain`]).
pub(super) fn open_minidump(
    path: &std::path::Path,
    needs: &str,
) -> Result<(crate::read::MinidumpMemory, VmModel, Duration), Error> {
    use crate::locate::pe::{Exports, ImageHeaders};
    use crate::read::MinidumpMemory;
    let began = Instant::now();
    let mdmp = MinidumpMemory::open(path)?;
    let module = super::minidump::jvm_dll(&mdmp)?;
    let name = module.path.display().to_string();
    let explain = |e, what: &str| super::minidump::explain(&mdmp, e, what, needs);
    let headers =
        ImageHeaders::read(&mdmp, module.base, &name).map_err(|e| explain(e, "jvm.dll's image"))?;
    let exports =
        Exports::read(&mdmp, &headers, &name).map_err(|e| explain(e, "jvm.dll's image"))?;
    let vm = VmModel::read(&Paged::new(&mdmp), &|s| exports.address(s))
        .map_err(|e| explain(e, "the VM model (vmStructs)"))?;
    let modelled = began.elapsed();
    Ok((mdmp, vm, modelled))
}

/// A thread dump of a Windows JVM's full-memory minidump (`inspect threads --core <dump>` when
/// the file starts with `MDMP`), read on any OS: `jvm.dll` from the dump's module list, its PE
/// headers and export table (`gHotSpotVMStructs` and the other vmStructs tables are exported,
/// `locate/pe.rs`) read from the dump's memory, then the model and the walk as for an ELF core;
/// a thread that was running Java code is walked from its `CONTEXT` in the dump's
/// `ThreadListStream` (`MinidumpMemory::thread_registers`, by `OSThread::_thread_id`, the
/// Windows thread id). The frame layouts are the target's own
/// (`frame::entry_frame_call_wrapper_offset` is 2 words on Windows x64, -6 on Linux).
///
/// # Errors
/// [`Error::Core`] when the file is not a usable minidump, its process has no `jvm.dll`, or it
/// lacks the memory the model needs (a dump without full memory: said so, with how to write
/// one); [`Error::Pe`] when `jvm.dll`'s headers or exports are not as expected;
/// [`Error::VmStructs`] or [`Error::Memory`] when the model cannot be read.
pub fn dump_threads_minidump(
    path: &std::path::Path,
    virtual_threads: bool,
) -> Result<ThreadDump, Error> {
    let needs = "jvm.dll's image, the VM's tables and the Java threads' memory are";
    let (mdmp, vm, modelled) = open_minidump(path, needs)?;
    let explain = |e, what: &str| super::minidump::explain(&mdmp, e, what, needs);
    let walk_began = Instant::now();
    let paged = Paged::new(&mdmp);
    let mut dump = dump::walk(&vm, &paged, &|tid| mdmp.thread_registers(tid))
        .map_err(|e| explain(e, "the thread list"))?;
    if virtual_threads {
        dump.read_virtual_threads(&vm, &paged);
    }
    let details = vec![
        Detail::Path(ReadPath::Minidump {
            path: path.to_owned(),
            pid: mdmp.process_id(),
            executable: mdmp.executable(),
        }),
        Detail::MinidumpContents {
            flags: mdmp.flags(),
            streams: mdmp.streams().to_vec(),
            memory: mdmp
                .memory_list()
                .map(|(list, n, bytes)| (list.to_string(), n, bytes)),
        },
        model_detail(&vm, modelled),
        walk_detail(&dump, walk_began.elapsed(), paged.reads()),
    ];
    Ok(ThreadDump {
        dump,
        details,
        warnings: Vec::new(),
    })
}

fn model_detail(vm: &VmModel, took: Duration) -> Detail {
    Detail::Threads(model_fact(vm, took))
}

/// The `-v` line of a VM model read in `took`: release, JDK, table sizes, layout.
pub(super) fn model_fact(vm: &VmModel, took: Duration) -> String {
    let (s, t, i, l) = vm.counts();
    format!(
        "VM model: {} (JDK {}) read in {:.1} ms: vmStructs {s} fields, {t} types, {i} int and {l} long constants; {:?}",
        vm.release.as_deref().unwrap_or("?"),
        vm.major,
        took.as_secs_f64() * 1e3,
        vm.layout
    )
}

fn walk_detail(dump: &Dump, took: Duration, reads: u64) -> Detail {
    let virtual_threads = dump
        .virtual_threads
        .as_ref()
        .map(|v| {
            format!(
                " and {} unmounted virtual threads ({} frames, {} distinct)",
                v.threads.len(),
                v.threads.iter().map(|t| t.frames.len()).sum::<usize>(),
                v.frames.len()
            )
        })
        .unwrap_or_default();
    Detail::Threads(format!(
        "walk: {} threads, {} frames{virtual_threads} in {:.2} ms, {reads} reads of the target's memory",
        dump.threads.len(),
        dump.threads.iter().map(|t| t.frames.len()).sum::<usize>(),
        took.as_secs_f64() * 1e3
    ))
}

/// How long a JVM whose model could not be read is left alone before the next try.
pub const STATES_RETRY: Duration = Duration::from_secs(30);

/// Thread states of live JVMs read again and again without a stop (`serve --thread-states`,
/// `top`): target → VM model (read once per JVM, kept) → thread list → each thread's
/// `java.lang.Thread` → counts ([`crate::threads::states::count_states`]). What the counts need of a
/// JVM's model (a [`crate::threads::states::StatesLayout`], a few hundred bytes; the model itself is
/// dropped) is kept while the same process (pid and start time) is asked for; a JVM whose model
/// cannot be read is not tried again for 30 s (`STATES_RETRY`).
#[derive(Default)]
pub struct StatesSampler {
    jvms: std::collections::HashMap<crate::pid::Pid, StatesEntry>,
}

struct StatesEntry {
    start: u64,
    model: Result<crate::threads::states::StatesLayout, (Instant, std::sync::Arc<Error>)>,
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
    /// [`Error::PermissionDenied`], [`Error::NoSuchProcess`], [`Error::VmStructs`] (the cached
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
            Ok(layout) => states_read(pid, layout).map_err(std::sync::Arc::new),
            Err((_, e)) => Err(std::sync::Arc::clone(e)),
        }
    }

    /// Forgets the JVMs `keep` does not keep (those gone since).
    pub fn retain(&mut self, keep: impl Fn(crate::pid::Pid) -> bool) {
        self.jvms.retain(|pid, _| keep(*pid));
    }
}

#[cfg(all(feature = "live", target_os = "linux"))]
fn states_model(pid: crate::pid::Pid) -> Result<crate::threads::states::StatesLayout, Error> {
    use crate::process::Process;
    use crate::read::ProcessMemory;
    let process = Process::open(pid)?;
    let mem = ProcessMemory::open(&process)?;
    let module = crate::locate::os::find_in_process(pid)?;
    let vm = model(&module, &mem)?;
    crate::threads::states::StatesLayout::new(&vm)
}

#[cfg(all(feature = "live", target_os = "linux"))]
fn states_read(
    pid: crate::pid::Pid,
    layout: &mut crate::threads::states::StatesLayout,
) -> Result<crate::threads::states::ThreadStates, Error> {
    let mem = crate::read::ProcessMemory::new(pid);
    crate::threads::states::count_states(&mem, layout)
}

#[cfg(not(all(feature = "live", target_os = "linux")))]
fn states_model(_pid: crate::pid::Pid) -> Result<crate::threads::states::StatesLayout, Error> {
    Err(Error::Unsupported {
        what: "reading thread states of a live JVM",
        os: std::env::consts::OS,
    })
}

#[cfg(not(all(feature = "live", target_os = "linux")))]
fn states_read(
    _pid: crate::pid::Pid,
    _layout: &mut crate::threads::states::StatesLayout,
) -> Result<crate::threads::states::ThreadStates, Error> {
    Err(Error::Unsupported {
        what: "reading thread states of a live JVM",
        os: std::env::consts::OS,
    })
}
