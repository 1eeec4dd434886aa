//! Which container a process runs in, and under Kubernetes which pod: read from the host, with no
//! API server and no runtime socket.
//!
//! Two steps, as a node agent that reads hsperfdata does it:
//!
//! 1. **The cgroup** ([`cgroup`], pure): `/proc/<pid>/cgroup` gives the container id, the
//!    runtime when its unit names it, and under Kubernetes the pod's UID and QoS class.
//! 2. **The runtime's own files** ([`metadata`], pure parsers; the reads are the seam's): the
//!    containerd task bundle's OCI spec, CRI-O's container spec, Docker's `config.v2.json`, and
//!    containers/storage's `containers.json` or podman's `conmon` give the pod's namespace and
//!    name, the container's name in the pod, or a plain container's name.
//!
//! Everything read is untrusted (a rootless user writes their own containers' files): files are
//! opened without following a final symbolic link, only when regular, and read up to a bound;
//! each value must obey its owner's rule. What cannot be read or checked degrades to less: the
//! container id (and pod UID) alone, never a wrong name. A pod's names are taken only from
//! files root writes (containerd's, CRI-O's and Docker's), never from podman's.
//!
//! # The OS seam
//!
//! `linux.rs` reads the files under a host root (`/` by default; a DaemonSet that mounts the
//! host's runtime directories under `/host` passes `/host`; `/proc` is always the inspector's
//! own, which `hostPID` makes the host's). `unsupported.rs` (any other OS, or without the `live`
//! feature) knows no container.

pub mod cgroup;
pub mod metadata;

#[cfg(all(feature = "live", target_os = "linux"))]
#[path = "linux.rs"]
mod os;
#[cfg(not(all(feature = "live", target_os = "linux")))]
#[path = "unsupported.rs"]
mod os;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use cgroup::Qos;

use crate::pid::Pid;

/// A container runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    /// containerd (its CRI plugin under Kubernetes, or `ctr`/nerdctl).
    Containerd,
    /// CRI-O.
    Crio,
    /// Docker (or cri-dockerd under Kubernetes).
    Docker,
    /// podman.
    Podman,
}

impl Runtime {
    /// `containerd`, `crio`, `docker`, `podman`.
    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::Containerd => "containerd",
            Runtime::Crio => "crio",
            Runtime::Docker => "docker",
            Runtime::Podman => "podman",
        }
    }
}

/// The names of a container in a pod: all three, or none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodNames {
    /// The pod's namespace (a DNS-1123 label).
    pub namespace: String,
    /// The pod's name (a DNS-1123 subdomain).
    #[serde(rename = "pod")]
    pub name: String,
    /// The container's name in the pod spec (a DNS-1123 label).
    pub container: String,
}

/// A container's pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pod {
    /// The pod's UID (a UUID, or a static pod's 32 hex digits): from the cgroup, else from the
    /// runtime's file.
    pub uid: String,
    /// Its QoS class, from the cgroup (`None` when only the runtime's file named the pod).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<Qos>,
    /// Its names, when the runtime's files gave them and they agree with the cgroup's UID.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub names: Option<PodNames>,
}

/// The container a process runs in. The JSON field names are a stable interface (`inspect list
/// --format json`'s `container`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerIdentity {
    /// The container id: 64 lowercase hex digits.
    pub id: String,
    /// The runtime, when the cgroup or the file found says which.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Runtime>,
    /// The runtime's own name of the container (Docker's, podman's), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Under Kubernetes, its pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod: Option<Pod>,
}

impl ContainerIdentity {
    /// The pod's names, when known.
    pub fn pod_names(&self) -> Option<&PodNames> {
        self.pod.as_ref()?.names.as_ref()
    }

