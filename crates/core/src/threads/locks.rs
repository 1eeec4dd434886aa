//! Locks as a thread dump prints them, and Java-level deadlocks, read from outside.
//!
//! * **Lock lines** (`javaVFrame::print_lock_info_on`, `runtime/vframe.cpp`): on the top frame,
//!   `- waiting on <obj>` when it is `java.lang.Object.wait` (`wait0` from JDK 21) — the
//!   frame's local 0, `<no object reference available>` when the frame has no locals (a
//!   compiled native wrapper), `waiting to re-lock in wait()` when the thread is
//!   `BLOCKED_ON_MONITOR_ENTER` —, else `- parking to wait for  <obj>` for `Thread.parkBlocker`.
//!   Then on every frame its monitors, newest first: `- locked <obj>`, except that the first one
//!   of the top frame is `- waiting to lock <obj>` when it is the object of the thread's
//!   `JavaThread::_current_pending_monitor`; C2's eliminated locks print `- eliminated <obj>`
//!   or `- eliminated <owner is scalar replaced>`.
//! * **Monitors** (`runtime/objectMonitor.hpp`): `ObjectMonitor::_object` (an oop up to JDK 15,
//!   a `WeakHandle` — an `oop*` into OopStorage — from 16, as vmStructs' type string says) and
//!   `_owner`: a `JavaThread*` or, for a stack-locked then inflated monitor, the address of a
//!   `BasicLock` on the owner's stack (JDK ≤ 23); `ANONYMOUS_OWNER` (1) when a lightweight lock
//!   (JDK 21+) was inflated by another thread: the owner is the thread whose
//!   `JavaThread::_lock_stack` (`LockStack::_top`, a byte offset from the `JavaThread`, and
//!   `_base`) holds the object; from JDK 24 (JEP 491) the owner's Java thread id (`int64_t`),
//!   `ANONYMOUS_OWNER` 1 and `DEFLATER_MARKER` 2 (`Threads::owning_thread_from_monitor`,
//!   `runtime/threads.cpp`).
//! * **Ownable synchronizers** (`- <obj> (a X)` under `Locked ownable synchronizers:`): jcmd
//!   finds every `AbstractOwnableSynchronizer` by walking the heap
//!   (`ConcurrentLocksDump::dump_at_safepoint`, `services/threadService.cpp`); from outside,
//!   only those some thread is parked on (its `parkBlocker`) are known, with their
//!   `exclusiveOwnerThread`.
//! * **Deadlocks** (`ThreadService::find_deadlocks_at_safepoint` and
//!   `DeadlockCycle::print_on_with`, `services/threadService.cpp`): a depth-first walk over the
//!   threads in list order, from each thread's pending monitor (preferred) or park blocker to
//!   the thread owning it; a thread met again within the current walk closes a cycle. jcmd's
//!   `Thread.print` always includes the synchronizers (`VM_FindDeadlocks(outputStream*)`).

use super::frames::{FrameMonitor, LockKind, LockLine, Receiver};
use super::thread::{DeadlockLink, DumpThread, ThreadLocks, Waits};
use crate::error::{Error, VmEntry, VmError};
use crate::memory::ReadMemory;
use crate::vm::VmModel;
use crate::vm::java::JavaReader;

/// The most lock stack entries read (`LockStack::CAPACITY` is 8 in JDK 21–25).
const MAX_LOCK_STACK: u64 = 64;

/// The entries lock reading needs, resolved once.
pub struct LockReader<'a> {
    mem: &'a dyn ReadMemory,
    major: u32,
    /// `ObjectMonitor::ANONYMOUS_OWNER` (a long constant, JDK 21+).
    anonymous_owner: Option<u64>,
    pending: u64,
    pending_from_java: Option<u64>,
    waiting: u64,
    object: u64,
    object_is_handle: bool,
    owner: u64,
    owner_is_id: bool,
    lock_stack: Option<(u64, u64, u64)>,
    /// How the target lays out oops (WeakHandles hold coloured pointers under generational ZGC).
    oops: crate::vm::Layout,
    /// `InstanceKlass::_init_state` (a `u1`), `_init_thread` and the constant
    /// `InstanceKlass::being_initialized`, where the JDK has them.
    class_init: Option<(u64, u64, u8)>,
}

