//! The Linux side of [`super::identify`]: `/proc/<pid>/cgroup`, then the runtime's files under the
//! host root (see the module docs of [`super`] and [`super::metadata`] for which).

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::cgroup::{self, CgroupContainer};
use super::metadata::{self, Names};
use super::{ContainerIdentity, Runtime};
use crate::pid::Pid;

/// `/proc/<pid>/cgroup`: a line per hierarchy, each path at most `PATH_MAX`.
const MAX_CGROUP: u64 = 64 << 10;
/// An OCI spec or Docker's `config.v2.json`: a container's environment and mounts (kilobytes).
const MAX_SPEC: u64 = 4 << 20;
/// containers/storage's `containers.json`: about 500 bytes per container.
const MAX_CONTAINER_LIST: u64 = 32 << 20;
/// A process's command line (conmon's).
const MAX_CMDLINE: u64 = 64 << 10;
/// Namespaces of containerd looked through for a bundle.
const MAX_NAMESPACES: usize = 64;
/// Parents climbed from a process to its container's `conmon`.
const MAX_PARENTS: usize = 16;

pub(super) fn identify(pid: Pid, root: &Path) -> Option<ContainerIdentity> {
    let text = read_bounded(Path::new(&format!("/proc/{pid}/cgroup")), MAX_CGROUP)?;
    let text = String::from_utf8_lossy(&text);
    let Some(c) = cgroup::parse(&text) else {
        return containerd_task(&text, root);
    };
    let found = runtime_files(pid, &c, root);
    Some(super::combine(c, found))
}

/// A plain containerd task (`ctr run`: cgroup `/<namespace>/<id>`, any id its user chose), taken
/// for one only when containerd has that task's bundle in that namespace.
fn containerd_task(cgroup_text: &str, root: &Path) -> Option<ContainerIdentity> {
    let (ns, id) = cgroup::containerd_task(cgroup_text)?;
    let spec = read_bounded(
        &root
            .join("run/containerd/io.containerd.runtime.v2.task")
            .join(&ns)
            .join(&id)
            .join("config.json"),
        MAX_SPEC,
    )?;
    let c = CgroupContainer {
        id,
        runtime: Some(Runtime::Containerd),
        pod_uid: None,
        qos: None,
        user: None,
    };
    let names = metadata::containerd_bundle(&spec);
    Some(super::combine(c, Some((Runtime::Containerd, names))))
}

/// The runtime's file that describes container `c`: the one of the runtime its cgroup names,
/// or for a Kubernetes cgroupfs leaf, containerd's, else Docker's.
fn runtime_files(pid: Pid, c: &CgroupContainer, root: &Path) -> Option<(Runtime, Names)> {
    let id = c.id.as_str();
    let containerd = || containerd_bundle(root, id).map(|n| (Runtime::Containerd, n));
    let docker = || {
        read_bounded(
            &root
                .join("var/lib/docker/containers")
                .join(id)
                .join("config.v2.json"),
            MAX_SPEC,
        )
        .map(|b| (Runtime::Docker, metadata::docker_config(&b)))
    };
    match c.runtime {
        Some(Runtime::Containerd) => containerd(),
        Some(Runtime::Docker) => docker(),
        Some(Runtime::Crio) => crio_config(pid, root, id).map(|n| (Runtime::Crio, n)),
        Some(Runtime::Podman) => podman_name(pid, root, id).map(|name| {
            (
                Runtime::Podman,
                Names {
                    name: Some(name),
                    ..Names::default()
                },
            )
        }),
        None => containerd().or_else(docker),
    }
}

/// containerd's task bundle spec: `/run/containerd/io.containerd.runtime.v2.task/<ns>/<id>/
/// config.json` (the v1 shim's `io.containerd.runtime.v1.linux` too), namespace `k8s.io` (the
/// CRI plugin's) first.
fn containerd_bundle(root: &Path, id: &str) -> Option<Names> {
    for shim in [
        "run/containerd/io.containerd.runtime.v2.task",
        "run/containerd/io.containerd.runtime.v1.linux",
    ] {
        let base = root.join(shim);
        let mut namespaces = vec![OsString::from("k8s.io")];
        if let Ok(dir) = std::fs::read_dir(&base) {
            namespaces.extend(
                dir.flatten()
                    .map(|e| e.file_name())
                    .filter(|n| n != "k8s.io")
                    .take(MAX_NAMESPACES),
            );
        }
        for ns in namespaces {
            if let Some(b) = read_bounded(&base.join(ns).join(id).join("config.json"), MAX_SPEC) {
                return Some(metadata::containerd_bundle(&b));
            }
        }
    }
    None
}

