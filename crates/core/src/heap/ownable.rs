//! The owned ownable synchronizers: every `java.util.concurrent.locks.AbstractOwnableSynchronizer`
//! (a `ReentrantLock`'s `Sync`, a `ReentrantReadWriteLock`'s, a `ThreadPoolExecutor$Worker`)
//! whose `exclusiveOwnerThread` is set, what `jcmd <pid> Thread.print -l` lists under each
//! thread's `Locked ownable synchronizers:`. HotSpot finds them by walking the heap at a
//! safepoint (`ConcurrentLocksDump::dump_at_safepoint` and `build_map`,
//! `services/threadService.cpp`: `HeapInspection::find_instances_at_safepoint`, in the heap's
//! own order); here one walk of the spaces as the histogram walks them (on two threads, two
//! halves), each new klass checked once for the class among its supers (by name, then by
//! `Klass*` once it is known), each instance's owner read through the VM model.

use super::Note;
use super::walk::{KlassMap, WalkStats, Walker};
use crate::error::Error;
use crate::memory::ReadMemory;
use crate::vm::VmModel;
use crate::vm::java::JavaReader;

/// The class whose subclasses are ownable synchronizers (`vmClasses::
/// java_util_concurrent_locks_AbstractOwnableSynchronizer_klass`).
const SYNCHRONIZER: &str = "java/util/concurrent/locks/AbstractOwnableSynchronizer";

/// At most this many synchronizers are kept (more means a corrupt walk, or a heap no dump
/// would print): the rest are counted in [`OwnableSynchronizers::dropped`].
const MAX_FOUND: usize = 1 << 20;

/// At most this many supers are followed from a klass.
const MAX_SUPERS: usize = 64;

/// One owned synchronizer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OwnedSynchronizer {
    /// The object's address (as jcmd prints it: `- <0x…>`).
    pub object: u64,
    /// Its class, external name (`java.util.concurrent.locks.ReentrantLock$NonfairSync`).
    pub class: String,
    /// The owner's `java.lang.Thread` (`exclusiveOwnerThread`), as the target holds it.
    pub owner: u64,
}

/// What a walk for the ownable synchronizers found.
#[derive(Debug, Clone, Default)]
pub struct OwnableSynchronizers {
    /// The owned ones, in the heap walk's order (the spaces' order, then addresses).
    pub owned: Vec<OwnedSynchronizer>,
    /// The ownable synchronizers met without an owner.
    pub unowned: u64,
    /// Those past the most kept (2^20), not kept.
    pub dropped: u64,
    /// The spaces whose walk stopped early.
    pub notes: Vec<Note>,
    /// The walk's figures.
    pub stats: WalkStats,
    /// The spaces walked.
    pub spaces: usize,
}

/// The ownable synchronizers the walk of one half found: their addresses and klasses.
type Found = (Vec<(u64, u64)>, u64, Vec<Note>, WalkStats);

/// Every owned `AbstractOwnableSynchronizer` in the heap of `vm` through `mem` (the JVM held
/// still, or a core).
///
/// # Errors
/// As [`super::histogram::histogram`] (the collector's spaces, the object layout); a space
/// that cannot be walked to its top is a [`Note`], an owner that cannot be read leaves the
/// synchronizer out (counted in [`OwnableSynchronizers::unowned`]).
pub fn ownable_synchronizers(
    vm: &VmModel,
    mem: &(dyn ReadMemory + Sync),
) -> Result<OwnableSynchronizers, Error> {
    let (spaces, tlabs, layout) = super::histogram::walk_plan(vm, mem)?;
    let super_at = vm.offset("Klass", "_super")?;
    let halves = super::walk::walk_in_halves(&spaces, |half| -> Result<Found, Error> {
        let reader = JavaReader::new(vm, mem)?;
        let mut walker = Walker::sized_by(mem, &reader, layout);
        let mut kinds = Kinds::new(super_at);
        let mut found = Vec::new();
        let mut dropped = 0u64;
        let mut notes = Vec::new();
        let mut last = (0u64, false);
        for space in half {
            let note = walker.walk(space, &tlabs, &mut |at, klass, _, _| {
                if last.0 != klass {
                    last = (klass, kinds.is_synchronizer(&reader, mem, klass));
                }
                if last.1 {
                    if found.len() < MAX_FOUND {
                        found.push((at, klass));
                    } else {
                        dropped += 1;
                    }
                }
            });
            notes.extend(note);
        }
        let stats = walker.stats;
        Ok((found, dropped, notes, stats))
    });
    let reader = JavaReader::new(vm, mem)?;
    let mut out = OwnableSynchronizers {
        spaces: spaces.len(),
        ..Default::default()
    };
    let mut owner_at: Option<u64> = None;
    let mut names: KlassMap<String> = KlassMap::default();
    for half in halves {
        let (found, dropped, notes, stats) = half?;
        out.dropped += dropped;
        out.notes.extend(notes);
        out.stats.add(&stats);
        for (object, klass) in found {
            let at = match owner_at {
                Some(at) => at,
                None => {
                    let at =
                        reader.field_in(klass, "exclusiveOwnerThread", "Ljava/lang/Thread;")?;
                    owner_at = Some(at);
                    at
                }
            };
            let owner = reader
                .reference_at(
                    object.wrapping_add(at),
                    "AbstractOwnableSynchronizer.exclusiveOwnerThread",
                )
                .unwrap_or(0);
            if owner == 0 {
                out.unowned += 1;
                continue;
            }
            let class = names
                .entry(klass)
                .or_insert_with(|| {
                    reader
                        .name_of_klass(klass)
                        .map(|n| crate::vm::java::external_name(&n))
                        .unwrap_or_else(|_| format!("<klass {klass:#x}>"))
                })
                .clone();
            out.owned.push(OwnedSynchronizer {
                object,
                class,
                owner,
            });
        }
    }
    Ok(out)
}

/// Which klasses extend [`SYNCHRONIZER`]: each klass met is looked up once, its supers by name
/// until the class itself is met, then by its `Klass*`.
struct Kinds {
    super_at: u64,
    known: KlassMap<bool>,
    synchronizer: Option<u64>,
}

impl Kinds {
    fn new(super_at: u64) -> Self {
        Kinds {
            super_at,
            known: KlassMap::default(),
            synchronizer: None,
        }
    }

    fn is_synchronizer(
        &mut self,
        reader: &JavaReader<'_>,
        mem: &dyn ReadMemory,
        klass: u64,
    ) -> bool {
        if let Some(&k) = self.known.get(&klass) {
            return k;
        }
        let mut chain = Vec::new();
        let mut k = klass;
        let mut answer = false;
        for _ in 0..MAX_SUPERS {
            if k == 0 {
                break;
            }
            if let Some(&known) = self.known.get(&k) {
                answer = known;
                break;
            }
            let is = match self.synchronizer {
                Some(s) => k == s,
                None => reader.name_of_klass(k).is_ok_and(|n| n == SYNCHRONIZER),
            };
            if is {
                self.synchronizer = Some(k);
                answer = true;
                break;
            }
            chain.push(k);
            match mem.read_u64(k.wrapping_add(self.super_at)) {
                Ok(up) => k = up,
                Err(_) => break,
            }
        }
        if self.known.len() < MAX_FOUND {
            for c in chain {
                self.known.insert(c, answer);
            }
            self.known.insert(klass, answer);
        }
        answer
    }
}