fn rd(mem: &dyn ReadMemory, addr: u64, what: &str) -> Result<u64, Error> {
    mem.read_u64(addr)
        .map_err(|e| Error::memory(what.to_string(), e))
}

impl<'a> LockReader<'a> {
    /// Whether the class `klass` is being initialized by the thread at `thread`
    /// (`InstanceKlass::_init_state == being_initialized` and `_init_thread == thread`,
    /// `oops/instanceKlass.hpp`).
    fn initializing(&self, klass: u64, thread: u64) -> bool {
        let Some((state_at, thread_at, being)) = self.class_init else {
            return false;
        };
        klass != 0
            && self.mem.read_u8(klass.wrapping_add(state_at)).ok() == Some(being)
            && self.mem.read_u64(klass.wrapping_add(thread_at)).ok() == Some(thread)
    }

    /// Resolves `JavaThread::_current_pending_monitor`, `_current_waiting_monitor`,
    /// `ObjectMonitor::_object` and `_owner`, and `JavaThread::_lock_stack` with
    /// `LockStack::_top`/`_base` where the JDK has them.
    ///
    /// # Errors
    /// [`Error::Vm`] naming a missing entry.
    pub fn new(vm: &VmModel, mem: &'a dyn ReadMemory) -> Result<Self, Error> {
        let missing = |name| VmError::MissingEntry {
            entry: VmEntry::member("ObjectMonitor", name),
        };
        let object = vm
            .field("ObjectMonitor", "_object")
            .ok_or_else(|| missing("_object"))?;
        let owner = vm
            .field("ObjectMonitor", "_owner")
            .ok_or_else(|| missing("_owner"))?;
        let lock_stack = match (
            vm.offset("JavaThread", "_lock_stack"),
            vm.offset("LockStack", "_top"),
            vm.offset("LockStack", "_base[0]")
                .or_else(|_| vm.offset("LockStack", "_base")),
        ) {
            (Ok(a), Ok(b), Ok(c)) => Some((a, b, c)),
            _ => None,
        };
        // On `JavaThread` from JDK 17, on `Thread` before.
        let on_thread = |name: &str| {
            vm.offset("JavaThread", name)
                .or_else(|_| vm.offset("Thread", name))
        };
        let class_init = match (
            vm.offset("InstanceKlass", "_init_state"),
            vm.offset("InstanceKlass", "_init_thread"),
            vm.int_opt("InstanceKlass::being_initialized"),
        ) {
            (Ok(state), Ok(thread), Some(v)) => u8::try_from(v).ok().map(|v| (state, thread, v)),
            _ => None,
        };
        Ok(LockReader {
            mem,
            oops: vm.layout,
            major: vm.major,
            class_init,
            anonymous_owner: vm.long("ObjectMonitor::ANONYMOUS_OWNER").ok(),
            pending: on_thread("_current_pending_monitor")?,
            pending_from_java: on_thread("_current_pending_monitor_is_from_java").ok(),
            waiting: on_thread("_current_waiting_monitor")?,
            object: object.offset,
            // vmStructs gives `_object` no type: a `WeakHandle` from JDK 16 (JDK-8247281,
            // OopStorage for monitors), a `void*` oop before.
            object_is_handle: object
                .type_string
                .as_deref()
                .map_or(vm.major >= 16, |t| t.contains("Handle")),
            owner: owner.offset,
            owner_is_id: owner
                .type_string
                .as_deref()
                .is_some_and(|t| t.contains("int64"))
                || vm.major >= 24,
            lock_stack,
        })
    }

