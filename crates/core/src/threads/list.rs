//! HotSpot's Java threads as the VM keeps them, read from outside.
//!
//! * The list: `ThreadsSMRSupport::_java_thread_list` (a `ThreadsList*`, JDK 10+) →
//!   `ThreadsList::_length` (uint) and `ThreadsList::_threads` (`JavaThread* const*`)
//!   (`runtime/threadSMR.hpp`; SA `runtime/Threads.java`).
//! * Per `JavaThread` (`runtime/javaThread.hpp`, `thread.hpp` before JDK 20): `_threadObj` (an
//!   `OopHandle` — an `oop*` into OopStorage — from JDK 16, a plain `oop` before; SA
//!   `JavaThread.getThreadObj`), `_thread_state` (`JavaThreadState`, `utilities/globalDefinitions.hpp`),
//!   `_anchor` (`JavaFrameAnchor`: `_last_Java_sp`, `_last_Java_pc`, and `_last_Java_fp` from
//!   `cpu/x86/vmStructs_x86.hpp`), `_osthread` (on `JavaThread` up to JDK 24, on `Thread` from
//!   25) → `OSThread::_thread_id` (`os_cpu/linux_x86/vmStructs_linux_x86.hpp`) and
//!   `OSThread::_state` (`runtime/osThreadBase.hpp`: `ThreadState`), and `Thread::_stack_base`,
//!   `Thread::_stack_size`.
//!
//! Every count and pointer is bounded: at most [`MAX_THREADS`] threads, each read failure is
//! that thread's error.

use crate::error::{Error, VmEntry, VmError};
use crate::memory::{LeBytes, ReadMemory};
use crate::vm::{VmModel, rd};

/// The most threads read from a `ThreadsList` (a JVM with more is refused as corrupt).
pub const MAX_THREADS: u64 = 100_000;

/// Offsets of the fields read per thread, resolved once from the model.
#[derive(Debug, Clone)]
pub struct ThreadLayout {
    list: ListLayout,
    thread_obj: u64,
    /// `_threadObj` is an `OopHandle` (one more indirection) rather than an `oop`.
    thread_obj_handle: bool,
    /// `JavaThread::_vthread` (JDK 19+, an `OopHandle`): the thread's current
    /// `java.lang.Thread`, the mounted virtual thread while one is mounted.
    vthread: Option<u64>,
    thread_state: u64,
    anchor: u64,
    last_java_sp: u64,
    last_java_pc: u64,
    last_java_fp: u64,
    osthread: u64,
    os_thread_id: u64,
    os_state: Option<u64>,
    stack_base: u64,
    stack_size: u64,
    /// `JavaThreadState` names by value (`_thread_in_native`, ...), from the int constants.
    vm_states: Vec<(i64, &'static str)>,
    /// How the target lays out oops (OopHandles hold coloured pointers under generational ZGC).
    oops: crate::vm::Layout,
    /// `sizeof(JavaThread)` (its type's size in vmStructs, else past the last field read).
    size: u64,
}

/// How the Java threads are listed.
#[derive(Debug, Clone, Copy)]
enum ListLayout {
    /// JDK 12+ (and some 10–11 builds): `ThreadsSMRSupport::_java_thread_list` →
    /// `ThreadsList::_length`, `_threads`.
    Smr {
        java_thread_list: u64,
        length: u64,
        threads: u64,
    },
    /// JDK ≤ 11 tables: `Threads::_thread_list` (the head `JavaThread*`) and `JavaThread::_next`
    /// (`runtime/thread.hpp`; SA `Threads.java` of those releases).
    /// `smr_order`: JDK 10-11, whose jcmd prints the SMR list (the reverse); JDK 8's prints
    /// this list as it is (`Threads::print_on`, newest thread first).
    Linked {
        head: u64,
        next: u64,
        smr_order: bool,
    },
}

/// The `JavaThreadState` values by name (`utilities/globalDefinitions.hpp`), as the int
/// constants table exports them.
const VM_STATE_NAMES: [&str; 11] = [
    "_thread_uninitialized",
    "_thread_new",
    "_thread_new_trans",
    "_thread_in_native",
    "_thread_in_native_trans",
    "_thread_in_vm",
    "_thread_in_vm_trans",
    "_thread_in_Java",
    "_thread_in_Java_trans",
    "_thread_blocked",
    "_thread_blocked_trans",
];

/// The OS thread state (`OSThread::_state`, enum `ThreadState` in `runtime/osThread.hpp`,
/// `osThreadBase.hpp` from JDK 24) as `OSThread::print_on` words it in a thread dump's header.
/// The enum's values are fixed: ALLOCATED 0, INITIALIZED 1, RUNNABLE 2, MONITOR_WAIT 3,
/// CONDVAR_WAIT 4, OBJECT_WAIT 5, BREAKPOINTED 6, SLEEPING 7, ZOMBIE 8.
pub fn os_state_word(state: i32) -> Option<&'static str> {
    Some(match state {
        0 => "allocated ",
        1 => "initialized ",
        2 => "runnable ",
        3 => "waiting for monitor entry ",
        4 => "waiting on condition ",
        5 => "in Object.wait() ",
        6 => "at breakpoint",
        7 => "sleeping",
        8 => "zombie",
        _ => return None,
    })
}

