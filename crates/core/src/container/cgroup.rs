//! The container a process runs in, from the text of its `/proc/<pid>/cgroup`: pure, no I/O.
//!
//! # The layouts
//!
//! Each line of `/proc/<pid>/cgroup` is `<hierarchy-id>:<controllers>:<path>` (`cgroups(7)`): one
//! line `0::<path>` on cgroup v2, one line per v1 hierarchy (`4:memory:<path>`,
//! `1:name=systemd:<path>`) on v1, both on a hybrid host. The path is the one the runtime asked
//! its OCI runtime (runc, crun) to create (`linux.cgroupsPath` of the bundle's `config.json`),
//! which the runtimes and the kubelet name as follows:
//!
//! | who | systemd driver (a `.scope` unit under `.slice`s) | cgroupfs driver (plain directories) | source of the name |
//! |---|---|---|---|
//! | kubelet, pod | `kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice` (`-` of the uid as `_`; Guaranteed pods have no `<qos>` level: `kubepods-pod<uid>.slice`) | `/kubepods/<qos>/pod<uid>` (Guaranteed: `/kubepods/pod<uid>`) | kubernetes `pkg/kubelet/cm/cgroup_manager_linux.go` (`ToSystemd`, `escapeSystemdCgroupName`), `qos_container_manager_linux.go`, `pod_container_manager_linux.go` (`podCgroupNamePrefix = "pod"`) |
//! | containerd (CRI) | `cri-containerd-<id>.scope` | `<pod>/<id>` | containerd `internal/cri/server/helpers_linux.go` (`getCgroupsPath`: `<parent>:cri-containerd:<id>`, else `<parent>/<id>`); runc's systemd driver names the unit `<prefix>-<name>.scope` |
//! | CRI-O | `crio-<id>.scope` (its conmon: `crio-conmon-<id>.scope`) | `<pod>/crio-<id>` | cri-o `internal/config/cgmgr/{systemd,cgroupfs}.go` (`crioPrefix = "crio"`) |
//! | Docker (also under cri-dockerd) | `system.slice/docker-<id>.scope` | `/docker/<id>` (under Kubernetes `<pod>/<id>`) | moby `daemon/oci_linux.go` (`getCgroupsPath`: `system.slice:docker:<id>`, else `/docker/<id>`) |
//! | podman | `machine.slice/libpod-<id>.scope` (rootless: `user.slice/user-<uid>.slice/user@<uid>.service/user.slice/libpod-<id>.scope`; crun on v2 adds a `container` child; its conmon: `libpod-conmon-<id>.scope`) | `/libpod_parent/libpod-<id>` | podman `libpod/runtime_ctr.go`, `pkg/specgen/generate/oci.go` (`libpod_parent`, `libpod-<id>`); crun `crun.1` (`run.oci.systemd.subgroup`) |
//!
//! The kubelet's `--cgroup-root` may nest all of it (kind: `/kubelet.slice/kubelet-kubepods.slice/
//! kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod<uid>.slice/…`), so the pod's
//! component is found by its shape, not by its depth. A process read from inside a cgroup
//! namespace (the DaemonSet's own pod on cgroup v2) sees paths relative to its namespace's root,
//! with leading `..` components (`0::/../../kubepods-besteffort-pod<uid>.slice/cri-containerd-<id>.scope`):
//! `..` and `.` are skipped.
//!
//! Every container id the runtimes above generate is 64 lowercase hexadecimal digits (a SHA-256:
//! containerd's CRI `util.GenerateID`, CRI-O's `stringid.GenerateRandomID`, Docker's and
//! podman's); anything else is not taken for an id, so an id is always safe to put in a file
//! path. A pod UID is a UUID (36 characters) or, for a static pod, the 32 hexadecimal digits of
//! the manifest's hash (kubelet `pkg/kubelet/config/common.go`).

use serde::Serialize;

use super::Runtime;

/// The Kubernetes QoS class of a pod, as its cgroup places it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Qos {
    /// Requests equal limits for every container: the pod's cgroup is directly under `kubepods`.
    Guaranteed,
    /// Under `kubepods/burstable`.
    Burstable,
    /// Under `kubepods/besteffort`.
    BestEffort,
}

impl Qos {
    /// The name in the cgroup path and the API: `guaranteed`, `burstable`, `besteffort`.
    pub fn as_str(self) -> &'static str {
        match self {
            Qos::Guaranteed => "guaranteed",
            Qos::Burstable => "burstable",
            Qos::BestEffort => "besteffort",
        }
    }
}

