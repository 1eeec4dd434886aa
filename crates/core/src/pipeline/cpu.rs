//! The CPU pipeline (`inspect hot <pid>`, `inspect record <pid>`; Linux, the one OS whose
//! process seam holds single threads: elsewhere [`ThreadSampler::open`] gives
//! [`Error::Unsupported`]): target → VM model (once) →
//! each thread's CPU time from the OS (`process::task_stat`: `schedstat`'s run time and run
//! count) → hold only the threads that run (`process::stop_threads`) → walk them
//! (`threads::dump::walk_at`, a running thread from its registers: no safepoint bias) →
//! release → [`crate::cpu`]'s aggregates → `format::hot_threads`, `format::profile`.
//!
//! A thread that did not run between two reads of its `schedstat` (not running at the first,
//! the same run count and CPU time at the second: [`TaskStat::quiet_until`]) cannot have changed
//! its own frames, so it is walked without being held; a thread that ran is held (ptrace, that
//! thread only) and walked again. A parked thread is never held.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::jvm::Jvm;
use crate::cpu::StackSample;
use crate::error::Error;
use crate::memory::ReadMemory;
use crate::pid::Pid;
use crate::process::{self, TaskStat};
use crate::threads::dump::{self, DumpThread};
use crate::threads::frames::WalkCaches;
use crate::threads::list::ThreadLayout;
use crate::vm::java::JavaReader;
use crate::vm::paged::Paged;

/// The longest a sample waits for the threads it holds to stop.
const SAMPLE_STOP_TIMEOUT: Duration = Duration::from_millis(100);

/// The longest a sample waits for another tracer's hold to end (another `inspect`).
const SAMPLE_WAIT: Duration = Duration::from_secs(1);

/// One Java thread as the sampler tracks it.
#[derive(Debug, Clone)]
struct Tracked {
    /// Its `JavaThread*`.
    address: u64,
    /// Its host thread id (what `/proc` and ptrace use).
    tid: Pid,
    /// `java.lang.Thread.name`.
    name: String,
    /// Its stack, `(Thread::_stack_base, Thread::_stack_size)`: fixed while the thread lives.
    stack: (u64, u64),
    /// The bytes of its `OSThread` a walk reads ([`ThreadLayout::os_thread_span`]).
    os_thread: Option<(u64, u64)>,
}

/// What one sample cost: threads walked, held, and the longest hold.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SampleCost {
    /// Threads walked (held or not).
    pub walked: usize,
    /// Threads held (ptrace) for their walk, each alone.
    pub held: usize,
    /// The longest hold of one thread, from its interrupt to its release; zero when none was
    /// held.
    pub hold: Duration,
}

/// A sampler of one live JVM's Java threads: the VM model read once, the thread list re-read
/// on [`ThreadSampler::refresh`], stacks taken holding only the threads that run.
pub struct ThreadSampler {
    jvm: Jvm,
    layout: ThreadLayout,
    threads: Vec<Tracked>,
    /// Host ids by the JVM's own (a container's pid namespace).
    host_tids: HashMap<Pid, Pid>,
    /// What the last sample's walks learnt of the code and the methods (see [`KeptCaches`]).
    caches: std::cell::RefCell<Option<KeptCaches>>,
    /// The running threads are picked by their state letters, and the busy ones by their run
    /// times, read from files kept open.
    states: process::TaskStates,
    /// Each Java thread's run time (ns) at the last [`ThreadSampler::busy_java_threads`].
    run_times: std::cell::RefCell<HashMap<Pid, u64>>,
    /// Where `CollectedHeap::_total_collections` is (the heap object lives as long as the VM):
    /// one read a sample tells whether the kept caches may still be used.
    total_collections: Option<u64>,
}

/// How long a sampler keeps its walks' caches of code and method data: an nmethod or a class
/// freed (a collection's unloading, JDK ≤ 19's sweeper) and its space reused within that time
/// could name another method in a sample until then.
const CACHE_AGE: Duration = Duration::from_secs(1);

/// At most this many entries are kept from one sample to the next.
const MAX_CACHED: usize = 200_000;

