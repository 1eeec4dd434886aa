#!/usr/bin/env python3
"""`inspect histo <pid>` against `jcmd <pid> GC.class_histogram -all` on one large G1 heap, and
against `jhsdb jmap --histo --pid` on a small one, in one run; then `inspect histo --core` of a
gcore of the large heap (python3 standard library only, with benchlib.py).

The JVMs run tests/java/HeapTarget.java on JDK 17 with G1: the large one with --count objects
of each kind (the default, 7,000,000, makes a heap of about 1.5 GB in about 30 million objects
at -Xmx3g), the small one with --small-count (100,000: about 0.4 million objects). HeapTarget
fills its heap, collects once and then allocates nothing.

Measured, interleaved round-robin so that load changes hit every tool alike: wall time (median
and spread of R runs), CPU time of the tool's own process, peak RSS (GNU time %M, the largest of
3 runs; jhsdb 1), how long inspect held the JVM (its `-v` line "stopped N threads for X ms"),
and from the core: heap bytes walked a second. Every run's output must hold HeapTarget's
`HeapTarget$Node` row with --count instances.

Goals, printed as PASS/MISS (they never fail the run): inspect >= 2x faster than jcmd (median
wall), >= 300x faster than jhsdb on the small heap, peak RSS <= 64 MiB, the JVM held no longer
than the walk (the hold is within 10 % of inspect's wall), from a core >= 1 GB/s.

Usage:  bench/bench_heap.py [--runs 5] [--jhsdb-runs 1] [--count N] [--small-count N]
                              [--no-core] [--inspect PATH] [--jdk DIR] [--json FILE]
It builds `cargo build --release` unless --inspect is given. Run it as root (the memory read
needs ptrace access; jhsdb and gcore too). The core (about the heap's size) is written under
$TMPDIR and removed.
Exit status 0 when the measurements ran (whatever the goals say), 2 on a setup error.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402  (bench/benchlib.py: what every benchmark shares)

GOAL_VS_JCMD = 2.0
GOAL_VS_JHSDB = 300.0
GOAL_RSS_MIB = 64.0
GOAL_CORE_GBS = 1.0


def start_heap_target(jdk, classes, count, xmx):
    """A HeapTarget JVM with `count` objects of each kind; returns the Popen once it is READY."""
    p = subprocess.Popen(
        [f"{jdk}/bin/java", f"-Xmx{xmx}", "-XX:+UseG1GC", "-cp", classes, "HeapTarget",
         str(count)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if p.stdout.readline().strip() != b"READY":
        benchlib.stop([p])
        raise benchlib.SetupError(f"HeapTarget {count} did not start")
    return p


def start_targets(jdk, inspect_path, count, small_count, prefix, tools=("java", "javac", "jcmd", "jhsdb")):
    """Checks the JDK's `tools`, builds inspect (unless `inspect_path`), compiles HeapTarget into
    a new temporary directory and starts the large (-Xmx3g) and the small (256m) HeapTarget.
    Returns (inspect, tmp, big, small); raises benchlib.SetupError (the JVMs started are
    stopped)."""
    for tool in tools:
        if not (jdk / "bin" / tool).exists():
            raise benchlib.SetupError(f"{jdk}/bin/{tool} missing: {benchlib.JDK_HINT}")
    inspect = Path(inspect_path) if inspect_path else benchlib.build_inspect()
    tmp = tempfile.mkdtemp(prefix=prefix)
    src = benchlib.REPO / "tests/java/HeapTarget.java"
    r = subprocess.run([str(jdk / "bin/javac"), "-d", tmp, str(src)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise benchlib.SetupError(f"javac failed: {r.stderr}")
    print(f"starting HeapTarget {count} (-Xmx3g) and {small_count}", file=sys.stderr)
    big = start_heap_target(jdk, tmp, count, "3g")
    try:
        small = start_heap_target(jdk, tmp, small_count, "256m")
    except benchlib.SetupError:
        benchlib.stop([big])
        raise
    return inspect, tmp, big, small


def node_row_check(count):
    """A check for benchlib.interleaved: the HeapTarget$Node row holds `count` instances."""
    pattern = re.compile(r"^\s*\d+:\s+(\d+)\s+\d+\s+HeapTarget\$Node\b", re.M)

    def check(name, text):
        m = pattern.search(text)
        if not m or int(m.group(1)) != count:
            raise RuntimeError(f"{name}: no HeapTarget$Node row of {count}: {text[:400]}")
    return check


def has_node_row(name, text):
    """A check for benchlib.interleaved: HeapTarget's Node class is in the histogram (jhsdb
    prints its own layout)."""
    if "HeapTarget$Node" not in text:
        raise RuntimeError(f"{name}: no HeapTarget$Node row: {text[:400]}")


def held_ms(stderr):
    """The hold from inspect's -v line `stopped N threads for X ms`."""
    m = re.search(r"stopped \d+ threads for ([\d.]+) ms", stderr)
    return float(m.group(1)) if m else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="runs of inspect and jcmd")
    ap.add_argument("--jhsdb-runs", type=int, default=1)
    ap.add_argument("--count", type=int, default=7_000_000)
    ap.add_argument("--small-count", type=int, default=100_000)
    ap.add_argument("--no-core", action="store_true", help="skip the gcore measurement")
    ap.add_argument("--inspect")
    ap.add_argument("--jdk", default=benchlib.DEFAULT_JDK)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    jdk = Path(args.jdk)
    jvms = []
    try:
        if not os.access(benchlib.GNU_TIME, os.X_OK):
            raise benchlib.SetupError(f"{benchlib.GNU_TIME} missing: apt-get install -y time")
        if not args.no_core and shutil.which("gcore") is None:
            raise benchlib.SetupError("gcore missing: apt-get install -y gdb, or --no-core")
        inspect, tmp, big, small = start_targets(jdk, args.inspect, args.count, args.small_count,
                                                 "bench-heap-")
        jvms += [big, small]
    except benchlib.SetupError as e:
        print(f"bench_heap: {e}", file=sys.stderr)
        benchlib.stop(jvms)
        return 2
    core_result = None
    try:
        pid, spid = str(big.pid), str(small.pid)
        ours = [str(inspect), "histo", "-v", pid]
        jcmd = [str(jdk / "bin/jcmd"), pid, "GC.class_histogram", "-all"]
        benchlib.run_once(ours, os.path.join(tmp, "warm"))
        res = benchlib.interleaved([("inspect histo", ours, args.runs),
                                    ("jcmd", jcmd, args.runs)], tmp, node_row_check(args.count))
        small_ours = [str(inspect), "histo", spid]
        jhsdb = [str(jdk / "bin/jhsdb"), "jmap", "--histo", "--pid", spid]
        small_res = benchlib.interleaved(
            [("inspect histo small", small_ours, args.runs),
             ("jhsdb jmap --histo", jhsdb, args.jhsdb_runs)], tmp, has_node_row)
        rss = benchlib.peak_rss_mib(ours, tmp, 3)
        rss_small = benchlib.peak_rss_mib(small_ours, tmp, 3)
        if not args.no_core:
            prefix = os.path.join(tmp, "core")
            t0 = time.perf_counter()
            subprocess.run(["gcore", "-o", prefix, pid], check=True, capture_output=True)
            print(f"gcore took {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            core = f"{prefix}.{pid}"
            from_core = [str(inspect), "histo", "-v", "--core", core]
            core_res = benchlib.interleaved([("inspect histo --core", from_core, args.runs)], tmp,
                                            node_row_check(args.count))
            walked = re.search(r"(\d+) objects, (\d+) bytes in",
                               core_res["inspect histo --core"]["stderr"][0])
            core_result = {
                "walls": core_res["inspect histo --core"]["walls"],
                "objects": int(walked.group(1)) if walked else None,
                "bytes": int(walked.group(2)) if walked else None,
                "core_bytes": os.path.getsize(core),
            }
            os.unlink(core)
        objects = re.search(r"(\d+) objects, (\d+) bytes in", res["inspect histo"]["stderr"][0])
    finally:
        benchlib.stop(jvms)
        shutil.rmtree(tmp, ignore_errors=True)

    med = {n: statistics.median(r["walls"]) * 1e3 for n, r in {**res, **small_res}.items()}
    print(f"\nJVM: {jdk}, G1; load average {os.getloadavg()[0]:.1f}")
    if objects:
        print(f"large heap: {int(objects.group(1)):,} objects, {int(objects.group(2)) / 1e9:.2f} GB "
              f"walked")
    print(f"{'tool':<22} {'runs':>4} {'median ms':>10} {'min ms':>9} {'max ms':>9} {'CPU ms':>8}")
    for name, r in {**res, **small_res}.items():
        w = [x * 1e3 for x in r["walls"]]
        print(f"{name:<22} {len(w):>4} {med[name]:>10.1f} {min(w):>9.1f} {max(w):>9.1f} "
              f"{statistics.median(r['cpus']) * 1e3:>8.1f}")
    x = med["jcmd"] / med["inspect histo"]
    print(f"inspect histo vs jcmd GC.class_histogram -all: {x:.1f}x faster "
          f"(goal >= {GOAL_VS_JCMD:.0f}x) {'PASS' if x >= GOAL_VS_JCMD else 'MISS'}")
    y = med["jhsdb jmap --histo"] / med["inspect histo small"]
    print(f"inspect histo vs jhsdb jmap --histo (small heap): {y:.0f}x faster "
          f"(goal >= {GOAL_VS_JHSDB:.0f}x) {'PASS' if y >= GOAL_VS_JHSDB else 'MISS'}")
    print(f"inspect histo peak RSS: {rss:.1f} MiB on the large heap, {rss_small:.1f} MiB on the "
          f"small one (goal <= {GOAL_RSS_MIB:.0f} MiB whatever the heap) "
          f"{'PASS' if max(rss, rss_small) <= GOAL_RSS_MIB else 'MISS'}")
    holds = [held_ms(e) for e in res["inspect histo"]["stderr"]]
    holds = [h for h in holds if h is not None]
    if holds:
        h = statistics.median(holds)
        share = h / med["inspect histo"]
        print(f"JVM held {h:.1f} ms median of inspect's {med['inspect histo']:.1f} ms "
              f"({share * 100:.0f} %; the rest is the VM model, read before the hold)")
    if core_result and core_result["bytes"]:
        wall = statistics.median(core_result["walls"])
        gbs = core_result["bytes"] / wall / 1e9
        print(f"from a gcore ({core_result['core_bytes'] / 1e9:.1f} GB): {wall * 1e3:.0f} ms, "
              f"{gbs:.2f} GB of heap a second (goal >= {GOAL_CORE_GBS:.0f} GB/s) "
              f"{'PASS' if gbs >= GOAL_CORE_GBS else 'MISS'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"jdk": str(jdk), "median_ms": med, "peak_rss_mib": [rss, rss_small],
                       "holds_ms": holds, "core": core_result}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