/// What a process's cgroup says of its container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupContainer {
    /// The container id: 64 lowercase hexadecimal digits (a plain containerd task's: the name
    /// its user gave, a containerd identifier).
    pub id: String,
    /// The runtime, when the path names it (`cri-containerd-`, `crio-`, `docker-`, `/docker/`,
    /// `libpod-`); `None` for a Kubernetes cgroupfs leaf (`<pod>/<id>`: containerd or
    /// cri-dockerd, which only their metadata tells apart).
    pub runtime: Option<Runtime>,
    /// Under Kubernetes: the pod's UID, with `-` (the systemd driver's `_` turned back).
    pub pod_uid: Option<String>,
    /// Under Kubernetes: the pod's QoS class.
    pub qos: Option<Qos>,
    /// A rootless container's user (`user@<uid>.service` on the path), whose storage holds its
    /// metadata.
    pub user: Option<u32>,
}

/// Lines of `/proc/<pid>/cgroup` looked at, at most (a v1 host has about a dozen).
const MAX_LINES: usize = 64;

/// The container of the process whose `/proc/<pid>/cgroup` is `text`, or `None` when no line
/// names one (a process on the host, or a layout not in the table of the module docs). Of nested
/// container names on one path the outermost is taken (see [`parse_path`]). The v2
/// line (`0::`) is preferred, then the v1 lines in order; when two lines name different
/// containers, the first in that order wins.
pub fn parse(text: &str) -> Option<CgroupContainer> {
    let lines: Vec<&str> = text.lines().take(MAX_LINES).collect();
    let v2 = lines.iter().filter(|l| l.starts_with("0::"));
    let v1 = lines.iter().filter(|l| !l.starts_with("0::"));
    v2.chain(v1).find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, _, path) = (fields.next()?, fields.next()?, fields.next()?);
        parse_path(path)
    })
}

/// The container of one cgroup path (the third field of a line): the outermost component that
/// names a container (what is below it, its inhabitants may have named), with the pod above it;
/// nothing for a path in a user's delegated tree (`user@<uid>.service`) but podman's rootless
/// `libpod-<id>`.
pub fn parse_path(path: &str) -> Option<CgroupContainer> {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .collect();
    // The outermost component that names a container. What is below it is the container's own
    // (crun's `container`, a systemd inside, a runtime inside): a process that may write its
    // container's cgroup tree can name its sub-cgroups as it likes, so only the outermost name is
    // the runtime's.
    let (at, id, runtime) = parts.iter().enumerate().find_map(|(i, c)| {
        container_of(c, i.checked_sub(1).map(|p| parts[p])).map(|(id, r)| (i, id, r))
    })?;
    let above = &parts[..at];
    let (pod_uid, qos) = match pod_of(above) {
        Some((uid, qos)) => (Some(uid), Some(qos)),
        None => (None, None),
    };
    // A bare id is a container only under a pod (`/kubepods/…/pod<uid>/<id>`).
    if runtime.is_none() && pod_uid.is_none() {
        return None;
    }
    // A user's delegated tree (`user@<uid>.service`) holds only that user's rootless containers:
    // podman's. Anything else there was named by the user, not by a runtime.
    let user = above.iter().find_map(|c| {
        c.strip_prefix("user@")?
            .strip_suffix(".service")?
            .parse()
            .ok()
    });
    let delegated = above.iter().any(|c| c.starts_with("user@"));
    if delegated && (user.is_none() || runtime != Some(Runtime::Podman)) {
        return None;
    }
    Some(CgroupContainer {
        id: id.to_string(),
        runtime,
        pod_uid,
        qos,
        user,
    })
}

/// The id and runtime a component names, if any (`parent`: the component above it).
fn container_of<'a>(c: &'a str, parent: Option<&str>) -> Option<(&'a str, Option<Runtime>)> {
    let unit = c.strip_suffix(".scope").unwrap_or(c);
    let named = [
        ("cri-containerd-", Runtime::Containerd),
        // nerdctl's systemd driver (`nerdctl-<id>.scope`, containerd underneath).
        ("nerdctl-", Runtime::Containerd),
        ("crio-", Runtime::Crio),
        ("docker-", Runtime::Docker),
        ("libpod-", Runtime::Podman),
    ];
    for (prefix, runtime) in named {
        if let Some(id) = unit.strip_prefix(prefix) {
            // `crio-conmon-<id>`, `libpod-conmon-<id>`: the monitor, not the container.
            return is_container_id(id).then_some((id, Some(runtime)));
        }
    }
    if c.len() == unit.len() && is_container_id(c) {
        return Some((c, (parent == Some("docker")).then_some(Runtime::Docker)));
    }
    None
}

