#!/usr/bin/env bash
# Installs and makes everything the slow tier needs (run as root; idempotent, cached in
# ~/.cache/hsinspect). The parts wait mostly on downloads, apt, mmdebstrap, Wine or qemu rather
# than on each other, so they run at once:
#   scripts/setup-test-deps.sh  apt packages (JDK 17's javac among them), JDKs 11/21/25, test users;
#   scripts/jdk8-root.sh        the JDK 8 root (mmdebstrap);
#   scripts/windows/setup.sh    Wine, the cross toolchain, the Windows JDKs; then, once JDK 17's
#                               javac is there, the minidumps of scripts/windows/minidump.py and
#                               threads_minidump.py (made once, cached);
#   scripts/aarch64/setup.sh    qemu, the arm64 root and kernels; then, with javac, the VM's cores
#                               of scripts/aarch64/cores.sh (made once, cached);
#   toolchains                  the rustup targets scripts/test.sh builds for (the two static musl
#                               ones, and macOS and Windows for scripts/check-portable.sh), and
#                               the C toolchains of scripts/musl-env.sh (musl-gcc; clang with an
#                               arm64 musl sysroot).
# apt-get waits for the dpkg lock (DPkg::Lock::Timeout) where two parts install at once. Each
# background part writes target/setup/<part>.log, printed when it ends; a part that fails makes the
# script exit non-zero after the others end. scripts/test.sh runs this first; .ci/run starts it
# before its lint builds so that a cold machine's downloads overlap them.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=target/setup
mkdir -p "$logs"
t0=$(date +%s)
say() { echo "setup: $* ($(( $(date +%s) - t0 )) s)"; }
declare -A pid
failed=()
start() { # start NAME CMD...: runs CMD in the background, its output in $logs/NAME.log
  local name=$1; shift
  "$@" >"$logs/$name.log" 2>&1 &
  pid[$name]=$!
}
finish() { # finish NAME: waits for a background part, prints its log
  local rc=0
  wait "${pid[$1]}" || rc=$?
  sed "s/^/$1: /" "$logs/$1.log"
  if [ "$rc" != 0 ]; then failed+=("$1"); echo "setup: $1 failed (exit $rc)" >&2; fi
  say "$1 done"
  return "$rc"
}
start jdk8 scripts/jdk8-root.sh
start windows scripts/windows/setup.sh
start aarch64 scripts/aarch64/setup.sh
toolchains() {
  local t
  for t in x86_64-unknown-linux-musl aarch64-unknown-linux-musl aarch64-apple-darwin x86_64-pc-windows-gnu; do
    rustup target list --installed | grep -qx $t || rustup target add $t
  done
  # shellcheck source=musl-env.sh
  source scripts/musl-env.sh
}
start toolchains toolchains
scripts/setup-test-deps.sh || failed+=(linux)
say "linux done"
if finish windows && [ ${#failed[@]} = 0 ]; then
  start minidumps sh -c 'python3 scripts/windows/minidump.py && python3 scripts/windows/threads_minidump.py'
fi
if finish aarch64 && [ ${#failed[@]} = 0 ]; then
  start cores scripts/aarch64/cores.sh
fi
finish jdk8 || true
finish toolchains || true
[ -z "${pid[minidumps]:-}" ] || finish minidumps || true
[ -z "${pid[cores]:-}" ] || finish cores || true
[ ${#failed[@]} = 0 ] || { echo "setup: failed: ${failed[*]}" >&2; exit 1; }
say "all ready"
