#!/usr/bin/env python3
"""`inspect heapdump <pid>` against `jcmd <pid> GC.heap_dump -all` on one large G1 heap, to the
same disk, and against `jhsdb jmap --binaryheap --pid` on a small one, in one run (python3
standard library only, with benchlib.py and bench_heap.py's HeapTarget starter).

The JVMs run tests/java/HeapTarget.java on JDK 17 with G1: the large one with --count objects of
each kind (the default, 7,000,000, makes a heap of about 1.5 GB in about 30 million objects at
-Xmx3g), the small one with --small-count (100,000). HeapTarget fills its heap, collects once
and then allocates nothing.

Measured, interleaved round-robin so that load changes hit every tool alike: wall time (median
and spread of R runs; each run's file is removed after it), the file's size, inspect's peak RSS
(GNU time %M, the largest of 3 runs) and how long it held the JVM (its `-v` line "stopped N
threads for X ms").

Goals, printed as PASS/MISS (they never fail the run): inspect no slower than jcmd (median wall),
>= 100x faster than jhsdb on the small heap, peak RSS <= 128 MiB.

Usage:  bench/bench_heapdump.py [--runs 3] [--jhsdb-runs 1] [--count N] [--small-count N]
                                [--inspect PATH] [--jdk DIR] [--dir DIR] [--json FILE]
It builds `cargo build --release` unless --inspect is given. Run it as root. The dumps (about
the heap's size each, one at a time) go to --dir (default $TMPDIR) and are removed.
Exit status 0 when the measurements ran (whatever the goals say), 2 on a setup error.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import shutil
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402  (bench/benchlib.py: what every benchmark shares)
from bench_heap import held_ms, start_targets  # noqa: E402

GOAL_VS_JCMD = 1.0
GOAL_VS_JHSDB = 100.0
GOAL_RSS_MIB = 128.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs of inspect and jcmd")
    ap.add_argument("--jhsdb-runs", type=int, default=1)
    ap.add_argument("--count", type=int, default=7_000_000)
    ap.add_argument("--small-count", type=int, default=100_000)
    ap.add_argument("--inspect")
    ap.add_argument("--jdk", default=benchlib.DEFAULT_JDK)
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the dumps are written")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    jdk = Path(args.jdk)
    jvms = []
    try:
        inspect, tmp, big, small = start_targets(jdk, args.inspect, args.count, args.small_count,
                                                 os.path.join(args.dir, "bench-heapdump-"))
        jvms += [big, small]
    except benchlib.SetupError as e:
        print(f"bench_heapdump: {e}", file=sys.stderr)
        benchlib.stop(jvms)
        return 2
    sizes = {}
    file = os.path.join(tmp, "dump.hprof")

    def remove_dump(name, _text):
        """After each run: the file must be there; its size is kept, the file removed."""
        if not os.path.exists(file):
            raise RuntimeError(f"{name} wrote no {file}")
        sizes.setdefault(name, []).append(os.path.getsize(file))
        os.unlink(file)

    try:
        pid, spid = str(big.pid), str(small.pid)
        ours = [str(inspect), "heapdump", "-v", pid, "-o", file]
        jcmd = [str(jdk / "bin/jcmd"), pid, "GC.heap_dump", "-all", file]
        res = benchlib.interleaved([("inspect heapdump", ours, args.runs),
                                    ("jcmd GC.heap_dump", jcmd, args.runs)], tmp, remove_dump)
        small_ours = [str(inspect), "heapdump", spid, "-o", file]
        jhsdb = [str(jdk / "bin/jhsdb"), "jmap", "--binaryheap", f"--dumpfile={file}",
                 "--pid", spid]
        small_res = benchlib.interleaved(
            [("inspect small", small_ours, args.runs),
             ("jhsdb --binaryheap", jhsdb, args.jhsdb_runs)], tmp, remove_dump)
        rss = benchlib.peak_rss_mib(ours, tmp, 1)
        os.unlink(file)
        rss_small = benchlib.peak_rss_mib(small_ours, tmp, 1)
        os.unlink(file)
    finally:
        benchlib.stop(jvms)
        shutil.rmtree(tmp, ignore_errors=True)

    med = {n: statistics.median(r["walls"]) * 1e3 for n, r in {**res, **small_res}.items()}
    print(f"\nJVM: {jdk}, G1; load average {os.getloadavg()[0]:.1f}")
    print(f"{'tool':<20} {'runs':>4} {'median ms':>10} {'min ms':>9} {'max ms':>9} "
          f"{'CPU ms':>8} {'file MB':>8}")
    for name, r in {**res, **small_res}.items():
        w = [x * 1e3 for x in r["walls"]]
        print(f"{name:<20} {len(w):>4} {med[name]:>10.1f} {min(w):>9.1f} {max(w):>9.1f} "
              f"{statistics.median(r['cpus']) * 1e3:>8.1f} "
              f"{statistics.median(sizes[name]) / 1e6:>8.1f}")
    x = med["jcmd GC.heap_dump"] / med["inspect heapdump"]
    print(f"inspect heapdump vs jcmd GC.heap_dump -all: {x:.2f}x as fast "
          f"(goal >= {GOAL_VS_JCMD:.0f}x) {'PASS' if x >= GOAL_VS_JCMD else 'MISS'}")
    y = med["jhsdb --binaryheap"] / med["inspect small"]
    print(f"inspect heapdump vs jhsdb jmap --binaryheap (small heap): {y:.0f}x faster "
          f"(goal >= {GOAL_VS_JHSDB:.0f}x) {'PASS' if y >= GOAL_VS_JHSDB else 'MISS'}")
    print(f"inspect heapdump peak RSS: {rss:.1f} MiB on the large heap, {rss_small:.1f} MiB on "
          f"the small one (goal <= {GOAL_RSS_MIB:.0f} MiB whatever the heap) "
          f"{'PASS' if max(rss, rss_small) <= GOAL_RSS_MIB else 'MISS'}")
    holds = [h for h in (held_ms(e) for e in res["inspect heapdump"]["stderr"]) if h is not None]
    if holds:
        print(f"JVM held {statistics.median(holds):.1f} ms median of inspect's "
              f"{med['inspect heapdump']:.1f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"jdk": str(jdk), "median_ms": med, "peak_rss_mib": [rss, rss_small],
                       "file_bytes": sizes, "holds_ms": holds}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
