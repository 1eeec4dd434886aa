//! The Java heap read from outside: the collector's spaces ([`spaces`], from vmStructs), one
//! linear object walker over a space ([`walk`], the Serviceability Agent's `ObjectHeap` walk
//! with TLAB holes cut out), and the class histogram built on it ([`histogram`], what
//! `jcmd <pid> GC.class_histogram -all` prints; `memory/heapInspection.cpp`).
//!
//! The target is untrusted: a word that is not a klass, a size of zero or past the space's top,
//! or an unreadable chunk ends the walk of that space with a [`Note`]; the other spaces are
//! still walked.

pub mod classes;
pub mod dump;
pub mod histogram;
pub mod ownable;
pub mod spaces;
pub mod starts;
pub mod summary;
pub mod sysprops;
pub mod walk;

pub use histogram::{Histogram, Row};
pub use spaces::{Space, SpaceKind, Tlab};
pub use walk::{ObjectLayout, WalkStats};

/// Something the heap walk met and skipped: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Note {
    /// The space's name (`eden`, `old`, `G1 region 12`).
    pub space: String,
    /// The address where the walk of that space stopped.
    pub at: u64,
    /// Bytes of the space left unwalked after `at` (up to its top).
    pub skipped: u64,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: walk stopped at {:#x} ({} bytes not walked): {}",
            self.space, self.at, self.skipped, self.reason
        )
    }
}
