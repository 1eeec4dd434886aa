//! Unmounted virtual threads (JDK 21+, `inspect threads --virtual`): the virtual threads that
//! no carrier runs, found where `jcmd <pid> Thread.dump_to_file` finds them, and their frames
//! read from the heap copies of their stacks.
//!
//! * **Where they are** (`jdk/internal/vm/ThreadContainers.java`, `ThreadPerTaskExecutor.java`):
//!   with `jdk.trackAllThreads` (the default) the root container keeps every virtual thread
//!   started directly in `ThreadContainers$RootContainer$TrackingRootContainer.VTHREADS`; an
//!   executor's (`Executors.newVirtualThreadPerTaskExecutor`) are in its `threads` set, a
//!   thread pool's in its `SharedThreadContainer`'s `virtualThreads`, and those containers are
//!   in `ThreadContainers.CONTAINER_REGISTRY` (a set of `WeakReference`s). Each set
//!   is a `ConcurrentHashMap.KeySetView`: the map's `table` of `Node`s (`key`, `next`), a bin
//!   of a tree a `TreeBin` (`first`, then `next`), a bin moved by a resize a
//!   `ForwardingNode` (`nextTable`, walked too). The classes are found by name in the boot
//!   class loader's list (`ClassLoaderData::_the_null_class_loader_data`, `_klasses`,
//!   `Klass::_next_link`); their static fields are read from their mirrors.
//! * **What each is** (`java/lang/VirtualThread.java`): `state` (named by the class's own
//!   `static final int` constants, `NEW` … `TERMINATED`, the `SUSPENDED` bit taken off),
//!   `carrierThread` (not null: mounted, and printed under its carrier instead), `cont`, a
//!   `Continuation` whose `tail` is the youngest `StackChunk` (`parent` the older ones). A
//!   chunk's frames lie from `sp` to `bottom` (words) of the stack that follows its fields
//!   (`InstanceStackChunkKlass::offset_of_stack`: the class's instance size); they are walked
//!   by [`Walker::walk_chunk`].
//! * As `Thread.dump_to_file`, threads not alive (`NEW`, `TERMINATED`) are left out.
//!
//! Every count is bounded: the sets' tables, their chains, the chunks and the classes walked.

use std::collections::{HashMap, HashSet};

use super::frames::{Frame, FrameKind, Walker};
use crate::error::{Error, VmError};
use crate::memory::ReadMemory;
use crate::vm::VmModel;
use crate::vm::java::JavaReader;

/// The most virtual threads read (also the most keys read from one set).
pub const MAX_VIRTUAL_THREADS: usize = 1 << 21;
/// The largest `ConcurrentHashMap` table read (elements).
const MAX_TABLE: usize = 1 << 23;
/// The most classes of the boot class loader looked at.
const MAX_CLASSES: usize = 1 << 20;
/// The most class loaders looked at when the boot loader's data is not exported.
const MAX_LOADERS: usize = 1 << 16;
/// The most stack chunks of one virtual thread walked.
const MAX_CHUNKS: usize = 256;
/// The most nodes of one bin followed.
const MAX_CHAIN: usize = 1 << 16;
/// The most containers of `CONTAINER_REGISTRY` read.
const MAX_CONTAINERS: usize = 1 << 16;