/// A sample's [`WalkCaches`], kept for the next while they cannot describe freed memory: no
/// collection has begun since (`CollectedHeap::_total_collections` unchanged; HotSpot frees
/// nmethods and classes in collections from JDK 20, and unloads classes only in them) and they
/// are younger than [`CACHE_AGE`].
struct KeptCaches {
    caches: WalkCaches,
    since: Instant,
    collections: u32,
}

impl ThreadSampler {
    /// Opens live process `pid` (`Jvm::live`) and lists its Java threads.
    ///
    /// # Errors
    /// [`Error::Unsupported`] where the OS cannot hold single threads (any but Linux); as
    /// [`super::dump_threads`] for the open; [`Error::Vm`] when the thread list's layout
    /// is not in the VM's tables.
    pub fn open(pid: Pid) -> Result<ThreadSampler, Error> {
        process::holds_single_threads()?;
        let jvm = Jvm::live(pid)?;
        let layout = ThreadLayout::new(&jvm.vm)?;
        let total_collections = {
            let vm = &jvm.vm;
            let heap = crate::heap::spaces::collected_heap(vm, jvm.memory()).ok();
            let offset = vm.offset("CollectedHeap", "_total_collections").ok();
            heap.zip(offset).map(|(h, o)| h.wrapping_add(o))
        };
        let mut sampler = ThreadSampler {
            jvm,
            layout,
            threads: Vec::new(),
            host_tids: process::namespace_tids(pid),
            caches: std::cell::RefCell::new(None),
            states: process::TaskStates::new(pid),
            run_times: std::cell::RefCell::new(HashMap::new()),
            total_collections,
        };
        sampler.refresh()?;
        Ok(sampler)
    }

    /// The process's id.
    pub fn pid(&self) -> Pid {
        self.process().pid()
    }

    fn process(&self) -> &process::Process {
        let Some(p) = self.jvm.process() else {
            unreachable!("ThreadSampler opens a live JVM");
        };
        p
    }

    /// Re-reads the thread list (the JVM running: a thread's `JavaThread` and its name do not
    /// move while it lives) and checks the process is the same one.
    ///
    /// # Errors
    /// When the thread list cannot be read; [`Error::ProcessExited`], [`Error::PidReused`].
    pub fn refresh(&mut self) -> Result<(), Error> {
        let paged = Paged::new(self.jvm.memory());
        let (_, addresses) = self.layout.thread_addresses(&paged)?;
        let java = JavaReader::new(&self.jvm.vm, &paged).ok();
        let mut threads = Vec::with_capacity(addresses.len());
        for address in addresses {
            let Ok(t) = self.layout.thread(&paged, address) else {
                continue;
            };
            let Some(tid) = t.os_tid.and_then(|t| Pid::try_from(t).ok()) else {
                continue;
            };
            let name = java
                .as_ref()
                .filter(|_| t.thread_obj != 0)
                .and_then(|j| j.identity(t.thread_obj).ok())
                .map(|i| i.name)
                .unwrap_or_default();
            threads.push(Tracked {
                address,
                tid: self.host_tids.get(&tid).copied().unwrap_or(tid),
                name,
                stack: t.stack,
                os_thread: self.layout.os_thread_span(&paged, address),
            });
        }
        self.threads = threads;
        // The files of threads that ended are closed.
        let tids: Vec<Pid> = self.threads.iter().map(|t| t.tid).collect();
        self.states.keep_only(&tids);
        self.process().check_same()
    }

    /// The Java threads' host ids and names, in list order.
    pub fn java_threads(&self) -> Vec<(Pid, String)> {
        self.threads
            .iter()
            .map(|t| (t.tid, t.name.clone()))
            .collect()
    }

    /// How many threads (Java or not) the process has now, read from a Java thread's kept-open
    /// `stat` file (one read): what tells a recorder to read the thread list again without
    /// listing `/proc/<pid>/task`. `None` when no tracked thread answers (or off Linux).
    pub fn thread_count(&self) -> Option<u64> {
        self.threads
            .iter()
            .find_map(|t| self.states.thread_count(t.tid))
    }

