//! JDK 8's names of VM-anonymous classes (lambda proxies, `LambdaForm$MH`s, any
//! `Unsafe.defineAnonymousClass`): `Klass::external_name` (`oops/klass.cpp`, jdk8u) appends `/`
//! and the identity hash of the class's mirror, `Knots8$$Lambda$11/1452126962`. (JDK 9–14
//! append `/0x<Klass*>`, told by `InstanceKlass::_misc_flags`: see `frames.rs`.)
//!
//! * **Which classes are anonymous.** JDK 8's vmStructs (`runtime/vmStructs.cpp`) exports
//!   neither `InstanceKlass::_misc_flags` (nor its `_misc_is_anonymous` bit) nor
//!   `ClassLoaderData::_is_anonymous`; it does export `InstanceKlass::_class_loader_data`,
//!   `ClassLoaderData::_class_loader` and `_next`, and `ClassLoaderDataGraph::_head`. Each
//!   anonymous class gets a `ClassLoaderData` of its own with its host's loader
//!   (`SystemDictionary::parse_stream`, `classfile/systemDictionary.cpp`, calls
//!   `ClassLoaderData::anonymous_class_loader_data`, `classfile/classLoaderData.cpp`), pushed on
//!   the graph's head (`ClassLoaderDataGraph::add`). A loader has one CLD of its own (`add`
//!   installs it in the loader with a compare-and-swap first), in the graph before any
//!   anonymous class of that loader (the host was defined by it); the boot loader's is the
//!   graph's first, hence its tail (`init_null_class_loader_data`, `classLoaderData.hpp`).
//!   So a class is anonymous exactly when its CLD is in the graph but is not, among the CLDs of
//!   its loader, the one nearest the tail.
//! * **The hash** (`oops/markOop.hpp`, `oops/oop.inline.hpp` `oopDesc::identity_hash`,
//!   `runtime/synchronizer.cpp` `ObjectSynchronizer::FastHashCode`): the mirror's
//!   (`Klass::_java_mirror`) mark word holds it (31 bits at `markOopDesc::hash_shift`, 8 on
//!   64-bit) when neutral; when stack-locked (lock bits `locked_value`) in the `BasicLock`'s
//!   `_displaced_header` the mark points to; when inflated (`monitor_value`) in the
//!   `ObjectMonitor`'s `_header`. A biased mark has none. No hash (0) means the class was never
//!   printed nor hashed: jcmd would install a fresh random one, unknowable from outside, and
//!   the name is printed without a suffix.

use std::collections::HashMap;

use crate::memory::ReadMemory;
use crate::vm::VmModel;

/// The most `ClassLoaderData`s walked (one per loader plus one per anonymous class).
const MAX_CLDS: usize = 1 << 20;

/// JDK 8's mark word constants (`markOopDesc`, `oops/markOop.hpp`; long constants in
/// `gHotSpotVMLongConstants`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkBits {
    /// `markOopDesc::hash_shift` (8 on 64-bit).
    pub hash_shift: u32,
    /// `markOopDesc::hash_mask` (31 bits on 64-bit).
    pub hash_mask: u64,
    /// `markOopDesc::lock_mask_in_place` (3).
    pub lock_mask: u64,
    /// `markOopDesc::biased_lock_mask_in_place` (7).
    pub biased_mask: u64,
    /// `markOopDesc::biased_lock_pattern` (5).
    pub biased_pattern: u64,
    /// `markOopDesc::locked_value` (0: stack-locked, the mark is a `BasicLock*`).
    pub locked: u64,
    /// `markOopDesc::unlocked_value` (1: neutral).
    pub unlocked: u64,
    /// `markOopDesc::monitor_value` (2: inflated, the mark is an `ObjectMonitor*` plus 2).
    pub monitor: u64,
}