/// A plain containerd task's cgroup (`ctr run`, and nerdctl's cgroupfs driver): `/<namespace>/<id>`
/// (containerd `cmd/ctr/commands/run/run_unix.go`: `cgroupsPath` defaults to
/// `/<namespace>/<id>`), both valid containerd identifiers (`identifiers.Validate`: letters and
/// digits, runs of them joined by one `.`, `_` or `-`, at most 76 characters), from the v2 line
/// or any v1 line of `text`. Only a shape: the caller confirms it by the task's bundle.
pub fn containerd_task(text: &str) -> Option<(String, String)> {
    text.lines().take(MAX_LINES).find_map(|line| {
        let path = line.splitn(3, ':').nth(2)?;
        let parts: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        match parts[..] {
            [ns, id] if is_containerd_identifier(ns) && is_containerd_identifier(id) => {
                Some((ns.to_string(), id.to_string()))
            }
            _ => None,
        }
    })
}

/// containerd's `identifiers.Validate`: `[A-Za-z0-9]+([._-][A-Za-z0-9]+)*`, 1 to 76 characters.
fn is_containerd_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 76
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        && !b
            .windows(2)
            .any(|w| !w[0].is_ascii_alphanumeric() && !w[1].is_ascii_alphanumeric())
}

/// The pod's UID and QoS class from the components above the container's.
fn pod_of(above: &[&str]) -> Option<(String, Qos)> {
    let (i, c) = above
        .iter()
        .enumerate()
        .rev()
        .find(|(_, c)| c.contains("pod"))?;
    let in_kubepods = |parts: &[&str]| parts.iter().any(|p| p.contains("kubepods"));
    if let Some(slice) = c.strip_suffix(".slice") {
        // systemd: `<root…>-kubepods[-<qos>]-pod<uid_with_underscores>.slice`.
        let (head, last) = slice.rsplit_once('-')?;
        let uid = last.strip_prefix("pod")?.replace('_', "-");
        if !head.contains("kubepods") || !is_pod_uid(&uid) {
            return None;
        }
        let qos = match head.rsplit('-').next() {
            Some("burstable") => Qos::Burstable,
            Some("besteffort") => Qos::BestEffort,
            Some(k) if k.ends_with("kubepods") => Qos::Guaranteed,
            _ => return None,
        };
        return Some((uid, qos));
    }
    // cgroupfs: `…/kubepods[/<qos>]/pod<uid>`.
    let uid = c.strip_prefix("pod")?;
    if !is_pod_uid(uid) || !in_kubepods(&above[..i]) {
        return None;
    }
    let qos = match above[..i].last() {
        Some(&"burstable") => Qos::Burstable,
        Some(&"besteffort") => Qos::BestEffort,
        Some(k) if k.ends_with("kubepods") => Qos::Guaranteed,
        _ => return None,
    };
    Some((uid.to_string(), qos))
}