/// One virtual thread no carrier runs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UnmountedVirtualThread {
    /// `Thread.tid` (`#N`).
    pub tid: i64,
    /// `Thread.name` (often empty).
    pub name: String,
    /// `VirtualThread.state` by its constant's name (`PARKED`, `TIMED_PARKED`, `STARTED`,
    /// `YIELDED`, ... ), with `SUSPENDED` when that bit is set.
    pub vthread_state: String,
    /// The `java.lang.Thread.State` line it maps to, as `VirtualThread.threadState()` maps it
    /// (`WAITING (parking)`, `RUNNABLE`, ...).
    pub thread_state: String,
    /// The `VirtualThread`'s address.
    pub address: u64,
    /// Its frames, innermost first, from its stack chunks (empty: never run yet, or the walk
    /// stopped at once; see `note`): indices into [`VirtualThreads::frames`] (thousands of
    /// threads share most frames; 200,000 threads' own copies took a gigabyte).
    pub frames: Vec<u32>,
    /// Why its frames are incomplete, if they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The virtual threads of a JVM that no carrier runs.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct VirtualThreads {
    /// Every distinct frame of the threads below, which refer to them by index.
    pub frames: Vec<Frame>,
    /// The unmounted ones, by `tid`.
    pub threads: Vec<UnmountedVirtualThread>,
    /// Virtual threads found mounted (printed under their carriers).
    pub mounted: usize,
    /// Virtual threads in the sets that are not alive (`NEW`, `TERMINATED`), left out.
    pub not_alive: usize,
    /// Thread containers read: the root container and the registered ones with a `threads` set.
    pub containers: usize,
    /// What could not be read, each a sentence (a container of an unknown kind, a thread
    /// whose fields could not be read).
    pub notes: Vec<String>,
}

/// The distinct frames of the virtual threads, interned: a frame of a chunk is the same frame
/// in every thread that has it when its method, bci, line, kind and mark are (its monitors are
/// not read, [`Walker::walk_chunk`]).
/// What makes two chunk frames the same: `Method*`, bci, line, kind, mark.
type FrameKey = (u64, Option<i32>, Option<i32>, FrameKind, Option<String>);

#[derive(Default)]
struct FrameTable {
    frames: Vec<Frame>,
    index: HashMap<FrameKey, u32>,
}

impl FrameTable {
    fn intern(&mut self, f: Frame) -> u32 {
        let key = (f.method_address, f.bci, f.line, f.kind, f.mark.clone());
        *self.index.entry(key).or_insert_with(|| {
            self.frames.push(f);
            (self.frames.len() - 1) as u32
        })
    }
}

/// The `Klass*`es the read starts from.
struct Classes {
    containers: u64,
    tracking_root: Option<u64>,
    virtual_thread: u64,
    stack_chunk: u64,
}

/// Finds boot classes by internal name among the classes of the boot class loader
/// (`ClassLoaderData::_the_null_class_loader_data`), or of every loader
/// (`ClassLoaderDataGraph::_head`, `ClassLoaderData::_next`) when the former is not exported.
pub(crate) fn find_classes(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    java: &JavaReader<'_>,
    names: &[&str],
) -> Result<HashMap<String, u64>, Error> {
    let rd = |a: u64, what: &str| mem.read_u64(a).map_err(|e| Error::memory(what, e));
    let klasses = vm.offset("ClassLoaderData", "_klasses")?;
    let next_link = vm.offset("Klass", "_next_link")?;
    let loaders: Vec<u64> =
        match vm.static_address("ClassLoaderData", "_the_null_class_loader_data") {
            Ok(at) => vec![rd(at, "ClassLoaderData::_the_null_class_loader_data")?],
            Err(_) => {
                let next = vm.offset("ClassLoaderData", "_next")?;
                let mut cld = rd(
                    vm.static_address("ClassLoaderDataGraph", "_head")?,
                    "ClassLoaderDataGraph::_head",
                )?;
                let mut out = Vec::new();
                while cld != 0 && out.len() < MAX_LOADERS {
                    out.push(cld);
                    cld = rd(cld.wrapping_add(next), "ClassLoaderData::_next")?;
                }
                out
            }
        };
    let mut found = HashMap::new();
    let mut seen = 0usize;
    for cld in loaders {
        let mut k = rd(cld.wrapping_add(klasses), "ClassLoaderData::_klasses")?;
        while k != 0 {
            seen += 1;
            if seen > MAX_CLASSES {
                return Err(VmError::Unterminated {
                    what: "the boot class loader's class list".into(),
                    unit: "classes",
                    max: MAX_CLASSES as u64,
                }
                .into());
            }
            let name = java.name_of_klass(k)?;
            if names.contains(&name.as_str()) {
                found.entry(name).or_insert(k);
                if found.len() == names.len() {
                    return Ok(found);
                }
            }
            k = rd(k.wrapping_add(next_link), "Klass::_next_link")?;
        }
    }
    Ok(found)
}