    /// The process's threads (Java or not) now, by host id (`/proc/<pid>/task`).
    ///
    /// # Errors
    /// [`Error::NoSuchProcess`] when the process is gone.
    pub fn tasks(&self) -> Result<Vec<Pid>, Error> {
        process::list_tasks(self.pid())
    }

    /// The Java threads whose CPU time (`schedstat`'s run time, read from files kept open)
    /// moved since the previous call, and those seen for the first time that run (`R`) now, in
    /// list order. What a recorder looks at per sample: a thread that did not run for a second
    /// costs one read a second.
    pub fn busy_java_threads(&self) -> Vec<Pid> {
        let mut last = self.run_times.borrow_mut();
        let mut now = HashMap::with_capacity(self.threads.len());
        let mut busy = Vec::new();
        for t in &self.threads {
            let Some(ns) = self.states.run_time_ns(t.tid) else {
                continue;
            };
            let moved = match last.get(&t.tid) {
                Some(&before) => before != ns,
                None => self.states.state_once(t.tid) == Some(b'R'),
            };
            if moved {
                busy.push(t.tid);
            }
            now.insert(t.tid, ns);
        }
        *last = now;
        busy
    }

    /// Every thread of the process (Java or not) with its [`TaskStat`](crate::TaskStat) now.
    ///
    /// # Errors
    /// [`Error::NoSuchProcess`] when the process is gone.
    pub fn task_stats(&self) -> Result<HashMap<Pid, TaskStat>, Error> {
        let pid = self.pid();
        Ok(process::list_tasks(pid)?
            .into_iter()
            .filter_map(|tid| Some((tid, process::task_stat(pid, tid)?)))
            .collect())
    }

    /// The stacks of the Java threads `tids` (host ids) now, each walked without a hold when it
    /// provably did not run during its walk, else held (that thread alone) and walked again.
    ///
    /// # Errors
    /// As [`super::dump_threads`]'s stop ([`Error::PermissionDenied`], [`Error::AlreadyTraced`]);
    /// [`Error::ProcessExited`], [`Error::PidReused`].
    pub fn stacks(&self, tids: &[Pid]) -> Result<(Vec<StackSample>, SampleCost), Error> {
        let pid = self.pid();
        let wanted: Vec<&Tracked> = self
            .threads
            .iter()
            .filter(|t| tids.contains(&t.tid))
            .collect();
        let tids: Vec<Pid> = wanted.iter().map(|t| t.tid).collect();
        let watch = process::RunWatch::start(pid, &tids);
        // Those not running now: walked unheld first.
        let (quiet, running): (Vec<&Tracked>, Vec<&Tracked>) = wanted
            .iter()
            .partition(|t| watch.first(t.tid).is_some_and(|s| s.state != b'R'));
        let paged = Paged::new(self.jvm.memory());
        let addresses: Vec<u64> = quiet.iter().map(|t| t.address).collect();
        let unheld = dump::walk_at(&self.jvm.vm, &paged, &|_| None, &addresses)?;
        let mut out = Vec::new();
        let mut again: Vec<&Tracked> = running;
        for (t, walked) in quiet.iter().zip(unheld) {
            if watch.quiet(t.tid) {
                out.extend(sample_of(t, walked, false));
            } else {
                again.push(t);
            }
        }
        let mut cost = SampleCost {
            walked: wanted.len(),
            ..SampleCost::default()
        };
        if !again.is_empty() {
            let (held, c) = self.held_stacks(&again)?;
            out.extend(held);
            cost.held = c.held;
            cost.hold = c.hold;
        }
        Ok((out, cost))
    }

    /// The stacks of the Java threads `tids` that are running (`R`) now, each held (that
    /// thread alone) for its walk: a sampling profiler's sample. Threads not running cost one
    /// `stat` read each and are not walked.
    ///
    /// # Errors
    /// As [`ThreadSampler::stacks`].
    pub fn running_stacks(&self, tids: &[Pid]) -> Result<(Vec<StackSample>, SampleCost), Error> {
        let running: Vec<&Tracked> = self
            .threads
            .iter()
            .filter(|t| tids.contains(&t.tid))
            .filter(|t| self.states.state(t.tid) == Some(b'R'))
            .collect();
        if running.is_empty() {
            return Ok((Vec::new(), SampleCost::default()));
        }
        self.held_stacks(&running)
    }