/// CRI-O's spec of the container: in its run root (`/run/containers/storage`, where CRI-O puts
/// the bundle), its storage root (`/var/lib/containers/storage`), or the bundle its `conmon`
/// was given.
fn crio_config(pid: Pid, root: &Path, id: &str) -> Option<Names> {
    let mut paths: Vec<PathBuf> = ["run/containers/storage", "var/lib/containers/storage"]
        .iter()
        .map(|s| {
            root.join(s)
                .join("overlay-containers")
                .join(id)
                .join("userdata/config.json")
        })
        .collect();
    if let Some(bundle) = conmon_of(pid, id).and_then(|c| c.bundle) {
        paths.push(under_root(root, &bundle).join("config.json"));
    }
    paths
        .iter()
        .find_map(|p| read_bounded(p, MAX_SPEC))
        .map(|b| metadata::crio_config(&b))
}

/// A podman container's name: what its `conmon` was told (`-n`), else containers/storage's list
/// in the rootful storage root.
fn podman_name(pid: Pid, root: &Path, id: &str) -> Option<String> {
    if let Some(name) = conmon_of(pid, id)
        .and_then(|c| c.name)
        .filter(|n| metadata::is_runtime_name(n))
    {
        return Some(name);
    }
    ["overlay", "vfs", "btrfs", "zfs"]
        .iter()
        .find_map(|driver| {
            let list = root
                .join("var/lib/containers/storage")
                .join(format!("{driver}-containers"))
                .join("containers.json");
            metadata::storage_name(&read_bounded(&list, MAX_CONTAINER_LIST)?, id)
        })
}

/// What a container's `conmon` (podman's and CRI-O's monitor, the container's parent: it is a
/// subreaper) was given for container `id`.
struct Conmon {
    name: Option<String>,
    bundle: Option<PathBuf>,
}

/// The `conmon` among `pid`'s parents whose `-c`/`--cid` is `id`.
fn conmon_of(pid: Pid, id: &str) -> Option<Conmon> {
    let mut at = pid;
    for _ in 0..MAX_PARENTS {
        let stat = procfs::process::Process::new(at).ok()?.stat().ok()?;
        if stat.comm == "conmon" {
            let raw = read_bounded(Path::new(&format!("/proc/{at}/cmdline")), MAX_CMDLINE)?;
            let args: Vec<String> = raw
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            return conmon_args(&args, id);
        }
        if stat.ppid <= 1 {
            return None;
        }
        at = stat.ppid;
    }
    None
}

/// `-c`/`--cid`, `-n`/`--name`, `-b`/`--bundle` of a conmon command line (`conmon --help`), when
/// its container is `id`.
fn conmon_args(args: &[String], id: &str) -> Option<Conmon> {
    let value = |short: &str, long: &str| -> Option<String> {
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if a == short || a == long {
                return it.next().cloned();
            }
            if let Some(v) = a.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
                return Some(v.to_string());
            }
        }
        None
    };
    (value("-c", "--cid")? == id).then(|| Conmon {
        name: value("-n", "--name"),
        bundle: value("-b", "--bundle").map(PathBuf::from),
    })
}