    /// The labels of every series of a process in this container, Prometheus' Kubernetes names
    /// (what cAdvisor and kube-state-metrics use): `namespace`, `pod`, `container` when known,
    /// `container_id`, and `pod_uid` under Kubernetes. A plain container: `container_id` alone.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        self.labels_named(["namespace", "pod", "container", "container_id", "pod_uid"])
    }

    /// The same labels under OpenTelemetry's resource attribute names (`k8s.namespace.name`,
    /// `k8s.pod.name`, `k8s.container.name`, `container.id`, `k8s.pod.uid`: semantic conventions
    /// `model/k8s/registry.yaml`, `model/container/registry.yaml`) as the OTLP-to-Prometheus rule
    /// writes them: every character outside `[a-zA-Z0-9_]` becomes `_`.
    pub fn otel_labels(&self) -> Vec<(&'static str, String)> {
        self.labels_named([
            "k8s_namespace_name",
            "k8s_pod_name",
            "k8s_container_name",
            "container_id",
            "k8s_pod_uid",
        ])
    }

    /// The same as OpenTelemetry resource attributes, with their own dotted keys (for OTLP).
    pub fn otel_attributes(&self) -> Vec<(&'static str, String)> {
        self.labels_named([
            "k8s.namespace.name",
            "k8s.pod.name",
            "k8s.container.name",
            "container.id",
            "k8s.pod.uid",
        ])
    }

    /// The container's name: its Kubernetes container name in a pod, else the runtime's name.
    pub fn container_name(&self) -> Option<&str> {
        self.pod_names()
            .map(|n| n.container.as_str())
            .or(self.name.as_deref())
    }

    fn labels_named(
        &self,
        [ns, pod, container, id, uid]: [&'static str; 5],
    ) -> Vec<(&'static str, String)> {
        let mut labels = Vec::new();
        if let Some(n) = self.pod_names() {
            labels.push((ns, n.namespace.clone()));
            labels.push((pod, n.name.clone()));
            labels.push((container, n.container.clone()));
        }
        labels.push((id, self.id.clone()));
        if let Some(p) = &self.pod {
            labels.push((uid, p.uid.clone()));
        }
        labels
    }

    /// The name dashboards know the application by: the container's name in its pod, else the
    /// runtime's name of the container.
    pub fn application(&self) -> Option<&str> {
        self.pod_names()
            .map(|n| n.container.as_str())
            .or(self.name.as_deref())
    }

    /// How `list` and `top` show it: `namespace/pod/container` in a pod with known names, else
    /// the runtime's name, else the first 12 digits of the id (as `docker ps` and `crictl ps`
    /// show ids).
    pub fn short(&self) -> String {
        match (self.pod_names(), &self.name) {
            (Some(n), _) => format!("{}/{}/{}", n.namespace, n.name, n.container),
            (None, Some(name)) => name.clone(),
            (None, None) => self.id[..12].to_string(),
        }
    }

    /// Whether its names are all there can be (so a cached answer need not be read again): a
    /// pod's names, or a plain container's name.
    fn complete(&self) -> bool {
        match &self.pod {
            Some(p) => p.names.is_some(),
            None => self.name.is_some(),
        }
    }
}

/// `--namespace` and `--pod`: which pods' JVMs `list`, `top` and `serve` show. Empty lists
/// select every JVM (on the host too); a non-empty list selects only JVMs in a pod whose names
/// are known and match one of its globs (`*`, `?`, `[..]`).
#[derive(Debug, Clone, Default)]
pub struct PodFilter {
    namespaces: Vec<globset::GlobMatcher>,
    pods: Vec<globset::GlobMatcher>,
}

