//! The names a container runtime wrote for a container, from the bytes of its own files: pure, no
//! I/O (the reads are the seam's, `linux.rs`).
//!
//! | runtime | file (under the host's root) | what names it |
//! |---|---|---|
//! | containerd (CRI) | `/run/containerd/io.containerd.runtime.v2.task/<ns>/<id>/config.json`, the OCI bundle's spec | `annotations`: `io.kubernetes.cri.sandbox-namespace`, `…sandbox-name`, `…container-name`, `…sandbox-uid`, and `io.kubernetes.cri.container-type` = `container` (containerd `pkg/cri/annotations/annotations.go`, set by `internal/cri/server/container_create_linux.go`) |
//! | CRI-O | `/run/containers/storage/overlay-containers/<id>/userdata/config.json` (its bundle) | `annotations`: `io.kubernetes.pod.namespace`, `io.kubernetes.pod.name`, `io.kubernetes.container.name`, `io.kubernetes.pod.uid` (cri-o `pkg/annotations`, the kubelet's `pkg/kubelet/types/labels.go` keys) |
//! | Docker, cri-dockerd | `/var/lib/docker/containers/<id>/config.v2.json` | `Config.Labels`: the same `io.kubernetes.*` keys (cri-dockerd `core/docker_service.go` labels every container it makes); else `Name` (`/<name>`) |
//! | podman | `<storage>/<driver>-containers/containers.json` (containers/storage's list: `id`, `names`) | the first of `names`; podman's `config.json` carries no name (`io.container.manager` = `libpod` only) |
//!
//! Every value is checked against the rules its owner enforces (a namespace and a container
//! name are DNS-1123 labels, a pod name a DNS-1123 subdomain, a Docker or podman name
//! `[a-zA-Z0-9][a-zA-Z0-9_.-]*`); a file that does not parse, or a value that breaks its rule,
//! names nothing.

use serde::Deserialize;
use std::collections::BTreeMap;

use super::cgroup::is_pod_uid;

/// What a runtime's file says of a container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// The pod's namespace.
    pub namespace: Option<String>,
    /// The pod's name.
    pub pod: Option<String>,
    /// The container's name in the pod spec.
    pub container: Option<String>,
    /// The pod's UID, as the runtime recorded it (checked against the cgroup's).
    pub pod_uid: Option<String>,
    /// The runtime's own name of the container (Docker, podman).
    pub name: Option<String>,
    /// The container id the file says it describes, when it says one (Docker's `ID`).
    pub id: Option<String>,
}

impl Names {
    /// Whether the file named the container in a pod (namespace, pod and container all given).
    pub fn is_kubernetes(&self) -> bool {
        self.namespace.is_some() && self.pod.is_some() && self.container.is_some()
    }
}

