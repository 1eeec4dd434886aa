#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine, and does nothing when it is all there:
# JDK 17 (javac, jcmd, jhsdb), gdb (gcore), and the JDK 11/21 runtimes (scripts/fetch-jdks.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
[ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/javac ] || need+=(openjdk-17-jdk-headless)
command -v gcore >/dev/null || need+=(gdb)
command -v strip >/dev/null && command -v objcopy >/dev/null || need+=(binutils)
command -v unshare >/dev/null && command -v setpriv >/dev/null || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup-test-deps: installing ${need[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-test-deps: need root to apt-get install ${need[*]}" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
if [ -x scripts/fetch-jdks.sh ]; then
  scripts/fetch-jdks.sh
fi