/// The keys of the `ConcurrentHashMap` at `map` (`java/util/concurrent/ConcurrentHashMap.java`),
/// at most `max`.
fn map_keys(java: &JavaReader<'_>, map: u64, max: usize) -> Result<Vec<u64>, Error> {
    let (map_klass, _) = java.class_of(map)?;
    let table_at = java.field_in(
        map_klass,
        "table",
        "[Ljava/util/concurrent/ConcurrentHashMap$Node;",
    )?;
    let mut tables =
        vec![java.reference_at(map.wrapping_add(table_at), "ConcurrentHashMap.table")?];
    let mut seen_tables = HashSet::new();
    let mut seen_nodes = HashSet::new();
    let mut keys = Vec::new();
    // Offsets by node class: key and next (Node), first (TreeBin), nextTable (ForwardingNode).
    let mut kinds: HashMap<u64, NodeKind> = HashMap::new();
    while let Some(table) = tables.pop() {
        if table == 0 || !seen_tables.insert(table) || seen_tables.len() > 4 {
            continue;
        }
        for bin in java.object_array(table, MAX_TABLE)? {
            let mut node = bin;
            let mut chain = 0usize;
            while node != 0 {
                chain += 1;
                if chain > MAX_CHAIN || !seen_nodes.insert(node) {
                    break;
                }
                let (klass, name) = java.class_of(node)?;
                let kind = match kinds.get(&klass) {
                    Some(k) => *k,
                    None => {
                        let k = NodeKind::of(java, klass, &name)?;
                        kinds.insert(klass, k);
                        k
                    }
                };
                node = match kind {
                    NodeKind::Node { key, next } => {
                        let k = java
                            .reference_at(node.wrapping_add(key), "ConcurrentHashMap.Node.key")?;
                        if k != 0 {
                            if keys.len() >= max {
                                return Err(VmError::Bound {
                                    what: "a thread set's size".into(),
                                    count: keys.len() as u64 + 1,
                                    max: max as u64,
                                }
                                .into());
                            }
                            keys.push(k);
                        }
                        java.reference_at(node.wrapping_add(next), "ConcurrentHashMap.Node.next")?
                    }
                    NodeKind::TreeBin { first } => java.reference_at(
                        node.wrapping_add(first),
                        "ConcurrentHashMap.TreeBin.first",
                    )?,
                    NodeKind::Forwarding { next_table } => {
                        tables.push(java.reference_at(
                            node.wrapping_add(next_table),
                            "ConcurrentHashMap.ForwardingNode.nextTable",
                        )?);
                        0
                    }
                };
            }
        }
    }
    Ok(keys)
}

/// What a `ConcurrentHashMap` bin's node is, with the offsets it is read at.
#[derive(Debug, Clone, Copy)]
enum NodeKind {
    Node { key: u64, next: u64 },
    TreeBin { first: u64 },
    Forwarding { next_table: u64 },
}

impl NodeKind {
    fn of(java: &JavaReader<'_>, klass: u64, name: &str) -> Result<Self, Error> {
        const NODE: &str = "Ljava/util/concurrent/ConcurrentHashMap$Node;";
        Ok(match name {
            "java/util/concurrent/ConcurrentHashMap$TreeBin" => NodeKind::TreeBin {
                first: java.field_in(
                    klass,
                    "first",
                    "Ljava/util/concurrent/ConcurrentHashMap$TreeNode;",
                )?,
            },
            "java/util/concurrent/ConcurrentHashMap$ForwardingNode" => NodeKind::Forwarding {
                next_table: java.field_in(
                    klass,
                    "nextTable",
                    "[Ljava/util/concurrent/ConcurrentHashMap$Node;",
                )?,
            },
            "java/util/concurrent/ConcurrentHashMap$Node"
            | "java/util/concurrent/ConcurrentHashMap$TreeNode" => NodeKind::Node {
                key: java.field_in(klass, "key", "Ljava/lang/Object;")?,
                next: java.field_in(klass, "next", NODE)?,
            },
            other => {
                return Err(VmError::WrongClass {
                    what: "a ConcurrentHashMap bin's node".into(),
                    expected: "java/util/concurrent/ConcurrentHashMap$Node".into(),
                    found: Some(other.to_owned()),
                }
                .into());
            }
        })
    }
}