#[derive(Deserialize)]
struct OciSpec {
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct DockerConfig {
    #[serde(rename = "ID", default)]
    id: Option<String>,
    #[serde(rename = "Name", default)]
    name: Option<String>,
    #[serde(rename = "Config", default)]
    config: Option<DockerInner>,
}

#[derive(Deserialize)]
struct DockerInner {
    #[serde(rename = "Labels", default)]
    labels: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
struct StorageContainer {
    id: String,
    #[serde(default)]
    names: Vec<String>,
}

/// The Kubernetes names of a containerd CRI bundle's OCI spec (`config.json`). A sandbox's
/// (pause) spec, or one without the CRI annotations, names nothing.
pub fn containerd_bundle(config_json: &[u8]) -> Names {
    let Ok(spec) = serde_json::from_slice::<OciSpec>(config_json) else {
        return Names::default();
    };
    let a = &spec.annotations;
    if a.get("io.kubernetes.cri.container-type")
        .is_some_and(|t| t != "container")
    {
        return Names::default();
    }
    kubernetes(
        a,
        "io.kubernetes.cri.sandbox-namespace",
        "io.kubernetes.cri.sandbox-name",
        "io.kubernetes.cri.container-name",
        "io.kubernetes.cri.sandbox-uid",
    )
}

/// The Kubernetes names of a CRI-O container's OCI spec (`userdata/config.json`).
pub fn crio_config(config_json: &[u8]) -> Names {
    match serde_json::from_slice::<OciSpec>(config_json) {
        Ok(spec) => kubernetes(
            &spec.annotations,
            POD_NAMESPACE,
            POD_NAME,
            CONTAINER_NAME,
            POD_UID,
        ),
        Err(_) => Names::default(),
    }
}

const POD_NAMESPACE: &str = "io.kubernetes.pod.namespace";
const POD_NAME: &str = "io.kubernetes.pod.name";
const CONTAINER_NAME: &str = "io.kubernetes.container.name";
const POD_UID: &str = "io.kubernetes.pod.uid";

/// Docker's `config.v2.json`: the Kubernetes names of cri-dockerd's labels, the container's
/// name (`Name` without its `/`) and its `ID`.
pub fn docker_config(config_v2_json: &[u8]) -> Names {
    let Ok(c) = serde_json::from_slice::<DockerConfig>(config_v2_json) else {
        return Names::default();
    };
    let labels = c.config.and_then(|c| c.labels).unwrap_or_default();
    let mut names = kubernetes(&labels, POD_NAMESPACE, POD_NAME, CONTAINER_NAME, POD_UID);
    names.name = c
        .name
        .as_deref()
        .map(|n| n.strip_prefix('/').unwrap_or(n))
        .filter(|n| is_runtime_name(n))
        .map(String::from);
    names.id = c.id;
    names
}

/// containers/storage's `containers.json` (podman's, CRI-O's): the first name of container `id`.
pub fn storage_name(containers_json: &[u8], id: &str) -> Option<String> {
    let list: Vec<StorageContainer> = serde_json::from_slice(containers_json).ok()?;
    let c = list.into_iter().find(|c| c.id == id)?;
    c.names.into_iter().next().filter(|n| is_runtime_name(n))
}

/// The four Kubernetes values under these keys, each kept only when it obeys its rule; all three
/// names or none.
fn kubernetes(
    a: &BTreeMap<String, String>,
    namespace: &str,
    pod: &str,
    container: &str,
    uid: &str,
) -> Names {
    let get = |k: &str, ok: fn(&str) -> bool| a.get(k).filter(|v| ok(v)).cloned();
    let ns = get(namespace, is_dns_label);
    let pod = get(pod, is_dns_subdomain);
    let container = get(container, is_dns_label);
    let pod_uid = get(uid, is_pod_uid);
    if ns.is_none() || pod.is_none() || container.is_none() {
        return Names {
            pod_uid,
            ..Names::default()
        };
    }
    Names {
        namespace: ns,
        pod,
        container,
        pod_uid,
        ..Names::default()
    }
}

/// A DNS-1123 label (RFC 1123; the rule of namespace and container names in Kubernetes'
/// `apimachinery/pkg/util/validation`): 1 to 63 of `[a-z0-9-]`, alphanumeric at both ends.
pub fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'))
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A DNS-1123 subdomain (a pod name): up to 253 characters, dot-separated DNS-1123 labels.
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// A Docker or podman container name (moby `daemon/names`' `RestrictedNamePattern`,
/// `[a-zA-Z0-9][a-zA-Z0-9_.-]*`), at most 253 characters.
pub fn is_runtime_name(s: &str) -> bool {
    let mut b = s.bytes();
    s.len() <= 253
        && b.next().is_some_and(|f| f.is_ascii_alphanumeric())
        && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UID: &str = "0c8f3e2a-4b1d-4f5e-9a7b-1c2d3e4f5a6b";

    /// A bundle spec as containerd's CRI plugin writes it (the annotations of
    /// `container_create_linux.go`; the rest of the spec trimmed).
    #[test]
    fn containerd_cri_annotations() {
        let spec = format!(
            r#"{{"ociVersion":"1.1.0","process":{{"args":["java","-jar","/app.jar"]}},
            "annotations":{{"io.kubernetes.cri.container-name":"orders",
            "io.kubernetes.cri.container-type":"container",
            "io.kubernetes.cri.image-name":"registry/orders:1.4",
            "io.kubernetes.cri.sandbox-id":"{id}",
            "io.kubernetes.cri.sandbox-name":"orders-7d9f8b6c5-x2x9q",
            "io.kubernetes.cri.sandbox-namespace":"shop",
            "io.kubernetes.cri.sandbox-uid":"{UID}"}}}}"#,
            id = "a".repeat(64)
        );
        let n = containerd_bundle(spec.as_bytes());
        assert_eq!(n.namespace.as_deref(), Some("shop"));
        assert_eq!(n.pod.as_deref(), Some("orders-7d9f8b6c5-x2x9q"));
        assert_eq!(n.container.as_deref(), Some("orders"));
        assert_eq!(n.pod_uid.as_deref(), Some(UID));
        assert!(n.is_kubernetes());
        // The pause container's bundle: a sandbox, not a container.
        let sandbox = spec.replace(
            r#"container-type":"container""#,
            r#"container-type":"sandbox""#,
        );
        assert_eq!(containerd_bundle(sandbox.as_bytes()), Names::default());
        // A plain containerd container (ctr, nerdctl): no names.
        assert_eq!(
            containerd_bundle(br#"{"annotations":{"nerdctl/name":"x"}}"#),
            Names::default()
        );
        assert_eq!(
            containerd_bundle(br#"{"ociVersion":"1.1.0"}"#),
            Names::default()
        );
    }

    #[test]
    fn crio_annotations() {
        let spec = format!(
            r#"{{"annotations":{{"io.kubernetes.pod.namespace":"shop",
            "io.kubernetes.pod.name":"orders-0","io.kubernetes.container.name":"orders",
            "io.kubernetes.pod.uid":"{UID}","io.kubernetes.cri-o.ContainerType":"container"}}}}"#
        );
        let n = crio_config(spec.as_bytes());
        assert_eq!(
            (
                n.namespace.as_deref(),
                n.pod.as_deref(),
                n.container.as_deref()
            ),
            (Some("shop"), Some("orders-0"), Some("orders"))
        );
    }

    #[test]
    fn docker_labels_and_name() {
        let cri_dockerd = format!(
            r#"{{"ID":"{id}","Name":"/k8s_orders_orders-0_shop_{UID}_0",
            "Config":{{"Labels":{{"io.kubernetes.pod.namespace":"shop",
            "io.kubernetes.pod.name":"orders-0","io.kubernetes.container.name":"orders",
            "io.kubernetes.pod.uid":"{UID}","io.kubernetes.docker.type":"container"}}}}}}"#,
            id = "b".repeat(64)
        );
        let n = docker_config(cri_dockerd.as_bytes());
        assert!(n.is_kubernetes());
        assert_eq!(n.container.as_deref(), Some("orders"));
        assert_eq!(n.id, Some("b".repeat(64)));
        let plain = docker_config(br#"{"ID":"x","Name":"/billing","Config":{"Labels":null}}"#);
        assert_eq!(plain.name.as_deref(), Some("billing"));
        assert!(!plain.is_kubernetes());
    }

    #[test]
    fn podman_storage_names() {
        let json = format!(
            r#"[{{"id":"{a}","names":["other"]}},{{"id":"{b}","names":["probe-jvm","alias"],"metadata":"{{}}"}}]"#,
            a = "a".repeat(64),
            b = "b".repeat(64)
        );
        assert_eq!(
            storage_name(json.as_bytes(), &"b".repeat(64)).as_deref(),
            Some("probe-jvm")
        );
        assert_eq!(storage_name(json.as_bytes(), &"c".repeat(64)), None);
        assert_eq!(storage_name(b"{", &"b".repeat(64)), None);
    }

    /// Bad values, bad files: nothing named, never a wrong or partial name.
    #[test]
    fn bad_input_names_nothing() {
        for bad in [
            &b""[..],
            b"null",
            b"[]",
            b"{\"annotations\":[]}",
            b"{\"annotations\":{\"io.kubernetes.pod.name\":3}}",
            &[0xff, 0xfe, 0x00],
        ] {
            assert_eq!(crio_config(bad), Names::default());
            assert_eq!(containerd_bundle(bad), Names::default());
            assert_eq!(docker_config(bad), Names::default());
        }
        for (ns, pod, container) in [
            ("Shop", "orders-0", "orders"),
            ("shop", "orders-0\n", "orders"),
            ("shop", "orders-0", "orders\"}"),
            ("", "orders-0", "orders"),
            ("shop", "orders_0", "orders"),
            ("-shop", "orders-0", "orders"),
        ] {
            let spec = serde_json::json!({"annotations": {
                POD_NAMESPACE: ns, POD_NAME: pod, CONTAINER_NAME: container}});
            let n = crio_config(spec.to_string().as_bytes());
            assert!(
                !n.is_kubernetes() && n.namespace.is_none() && n.pod.is_none(),
                "{spec}"
            );
        }
        let long = "a".repeat(64);
        assert!(!is_dns_label(&long));
        assert!(is_dns_subdomain("a.b-c.d"));
        assert!(!is_runtime_name("/x"));
        assert!(!is_runtime_name("a b"));
        assert!(is_runtime_name("my_app.1-2"));
    }
}
