#!/usr/bin/env bash
# Builds the JDK 8 test root: a Debian sid root filesystem with `openjdk-8-jdk-headless` (8u…)
# and procps, made with mmdebstrap, in ${HSINSPECT_JDK8_ROOT:-$HOME/.cache/hsinspect/jdk8-root}.
# JDK 8 is no longer in Debian stable, and sid's build needs a newer glibc than the host may have,
# so the tests run JDK 8 JVMs (and JDK 8's own jcmd, jstat, jps as references) inside this root
# (a private mount namespace with its own /proc, then chroot: scripts/jdk8-run.sh; tests/integration/jdk8.rs).
# About 140 s and 400 MB the first time; idempotent: a complete root (a .complete marker written
# after `java -version` ran inside it) is left alone. Needs root (mmdebstrap's root mode, chroot).
#
# Usage: scripts/jdk8-root.sh            (prints the root's path on its last line)
set -euo pipefail

root="${HSINSPECT_JDK8_ROOT:-$HOME/.cache/hsinspect/jdk8-root}"
java=/usr/lib/jvm/java-8-openjdk-amd64/bin/java

if [ -f "$root/.complete" ] && [ -x "$root$java" ]; then
  echo "jdk8-root: JDK 8 root already in $root ($(cat "$root/.complete"))"
  echo "$root"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  echo "jdk8-root: needs root (mmdebstrap in root mode, chroot)" >&2
  exit 1
fi

if ! command -v mmdebstrap >/dev/null; then
  echo "jdk8-root: installing mmdebstrap"
  export DEBIAN_FRONTEND=noninteractive
  "$(dirname "$0")/apt.sh" update -qq
  "$(dirname "$0")/apt.sh" install -y -qq mmdebstrap
fi

mkdir -p "$(dirname "$root")"
work="$(mktemp -d "$(dirname "$root")/.jdk8-root.XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "jdk8-root: building a Debian sid root with openjdk-8-jdk-headless in $root (~140 s)"
# Check-Valid-Until: sid's Release file can look expired against a machine's clock.
mmdebstrap --quiet --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
  --include=openjdk-8-jdk-headless,procps sid "$work/root"
version="$(unshare --mount --fork sh -c \
  'mount -t proc proc "$1/proc" && chroot "$1" "$2" -version' sh "$work/root" "$java" 2>&1 |
  sed -n 's/^openjdk version "\(.*\)".*/\1/p')"
case "$version" in
  1.8.0*) ;;
  *) echo "jdk8-root: java -version inside the root did not report 1.8.0 (got '$version')" >&2
     exit 1 ;;
esac
echo "openjdk-8-jdk-headless $version" >"$work/root/.complete"
rm -rf "$root"
mv "$work/root" "$root"
rm -rf "$work"
trap - EXIT
echo "jdk8-root: JDK 8 ($version) ready in $root"
echo "$root"