/// The members of the `Set` at `set`: a `ConcurrentHashMap.KeySetView`'s map's keys.
fn set_members(java: &JavaReader<'_>, set: u64, max: usize) -> Result<Vec<u64>, Error> {
    if set == 0 {
        return Ok(Vec::new());
    }
    let (klass, name) = java.class_of(set)?;
    if name != "java/util/concurrent/ConcurrentHashMap$KeySetView" {
        return Err(VmError::WrongClass {
            what: "a thread set".into(),
            expected: "java/util/concurrent/ConcurrentHashMap$KeySetView".into(),
            found: Some(name),
        }
        .into());
    }
    let map = java.reference_at(
        set.wrapping_add(java.field_in(
            klass,
            "map",
            "Ljava/util/concurrent/ConcurrentHashMap;",
        )?),
        "KeySetView.map",
    )?;
    map_keys(java, map, max)
}

/// The thread set of a registered container (`ThreadPerTaskExecutor.threads`,
/// `SharedThreadContainer.virtualThreads` (a thread pool's, made when its first virtual thread
/// starts), or a `ThreadFlock`'s `threads` through its container's `flock`), when it has one.
fn container_threads(java: &JavaReader<'_>, container: u64) -> Result<Option<u64>, Error> {
    let (klass, _) = java.class_of(container)?;
    for field in ["threads", "virtualThreads"] {
        if let Ok(at) = java.field_in(klass, field, "Ljava/util/Set;") {
            return Ok(Some(java.reference_at(
                container.wrapping_add(at),
                "a container's threads",
            )?));
        }
    }
    if let Ok(at) = java.field_in(klass, "flock", "Ljdk/internal/misc/ThreadFlock;") {
        let flock = java.reference_at(container.wrapping_add(at), "a container's flock")?;
        if flock != 0 {
            let (fk, _) = java.class_of(flock)?;
            let t = java.field_in(fk, "threads", "Ljava/util/Set;")?;
            return Ok(Some(
                java.reference_at(flock.wrapping_add(t), "ThreadFlock.threads")?,
            ));
        }
    }
    Ok(None)
}

/// `VirtualThread.state`'s name and the `java.lang.Thread.State` it stands for
/// (`VirtualThread.threadState()`); `suspended` is the `SUSPENDED` bit's value.
fn state_names(value: i32, constants: &[(String, i32)], suspended: i32) -> (String, String) {
    let base = if suspended > 0 {
        value & !suspended
    } else {
        value
    };
    let name = constants
        .iter()
        .find(|(n, v)| *v == base && n != "SUSPENDED" && n != "TRACE_PINNING_MODE")
        .map(|(n, _)| n.clone());
    let thread_state = match name.as_deref() {
        Some("NEW") => "NEW",
        Some("PARKED" | "PINNED") => "WAITING (parking)",
        Some("TIMED_PARKED" | "TIMED_PINNED") => "TIMED_WAITING (parking)",
        Some("BLOCKED") => "BLOCKED (on object monitor)",
        Some("WAITING" | "WAIT") => "WAITING (on object monitor)",
        Some("TIMED_WAITING" | "TIMED_WAIT") => "TIMED_WAITING (on object monitor)",
        Some("TERMINATED") => "TERMINATED",
        Some(_) => "RUNNABLE",
        None => "UNKNOWN",
    };
    let mut name = name.unwrap_or_else(|| format!("state {base}"));
    if suspended > 0 && value & suspended != 0 {
        name.push_str(" SUSPENDED");
    }
    (name, thread_state.to_string())
}

