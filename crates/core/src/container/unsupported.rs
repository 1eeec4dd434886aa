//! [`super::identify`] where there is no Linux cgroup to read (another OS, or the `live`
//! feature off): every process is taken to be on the host.

use std::path::Path;

use super::ContainerIdentity;
use crate::pid::Pid;

pub(super) fn identify(_pid: Pid, _root: &Path) -> Option<ContainerIdentity> {
    None
}
