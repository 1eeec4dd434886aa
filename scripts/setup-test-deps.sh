#!/usr/bin/env bash
# Installs everything the integration tests need on a fresh Debian/Ubuntu machine (run as root):
#   * JDK 17 (javac, jar, jcmd; the default test target), gdb (core files), binutils (strip,
#     objcopy), gcc (a C launcher embedding the JVM), util-linux (unshare, setpriv), passwd (useradd);
#   * tmux (drives `inspect top`'s full-screen view in tests/integration/top.rs);
#   * podman and runc (tests/integration/image.rs builds and runs deploy/Containerfile's image);
#   * containerd with ctr (tests/integration/containers.rs: JVMs in containerd and podman
#     containers, named by their pods);
#   * kubernetes-validate (PyPI: deploy/kubernetes/ against the Kubernetes schemas, offline);
#   * prometheus and promtool (Debian's `prometheus`: the Prometheus output and serve tests),
#     systemd-analyze and python3-yaml (the deploy/ checks); curl and openssl (serve over TLS:
#     tests/integration/serve_tls.rs);
#   * opentelemetry-proto from PyPI (scripts/python-deps.sh: the OTLP test receiver's decoder,
#     in ~/.cache/hsinspect/python);
#   * the JDK 11/21/25 runtimes (scripts/fetch-jdks.sh, cached outside the source tree);
#   * VisualVM's heap library, the HPROF reader tests/java/HprofCheck.java checks heap dumps with
#     (scripts/visualvm-heaplib.sh: the jar of Debian's visualvm package, not installed; in
#     ~/.cache/hsinspect/visualvm);
#   * unprivileged users for the other-user tests: hsinspect-jvm (runs a JVM) and
#     hsinspect-other (runs inspect against it); hsinspect-hostile (owns the hsperfdata directory
#     the hostile-file tests plant files in); hsinspect-svc (a service's JVM under umask 0027, as
#     Tomcat runs: tests/integration/field.rs).
# Idempotent: what is already there is left alone. scripts/setup.sh runs it beside the JDK 8
# root (jdk8-root.sh), the Windows and the aarch64 setups.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

need=()
[ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/javac ] || need+=(openjdk-17-jdk-headless)
command -v gdb >/dev/null || need+=(gdb)
command -v strip >/dev/null && command -v objcopy >/dev/null || need+=(binutils)
command -v unshare >/dev/null && command -v setpriv >/dev/null || need+=(util-linux)
command -v ip >/dev/null || need+=(iproute2)                           # fast-tier-runner.sh: loopback up
command -v useradd >/dev/null || need+=(passwd)
command -v cc >/dev/null || need+=(gcc libc6-dev)   # the JNI launcher of tests/integration/list.rs
command -v promtool >/dev/null && command -v prometheus >/dev/null || need+=(prometheus)
command -v systemd-analyze >/dev/null || need+=(systemd)               # deploy/ unit check
python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)          # deploy/ DaemonSet check
command -v curl >/dev/null || need+=(curl)                            # serve over TLS
command -v openssl >/dev/null || need+=(openssl)                      # serve's TLS versions
command -v tmux >/dev/null || need+=(tmux)                             # tests/integration/top.rs
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
command -v podman >/dev/null || need+=(podman)     # tests/integration/image.rs: the FROM scratch image
command -v runc >/dev/null || need+=(runc)         # podman's crun fails on hybrid cgroups here
# tests/integration/containers.rs: a JVM in a containerd container made with ctr, as the CRI
# plugin makes a pod's (Debian's containerd ships ctr; the test starts the daemon if needed)
command -v containerd >/dev/null && command -v ctr >/dev/null || need+=(containerd)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup-test-deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "$here/apt.sh" update -qq
  "$here/apt.sh" install -y -qq "${need[@]}"
fi

# tests/integration/kubernetes.rs: deploy/kubernetes/ checked offline against the Kubernetes
# schemas kubernetes-validate bundles (PyPI; no cluster, no network at test time)
python3 -c 'import kubernetes_validate' 2>/dev/null ||
  python3 -m pip install --quiet 'kubernetes-validate==1.37.0'

for user in hsinspect-jvm hsinspect-other hsinspect-hostile hsinspect-svc; do
  if ! id -u "$user" >/dev/null 2>&1; then
    echo "setup-test-deps: adding test user $user"
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
  fi
done

"$here/fetch-jdks.sh"
"$here/python-deps.sh"
"$here/visualvm-heaplib.sh"