/// An absolute host path as seen under the host root.
fn under_root(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// The bytes of a regular file, at most `max` of them: `None` when it is missing, not a regular
/// file, a symbolic link (`O_NOFOLLOW`: a rootless user's storage is theirs to plant links in),
/// larger than `max`, or unreadable. Opened `O_NONBLOCK` so a FIFO cannot block the open; files
/// in `/proc` report size 0 and are read up to `max`.
fn read_bounded(path: &Path, max: u64) -> Option<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut buf = Vec::new();
    file.take(max + 1).read_to_end(&mut buf).ok()?;
    (buf.len() as u64 <= max).then_some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3c1d2e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d";
    const UID: &str = "0c8f3e2a-4b1d-4f5e-9a7b-1c2d3e4f5a6b";

    fn args(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    /// podman 4.3's conmon command line (as `ps` shows it on this project's test machine).
    #[test]
    fn conmon_command_lines() {
        let line = format!(
            "/usr/bin/conmon --api-version 1 -c {ID} -u {ID} -r /usr/sbin/runc -b /var/lib/containers/storage/vfs-containers/{ID}/userdata -p /run/containers/storage/vfs-containers/{ID}/userdata/pidfile -n probe-jvm --exit-dir /run/libpod/exits"
        );
        let c = conmon_args(&args(&line), ID).unwrap();
        assert_eq!(c.name.as_deref(), Some("probe-jvm"));
        assert_eq!(
            c.bundle,
            Some(PathBuf::from(format!(
                "/var/lib/containers/storage/vfs-containers/{ID}/userdata"
            )))
        );
        // Another container's conmon.
        assert!(conmon_args(&args(&line), &"f".repeat(64)).is_none());
        let long = format!("conmon --cid={ID} --name=x");
        assert_eq!(
            conmon_args(&args(&long), ID).unwrap().name.as_deref(),
            Some("x")
        );
        assert!(conmon_args(&args("conmon -c"), ID).is_none());
    }

    /// The files under a host root, as the runtimes lay them out; bad, huge and linked files
    /// name nothing.
    #[test]
    fn files_under_a_host_root() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let bundle = r
            .join("run/containerd/io.containerd.runtime.v2.task/k8s.io")
            .join(ID);
        std::fs::create_dir_all(&bundle).unwrap();
        let spec = serde_json::json!({"annotations": {
            "io.kubernetes.cri.container-type": "container",
            "io.kubernetes.cri.sandbox-namespace": "shop",
            "io.kubernetes.cri.sandbox-name": "orders-0",
            "io.kubernetes.cri.container-name": "orders",
            "io.kubernetes.cri.sandbox-uid": UID}});
        std::fs::write(bundle.join("config.json"), spec.to_string()).unwrap();
        let c = cgroup::parse(&format!("0::/kubepods/burstable/pod{UID}/{ID}")).unwrap();
        let found = runtime_files(1, &c, r).unwrap();
        assert_eq!(found.0, Runtime::Containerd);
        assert_eq!(found.1.container.as_deref(), Some("orders"));
        // Another namespace of containerd.
        let moved = r.join("run/containerd/io.containerd.runtime.v2.task/default");
        std::fs::create_dir_all(&moved).unwrap();
        std::fs::rename(&bundle, moved.join(ID)).unwrap();
        assert!(runtime_files(1, &c, r).is_some_and(|f| f.1.is_kubernetes()));
        // A link is not followed; a directory, a FIFO and an oversized file are not read.
        let target = moved.join(ID).join("config.json");
        std::fs::rename(&target, moved.join("elsewhere.json")).unwrap();
        std::os::unix::fs::symlink(moved.join("elsewhere.json"), &target).unwrap();
        assert!(runtime_files(1, &c, r).is_none());
        std::fs::remove_file(&target).unwrap();
        nix::unistd::mkfifo(&target, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(read_bounded(&target, MAX_SPEC).is_none());
        std::fs::remove_file(&target).unwrap();
        std::fs::create_dir(&target).unwrap();
        assert!(read_bounded(&target, MAX_SPEC).is_none());
        let big = r.join("big");
        std::fs::write(&big, vec![b' '; 1025]).unwrap();
        assert!(read_bounded(&big, 1024).is_none());
        assert_eq!(read_bounded(&big, 1025).map(|b| b.len()), Some(1025));
        // Docker's file, found for the same cgroupfs leaf when containerd has none.
        std::fs::remove_dir(&target).unwrap();
        let docker = r.join("var/lib/docker/containers").join(ID);
        std::fs::create_dir_all(&docker).unwrap();
        std::fs::write(
            docker.join("config.v2.json"),
            format!(r#"{{"ID":"{ID}","Name":"/k8s_x","Config":{{"Labels":{{}}}}}}"#),
        )
        .unwrap();
        let found = runtime_files(1, &c, r).unwrap();
        assert_eq!(
            (found.0, found.1.name.as_deref()),
            (Runtime::Docker, Some("k8s_x"))
        );
    }

    /// This test process: on the host (or in whatever container runs the tests), never an error.
    #[test]
    fn own_process_is_answered() {
        let me = std::process::id() as Pid;
        let _ = identify(me, Path::new("/"));
        assert!(identify(-5, Path::new("/")).is_none());
    }
}