impl PodFilter {
    /// The filter of these `--namespace` and `--pod` globs.
    ///
    /// # Errors
    /// A message naming the glob that does not parse.
    pub fn new(namespaces: &[String], pods: &[String]) -> Result<PodFilter, String> {
        let compile = |flag: &str, globs: &[String]| {
            globs
                .iter()
                .map(|g| {
                    globset::Glob::new(g)
                        .map(|g| g.compile_matcher())
                        .map_err(|e| format!("{flag} {g:?}: {e}"))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(PodFilter {
            namespaces: compile("--namespace", namespaces)?,
            pods: compile("--pod", pods)?,
        })
    }

    /// Whether a JVM in `container` (`None`: on the host) is selected.
    pub fn selects(&self, container: Option<&ContainerIdentity>) -> bool {
        if self.namespaces.is_empty() && self.pods.is_empty() {
            return true;
        }
        let Some(names) = container.and_then(ContainerIdentity::pod_names) else {
            return false;
        };
        (self.namespaces.is_empty() || self.namespaces.iter().any(|g| g.is_match(&names.namespace)))
            && (self.pods.is_empty() || self.pods.iter().any(|g| g.is_match(&names.name)))
    }
}

/// The container process `pid` runs in, read now: its cgroup, then its runtime's files under
/// `host_root`. `None` for a process on the host (or one that exited, or whose cgroup names no
/// container this module knows); never an error.
pub fn identify(pid: Pid, host_root: &Path) -> Option<ContainerIdentity> {
    os::identify(pid, host_root)
}

/// How long an answer without every name is kept before the files are read again (a runtime may
/// be writing them).
const RETRY_INCOMPLETE: Duration = Duration::from_secs(30);

type Key = (PathBuf, Pid, u64);
/// An answer and when it was read.
type Answer = (Option<ContainerIdentity>, Instant);

/// Answers of [`identify`] per process (host root, pid, start time): a process's cgroup and its
/// container's files do not change while it lives, so `list`, `serve` and `top` read them once.
static CACHE: Mutex<Option<HashMap<Key, Answer>>> = Mutex::new(None);

/// [`identify`], remembered for process `pid` started at `start_time` (any number that tells
/// two processes of one pid apart: Linux's `starttime` in clock ticks). A process on the host
/// and a container with all its names are read once; a container with names missing is read
/// again after 30 s.
pub fn identify_cached(pid: Pid, start_time: u64, host_root: &Path) -> Option<ContainerIdentity> {
    let key = (host_root.to_path_buf(), pid, start_time);
    {
        let cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((answer, at)) = cache.as_ref().and_then(|c| c.get(&key))
            && (answer.as_ref().is_none_or(ContainerIdentity::complete)
                || at.elapsed() < RETRY_INCOMPLETE)
        {
            return answer.clone();
        }
    }
    let answer = identify(pid, host_root);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .get_or_insert_with(HashMap::new)
        .insert(key, (answer.clone(), Instant::now()));
    answer
}

/// Forgets the cached answers of processes `alive` does not keep (call after a scan of every
/// process, with the ones it found).
pub fn forget_others(alive: impl Fn(Pid, u64) -> bool) {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = cache.as_mut() {
        c.retain(|(_, pid, start), _| alive(*pid, *start));
    }
}

/// The identity from what the cgroup said and what the runtime's file said (`found`: the
/// runtime whose file it was). Pure: the rules of agreement in one place (only the Linux seam
/// has files to combine).
#[cfg_attr(not(all(feature = "live", target_os = "linux")), allow(dead_code))]
fn combine(
    c: cgroup::CgroupContainer,
    found: Option<(Runtime, metadata::Names)>,
) -> ContainerIdentity {
    let (runtime, names) = match found {
        // A file that says it is another container's is not this one's.
        Some((_, n)) if n.id.as_ref().is_some_and(|id| *id != c.id) => (c.runtime, None),
        Some((r, n)) => (Some(r), Some(n)),
        None => (c.runtime, None),
    };
    let names = names.unwrap_or_default();
    // A pod's names only from a file root writes, and only when its pod UID is the cgroup's.
    let uid_agrees = match (&c.pod_uid, &names.pod_uid) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    let pod_names =
        (runtime != Some(Runtime::Podman) && uid_agrees && names.is_kubernetes()).then(|| {
            PodNames {
                namespace: names.namespace.clone().unwrap_or_default(),
                name: names.pod.clone().unwrap_or_default(),
                container: names.container.clone().unwrap_or_default(),
            }
        });
    let uid = c
        .pod_uid
        .clone()
        .or_else(|| pod_names.as_ref().and(names.pod_uid.clone()));
    ContainerIdentity {
        id: c.id,
        runtime,
        name: if pod_names.is_some() {
            None
        } else {
            names.name
        },
        pod: uid.map(|uid| Pod {
            uid,
            qos: c.qos,
            names: pod_names,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metadata::Names;

    const ID: &str = "3c1d2e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d";
    const UID: &str = "0c8f3e2a-4b1d-4f5e-9a7b-1c2d3e4f5a6b";

    fn cg(runtime: Option<Runtime>, uid: Option<&str>) -> cgroup::CgroupContainer {
        cgroup::CgroupContainer {
            id: ID.into(),
            runtime,
            pod_uid: uid.map(String::from),
            qos: uid.map(|_| Qos::Burstable),
            user: None,
        }
    }

    fn k8s_names(uid: &str) -> Names {
        Names {
            namespace: Some("shop".into()),
            pod: Some("orders-0".into()),
            container: Some("orders".into()),
            pod_uid: Some(uid.into()),
            ..Names::default()
        }
    }

    fn pairs(v: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        v.iter().map(|(k, v)| (*k, v.to_string())).collect()
    }

    #[test]
    fn a_pod_with_names() {
        let id = combine(
            cg(None, Some(UID)),
            Some((Runtime::Containerd, k8s_names(UID))),
        );
        assert_eq!(id.runtime, Some(Runtime::Containerd));
        assert_eq!(
            id.labels(),
            pairs(&[
                ("namespace", "shop"),
                ("pod", "orders-0"),
                ("container", "orders"),
                ("container_id", ID),
                ("pod_uid", UID)
            ])
        );
        assert_eq!(
            id.otel_labels(),
            pairs(&[
                ("k8s_namespace_name", "shop"),
                ("k8s_pod_name", "orders-0"),
                ("k8s_container_name", "orders"),
                ("container_id", ID),
                ("k8s_pod_uid", UID)
            ])
        );
        assert_eq!(id.application(), Some("orders"));
        assert_eq!(id.short(), "shop/orders-0/orders");
        assert!(id.complete());
    }

    /// Files that disagree with the cgroup, or that nobody but the container's user wrote, name
    /// no pod: the id and the cgroup's UID stay.
    #[test]
    fn disagreement_names_nothing() {
        let other = "11111111-2222-3333-4444-555555555555";
        let id = combine(
            cg(Some(Runtime::Containerd), Some(UID)),
            Some((Runtime::Containerd, k8s_names(other))),
        );
        assert_eq!(
            id.labels(),
            pairs(&[("container_id", ID), ("pod_uid", UID)])
        );
        assert!(!id.complete());
        // Another container's config.v2.json.
        let id = combine(
            cg(Some(Runtime::Docker), None),
            Some((
                Runtime::Docker,
                Names {
                    id: Some("f".repeat(64)),
                    name: Some("billing".into()),
                    ..Names::default()
                },
            )),
        );
        assert_eq!((id.name, id.pod), (None, None));
        // podman's files (a user's own) never name a pod.
        let id = combine(
            cg(Some(Runtime::Podman), None),
            Some((
                Runtime::Podman,
                Names {
                    name: Some("probe".into()),
                    ..k8s_names(UID)
                },
            )),
        );
        assert_eq!(id.pod, None);
        assert_eq!(id.name.as_deref(), Some("probe"));
        assert_eq!(id.labels(), pairs(&[("container_id", ID)]));
        assert_eq!(id.application(), Some("probe"));
    }

    #[test]
    fn pod_filters() {
        let named = combine(cg(None, Some(UID)), Some((Runtime::Crio, k8s_names(UID))));
        let unnamed = combine(cg(None, Some(UID)), None);
        let f = |ns: &[&str], pods: &[&str]| {
            let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
            PodFilter::new(&s(ns), &s(pods)).unwrap()
        };
        assert!(f(&[], &[]).selects(None));
        assert!(f(&["shop"], &[]).selects(Some(&named)));
        assert!(f(&["other", "sh*"], &["orders-*"]).selects(Some(&named)));
        assert!(!f(&["shop"], &["billing-*"]).selects(Some(&named)));
        assert!(!f(&["shop"], &[]).selects(Some(&unnamed)));
        assert!(!f(&[], &["*"]).selects(None));
        assert!(PodFilter::new(&["[".into()], &[]).is_err());
    }

    #[test]
    fn no_files() {
        let id = combine(cg(None, Some(UID)), None);
        assert_eq!(id.runtime, None);
        assert_eq!(id.short(), &ID[..12]);
        assert_eq!(id.application(), None);
        let json = serde_json::to_value(&id).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"id": ID, "pod": {"uid": UID, "qos": "burstable"}})
        );
        let named = combine(cg(None, Some(UID)), Some((Runtime::Crio, k8s_names(UID))));
        assert_eq!(
            serde_json::to_value(&named).unwrap(),
            serde_json::json!({"id": ID, "runtime": "crio", "pod": {"uid": UID, "qos": "burstable",
                "namespace": "shop", "pod": "orders-0", "container": "orders"}})
        );
    }
}