    /// Holds each of `threads` alone, one after another, for its walk: a thread is stopped only
    /// while its own registers, `JavaThread` and stack are read, never while another thread is
    /// walked. The code and method data the walks read (what does not change while the code
    /// runs) is read once for all of them (one page cache, one [`dump::ThreadWalk`]).
    fn held_stacks(&self, threads: &[&Tracked]) -> Result<(Vec<StackSample>, SampleCost), Error> {
        let paged = Paged::new(self.jvm.memory());
        let collections = self
            .total_collections
            .and_then(|at| paged.read_u32(at).ok());
        let kept = self.caches.take().filter(|k| {
            Some(k.collections) == collections
                && k.since.elapsed() < CACHE_AGE
                && k.caches.len() < MAX_CACHED
        });
        let (caches, since) = kept.map_or_else(
            || (WalkCaches::default(), Instant::now()),
            |k| (k.caches, k.since),
        );
        let mut walk = dump::ThreadWalk::frames_only(&self.jvm.vm, &paged, caches)?;
        let host = &self.host_tids;
        let mut out = Vec::with_capacity(threads.len());
        let mut cost = SampleCost {
            walked: threads.len(),
            ..SampleCost::default()
        };
        for t in threads {
            let began = Instant::now();
            let stopped = match super::live::stop_threads_when_free(
                self.process(),
                &[t.tid],
                SAMPLE_STOP_TIMEOUT,
                SAMPLE_WAIT,
            ) {
                Ok(s) => s,
                // The thread ended since the list was read: no sample of it.
                Err(Error::NoSuchProcess(_)) if self.states.state(t.tid).is_none() => continue,
                Err(e) => return Err(e),
            };
            // Its `JavaThread`, the used part of its stack and its `OSThread`'s fields, in one
            // read: read afresh (the page cache may hold the `JavaThread`'s pages from an
            // earlier thread's walk, two `JavaThread`s can share a page, and this thread ran
            // since).
            paged.forget(t.address, self.layout.size());
            let registers = stopped.registers(t.tid);
            let mut ranges = vec![(t.address, t.address.saturating_add(self.layout.size()))];
            ranges.extend(registers.and_then(|r| dump::stack_in_use(t.stack, r.sp)));
            ranges.extend(t.os_thread);
            paged.focus(&ranges);
            let walked = walk.thread(t.address, &|tid| {
                registers.filter(|_| host.get(&tid).copied().unwrap_or(tid) == t.tid)
            });
            paged.focus(&[]);
            let held = stopped.not_stopped().is_empty();
            let report = stopped.release();
            if held {
                cost.held += 1;
                cost.hold = cost.hold.max(report.stopped_for.min(began.elapsed()));
            }
            out.extend(sample_of(t, walked, held));
        }
        if let Some(collections) = collections {
            self.caches.replace(Some(KeptCaches {
                caches: walk.into_caches(),
                since,
                collections,
            }));
        }
        Ok((out, cost))
    }
}

/// A walked thread as a sample, when it is the thread tracked (its `JavaThread` not reused by
/// another thread since the list was read).
fn sample_of(t: &Tracked, walked: DumpThread, held: bool) -> Option<StackSample> {
    let same = walked
        .vm
        .os_tid
        .is_some_and(|id| walked.vm.address == t.address && id > 0);
    same.then(|| StackSample {
        tid: t.tid,
        name: t.name.clone(),
        frames: walked.frames,
        held,
        notes: walked.notes,
    })
}

/// A thread's OS name (`/proc/<pid>/task/<tid>/comm`): what names a thread that is not a Java
/// thread (a GC worker, the VM thread). `None` when it is gone.
pub fn os_thread_name(pid: Pid, tid: Pid) -> Option<String> {
    process::thread_name(pid, tid)
}