/// 64 lowercase hexadecimal digits.
pub fn is_container_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A UUID (`8-4-4-4-12` hexadecimal digits) or a static pod's 32 hexadecimal digits.
pub fn is_pod_uid(s: &str) -> bool {
    let hex = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_hexdigit());
    if s.len() == 32 {
        return hex(s);
    }
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|g| hex(g))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3c1d2e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d";
    const UID: &str = "0c8f3e2a-4b1d-4f5e-9a7b-1c2d3e4f5a6b";
    const UID_: &str = "0c8f3e2a_4b1d_4f5e_9a7b_1c2d3e4f5a6b";

    fn one(text: &str) -> CgroupContainer {
        parse(text).unwrap_or_else(|| panic!("no container in {text:?}"))
    }

    fn k8s(text: &str, runtime: Option<Runtime>, qos: Qos) {
        let c = one(text);
        assert_eq!(c.id, ID, "{text}");
        assert_eq!(c.runtime, runtime, "{text}");
        assert_eq!(c.pod_uid.as_deref(), Some(UID), "{text}");
        assert_eq!(c.qos, Some(qos), "{text}");
        assert_eq!(c.user, None, "{text}");
    }

    /// Kubernetes, systemd driver, cgroup v2 (the kubelet's default since 1.22 on systemd
    /// hosts): one line, the unit names the runtime.
    #[test]
    fn plain_containerd_tasks_and_nerdctl_scopes() {
        assert_eq!(
            containerd_task("0::/default/jvm-1\n"),
            Some(("default".into(), "jvm-1".into()))
        );
        assert_eq!(
            containerd_task("12:memory:/k8s.io/my.app_2\n0::/\n"),
            Some(("k8s.io".into(), "my.app_2".into()))
        );
        for not in [
            "0::/\n",
            "0::/init.scope\n",
            "0::/system.slice/cron.service/x\n",
            "0::/default/-x\n",
            "0::/default/a..b\n",
            "0::/../x\n",
        ] {
            assert_eq!(containerd_task(not), None, "{not}");
        }
        let c = parse(&format!("0::/system.slice/nerdctl-{ID}.scope\n")).unwrap();
        assert_eq!((c.id.as_str(), c.runtime), (ID, Some(Runtime::Containerd)));
    }

    #[test]
    fn kubernetes_systemd_v2() {
        use Runtime::*;
        for (line, runtime, qos) in [
            (
                format!(
                    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID_}.slice/cri-containerd-{ID}.scope"
                ),
                Containerd,
                Qos::Burstable,
            ),
            (
                format!(
                    "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{UID_}.slice/crio-{ID}.scope"
                ),
                Crio,
                Qos::BestEffort,
            ),
            (
                format!("0::/kubepods.slice/kubepods-pod{UID_}.slice/docker-{ID}.scope"),
                Docker,
                Qos::Guaranteed,
            ),
            // crun's `container` child of the scope.
            (
                format!(
                    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID_}.slice/crio-{ID}.scope/container"
                ),
                Crio,
                Qos::Burstable,
            ),
            // kind: the kubelet's --cgroup-root=/kubelet.
            (
                format!(
                    "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod{UID_}.slice/cri-containerd-{ID}.scope"
                ),
                Containerd,
                Qos::BestEffort,
            ),
            // Read from inside a cgroup namespace (the exporter's own pod).
            (
                format!("0::/../../kubepods-besteffort-pod{UID_}.slice/cri-containerd-{ID}.scope"),
                Containerd,
                Qos::BestEffort,
            ),
        ] {
            k8s(&line, Some(runtime), qos);
        }
    }

    /// Kubernetes, cgroupfs driver, cgroup v1: every hierarchy's line has the path; the leaf is
    /// the bare id (containerd, cri-dockerd) or `crio-<id>`.
    #[test]
    fn kubernetes_cgroupfs_v1() {
        let v1 = |path: &str| {
            [
                "12:hugetlb:",
                "11:memory:",
                "10:cpu,cpuacct:",
                "9:pids:",
                "1:name=systemd:",
            ]
            .iter()
            .map(|h| format!("{h}{path}\n"))
            .collect::<String>()
        };
        k8s(
            &v1(&format!("/kubepods/burstable/pod{UID}/{ID}")),
            None,
            Qos::Burstable,
        );
        k8s(
            &v1(&format!("/kubepods/pod{UID}/{ID}")),
            None,
            Qos::Guaranteed,
        );
        k8s(
            &v1(&format!("/kubepods/besteffort/pod{UID}/crio-{ID}")),
            Some(Runtime::Crio),
            Qos::BestEffort,
        );
        // Hybrid: the v2 line is the root, the v1 lines have it.
        k8s(
            &format!(
                "{}0::/\n",
                v1(&format!("/kubepods/burstable/pod{UID}/{ID}"))
            ),
            None,
            Qos::Burstable,
        );
        // The kubelet's systemd names on v1 (every hierarchy).
        k8s(
            &v1(&format!(
                "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID_}.slice/docker-{ID}.scope"
            )),
            Some(Runtime::Docker),
            Qos::Burstable,
        );
    }

    /// A static pod's UID is the manifest hash: 32 hex digits, no dashes.
    #[test]
    fn static_pod_uid() {
        let uid = "6f1c0ec5a2b7d0e5c9b1f4e2a7d3c8b0";
        let c = one(&format!(
            "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{uid}.slice/cri-containerd-{ID}.scope"
        ));
        assert_eq!(c.pod_uid.as_deref(), Some(uid));
    }

    /// Plain containers: Docker, podman (rootful, rootless, cgroupfs), no pod.
    #[test]
    fn plain_containers() {
        let plain = |text: &str, runtime, user| {
            let c = one(text);
            assert_eq!(
                (c.id.as_str(), c.runtime, c.pod_uid, c.qos, c.user),
                (ID, Some(runtime), None, None, user),
                "{text}"
            );
        };
        plain(
            &format!("0::/system.slice/docker-{ID}.scope"),
            Runtime::Docker,
            None,
        );
        plain(
            &format!("13:memory:/docker/{ID}\n0::/docker/{ID}\n"),
            Runtime::Docker,
            None,
        );
        plain(
            &format!("0::/machine.slice/libpod-{ID}.scope/container"),
            Runtime::Podman,
            None,
        );
        plain(
            &format!(
                "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{ID}.scope/container"
            ),
            Runtime::Podman,
            Some(1000),
        );
        // podman --cgroup-manager=cgroupfs with runc on a hybrid host (this project's test
        // machine): the v1 hierarchies have it, the unified line is the root.
        plain(
            &format!(
                "9:name=systemd:/libpod_parent/libpod-{ID}\n4:memory:/libpod_parent/libpod-{ID}\n0::/\n"
            ),
            Runtime::Podman,
            None,
        );
        // A podman pod's slice.
        plain(
            &format!(
                "0::/machine.slice/machine-libpod_pod_{}.slice/libpod-{ID}.scope",
                &ID[..64]
            ),
            Runtime::Podman,
            None,
        );
    }

    /// The host and what is not a container: nothing, never a wrong id.
    #[test]
    fn not_containers() {
        for text in [
            "0::/",
            "0::/user.slice/user-1000.slice/session-3.scope",
            "0::/system.slice/containerd.service",
            "0::/init.scope",
            "12:memory:/\n1:name=systemd:/init.scope\n0::/\n",
            // The runtimes' monitors, not the container.
            &format!("0::/machine.slice/libpod-conmon-{ID}.scope"),
            &format!("0::/kubepods.slice/kubepods-pod{UID_}.slice/crio-conmon-{ID}.scope"),
            // A bare id outside a pod or /docker: not known to be a container's.
            &format!("0::/system.slice/{ID}"),
            // Ids of another length or case.
            &format!("0::/system.slice/docker-{}.scope", &ID[..63]),
            &format!("0::/system.slice/docker-{}.scope", ID.to_uppercase()),
            "0::/system.slice/docker-../../etc.scope",
            "",
            "garbage",
            "0:",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
        // A pod component that is not a pod UID: the container without a pod.
        let c = one(&format!(
            "0::/kubepods.slice/kubepods-podnotauid.slice/cri-containerd-{ID}.scope"
        ));
        assert_eq!((c.pod_uid, c.qos), (None, None));
        // Names a container's inhabitants gave its sub-cgroups: the outer container's.
        let other = "f".repeat(64);
        let c = one(&format!(
            "0::/kubepods.slice/kubepods-pod{UID_}.slice/cri-containerd-{ID}.scope/kubepods-pod11111111_2222_3333_4444_555555555555.slice/cri-containerd-{other}.scope"
        ));
        assert_eq!((c.id.as_str(), c.pod_uid.as_deref()), (ID, Some(UID)));
        // A user's delegated tree: only podman; a "pod" there is the user's invention.
        assert_eq!(
            parse(&format!(
                "0::/user.slice/user-1000.slice/user@1000.service/kubepods.slice/kubepods-pod{UID_}.slice/cri-containerd-{ID}.scope"
            )),
            None
        );
        assert_eq!(
            parse(&format!(
                "0::/user.slice/user-1000.slice/user@1000.service/app.slice/docker-{ID}.scope"
            )),
            None
        );
        // A bare id under something that only looks like a pod: nothing.
        assert_eq!(parse(&format!("0::/pods/pod{UID}/{ID}")), None);
    }

    #[test]
    fn pod_uids() {
        assert!(is_pod_uid(UID));
        assert!(is_pod_uid("6f1c0ec5a2b7d0e5c9b1f4e2a7d3c8b0"));
        for bad in [
            "",
            "x",
            &UID[..35],
            "0c8f3e2a-4b1d-4f5e-9a7b1-c2d3e4f5a6b",
            UID_,
        ] {
            assert!(!is_pod_uid(bad), "{bad}");
        }
    }
}
