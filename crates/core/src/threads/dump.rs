//! A thread dump: every `JavaThread` ([`super::list`]), its Java identity
//! (`vm::java`), frames ([`super::frames`]) and locks ([`super::locks`]), walked into
//! a [`Dump`]; `format::thread_dump` prints it as `jcmd <pid> Thread.print` does.

use std::collections::HashMap;

use super::frames::{LockKind, LockLine, WalkStart, Walker};
use super::list::{ThreadLayout, VmThread};
use super::locks::LockReader;
pub use super::thread::{DeadlockLink, DumpThread, MountedVirtualThread, ThreadLocks, Waits};
use super::vthreads::VirtualThreads;
use crate::error::Error;
use crate::memory::ReadMemory;
use crate::pid::Pid;
use crate::process::TaskStat;
use crate::registers::ThreadRegisters;
use crate::vm::VmModel;
use crate::vm::java::{JavaReader, ModuleNames};
use crate::vm::paged::Paged;

impl DumpThread {
    /// Moves the frames above `Continuation.enterSpecial` into the mounted virtual thread's, and
    /// drops that frame (jcmd prints neither it nor, before JDK 24, the virtual thread's frames
    /// under the carrier). Without an `enterSpecial` frame (a walk cut short, or a mount in
    /// progress) every frame stays the carrier's.
    fn split_virtual_thread(&mut self) {
        let Some(v) = &mut self.virtual_thread else {
            return;
        };
        let Some(at) = self.frames.iter().position(|f| {
            &*f.class == "jdk.internal.vm.Continuation" && &*f.method == "enterSpecial"
        }) else {
            return;
        };
        let carrier = self.frames.split_off(at + 1);
        self.frames.pop();
        v.frames = std::mem::replace(&mut self.frames, carrier);
    }
}

/// A whole dump.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Dump {
    /// `Abstract_VM_Version::_s_vm_release`.
    pub release: Option<String>,
    /// The VM's name and mode as `VM_Version::vm_name()` and `vm_info_string()` give them
    /// (`OpenJDK 64-Bit Server VM`, `mixed mode, sharing`): the `java.vm.name` and
    /// `java.vm.info` properties HotSpot puts in its PerfData region at start-up
    /// (`java.property.*` counters), read through `PerfMemory::_start`. `None` without PerfData
    /// (`-XX:-UsePerfData`) or when the region is unreadable.
    pub vm_name: Option<String>,
    /// See [`Dump::vm_name`].
    pub vm_info: Option<String>,
    /// When the threads were read (a live JVM: the walk), printed in local time as jcmd's first
    /// line; `None` when not known (a core holds no time of its own, and its file's time is a
    /// copy's as often as the dump's).
    #[serde(skip)]
    pub taken_at: Option<std::time::SystemTime>,
    /// The JDK feature release.
    pub major: u32,
    /// `ThreadsSMRSupport::_java_thread_list`.
    pub thread_list: u64,
    /// The threads, in list order.
    pub threads: Vec<DumpThread>,
    /// The Java-level deadlocks found, each a cycle of threads (indices into `threads`).
    pub deadlocks: Vec<Vec<DeadlockLink>>,
    /// The virtual threads no carrier runs, when asked for (`--virtual`,
    /// [`Dump::read_virtual_threads`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub virtual_threads: Option<VirtualThreads>,
    /// Why they could not be read, when asked for and they could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub virtual_threads_error: Option<String>,
    /// Whether every thread's [`ThreadLocks::owned_synchronizers`] is complete: the heap was
    /// walked for them ([`Dump::set_owned_synchronizers`], `inspect threads --locks`, as
    /// `jcmd Thread.print -l`), so a thread without any owns none (`- None`). Otherwise only
    /// those another thread is parked on are known.
    pub ownable_synchronizers_walked: bool,
}

/// The most PerfData bytes read for the VM's name and mode (HotSpot's default region is 32 KiB,
/// `-XX:PerfDataMemorySize`; the `java.property.*` counters are among its first entries).
const MAX_PERFDATA_READ: u64 = 1 << 20;