    /// `ObjectMonitor::object()` of the monitor at `monitor` (0 stays 0).
    ///
    /// # Errors
    /// [`Error::Memory`].
    pub fn monitor_object(&self, monitor: u64) -> Result<u64, Error> {
        if monitor == 0 {
            return Ok(0);
        }
        let v = rd(
            self.mem,
            monitor.wrapping_add(self.object),
            "ObjectMonitor::_object",
        )?;
        if self.object_is_handle && v != 0 {
            Ok(self
                .oops
                .heap_oop(rd(self.mem, v, "the WeakHandle of ObjectMonitor::_object")?))
        } else {
            Ok(v)
        }
    }

    /// Reads the lock state of the `JavaThread` at `thread` whose `java.lang.Thread` is
    /// `thread_obj`.
    ///
    /// # Errors
    /// [`Error::Memory`] when a field cannot be read.
    pub fn thread(
        &self,
        java: Option<&JavaReader<'_>>,
        thread: u64,
        thread_obj: u64,
    ) -> Result<ThreadLocks, Error> {
        let pending_monitor = rd(
            self.mem,
            thread.wrapping_add(self.pending),
            "JavaThread::_current_pending_monitor",
        )?;
        let waiting_monitor = rd(
            self.mem,
            thread.wrapping_add(self.waiting),
            "JavaThread::_current_waiting_monitor",
        )?;
        let park_blocker = match java {
            Some(j) if thread_obj != 0 => j.park_blocker(thread_obj)?,
            _ => 0,
        };
        let mut lock_stack = Vec::new();
        if let Some((ls, top, base)) = self.lock_stack {
            let top = u64::from(
                self.mem
                    .read_u32(thread.wrapping_add(ls).wrapping_add(top))
                    .map_err(|e| Error::memory("LockStack::_top", e))?,
            );
            // `_top` is the byte offset of the next free slot from the JavaThread.
            let start = ls + base;
            if top >= start && (top - start) / 8 <= MAX_LOCK_STACK {
                let n = (top - start) / 8;
                lock_stack = self
                    .mem
                    .read_pointers(
                        thread.wrapping_add(start),
                        n as usize,
                        MAX_LOCK_STACK as usize,
                    )
                    .map_err(|e| Error::memory("LockStack::_base", e))?;
            }
        }
        let pending_from_java = match self.pending_from_java {
            Some(o) if pending_monitor != 0 => {
                self.mem.read_u8(thread.wrapping_add(o)).map_err(|e| {
                    Error::memory("JavaThread::_current_pending_monitor_is_from_java", e)
                })? != 0
            }
            _ => true,
        };
        Ok(ThreadLocks {
            pending_from_java,
            pending_monitor,
            pending_object: self.monitor_object(pending_monitor)?,
            waiting_monitor,
            waiting_object: self.monitor_object(waiting_monitor)?,
            park_blocker,
            lock_stack,
            owned_synchronizers: Vec::new(),
        })
    }

    /// The `ObjectMonitor*` of `object` when its mark word says it is inflated
    /// (`markWord::has_monitor`: the low two bits are `monitor_value`, 2).
    fn inflated_monitor(&self, object: u64) -> Option<u64> {
        let mark = self.mem.read_u64(object).ok()?;
        (mark & 3 == 2).then_some(mark & !3)
    }

    /// Whether `t` has entered `monitor` (`ObjectMonitor::is_entered`): it is the owner, or
    /// the owner is a `BasicLock` on its stack, or (anonymous) `object` is on its lock stack.
    fn is_entered(&self, t: &DumpThread, monitor: u64, object: u64) -> bool {
        let Ok(raw) = rd(
            self.mem,
            monitor.wrapping_add(self.owner),
            "ObjectMonitor::_owner",
        ) else {
            return false;
        };
        if raw == 0 {
            false
        } else if Some(raw) == self.anonymous_owner {
            t.locks.lock_stack.contains(&object)
        } else if self.owner_is_id {
            t.java.as_ref().is_some_and(|j| j.tid as u64 == raw)
        } else {
            let (base, size) = t.vm.stack;
            raw == t.vm.address || (raw < base && raw >= base.saturating_sub(size))
        }
    }

