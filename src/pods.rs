//! The container and pod flags: `--host-root` (where the container runtimes' files are) for
//! every command that labels or lists live JVMs, and `--namespace`/`--pod` for `list`, `top` and
//! `serve`.

use std::path::PathBuf;

/// `--host-root`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HostRootArg {
    /// Where the host's root file system is mounted, for the container runtimes' own files that
    /// name each JVM's container and pod (/run/containerd, /run/containers, /var/lib/docker,
    /// /var/lib/containers, read only): a DaemonSet that mounts them under /host gives /host.
    /// Default: /.
    #[arg(long, value_name = "DIR", env = "HSINSPECT_HOST_ROOT")]
    pub host_root: Option<PathBuf>,
}

/// `--namespace` and `--pod`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PodArgs {
    /// Only JVMs in pods of this Kubernetes namespace (a glob: `*`, `?`, `[..]`); repeat for
    /// more.
    #[arg(long = "namespace", value_name = "GLOB")]
    pub namespaces: Vec<String>,

    /// Only JVMs in pods whose name matches this glob; repeat for more.
    #[arg(long = "pod", value_name = "GLOB")]
    pub pods: Vec<String>,
}