/// Reads the virtual threads of the VM `vm` through `mem` that no carrier runs; `mounted` holds
/// the ids of those the platform dump found mounted (skipped, as is any with a
/// `carrierThread`). The target must be held (or be a core): the sets are read as they are.
///
/// # Errors
/// [`Error::Vm`] before JDK 21, or when the classes, the sets or
/// the fields are not as expected (a JVM that never started a thread container, or
/// `-Djdk.trackAllThreads=false` with no registered container, gives an empty result and a
/// note instead); [`Error::Memory`] when a set cannot be read.
pub fn unmounted(
    vm: &VmModel,
    mem: &dyn ReadMemory,
    mounted: &HashSet<i64>,
) -> Result<VirtualThreads, Error> {
    if vm.major < 21 {
        return Err(VmError::Unsupported {
            what: "virtual threads",
            since: 21,
            major: vm.major,
        }
        .into());
    }
    let java = JavaReader::new(vm, mem)?;
    let mut walker = Walker::new(vm, mem)?;
    const CONTAINERS: &str = "jdk/internal/vm/ThreadContainers";
    const TRACKING: &str = "jdk/internal/vm/ThreadContainers$RootContainer$TrackingRootContainer";
    const VTHREAD: &str = "java/lang/VirtualThread";
    const CHUNK: &str = "jdk/internal/vm/StackChunk";
    let found = find_classes(vm, mem, &java, &[CONTAINERS, TRACKING, VTHREAD, CHUNK])?;
    let mut out = VirtualThreads::default();
    let (Some(&containers), Some(&virtual_thread), Some(&stack_chunk)) =
        (found.get(CONTAINERS), found.get(VTHREAD), found.get(CHUNK))
    else {
        out.notes.push(
            "no virtual thread has been started: the JVM has not loaded ThreadContainers, VirtualThread and StackChunk"
                .into(),
        );
        return Ok(out);
    };
    let classes = Classes {
        containers,
        tracking_root: found.get(TRACKING).copied(),
        virtual_thread,
        stack_chunk,
    };
    // The candidates, from the root container and every registered one.
    let mut candidates: Vec<u64> = Vec::new();
    match classes.tracking_root {
        Some(root) => {
            let set = java.static_reference(root, "VTHREADS", "Ljava/util/Set;")?;
            candidates.extend(set_members(&java, set, MAX_VIRTUAL_THREADS)?);
            out.containers += 1;
        }
        None => out.notes.push(
            "the root container does not track virtual threads (-Djdk.trackAllThreads=false): only those in registered containers are found"
                .into(),
        ),
    }
    let registry =
        java.static_reference(classes.containers, "CONTAINER_REGISTRY", "Ljava/util/Set;")?;
    let refs = set_members(&java, registry, MAX_CONTAINERS)?;
    for weak in refs {
        let (rk, _) = java.class_of(weak)?;
        let container = java.reference_at(
            weak.wrapping_add(java.field_in(rk, "referent", "Ljava/lang/Object;")?),
            "Reference.referent",
        )?;
        if container == 0 {
            continue; // collected
        }
        match container_threads(&java, container) {
            Ok(Some(set)) => {
                candidates.extend(set_members(&java, set, MAX_VIRTUAL_THREADS)?);
                out.containers += 1;
            }
            Ok(None) => {
                let (_, name) = java.class_of(container)?;
                out.notes.push(format!(
                    "a registered thread container of class {} has no threads set: its threads are not listed",
                    crate::vm::java::external_name(&name)
                ));
            }
            Err(e) => out
                .notes
                .push(format!("a registered thread container not read: {e}")),
        }
        if candidates.len() > MAX_VIRTUAL_THREADS {
            return Err(VmError::Bound {
                what: "the threads in the thread containers".into(),
                count: candidates.len() as u64,
                max: MAX_VIRTUAL_THREADS as u64,
            }
            .into());
        }
    }
    let constants = java.int_constants(classes.virtual_thread)?;
    let suspended = constants
        .iter()
        .find(|(n, _)| n == "SUSPENDED")
        .map_or(0, |(_, v)| *v);
    let chunk_stack = java.instance_size(classes.stack_chunk)?;
    let vt = classes.virtual_thread;
    let state_at = java.field_in(vt, "state", "I")?;
    let carrier_at = java.field_in(vt, "carrierThread", "Ljava/lang/Thread;")?;
    let cont_at = java.field_in(vt, "cont", "Ljdk/internal/vm/Continuation;")?;
    let cont_klass = continuation_class(&java, classes.virtual_thread, cont_at, &candidates)?;
    let mut seen = HashSet::new();
    let mut table = FrameTable::default();
    for oop in candidates {
        if !seen.insert(oop) {
            continue;
        }
        let (klass, _) = java.class_of(oop)?;
        if !java.extends(klass, vt)? {
            continue; // a platform thread of an executor: in the platform dump
        }
        let tid = java.thread_id(oop)?;
        let state = java.int_at(oop.wrapping_add(state_at), "VirtualThread.state")?;
        let (vthread_state, thread_state) = state_names(state, &constants, suspended);
        if thread_state == "NEW" || thread_state == "TERMINATED" {
            out.not_alive += 1;
            continue;
        }
        let carrier =
            java.reference_at(oop.wrapping_add(carrier_at), "VirtualThread.carrierThread")?;
        if carrier != 0 || mounted.contains(&tid) {
            out.mounted += 1;
            continue;
        }
        let mut t = UnmountedVirtualThread {
            tid,
            name: java
                .thread_name(oop)
                .unwrap_or_else(|e| format!("<name not read: {e}>")),
            vthread_state,
            thread_state,
            address: oop,
            frames: Vec::new(),
            note: None,
        };
        if let Err(e) = chunk_frames(
            &java,
            &mut walker,
            oop.wrapping_add(cont_at),
            cont_klass,
            chunk_stack,
            &mut t,
            &mut table,
        ) {
            t.note = Some(format!("frames not read: {e}"));
        }
        out.threads.push(t);
    }
    out.threads.sort_by_key(|t| t.tid);
    out.frames = table.frames;
    let mut modules = crate::vm::java::ModuleNames::default();
    for f in &mut out.frames {
        f.module = modules.of_klass(&java, f.holder);
    }
    Ok(out)
}