/// `java.vm.name` and `java.vm.info` from the PerfData region (`PerfMemory::_start`,
/// `_capacity`, `runtime/perfMemory.hpp`; the counters `java.property.java.vm.name` and
/// `java.property.java.vm.info`); `None` when the region is not there or does not parse.
fn vm_identity(vm: &VmModel, mem: &dyn ReadMemory) -> Option<(String, String)> {
    let start = mem
        .read_u64(vm.static_address("PerfMemory", "_start").ok()?)
        .ok()?;
    let capacity = mem
        .read_u64(vm.static_address("PerfMemory", "_capacity").ok()?)
        .ok()?;
    if start == 0 || capacity < crate::perfdata::PROLOGUE_SIZE as u64 {
        return None;
    }
    let mut bytes = vec![0u8; capacity.min(MAX_PERFDATA_READ) as usize];
    mem.read_exact_at(start, &mut bytes).ok()?;
    let snapshot = crate::perfdata::parse(&bytes).ok()?;
    let text = |name: &str| match &snapshot.get(name)?.value {
        crate::perfdata::Value::String(s) => Some(s.clone()),
        _ => None,
    };
    Some((
        text("java.property.java.vm.name")?,
        text("java.property.java.vm.info")?,
    ))
}

/// The used part of a thread's stack, read in one piece for its walk: from a little below `sp`
/// (its last Java sp, or the sp register of a thread running Java; the walk reads the return
/// address at `sp - 8`) up to `Thread::_stack_base`; `None` when the sp is not inside the stack
/// the thread reports.
fn used_stack(t: &VmThread, sp: u64) -> Option<(u64, u64)> {
    stack_in_use(t.stack, sp)
}

/// As [`used_stack`], for a stack `(base, size)` (`Thread::_stack_base`, `_stack_size`).
pub(crate) fn stack_in_use((base, size): (u64, u64), sp: u64) -> Option<(u64, u64)> {
    let lowest = base.checked_sub(size)?;
    (sp > lowest && sp < base).then(|| (sp.saturating_sub(256).max(lowest), base))
}

/// Where thread `t`'s walk starts: its anchor, or, when it has none and is running Java code,
/// the registers `registers` gives for its OS thread id.
fn walk_start(
    t: &VmThread,
    registers: &dyn Fn(Pid) -> Option<ThreadRegisters>,
) -> Result<WalkStart, &'static str> {
    let running_java = t
        .vm_state_name
        .is_some_and(|s| s.starts_with("_thread_in_Java"));
    if t.anchor.sp != 0 || !running_java {
        return Ok(WalkStart::Anchor(t.anchor));
    }
    match t
        .os_tid
        .and_then(|tid| Pid::try_from(tid).ok())
        .and_then(registers)
    {
        Some(r) => Ok(WalkStart::Registers(r)),
        None => Err(
            "running Java code (no frame anchor) and its registers were not read: its frames are not walked",
        ),
    }
}

/// Walks every Java thread of the VM `vm` through `mem`, a page cache over a stopped target
/// (each thread's used stack read in one piece, `Paged::focus`; its `JavaThread` is not:
/// neighbouring threads share pages, so the cache reads fewer of them). A thread running Java
/// code has no frame anchor: its walk starts from the registers `registers` gives for its OS
/// thread id (ptrace's of a held thread, a core's `NT_PRSTATUS`), or it is left unwalked with
/// a note.
///
/// # Errors
/// When the thread list itself cannot be read; a thread that cannot be read is kept with a note.
pub fn walk(
    vm: &VmModel,
    mem: &Paged<'_>,
    registers: &dyn Fn(Pid) -> Option<ThreadRegisters>,
) -> Result<Dump, Error> {
    let (list, addresses) = thread_list(vm, mem)?;
    let threads = walk_at(vm, mem, registers, &addresses)?;
    Ok(assemble(vm, mem, list, threads))
}

/// The thread list: `ThreadsSMRSupport::_java_thread_list` and its `JavaThread*`s, in order.
///
/// # Errors
/// When the list cannot be read.
pub fn thread_list(vm: &VmModel, mem: &Paged<'_>) -> Result<(u64, Vec<u64>), Error> {
    ThreadLayout::new(vm)?.thread_addresses(mem)
}

