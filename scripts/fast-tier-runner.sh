#!/usr/bin/env bash
# Cargo runner for the fast-tier check of scripts/test.sh: runs one test binary as a laptop
# without the test dependencies would, to prove that plain `cargo test` needs none of them:
#   * no network: a network namespace of its own with only loopback up;
#   * no JDK, Prometheus, gdb, systemd-analyze, Wine: in a mount namespace of its
#     own, /usr/lib/jvm and ~/.cache/hsinspect are hidden under empty tmpfs mounts and each of
#     those tools is /dev/null (so running it fails loudly), HSINSPECT_JDK17 points nowhere;
#   * no root: the binary runs as the unprivileged test user hsinspect-other
#     (scripts/setup-test-deps.sh makes it), with no capabilities; if that user cannot reach the
#     checkout (a clone under /root), as uid 0 with every capability dropped instead (it cannot
#     ptrace, chown or read other users' files), and says so.
# The target's tmp directory (CARGO_TARGET_TMPDIR, where tests put scratch files) is a fresh
# tmpfs the user can write.
#
# Usage (scripts/test.sh does this; needs root, unshare/setpriv from util-linux, ip from iproute2):
#   CARGO_TARGET_<HOST_TRIPLE>_RUNNER=scripts/fast-tier-runner.sh cargo test
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 <test binary> [args...]" >&2; exit 2; }
if [ "$(id -u)" != 0 ]; then
  echo "fast-tier-runner: must run as root (it makes namespaces, then drops to a test user)" >&2
  exit 2
fi
user=hsinspect-other
id -u "$user" >/dev/null 2>&1 || {
  echo "fast-tier-runner: test user $user missing: run scripts/setup-test-deps.sh" >&2
  exit 2
}
bin=$(realpath "$1")
# A test binary is <target>/<profile>/deps/<binary>, and CARGO_TARGET_TMPDIR is <target>/tmp
# (doc tests run from a directory of rustdoc's own, and need none).
target_tmp=
if [ "$(basename "$(dirname "$bin")")" = deps ]; then
  target_tmp=$(dirname "$(dirname "$(dirname "$bin")")")/tmp
  mkdir -p "$target_tmp"
fi
# The tools the slow tier needs; each is hidden if present.
tools=(java javac jcmd jstat jps jhsdb jar promtool prometheus gdb gcore systemd-analyze wine wine64)
drop=(--inh-caps=-all --bounding-set=-all --no-new-privs)
if setpriv --reuid="$user" --regid="$user" --clear-groups -- test -x "$bin" -a -r "$PWD" 2>/dev/null; then
  as=(--reuid="$user" --regid="$user" --clear-groups "${drop[@]}")
else
  echo "fast-tier-runner: $user cannot reach $bin: running it as uid 0 without capabilities" >&2
  as=("${drop[@]}")
fi
export FAST_TIER_TMP="$target_tmp" FAST_TIER_TOOLS="${tools[*]}" AS_N=${#as[@]}
exec unshare --net --mount --propagation private -- bash -c '
  set -eu
  ip link set lo up
  for d in /usr/lib/jvm "$HOME/.cache/hsinspect"; do
    if [ -d "$d" ]; then mount -t tmpfs -o mode=755,size=1m hsinspect-hidden "$d"; fi
  done
  for t in $FAST_TIER_TOOLS; do
    if p=$(command -v "$t"); then mount --bind /dev/null "$(realpath "$p")"; fi
  done
  if [ -n "$FAST_TIER_TMP" ]; then mount -t tmpfs -o mode=1777 hsinspect-target-tmp "$FAST_TIER_TMP"; fi
  as=("${@:1:$AS_N}")
  shift "$AS_N"
  exec setpriv "${as[@]}" -- env -u HSINSPECT_JDK_CACHE -u CARGO_HOME -u RUSTUP_HOME \
    HOME=/nonexistent HSINSPECT_JDK17=/nonexistent/jdk17 "$@"
' fast-tier "${as[@]}" "$bin" "${@:2}"