impl MarkBits {
    /// The constants from `vm`'s long constants, when all are there and plausible.
    pub fn read(vm: &VmModel) -> Option<Self> {
        let l = |n: &str| vm.long(&format!("markOopDesc::{n}")).ok();
        let bits = MarkBits {
            hash_shift: u32::try_from(l("hash_shift")?).ok()?,
            hash_mask: l("hash_mask")?,
            lock_mask: l("lock_mask_in_place")?,
            biased_mask: l("biased_lock_mask_in_place")?,
            biased_pattern: l("biased_lock_pattern")?,
            locked: l("locked_value")?,
            unlocked: l("unlocked_value")?,
            monitor: l("monitor_value")?,
        };
        (bits.hash_shift < 64
            && bits.hash_mask != 0
            && bits.hash_mask <= u64::from(u32::MAX)
            && bits.lock_mask < 8
            && bits.biased_mask < 8)
            .then_some(bits)
    }

    /// The identity hash an object's `mark` word holds, as `oopDesc::identity_hash` would
    /// return it without installing one: from the mark itself when neutral, from the
    /// displaced header (`BasicLock::_displaced_header` at `displaced`) when stack-locked, from
    /// `ObjectMonitor::_header` (at `header`) when inflated; `read` reads a word of the
    /// target. `None` when there is none yet (0, or a biased or GC-marked mark) or the word
    /// cannot be read.
    pub fn identity_hash(
        &self,
        mark: u64,
        displaced: u64,
        header: u64,
        read: impl FnOnce(u64) -> Option<u64>,
    ) -> Option<u32> {
        if mark & self.biased_mask == self.biased_pattern {
            return None;
        }
        let lock = mark & self.lock_mask;
        let neutral = if lock == self.unlocked {
            mark
        } else if lock == self.monitor || lock == self.locked {
            let (at, offset) = if lock == self.monitor {
                (mark ^ self.monitor, header)
            } else {
                (mark, displaced)
            };
            if at == 0 || at % 8 != 0 {
                return None;
            }
            read(at.checked_add(offset)?)?
        } else {
            return None;
        };
        if neutral & self.biased_mask != self.unlocked {
            return None;
        }
        let hash = (neutral >> self.hash_shift) & self.hash_mask;
        u32::try_from(hash).ok().filter(|&h| h != 0)
    }
}

/// Tells JDK 8's VM-anonymous classes and reads their mirror's identity hash (the module's
/// doc says from what). One per dump: the graph of class loader data is read once, when first
/// needed.
pub struct AnonymousNames {
    ik_cld: u64,
    cld_loader: u64,
    cld_next: u64,
    graph_head: u64,
    mirror: u64,
    mark: u64,
    displaced: u64,
    header: u64,
    bits: MarkBits,
    /// The graph once read: each CLD's loader, and each loader's own CLD (`None`: the graph
    /// could not be read, so no class is known to be anonymous).
    graph: Option<Option<Graph>>,
}

struct Graph {
    loader_of: HashMap<u64, u64>,
    own: HashMap<u64, u64>,
}

impl AnonymousNames {
    /// The entries from `vm`, for JDK 8 only (`None` for other JDKs or when one is missing).
    pub fn new(vm: &VmModel) -> Option<Self> {
        if vm.major != 8 {
            return None;
        }
        Some(AnonymousNames {
            ik_cld: vm.offset("InstanceKlass", "_class_loader_data").ok()?,
            cld_loader: vm.offset("ClassLoaderData", "_class_loader").ok()?,
            cld_next: vm.offset("ClassLoaderData", "_next").ok()?,
            graph_head: vm.static_address("ClassLoaderDataGraph", "_head").ok()?,
            mirror: vm.offset("Klass", "_java_mirror").ok()?,
            mark: vm.offset("oopDesc", "_mark").ok()?,
            displaced: vm.offset("BasicLock", "_displaced_header").ok()?,
            header: vm.offset("ObjectMonitor", "_header").ok()?,
            bits: MarkBits::read(vm)?,
            graph: None,
        })
    }

    /// The walk of `ClassLoaderDataGraph::_head` → `ClassLoaderData::_next`, bounded.
    fn read_graph(&self, mem: &dyn ReadMemory) -> Option<Graph> {
        let mut loader_of = HashMap::new();
        let mut own = HashMap::new();
        let mut cld = mem.read_u64(self.graph_head).ok()?;
        while cld != 0 {
            if cld % 8 != 0 || loader_of.len() >= MAX_CLDS {
                return None;
            }
            let loader = mem.read_u64(cld.checked_add(self.cld_loader)?).ok()?;
            if loader_of.insert(cld, loader).is_some() {
                return None; // a cycle
            }
            // The last one met (nearest the tail) is the loader's own.
            own.insert(loader, cld);
            cld = mem.read_u64(cld.checked_add(self.cld_next)?).ok()?;
        }
        Some(Graph { loader_of, own })
    }