/// A dump of `threads` (walked by [`walk_at`], in list order) from the list at `list`: their
/// cross-thread lock facts ([`annotate`]) and the VM's name and release.
pub fn assemble(vm: &VmModel, mem: &Paged<'_>, list: u64, mut threads: Vec<DumpThread>) -> Dump {
    let deadlocks = annotate(vm, mem, &mut threads);
    let (vm_name, vm_info) = vm_identity(vm, mem).unzip();
    Dump {
        release: vm.release.clone(),
        vm_name,
        vm_info,
        taken_at: None,
        major: vm.major,
        thread_list: list,
        threads,
        deadlocks,
        virtual_threads: None,
        virtual_threads_error: None,
        ownable_synchronizers_walked: false,
    }
}

/// The locks' cross-thread facts of `threads` (walked by [`walk_at`]): who owns the monitor a
/// thread waits for, and the Java-level deadlocks (cycles, as indices into `threads`); each
/// frame's module ([`Frame::module`](super::frames::Frame::module)); then each thread's mounted
/// virtual thread's frames split from its carrier's. A lock reader that cannot
/// be made is a note on every thread.
pub fn annotate(
    vm: &VmModel,
    mem: &Paged<'_>,
    threads: &mut [DumpThread],
) -> Vec<Vec<DeadlockLink>> {
    let java = JavaReader::new(vm, mem);
    let deadlocks = match &LockReader::new(vm, mem) {
        Ok(l) => super::locks::annotate(threads, l, java.as_ref().ok()),
        Err(e) => {
            let why = format!("locks: {}", crate::error::with_causes(e));
            for t in threads.iter_mut() {
                t.notes.push(why.clone());
            }
            Vec::new()
        }
    };
    if let Ok(java) = &java {
        let mut modules = ModuleNames::default();
        for t in threads.iter_mut() {
            for f in &mut t.frames {
                f.module = modules.of_klass(java, f.holder);
            }
        }
    }
    for t in threads.iter_mut() {
        t.split_virtual_thread();
    }
    deadlocks
}

/// Walks the Java threads whose `JavaThread`s are at `addresses` (as a walk of the thread list
/// found them), each as [`walk`] walks it — identity, frames, its own locks — but without
/// [`annotate`]'s cross-thread facts: what a sampler that holds only some threads reads.
///
/// # Errors
/// When the thread layout is not in the VM's tables; a thread that cannot be read is kept with
/// a note.
pub fn walk_at(
    vm: &VmModel,
    mem: &Paged<'_>,
    registers: &dyn Fn(Pid) -> Option<ThreadRegisters>,
    addresses: &[u64],
) -> Result<Vec<DumpThread>, Error> {
    let mut walk = ThreadWalk::new(vm, mem)?;
    Ok(addresses
        .iter()
        .map(|&address| walk.thread(address, registers))
        .collect())
}

/// The readers [`walk_at`] walks threads with, made once and used for one thread after another
/// (their caches shared): a sampler that holds one thread at a time walks each while it holds
/// it, the shared code and method data read once for all.
pub struct ThreadWalk<'m> {
    mem: &'m Paged<'m>,
    layout: ThreadLayout,
    walker: Result<Walker<'m>, Error>,
    /// `None` in a walk of frames only ([`ThreadWalk::frames_only`]).
    java: Option<Result<JavaReader<'m>, Error>>,
    /// `None` in a walk of frames only.
    lock_reader: Option<Result<LockReader<'m>, Error>>,
}

impl<'m> ThreadWalk<'m> {
    /// The readers over `mem`, a page cache over the target.
    ///
    /// # Errors
    /// When the thread layout is not in the VM's tables (a reader that cannot be made is
    /// named in each thread's notes instead).
    pub fn new(vm: &VmModel, mem: &'m Paged<'m>) -> Result<Self, Error> {
        Self::with_kept(vm, mem, super::frames::WalkCaches::default())
    }

    /// As [`ThreadWalk::new`], with what an earlier walk of the same target learnt of the code
    /// and the methods (`caches`, from [`ThreadWalk::into_caches`]; see
    /// [`super::frames::WalkCaches`] for when they may be kept).
    ///
    /// # Errors
    /// As [`ThreadWalk::new`].
    pub fn with_kept(
        vm: &VmModel,
        mem: &'m Paged<'m>,
        caches: super::frames::WalkCaches,
    ) -> Result<Self, Error> {
        Self::make(vm, mem, caches, true)
    }

