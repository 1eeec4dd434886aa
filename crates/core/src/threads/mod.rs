//! The thread dump's stages, read from outside over a `vm::VmModel` and any
//! [`crate::memory::ReadMemory`]: the thread list and each `JavaThread` ([`list`]), frames
//! ([`frames`]: interpreted, compiled with inlining, native, stubs, entry frames; from an anchor
//! or a running thread's registers), JDK 8's VM-anonymous class names ([`anonymous8`]), lock
//! lines and deadlocks ([`locks`]), the virtual threads no carrier runs ([`vthreads`]), a
//! thread's plain data as the stages fill it in ([`thread`]), the walk that drives them and
//! its [`dump::Dump`] ([`dump`]), and threads counted by state without a stop ([`states`]).
//!
//! The jcmd text of a dump is written by `format::thread_dump`; opening the target, the stop
//! and the release are `pipeline`'s.

pub mod anonymous8;
pub mod dump;
pub mod frames;
pub mod list;
pub mod locks;
pub mod states;
pub mod thread;
pub mod vthreads;
