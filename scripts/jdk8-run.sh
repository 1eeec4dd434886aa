#!/usr/bin/env bash
# Runs a command inside the JDK 8 test root (scripts/jdk8-root.sh): in a private mount namespace
# (unshare --mount) with its own /proc and /sys mounted in the root, then chroot. Nothing is left
# mounted on the host, the pid namespace is the host's (the command's pid is the host pid, so JDK
# 8's jcmd, jstat and jps inside the root see the JVMs started the same way), and every step
# execs, so the pid of this script is the pid of the command.
#
# Usage: scripts/jdk8-run.sh CMD [ARG...]    e.g. scripts/jdk8-run.sh /usr/lib/jvm/java-8-openjdk-amd64/bin/jps -l
# Env:   HSINSPECT_JDK8_ROOT   the root (default ~/.cache/hsinspect/jdk8-root)
#        HSINSPECT_JDK8_FD3    a host directory to open as fd 3 first: the command reaches it as
#                              /proc/self/fd/3 (test classes, a place to write a capture)
#        HSINSPECT_JDK8_PIDNS  1: also a pid namespace of its own (unshare --pid --fork: a
#                              container; the command is pid 1 there and the child of this pid)
#                              with a private /tmp (a tmpfs on the root's /tmp): a JVM that starts
#                              deletes the hsperfdata files of pids it cannot see, so it must not
#                              share /tmp with the root's other JVMs
set -euo pipefail
root="${HSINSPECT_JDK8_ROOT:-$HOME/.cache/hsinspect/jdk8-root}"
if [ ! -f "$root/.complete" ]; then
  echo "jdk8-run: no JDK 8 root at $root: run scripts/jdk8-root.sh (or scripts/setup-test-deps.sh)" >&2
  exit 1
fi
if [ -n "${HSINSPECT_JDK8_FD3:-}" ]; then
  exec 3<"$HSINSPECT_JDK8_FD3"
fi
pidns=()
tmp=:
if [ "${HSINSPECT_JDK8_PIDNS:-}" = 1 ]; then
  pidns=(--pid --fork)
  tmp='mount -t tmpfs -o mode=1777 hsinspect-tmp "$0/tmp"'
fi
exec unshare --mount "${pidns[@]}" --propagation private -- sh -c \
  "mount -t proc proc \"\$0/proc\" && mount -t sysfs sysfs \"\$0/sys\" && $tmp && exec chroot \"\$0\" \"\$@\"" \
  "$root" "$@"