    fn make(
        vm: &VmModel,
        mem: &'m Paged<'m>,
        caches: super::frames::WalkCaches,
        readers: bool,
    ) -> Result<Self, Error> {
        Ok(ThreadWalk {
            mem,
            layout: ThreadLayout::new(vm)?,
            walker: Walker::with_kept(vm, mem, caches),
            java: readers.then(|| JavaReader::new(vm, mem)),
            lock_reader: readers.then(|| LockReader::new(vm, mem)),
        })
    }

    /// What the walks learnt of the code and the methods, for a later walk of the same target.
    pub fn into_caches(self) -> super::frames::WalkCaches {
        self.walker.map(Walker::into_caches).unwrap_or_default()
    }

    /// As [`ThreadWalk::with_kept`], for a walk of only what a sample needs: the `JavaThread`'s
    /// own fields and the frames, not the `java.lang.Thread` (its identity, a mounted virtual
    /// thread) nor the locks, heap and monitor reads a sampler that knows its threads by id has
    /// no use for. Their readers are not made either (a `JavaReader` resolves
    /// `java.lang.Thread`'s fields from the target: most of what making a walk costs), and the
    /// `JavaThread`'s oops are not read ([`ThreadLayout::thread_without_oops`]).
    ///
    /// # Errors
    /// As [`ThreadWalk::new`].
    pub fn frames_only(
        vm: &VmModel,
        mem: &'m Paged<'m>,
        caches: super::frames::WalkCaches,
    ) -> Result<Self, Error> {
        Self::make(vm, mem, caches, false)
    }

    /// Walks the thread whose `JavaThread` is at `address` (held, or the whole target stopped)
    /// as [`walk_at`] does, through the page cache as it is: a caller that let threads run
    /// between two walks drops the pages they may have changed first (`Paged::forget`). A thread
    /// that cannot be read is kept with a note.
    pub fn thread(
        &mut self,
        address: u64,
        registers: &dyn Fn(Pid) -> Option<ThreadRegisters>,
    ) -> DumpThread {
        let mem = self.mem;
        let read = match self.java {
            Some(_) => self.layout.thread(mem, address),
            None => self.layout.thread_without_oops(mem, address),
        };
        let vm_thread = match read {
            Ok(t) => t,
            Err(e) => {
                return DumpThread {
                    vm: VmThread {
                        address,
                        os_tid: None,
                        vm_state: None,
                        vm_state_name: None,
                        os_state: None,
                        anchor: Default::default(),
                        stack: (0, 0),
                        thread_obj: 0,
                        mounted_vthread: 0,
                    },
                    java: None,
                    frames: Vec::new(),
                    notes: vec![crate::error::with_causes(&e)],
                    registers: None,
                    virtual_thread: None,
                    cpu_ms: None,
                    os_prio: None,
                    locks: ThreadLocks::default(),
                };
            }
        };
        let mut notes = Vec::new();
        let mut from_registers = None;
        let identity = match &self.java {
            None => None,
            Some(Ok(j)) if vm_thread.thread_obj != 0 => match j.identity(vm_thread.thread_obj) {
                Ok(i) => Some(i),
                Err(e) => {
                    notes.push(format!(
                        "java.lang.Thread fields: {}",
                        crate::error::with_causes(&e)
                    ));
                    None
                }
            },
            Some(Ok(_)) => None,
            Some(Err(e)) => {
                notes.push(format!(
                    "java.lang.Thread fields: {}",
                    crate::error::with_causes(e)
                ));
                None
            }
        };
        // A virtual thread mounted on this carrier: its id (a different `Thread.tid` from the
        // carrier's; the oops alone may differ only in a collector's colour bits).
        let mounted = match (&self.java, vm_thread.mounted_vthread) {
            (None, _) | (_, 0) => None,
            (Some(Ok(j)), v) => match j.thread_id(v) {
                Ok(tid) if identity.as_ref().is_some_and(|i| i.tid == tid) => None,
                Ok(tid) => Some(tid),
                Err(e) => {
                    notes.push(format!(
                        "mounted virtual thread: {}",
                        crate::error::with_causes(&e)
                    ));
                    None
                }
            },
            (Some(Err(_)), _) => None,
        };
        let frames = match &mut self.walker {
            Ok(w) => match walk_start(&vm_thread, registers) {
                Ok(start) => {
                    let sp = match start {
                        WalkStart::Anchor(a) => a.sp,
                        WalkStart::Registers(r) => r.sp,
                    };
                    mem.focus(used_stack(&vm_thread, sp).as_slice());
                    let (frames, why) = w.walk(start, vm_thread.stack);
                    mem.focus(&[]);
                    if let Some(why) = why {
                        notes.push(why);
                    }
                    if let WalkStart::Registers(r) = start {
                        from_registers = Some(r);
                    }
                    frames
                }
                Err(why) => {
                    notes.push(why.into());
                    Vec::new()
                }
            },
            Err(e) => {
                notes.push(format!("frames: {}", crate::error::with_causes(e)));
                Vec::new()
            }
        };
        let locks = match &self.lock_reader {
            None | Some(Err(_)) => ThreadLocks::default(),
            Some(Ok(l)) => l
                .thread(
                    self.java.as_ref().and_then(|j| j.as_ref().ok()),
                    vm_thread.address,
                    vm_thread.thread_obj,
                )
                .unwrap_or_else(|e| {
                    notes.push(format!("locks: {}", crate::error::with_causes(&e)));
                    ThreadLocks::default()
                }),
        };
        DumpThread {
            vm: vm_thread,
            java: identity,
            frames,
            notes,
            registers: from_registers,
            virtual_thread: mounted.map(|tid| MountedVirtualThread {
                tid,
                frames: Vec::new(),
            }),
            cpu_ms: None,
            os_prio: None,
            locks,
        }
    }
}