    /// What `javaVFrame::print_lock_info_on` says of a monitor of frame `frame` it would
    /// otherwise call `locked`: in the top frame, the first one is `waiting to lock` when its
    /// object's monitor is inflated and is the pending one or not entered by the thread; in
    /// JDK 9–11 (whose vframe.cpp has the branch; JDK 8's and 17's have not, 12–16 are not
    /// checked), a monitor of another frame is `waiting to re-lock in wait()` under the same
    /// condition.
    fn monitor_state(&self, t: &DumpThread, frame: usize, first: bool, object: u64) -> LockKind {
        let blocked = || match self.inflated_monitor(object) {
            Some(m) => m == t.locks.pending_monitor || !self.is_entered(t, m, object),
            // Not inflated (or unreadable): the pending monitor's object says it.
            None => t.locks.pending_object != 0 && t.locks.pending_object == object,
        };
        if frame == 0 {
            if first && blocked() {
                return LockKind::WaitingToLock;
            }
        } else if (9..=11).contains(&self.major) && blocked() {
            return LockKind::WaitingToRelock;
        }
        LockKind::Locked
    }

    /// The thread (index into `threads`) owning `monitor` whose object is `object`
    /// (`Threads::owning_thread_from_monitor`), and the raw `_owner`.
    fn monitor_owner(
        &self,
        threads: &[DumpThread],
        monitor: u64,
        object: u64,
    ) -> (Option<usize>, u64) {
        let Ok(raw) = rd(
            self.mem,
            monitor.wrapping_add(self.owner),
            "ObjectMonitor::_owner",
        ) else {
            return (None, 0);
        };
        let on_lock_stack = || {
            threads
                .iter()
                .position(|t| t.locks.lock_stack.contains(&object))
        };
        let found = if raw == 0 {
            None
        } else if Some(raw) == self.anonymous_owner {
            on_lock_stack()
        } else if self.owner_is_id {
            threads
                .iter()
                .position(|t| t.java.as_ref().is_some_and(|j| j.tid as u64 == raw))
        } else {
            threads
                .iter()
                .position(|t| t.vm.address == raw)
                .or_else(|| {
                    // A stack-locked monitor: the owner is a BasicLock on the owner's stack.
                    threads.iter().position(|t| {
                        let (base, size) = t.vm.stack;
                        raw < base && raw >= base.saturating_sub(size)
                    })
                })
        };
        (found, raw)
    }
}