    /// The `/<hash>` `Klass::external_name` appends to `klass` (an `InstanceKlass*`), when it
    /// is VM-anonymous and its mirror has an identity hash; `None` otherwise or when anything
    /// cannot be read.
    pub fn hash(&mut self, mem: &dyn ReadMemory, klass: u64) -> Option<u32> {
        if self.graph.is_none() {
            self.graph = Some(self.read_graph(mem));
        }
        let graph = self.graph.as_ref()?.as_ref()?;
        let cld = mem.read_u64(klass.checked_add(self.ik_cld)?).ok()?;
        let loader = graph.loader_of.get(&cld)?;
        if graph.own.get(loader) == Some(&cld) {
            return None;
        }
        let mirror = mem.read_u64(klass.checked_add(self.mirror)?).ok()?;
        if mirror == 0 || mirror % 8 != 0 {
            return None;
        }
        let mark = mem.read_u64(mirror.checked_add(self.mark)?).ok()?;
        self.bits
            .identity_hash(mark, self.displaced, self.header, |a| mem.read_u64(a).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JDK 8 x86-64's values.
    const BITS: MarkBits = MarkBits {
        hash_shift: 8,
        hash_mask: 0x7fff_ffff,
        lock_mask: 3,
        biased_mask: 7,
        biased_pattern: 5,
        locked: 0,
        unlocked: 1,
        monitor: 2,
    };

    fn no_read(_: u64) -> Option<u64> {
        panic!("read")
    }

    #[test]
    fn neutral_mark_holds_the_hash() {
        // hash 1452126962, age 3, unlocked.
        let mark = (1_452_126_962u64 << 8) | (3 << 3) | 1;
        assert_eq!(
            BITS.identity_hash(mark, 0, 16, no_read),
            Some(1_452_126_962)
        );
    }

    #[test]
    fn no_hash_yet_is_none() {
        assert_eq!(BITS.identity_hash(1, 0, 16, no_read), None);
        assert_eq!(BITS.identity_hash((2 << 3) | 1, 0, 16, no_read), None);
        // Biased (anonymously or to a thread): a hash would have revoked the bias.
        assert_eq!(BITS.identity_hash(5, 0, 16, no_read), None);
        assert_eq!(
            BITS.identity_hash(0x7f00_1234_5000 | 5, 0, 16, no_read),
            None
        );
        // Marked by a collector.
        assert_eq!(BITS.identity_hash(0x7f00_1234_5003, 0, 16, no_read), None);
    }

    #[test]
    fn stack_locked_mark_points_to_the_displaced_header() {
        let lock = 0x7ffd_1234_5670u64;
        let displaced = (77u64 << 8) | 1;
        let read = |a: u64| (a == lock).then_some(displaced);
        assert_eq!(BITS.identity_hash(lock, 0, 16, read), Some(77));
        // The displaced header without a hash.
        assert_eq!(BITS.identity_hash(lock, 0, 16, |_| Some(1)), None);
        // Unreadable, null or misaligned.
        assert_eq!(BITS.identity_hash(lock, 0, 16, |_| None), None);
        assert_eq!(BITS.identity_hash(0, 0, 16, no_read), None);
        assert_eq!(BITS.identity_hash(lock + 4, 0, 16, no_read), None);
    }

    #[test]
    fn inflated_mark_points_to_the_monitor_header() {
        let monitor = 0x7f00_dead_b000u64;
        let header = (0x7fff_ffffu64 << 8) | 1;
        let read = |a: u64| (a == monitor + 16).then_some(header);
        assert_eq!(
            BITS.identity_hash(monitor | 2, 0, 16, read),
            Some(0x7fff_ffff)
        );
        // A header that is not neutral is not trusted.
        assert_eq!(
            BITS.identity_hash(monitor | 2, 0, 16, |_| Some((5u64 << 8) | 5)),
            None
        );
    }
}