/// A `JavaFrameAnchor`: where the thread's last Java frame is when it is not running Java code
/// (`runtime/javaFrameAnchor.hpp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Anchor {
    /// `_last_Java_sp` (0: no Java frame, or running Java).
    pub sp: u64,
    /// `_last_Java_fp`.
    pub fp: u64,
    /// `_last_Java_pc` (0: the return address is at `sp - 8`).
    pub pc: u64,
}

/// One `JavaThread` as the VM has it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VmThread {
    /// The `JavaThread*` (jcmd's `tid=`).
    pub address: u64,
    /// `OSThread::_thread_id` (the LWP id, jcmd's `nid=`).
    pub os_tid: Option<i64>,
    /// `_thread_state` (`JavaThreadState`).
    pub vm_state: Option<i64>,
    /// Its name (`_thread_in_native`, ...), when the constants table has it.
    pub vm_state_name: Option<&'static str>,
    /// `OSThread::_state`.
    pub os_state: Option<i64>,
    /// The frame anchor.
    pub anchor: Anchor,
    /// `Thread::_stack_base` (the stack's highest address) and `_stack_size` in bytes.
    pub stack: (u64, u64),
    /// The `java.lang.Thread` oop (0 when the thread has none yet).
    pub thread_obj: u64,
    /// The virtual thread mounted on it (`JavaThread::_vthread` when it is not `_threadObj`,
    /// as `JavaThread::is_vthread_mounted` finds with the continuation entries); 0 when none.
    pub mounted_vthread: u64,
}

fn rd32(mem: &dyn ReadMemory, addr: u64, what: &str) -> Result<u32, Error> {
    mem.read_u32(addr)
        .map_err(|e| Error::memory(what.to_string(), e))
}

impl ThreadLayout {
    /// Resolves every entry the thread walk reads.
    ///
    /// # Errors
    /// [`Error::Vm`] naming the first missing entry (a JDK before 10 has no
    /// `ThreadsSMRSupport`).
    pub fn new(vm: &VmModel) -> Result<Self, Error> {
        let thread_obj_field = vm
            .field("JavaThread", "_threadObj")
            .filter(|f| !f.is_static)
            .ok_or_else(|| VmError::MissingEntry {
                entry: VmEntry::member("JavaThread", "_threadObj"),
            })?;
        let thread_obj_handle = thread_obj_field
            .type_string
            .as_deref()
            .is_some_and(|t| t.contains("OopHandle"));
        let osthread = vm
            .offset("JavaThread", "_osthread")
            .or_else(|_| vm.offset("Thread", "_osthread"))?;
        let mut vm_states = Vec::new();
        for name in VM_STATE_NAMES {
            if let Some(v) = vm.int_opt(name) {
                vm_states.push((v, name));
            }
        }
        Ok(ThreadLayout {
            list: match vm.static_address("ThreadsSMRSupport", "_java_thread_list") {
                Ok(java_thread_list) => ListLayout::Smr {
                    java_thread_list,
                    length: vm.offset("ThreadsList", "_length")?,
                    threads: vm.offset("ThreadsList", "_threads")?,
                },
                Err(e) => match (
                    vm.static_address("Threads", "_thread_list"),
                    vm.offset("JavaThread", "_next"),
                ) {
                    (Ok(head), Ok(next)) => ListLayout::Linked {
                        head,
                        next,
                        smr_order: vm.major >= 10,
                    },
                    _ => return Err(e),
                },
            },
            thread_obj: thread_obj_field.offset,
            thread_obj_handle,
            vthread: vm.offset("JavaThread", "_vthread").ok(),
            thread_state: vm.offset("JavaThread", "_thread_state")?,
            anchor: vm.offset("JavaThread", "_anchor")?,
            last_java_sp: vm.offset("JavaFrameAnchor", "_last_Java_sp")?,
            last_java_pc: vm.offset("JavaFrameAnchor", "_last_Java_pc")?,
            last_java_fp: vm.offset("JavaFrameAnchor", "_last_Java_fp")?,
            osthread,
            os_thread_id: vm.offset("OSThread", "_thread_id")?,
            os_state: vm.offset("OSThread", "_state").ok(),
            stack_base: vm
                .offset("Thread", "_stack_base")
                .or_else(|_| vm.offset("JavaThread", "_stack_base"))?,
            stack_size: vm
                .offset("Thread", "_stack_size")
                .or_else(|_| vm.offset("JavaThread", "_stack_size"))?,
            vm_states,
            oops: vm.layout,
            size: 0,
        }
        .sized(vm))
    }