/// The class of the `Continuation` the virtual threads hold (for its `tail` offset): read from
/// the first candidate that has one.
fn continuation_class(
    java: &JavaReader<'_>,
    vt: u64,
    cont_at: u64,
    candidates: &[u64],
) -> Result<Option<u64>, Error> {
    for &oop in candidates.iter().take(64) {
        let (klass, _) = java.class_of(oop)?;
        if !java.extends(klass, vt)? {
            continue;
        }
        let cont = java.reference_at(oop.wrapping_add(cont_at), "VirtualThread.cont")?;
        if cont != 0 {
            return Ok(Some(java.class_of(cont)?.0));
        }
    }
    Ok(None)
}

/// Fills `t`'s frames from the stack chunks of the continuation referenced at `cont_field`.
fn chunk_frames(
    java: &JavaReader<'_>,
    walker: &mut Walker<'_>,
    cont_field: u64,
    cont_klass: Option<u64>,
    stack_offset: u64,
    t: &mut UnmountedVirtualThread,
    table: &mut FrameTable,
) -> Result<(), Error> {
    let cont = java.reference_at(cont_field, "VirtualThread.cont")?;
    let Some(ck) = cont_klass.filter(|_| cont != 0) else {
        return Ok(());
    };
    let mut chunk = java.reference_at(
        cont.wrapping_add(java.field_in(ck, "tail", "Ljdk/internal/vm/StackChunk;")?),
        "Continuation.tail",
    )?;
    let mut chunk_fields: Option<(u64, u64, u64, u64)> = None;
    for _ in 0..MAX_CHUNKS {
        if chunk == 0 {
            return Ok(());
        }
        let (sp_at, bottom_at, size_at, parent_at) = match chunk_fields {
            Some(f) => f,
            None => {
                let (k, _) = java.class_of(chunk)?;
                let f = (
                    java.field_in(k, "sp", "I")?,
                    java.field_in(k, "bottom", "I")?,
                    java.field_in(k, "size", "I")?,
                    java.field_in(k, "parent", "Ljdk/internal/vm/StackChunk;")?,
                );
                chunk_fields = Some(f);
                f
            }
        };
        let sp = java.int_at(chunk.wrapping_add(sp_at), "StackChunk.sp")?;
        let bottom = java.int_at(chunk.wrapping_add(bottom_at), "StackChunk.bottom")?;
        let size = java.int_at(chunk.wrapping_add(size_at), "StackChunk.size")?;
        if sp < 0 || bottom < sp || size < bottom || size > 1 << 24 {
            return Err(VmError::Implausible {
                what: format!("stack chunk at {chunk:#x}").into(),
                detail: format!("sp {sp}, bottom {bottom}, size {size}"),
            }
            .into());
        }
        if sp < bottom {
            let start = chunk.wrapping_add(stack_offset);
            let (frames, why) = walker.walk_chunk(
                start.wrapping_add(8 * sp as u64),
                start.wrapping_add(8 * bottom as u64),
            );
            t.frames.extend(frames.into_iter().map(|f| table.intern(f)));
            if let Some(why) = why {
                t.note = Some(why);
                return Ok(());
            }
        }
        chunk = java.reference_at(chunk.wrapping_add(parent_at), "StackChunk.parent")?;
    }
    t.note = Some(format!("stopped after {MAX_CHUNKS} stack chunks"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JDK 25's `VirtualThread` constants (JDK 21's are a prefix of them).
    fn constants() -> Vec<(String, i32)> {
        [
            ("NEW", 0),
            ("STARTED", 1),
            ("RUNNING", 2),
            ("PARKING", 3),
            ("PARKED", 4),
            ("PINNED", 5),
            ("TIMED_PARKING", 6),
            ("TIMED_PARKED", 7),
            ("TIMED_PINNED", 8),
            ("UNPARKED", 9),
            ("YIELDING", 10),
            ("YIELDED", 11),
            ("BLOCKING", 12),
            ("BLOCKED", 13),
            ("UNBLOCKED", 14),
            ("WAITING", 15),
            ("WAIT", 16),
            ("TIMED_WAITING", 17),
            ("TIMED_WAIT", 18),
            ("TERMINATED", 99),
            ("SUSPENDED", 256),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect()
    }

    #[test]
    fn states_are_named_by_the_class_constants_and_mapped_as_thread_state_maps_them() {
        let c = constants();
        let name = |v| state_names(v, &c, 256);
        assert_eq!(name(4), ("PARKED".into(), "WAITING (parking)".into()));
        assert_eq!(
            name(7),
            ("TIMED_PARKED".into(), "TIMED_WAITING (parking)".into())
        );
        assert_eq!(name(1), ("STARTED".into(), "RUNNABLE".into()));
        assert_eq!(
            name(13),
            ("BLOCKED".into(), "BLOCKED (on object monitor)".into())
        );
        assert_eq!(
            name(16),
            ("WAIT".into(), "WAITING (on object monitor)".into())
        );
        assert_eq!(name(99), ("TERMINATED".into(), "TERMINATED".into()));
        assert_eq!(
            name(4 | 256),
            ("PARKED SUSPENDED".into(), "WAITING (parking)".into())
        );
        assert_eq!(name(42), ("state 42".into(), "UNKNOWN".into()));
    }
}