impl Dump {
    /// Reads the virtual threads no carrier runs ([`super::vthreads::unmounted`]) through
    /// `mem`, the same (held) target as the dump's: the ones this dump found mounted are left
    /// out. A failure is kept in [`Dump::virtual_threads_error`].
    pub fn read_virtual_threads(&mut self, vm: &VmModel, mem: &dyn crate::memory::ReadMemory) {
        let mounted = self
            .threads
            .iter()
            .filter_map(|t| t.virtual_thread.as_ref().map(|v| v.tid))
            .collect();
        match super::vthreads::unmounted(vm, mem, &mounted) {
            Ok(v) => self.virtual_threads = Some(v),
            Err(e) => self.virtual_threads_error = Some(e.to_string()),
        }
    }

    /// Sets every thread's owned synchronizers from a walk of the heap: `owned` gives each
    /// synchronizer's address, class (external name) and owner's `java.lang.Thread`, in the
    /// heap's order. A thread's list is replaced (the walk finds a superset of those known from
    /// park blockers); an owner that is no thread of the dump (a virtual thread) is left out, as
    /// jcmd leaves it out. Marks the dump [`Dump::ownable_synchronizers_walked`].
    pub fn set_owned_synchronizers<'s>(
        &mut self,
        owned: impl IntoIterator<Item = (u64, &'s str, u64)>,
    ) {
        let index: HashMap<u64, usize> = self
            .threads
            .iter()
            .enumerate()
            .filter(|(_, t)| t.vm.thread_obj != 0)
            .map(|(i, t)| (t.vm.thread_obj, i))
            .collect();
        for t in &mut self.threads {
            t.locks.owned_synchronizers.clear();
        }
        for (object, class, owner) in owned {
            if let Some(&i) = index.get(&owner) {
                self.threads[i].locks.owned_synchronizers.push(LockLine {
                    kind: LockKind::Locked,
                    object: Some(object),
                    class: Some(class.to_string()),
                });
            }
        }
        self.ownable_synchronizers_walked = true;
    }

    /// Fills each thread's CPU time and native priority (jcmd's `cpu=`, `os_prio=`) from
    /// `stat`, what the OS says of a thread by the id the JVM knows it by (`OSThread::_thread_id`:
    /// `/proc/<pid>/task/<tid>/stat` and `schedstat` on Linux, read as the thread was stopped).
    /// `normal_priority`: the `os_prio=` of every thread when the JVM does not use the OS's
    /// priorities (see `VmModel::os_thread_priorities`); `None` takes each thread's own.
    pub fn set_task_stats(
        &mut self,
        stat: &dyn Fn(Pid) -> Option<TaskStat>,
        normal_priority: Option<i64>,
    ) {
        for t in &mut self.threads {
            let Some(s) =
                t.vm.os_tid
                    .and_then(|tid| Pid::try_from(tid).ok())
                    .and_then(stat)
            else {
                continue;
            };
            t.cpu_ms = Some(s.cpu_ms);
            t.os_prio = Some(normal_priority.unwrap_or(s.nice));
        }
    }
}