/// Fills the lock lines of every frame, the known ownable synchronizers, and returns the
/// deadlock cycles, for threads whose [`ThreadLocks`] are read.
pub fn annotate(
    threads: &mut [DumpThread],
    locks: &LockReader<'_>,
    java: Option<&JavaReader<'_>>,
) -> Vec<Vec<DeadlockLink>> {
    let class = |oop: u64| -> Option<String> {
        if oop == 0 {
            return None;
        }
        java.and_then(|j| j.class_name_of(oop).ok())
    };
    for t in threads.iter_mut() {
        // The newest monitor of the top frame held in a register: when the thread is entering a
        // monitor, that is the one (the compiled code called the runtime to enter it), and its
        // object is the pending monitor's (`ObjectMonitor::_object`).
        let pending = t.locks.pending_object;
        if pending != 0
            && let Some(m) = t.frames.first_mut().and_then(|f| f.monitors.last_mut())
            && *m == FrameMonitor::InRegister
        {
            *m = FrameMonitor::Object {
                object: pending,
                eliminated: false,
            };
        }
    }
    // Classes being initialized, and by which thread: the holders of `<clinit>` frames whose
    // `_init_thread` is the thread running them.
    let mut initializing: Vec<(u64, String)> = Vec::new();
    for t in threads.iter() {
        for f in t.frames.iter().filter(|f| &*f.method == "<clinit>") {
            if locks.initializing(f.holder, t.vm.address)
                && !initializing.iter().any(|(_, c)| **c == *f.class)
            {
                initializing.push((t.vm.address, f.class.to_string()));
            }
        }
    }
    for t in threads.iter_mut() {
        // `javaVFrame::print_lock_info_on` (JDK 17+): a thread in Object.wait() whose top frame
        // is not Object.wait is waiting for another thread's class initialization
        // (`JavaThread::_class_to_be_initialized`, not in the tables): named when exactly one
        // class is being initialized by another thread, left out otherwise.
        let waits_for_init = locks.major >= 17
            && t.vm.os_state == Some(5)
            && t.frames.first().is_some_and(|f| {
                !(&*f.class == "java.lang.Object" && f.method.starts_with("wait"))
            });
        let init_line = if waits_for_init {
            let mut others = initializing.iter().filter(|(by, _)| *by != t.vm.address);
            match (others.next(), others.next()) {
                (Some((_, class)), None) => Some(LockLine {
                    kind: LockKind::WaitingOnClassInitialization,
                    object: None,
                    class: Some(class.clone()),
                }),
                _ => None,
            }
        } else {
            None
        };
        let states: Vec<Vec<LockKind>> = {
            let t: &DumpThread = t;
            t.frames
                .iter()
                .enumerate()
                .map(|(fi, f)| {
                    let mut first = true;
                    f.monitors
                        .iter()
                        .rev()
                        .map(|m| match m {
                            FrameMonitor::Object {
                                object,
                                eliminated: false,
                            } => {
                                let k = locks.monitor_state(t, fi, first, *object);
                                first = false;
                                k
                            }
                            _ => LockKind::Locked,
                        })
                        .collect()
                })
                .collect()
        };
        let status = t.java.as_ref().map(|j| j.status);
        let lk = t.locks.clone();
        let mut first_frame = true;
        for (f, states) in t.frames.iter_mut().zip(states) {
            let mut lines = Vec::new();
            if first_frame {
                let is_wait = (&*f.method == "wait" || &*f.method == "wait0")
                    && &*f.class == "java.lang.Object";
                if is_wait {
                    match f.receiver {
                        Receiver::Value(o) if o != 0 => lines.push(LockLine {
                            kind: if status == Some(0x401) {
                                LockKind::WaitingToRelock
                            } else {
                                LockKind::WaitingOn
                            },
                            object: Some(o),
                            class: class(o),
                        }),
                        Receiver::NoLocals => lines.push(LockLine {
                            kind: LockKind::WaitingOnUnknownObject,
                            object: None,
                            class: None,
                        }),
                        _ => {}
                    }
                } else if lk.park_blocker != 0 {
                    // jcmd names a parking blocker by its klass alone (`(a java.lang.Class)`,
                    // `vframe.cpp` `print_lock_info_on`); "for X" is for monitor lines only.
                    lines.push(LockLine {
                        kind: LockKind::ParkingToWaitFor,
                        object: Some(lk.park_blocker),
                        class: class(lk.park_blocker).map(|c| {
                            if c.starts_with("java.lang.Class for ") {
                                "java.lang.Class".to_string()
                            } else {
                                c
                            }
                        }),
                    });
                } else if let Some(l) = &init_line {
                    lines.push(l.clone());
                }
            }
            for (m, state) in f.monitors.iter().rev().zip(states) {
                match m {
                    FrameMonitor::ScalarReplaced { class_mirror } => lines.push(LockLine {
                        kind: LockKind::EliminatedScalarReplaced,
                        object: None,
                        class: class_mirror.and_then(|m| {
                            class(m).map(|c| {
                                c.strip_prefix("java.lang.Class for ")
                                    .map_or(c.clone(), str::to_string)
                            })
                        }),
                    }),
                    FrameMonitor::Object {
                        object,
                        eliminated: true,
                    } => lines.push(LockLine {
                        kind: LockKind::Eliminated,
                        object: Some(*object),
                        class: class(*object),
                    }),
                    FrameMonitor::Object { object, .. } => lines.push(LockLine {
                        kind: state,
                        object: Some(*object),
                        class: class(*object),
                    }),
                    FrameMonitor::InRegister => lines.push(LockLine {
                        kind: LockKind::Unreadable("its owner is in a register".into()),
                        object: None,
                        class: None,
                    }),
                    FrameMonitor::Unknown(why) => lines.push(LockLine {
                        kind: LockKind::Unreadable(why.clone()),
                        object: None,
                        class: None,
                    }),
                }
            }
            f.locks = lines;
            first_frame = false;
        }
    }
    // Ownable synchronizers: those threads are parked on, credited to their owners.
    let owner_of_synchronizer = |threads: &[DumpThread], blocker: u64| -> Option<Option<usize>> {
        let owner = java?.synchronizer_owner(blocker).ok()??;
        Some(
            threads
                .iter()
                .position(|t| owner != 0 && t.vm.thread_obj == owner),
        )
    };
    for i in 0..threads.len() {
        let blocker = threads[i].locks.park_blocker;
        if blocker == 0 {
            continue;
        }
        if let Some(Some(o)) = owner_of_synchronizer(threads, blocker)
            && !threads[o]
                .locks
                .owned_synchronizers
                .iter()
                .any(|l| l.object == Some(blocker))
        {
            let line = LockLine {
                kind: LockKind::Locked,
                object: Some(blocker),
                class: class(blocker),
            };
            threads[o].locks.owned_synchronizers.push(line);
        }
    }
    // Deadlocks (`ThreadService::find_deadlocks_at_safepoint`).
    let n = threads.len();
    let mut dfn: Vec<i64> = vec![-1; n];
    let mut global = 0i64;
    let mut cycles = Vec::new();
    for start in 0..n {
        if dfn[start] >= 0 {
            continue;
        }
        let this_dfn = global;
        dfn[start] = global;
        global += 1;
        let mut current = start;
        let mut cycle: Vec<DeadlockLink> = Vec::new();
        loop {
            let t = &threads[current];
            let link = if t.locks.pending_monitor != 0 {
                let (held_by, raw) =
                    locks.monitor_owner(threads, t.locks.pending_monitor, t.locks.pending_object);
                if raw == 0 {
                    break; // not owned (any more): no dependency
                }
                DeadlockLink {
                    thread: current,
                    waits: Waits::Monitor {
                        monitor: t.locks.pending_monitor,
                        object: t.locks.pending_object,
                        class: class(t.locks.pending_object),
                    },
                    held_by,
                    owner_raw: raw,
                }
            } else if t.locks.park_blocker != 0 {
                match owner_of_synchronizer(threads, t.locks.park_blocker) {
                    Some(Some(o)) => DeadlockLink {
                        thread: current,
                        waits: Waits::Synchronizer {
                            object: t.locks.park_blocker,
                            class: class(t.locks.park_blocker),
                        },
                        held_by: Some(o),
                        owner_raw: 0,
                    },
                    _ => break,
                }
            } else {
                break;
            };
            let next = link.held_by;
            cycle.push(link);
            let Some(next) = next else {
                // The owner of a pending monitor is not among the threads: the thread is
                // blocked for good, which HotSpot reports as a deadlock.
                cycles.push(std::mem::take(&mut cycle));
                break;
            };
            if dfn[next] < 0 {
                dfn[next] = global;
                global += 1;
            } else if dfn[next] < this_dfn || next == current {
                break; // visited before, not on a new cycle; or a self-loop
            } else {
                cycles.push(std::mem::take(&mut cycle));
                break;
            }
            current = next;
        }
    }
    cycles
}
