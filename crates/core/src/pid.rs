//! The one name for a process id.

/// A process id as this host (the inspector's pid namespace) sees it: what `ps`, `top` and
/// `jps` on the host print, and what `/proc/<pid>` names. A JVM in a container has another,
/// inner pid there (its `NSpid`), which hsinspect reports beside it but never takes as input.
/// Any value may be asked about: 0, negative and unused pids are answered with
/// [`crate::error::Error::NoSuchProcess`]. (An alias, not a newtype: every caller already holds pids as
/// `i32`, the type of `pid_t` and of Windows' process ids as HotSpot's tools print them.)
pub type Pid = i32;
