//! `cargo bench -p hsinspect-core --bench container`: what naming a JVM's container costs `list`
//! (once per JVM and run) and `serve`/`top` (once per JVM's life: the answer is cached per pid
//! and start time). `parse_cgroup`: the pure parser on a v2 line and a v1 file of eleven
//! hierarchies; `containerd_spec`: the names out of a containerd task bundle's OCI spec of
//! realistic size (an environment of 40 variables, 20 mounts); `identify_host_process`: the whole
//! Linux reader on this process (its `/proc/<pid>/cgroup`, on the host or in whatever container
//! runs the bench).

use divan::black_box;
use hsinspect_core::container::{cgroup, identify, metadata};

fn main() {
    divan::main();
}

const ID: &str = "3c1d2e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d";
const UID_: &str = "0c8f3e2a_4b1d_4f5e_9a7b_1c2d3e4f5a6b";

#[divan::bench]
fn parse_cgroup_v2(b: divan::Bencher) {
    let text = format!(
        "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID_}.slice/cri-containerd-{ID}.scope\n"
    );
    b.bench(|| cgroup::parse(black_box(&text)));
}

#[divan::bench]
fn parse_cgroup_v1(b: divan::Bencher) {
    let path = format!("/kubepods/burstable/pod{}/{ID}", UID_.replace('_', "-"));
    let text: String = (1..=11)
        .rev()
        .map(|n| format!("{n}:controller{n}:{path}\n"))
        .chain(["0::/\n".to_string()])
        .collect();
    b.bench(|| cgroup::parse(black_box(&text)));
}

#[divan::bench]
fn containerd_spec(b: divan::Bencher) {
    let env: Vec<String> = (0..40)
        .map(|i| format!("VAR_{i}=value-{i}-{}", "x".repeat(40)))
        .collect();
    let mounts: Vec<serde_json::Value> = (0..20)
        .map(|i| {
            serde_json::json!({"destination": format!("/mnt/{i}"), "type": "bind",
            "source": format!("/var/lib/kubelet/pods/x/volumes/{i}"), "options": ["rbind", "ro"]})
        })
        .collect();
    let spec = serde_json::json!({
        "ociVersion": "1.1.0",
        "process": {"args": ["java", "-jar", "/app.jar"], "env": env, "cwd": "/"},
        "mounts": mounts,
        "annotations": {
            "io.kubernetes.cri.container-type": "container",
            "io.kubernetes.cri.container-name": "orders",
            "io.kubernetes.cri.sandbox-name": "orders-7d9f8b6c5-x2x9q",
            "io.kubernetes.cri.sandbox-namespace": "shop",
            "io.kubernetes.cri.sandbox-uid": UID_.replace('_', "-"),
        }
    })
    .to_string();
    b.bench(|| metadata::containerd_bundle(black_box(spec.as_bytes())));
}

#[divan::bench]
fn identify_host_process(b: divan::Bencher) {
    let me = std::process::id() as i32;
    b.bench(|| identify(black_box(me), std::path::Path::new("/")));
}