    /// Sets `size`: the `JavaThread` type's size, else the end of the last field read; at most
    /// 64 KiB.
    fn sized(mut self, vm: &VmModel) -> Self {
        let last = [
            self.thread_obj,
            self.vthread.unwrap_or(0),
            self.thread_state,
            self.anchor
                + self
                    .last_java_sp
                    .max(self.last_java_pc)
                    .max(self.last_java_fp),
            self.osthread,
            self.stack_base,
            self.stack_size,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
            + 8;
        self.size = vm
            .size_of("JavaThread")
            .unwrap_or(last)
            .max(last)
            .min(64 * 1024);
        self
    }

    /// The bytes of a `JavaThread` the layout reads: `sizeof(JavaThread)` (at most 64 KiB).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The `JavaThread*`s of `ThreadsSMRSupport::_java_thread_list`, in list order (the order
    /// `Threads::print_on` prints them; the reverse of `Threads::_thread_list` where only that
    /// is exported).
    ///
    /// # Errors
    /// [`Error::Memory`] when the list cannot be read; [`Error::Vm`] when its length is
    /// over [`MAX_THREADS`].
    pub fn thread_addresses(&self, mem: &dyn ReadMemory) -> Result<(u64, Vec<u64>), Error> {
        let (java_thread_list, length_off, threads_off) = match self.list {
            ListLayout::Smr {
                java_thread_list,
                length,
                threads,
            } => (java_thread_list, length, threads),
            ListLayout::Linked {
                head,
                next,
                smr_order,
            } => {
                let mut out = Vec::new();
                let mut at = rd(mem, head, "Threads::_thread_list")?;
                while at != 0 {
                    if out.len() as u64 >= MAX_THREADS || out.contains(&at) {
                        return Err(VmError::Unterminated {
                            what: "Threads::_thread_list".into(),
                            unit: "threads",
                            max: MAX_THREADS,
                        }
                        .into());
                    }
                    out.push(at);
                    at = rd(mem, at.wrapping_add(next), "JavaThread::_next")?;
                }
                // `Threads::add` prepends to this list and appends to the SMR list that jcmd
                // prints from (`ThreadsList::add_thread`): the SMR order is the reverse.
                if smr_order {
                    out.reverse();
                }
                return Ok((0, out));
            }
        };
        let list = rd(
            mem,
            java_thread_list,
            "ThreadsSMRSupport::_java_thread_list",
        )?;
        if list == 0 {
            return Err(VmError::NotInitialized {
                what: "ThreadsSMRSupport::_java_thread_list".into(),
            }
            .into());
        }
        let length = u64::from(rd32(
            mem,
            list.wrapping_add(length_off),
            "ThreadsList::_length",
        )?);
        if length > MAX_THREADS {
            return Err(VmError::Bound {
                what: "ThreadsList::_length".into(),
                count: length,
                max: MAX_THREADS,
            }
            .into());
        }
        let threads = rd(mem, list.wrapping_add(threads_off), "ThreadsList::_threads")?;
        let mut bytes = vec![0u8; (length * 8) as usize];
        mem.read_exact_at(threads, &mut bytes)
            .map_err(|e| Error::memory("ThreadsList::_threads", e))?;
        Ok((list, LeBytes::new(&bytes).u64s().collect()))
    }

    /// The thread list as published now: `ThreadsSMRSupport::_java_thread_list` (the
    /// `ThreadsList*`), or JDK 8's `Threads::_thread_list` head. A different value after a walk
    /// means the list was replaced (a thread started or ended) during it.
    ///
    /// # Errors
    /// [`Error::Memory`] when it cannot be read.
    pub fn list_head(&self, mem: &dyn ReadMemory) -> Result<u64, Error> {
        match self.list {
            ListLayout::Smr {
                java_thread_list, ..
            } => rd(
                mem,
                java_thread_list,
                "ThreadsSMRSupport::_java_thread_list",
            ),
            ListLayout::Linked { head, .. } => rd(mem, head, "Threads::_thread_list"),
        }
    }

    /// The `java.lang.Thread` of the `JavaThread` at `address` (`_threadObj`, through its
    /// `OopHandle` from JDK 16); 0 when it has none yet.
    ///
    /// # Errors
    /// [`Error::Memory`] when a read fails.
    pub fn thread_obj(&self, mem: &dyn ReadMemory, address: u64) -> Result<u64, Error> {
        let obj = rd(
            mem,
            address.wrapping_add(self.thread_obj),
            "JavaThread::_threadObj",
        )?;
        if self.thread_obj_handle && obj != 0 {
            Ok(self.heap_oop(rd(mem, obj, "the OopHandle of JavaThread::_threadObj")?))
        } else {
            Ok(obj)
        }
    }

    fn heap_oop(&self, raw: u64) -> u64 {
        self.oops.heap_oop(raw)
    }

    /// The bytes of thread `address`'s `OSThread` that [`ThreadLayout::thread`] reads
    /// (`_thread_id`, `_state`), as `[from, to)`: what a sampler reads with the `JavaThread`
    /// in one go. `None` when the `JavaThread` has no `OSThread` or cannot be read.
    pub fn os_thread_span(&self, mem: &dyn ReadMemory, address: u64) -> Option<(u64, u64)> {
        let osthread = mem.read_u64(address.wrapping_add(self.osthread)).ok()?;
        if osthread == 0 {
            return None;
        }
        let state = self.os_state.unwrap_or(self.os_thread_id);
        let from = self.os_thread_id.min(state);
        let to = self.os_thread_id.max(state) + 4;
        Some((osthread.wrapping_add(from), osthread.wrapping_add(to)))
    }

    /// Reads one `JavaThread`.
    ///
    /// # Errors
    /// [`Error::Memory`] when a field cannot be read.
    pub fn thread(&self, mem: &dyn ReadMemory, address: u64) -> Result<VmThread, Error> {
        self.read_thread(mem, address, true)
    }

    /// As [`ThreadLayout::thread`], without the `JavaThread`'s oops: `thread_obj` and
    /// `mounted_vthread` are 0, and the handles they are read through (`OopStorage` blocks
    /// elsewhere in memory) are not read. What a sampler that knows its threads by id reads.
    ///
    /// # Errors
    /// As [`ThreadLayout::thread`].
    pub fn thread_without_oops(
        &self,
        mem: &dyn ReadMemory,
        address: u64,
    ) -> Result<VmThread, Error> {
        self.read_thread(mem, address, false)
    }

    fn read_thread(
        &self,
        mem: &dyn ReadMemory,
        address: u64,
        oops: bool,
    ) -> Result<VmThread, Error> {
        let f = |off: u64, what: &str| rd(mem, address.wrapping_add(off), what);
        let anchor = address.wrapping_add(self.anchor);
        let anchor = Anchor {
            sp: rd(
                mem,
                anchor.wrapping_add(self.last_java_sp),
                "JavaFrameAnchor::_last_Java_sp",
            )?,
            fp: rd(
                mem,
                anchor.wrapping_add(self.last_java_fp),
                "JavaFrameAnchor::_last_Java_fp",
            )?,
            pc: rd(
                mem,
                anchor.wrapping_add(self.last_java_pc),
                "JavaFrameAnchor::_last_Java_pc",
            )?,
        };
        let vm_state = i64::from(rd32(
            mem,
            address.wrapping_add(self.thread_state),
            "JavaThread::_thread_state",
        )? as i32);
        let osthread = f(self.osthread, "JavaThread::_osthread")?;
        let (os_tid, os_state) = if osthread == 0 {
            (None, None)
        } else {
            let tid = rd32(
                mem,
                osthread.wrapping_add(self.os_thread_id),
                "OSThread::_thread_id",
            )? as i32;
            let state = match self.os_state {
                Some(o) => Some(i64::from(
                    rd32(mem, osthread.wrapping_add(o), "OSThread::_state")? as i32,
                )),
                None => None,
            };
            (Some(i64::from(tid)), state)
        };
        let mut thread_obj = match oops {
            true => f(self.thread_obj, "JavaThread::_threadObj")?,
            false => 0,
        };
        if self.thread_obj_handle && thread_obj != 0 {
            thread_obj = self.heap_oop(rd(
                mem,
                thread_obj,
                "the OopHandle of JavaThread::_threadObj",
            )?);
        }
        let mut mounted_vthread = 0;
        if let Some(o) = self.vthread
            && thread_obj != 0
        {
            let handle = f(o, "JavaThread::_vthread")?;
            let vthread = if handle == 0 {
                0
            } else {
                self.heap_oop(rd(mem, handle, "the OopHandle of JavaThread::_vthread")?)
            };
            if vthread != 0 && vthread != thread_obj {
                mounted_vthread = vthread;
            }
        }
        Ok(VmThread {
            address,
            os_tid,
            vm_state: Some(vm_state),
            vm_state_name: self
                .vm_states
                .iter()
                .find(|(v, _)| *v == vm_state)
                .map(|(_, n)| *n),
            os_state,
            anchor,
            stack: (
                f(self.stack_base, "Thread::_stack_base")?,
                f(self.stack_size, "Thread::_stack_size")?,
            ),
            thread_obj,
            mounted_vthread,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryCopy;

    /// A JDK 21 model with the entries [`ThreadLayout::new`] needs; the SMR list pointer is at
    /// 0x1000, a `ThreadsList` has `_length` at 8 and `_threads` at 16.
    fn model() -> VmModel {
        VmModel::with_entries(
            21,
            &[
                ("JavaThread", "_threadObj", 8),
                ("JavaThread", "_osthread", 16),
                ("JavaThread", "_thread_state", 24),
                ("JavaThread", "_anchor", 32),
                ("JavaFrameAnchor", "_last_Java_sp", 0),
                ("JavaFrameAnchor", "_last_Java_pc", 8),
                ("JavaFrameAnchor", "_last_Java_fp", 16),
                ("OSThread", "_thread_id", 0),
                ("Thread", "_stack_base", 40),
                ("Thread", "_stack_size", 48),
                ("ThreadsList", "_length", 8),
                ("ThreadsList", "_threads", 16),
            ],
            &[("ThreadsSMRSupport", "_java_thread_list", 0x1000)],
        )
    }

    /// Memory at 0x1000: the list pointer `list`, then a `ThreadsList` at 0x1020 of `length`.
    fn memory(list: u64, length: u32) -> MemoryCopy {
        let mut bytes = vec![0u8; 0x100];
        bytes[..8].copy_from_slice(&list.to_le_bytes());
        bytes[0x28..0x2c].copy_from_slice(&length.to_le_bytes());
        MemoryCopy::new(0x1000, bytes, 4096)
    }

    #[test]
    fn a_thread_list_longer_than_the_bound_is_a_typed_error() {
        let layout = ThreadLayout::new(&model()).unwrap();
        let err = layout
            .thread_addresses(&memory(0x1020, 200_000))
            .unwrap_err();
        match &err {
            Error::Vm(VmError::Bound { what, count, max }) => {
                assert_eq!(
                    (what.as_ref(), *count, *max),
                    ("ThreadsList::_length", 200_000, MAX_THREADS)
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            err.to_string(),
            "ThreadsList::_length is 200000, more than 100000: corrupt"
        );
    }

    #[test]
    fn a_null_thread_list_is_a_vm_still_starting() {
        let layout = ThreadLayout::new(&model()).unwrap();
        let err = layout.thread_addresses(&memory(0, 0)).unwrap_err();
        assert!(
            matches!(&err, Error::Vm(VmError::NotInitialized { what }) if what == "ThreadsSMRSupport::_java_thread_list"),
            "{err:?}"
        );
        assert!(err.to_string().contains("not initialized yet"), "{err}");
    }

    #[test]
    fn a_model_without_the_thread_object_names_it() {
        let vm = VmModel::with_entries(21, &[], &[]);
        assert!(matches!(
            ThreadLayout::new(&vm),
            Err(Error::Vm(VmError::MissingEntry {
                entry: VmEntry::Member { ref ty, ref name }
            })) if ty == "JavaThread" && name == "_threadObj"
        ));
    }
}
