#!/usr/bin/env python3
"""hsinspect's core-file benchmark: `inspect --core` against `jhsdb jsnap --all --core`.

It starts a small JDK 17 JVM (tests/java/Target.java), makes a core of it with gdb's `gcore`, and
times, on that same core:
    inspect --core <core>                          (the release build)
    jhsdb jsnap --all --core <core> --exe <java>   (the JDK's Serviceability Agent)
reporting the median and p90 wall time of N runs and the peak RSS (GNU time's %M, the largest
of 3 runs; benchlib.peak_rss_mib). Unless --no-big is given it does the same with a core of a JVM with a larger heap
(-Xmx2g, several GB of core) to show that inspect's time does not grow with the core's size
(it maps the core and touches only the pages it reads).

Goals, printed as PASS/MISS (they do not change the exit status):
    inspect --core median wall <= 50 ms on every core
    inspect --core >= 10x faster than jhsdb jsnap --core (median wall)

Usage: bench/bench_core.py [--runs 20] [--jhsdb-runs 5] [--inspect PATH] [--jdk DIR]
                             [--no-big] [--big-xmx 2g] [--json FILE]
Standard library only. Needs gdb (`apt-get install gdb`) and a JDK 17 with jhsdb
(`apt-get install openjdk-17-jdk-headless`). Cores go to a temp dir that is removed at the end.
Exit status: 0 when the measurements ran, 2 on a setup error.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (  # noqa: E402  (bench/benchlib.py: what every benchmark shares)
    DEFAULT_JDK, REPO, SetupError, build_inspect, pct, peak_rss_mib, run_once)

EXPECT = "java.threads.live"
GOAL_WALL_MS = 50.0
GOAL_SPEEDUP = 10.0
SMALL_FLAGS = ["-Xmx32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-XX:ReservedCodeCacheSize=16m", "-XX:CompressedClassSpaceSize=16m"]


def measure(name, argv, runs, tmp):
    """Median/p90 wall (ms) and max peak RSS (MiB) of `runs` runs; checks every output."""
    walls, rss = [], []
    out = os.path.join(tmp, "out.txt")
    for _ in range(runs):
        wall, ru, code, err = run_once(argv, out)
        if code != 0:
            raise RuntimeError(f"{name} exited with {code}: {err.strip()[-400:]}")
        with open(out, errors="replace") as f:
            if EXPECT not in f.read():
                raise RuntimeError(f"{name} printed no {EXPECT} ({err.strip()[-300:]})")
        walls.append(wall * 1e3)
        rss.append(ru.ru_maxrss / 1024.0)
    gnu = peak_rss_mib(argv, tmp)
    if gnu is None:
        print("bench_core: /usr/bin/time missing (apt-get install time): peak RSS from wait4 "
              "includes this script's own RSS", file=sys.stderr)
    return {"tool": name, "runs": runs, "median_ms": statistics.median(walls),
            "p90_ms": pct(walls, 90),
            "peak_rss_mib": gnu if gnu is not None else max(rss)}


def start_jvm(jdk, classes, flags, env_extra):
    env = dict(os.environ, **env_extra)
    p = subprocess.Popen([str(jdk / "bin/java"), *flags, "-cp", classes, "Target", "0"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    line = p.stdout.readline().decode().strip()
    if line != "READY":
        p.kill()
        raise SetupError(f"the test JVM did not start (printed {line!r})")
    return p


def make_core(pid, tmp, tag):
    if shutil.which("gcore") is None:
        raise SetupError("gcore not found: install gdb (`apt-get install gdb`)")
    prefix = os.path.join(tmp, f"core-{tag}")
    r = subprocess.run(["gcore", "-o", prefix, str(pid)], capture_output=True)
    core = f"{prefix}.{pid}"
    if r.returncode != 0 or not os.path.exists(core):
        raise SetupError(f"gcore failed: {r.stderr.decode(errors='replace')[-400:]}")
    return core


def bench_core(label, jdk, classes, flags, env_extra, inspect, args, tmp):
    jvm = start_jvm(jdk, classes, flags, env_extra)
    try:
        core = make_core(jvm.pid, tmp, label)
    finally:
        jvm.kill()
        jvm.wait()
    try:
        size = os.path.getsize(core)
        java = str(jdk / "bin/java")
        rows = [
            measure("inspect --core", [str(inspect), "--core", core], args.runs, tmp),
            measure("jhsdb jsnap --all --core",
                    [str(jdk / "bin/jhsdb"), "jsnap", "--all", "--core", core, "--exe", java],
                    args.jhsdb_runs, tmp),
        ]
        for r in rows:
            r["core"] = label
            r["core_mib"] = size / 2**20
        return rows
    finally:
        os.remove(core)


def main():
    ap = argparse.ArgumentParser(description="Benchmark inspect --core against jhsdb jsnap --core.")
    ap.add_argument("--runs", type=int, default=20, help="runs of inspect --core per core (20)")
    ap.add_argument("--jhsdb-runs", type=int, default=5, help="runs of jhsdb jsnap per core (5)")
    ap.add_argument("--inspect", type=Path, help="use this inspect binary, do not build")
    ap.add_argument("--jdk", type=Path, default=Path(DEFAULT_JDK), help=f"JDK 17 home ({DEFAULT_JDK})")
    ap.add_argument("--no-big", action="store_true", help="skip the large-heap core")
    ap.add_argument("--big-xmx", default="2g", help="-Xmx of the large-heap JVM (2g)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(sys.argv[1:])
    try:
        for tool in ("java", "javac", "jhsdb"):
            if not (args.jdk / "bin" / tool).exists():
                raise SetupError(f"{args.jdk}/bin/{tool} missing: install a JDK 17 "
                                 "(`apt-get install openjdk-17-jdk-headless`) or pass --jdk DIR")
        inspect = args.inspect or build_inspect()
        rows = []
        with tempfile.TemporaryDirectory(prefix="hsinspect-bench-core") as tmp:
            classes = os.path.join(tmp, "classes")
            r = subprocess.run([str(args.jdk / "bin/javac"), "--release", "11", "-d", classes,
                                str(REPO / "tests/java/Target.java")])
            if r.returncode != 0:
                raise SetupError("javac failed on tests/java/Target.java")
            rows += bench_core("small", args.jdk, classes, SMALL_FLAGS, {"MALLOC_ARENA_MAX": "2"},
                               inspect, args, tmp)
            if not args.no_big:
                rows += bench_core("big", args.jdk, classes,
                                   [f"-Xmx{args.big_xmx}", f"-Xms{args.big_xmx}"], {},
                                   inspect, args, tmp)
    except SetupError as e:
        print(f"bench_core: {e}", file=sys.stderr)
        return 2

    print(f"{'core':6} {'size MiB':>9} {'tool':26} {'runs':>4} {'median ms':>10} {'p90 ms':>8} "
          f"{'peak RSS MiB':>13}")
    for r in rows:
        print(f"{r['core']:6} {r['core_mib']:9.0f} {r['tool']:26} {r['runs']:4d} "
              f"{r['median_ms']:10.1f} {r['p90_ms']:8.1f} {r['peak_rss_mib']:13.1f}")
    goals = []
    for label in dict.fromkeys(r["core"] for r in rows):
        ours = next(r for r in rows if r["core"] == label and r["tool"].startswith("inspect"))
        sa = next(r for r in rows if r["core"] == label and r["tool"].startswith("jhsdb"))
        speed = sa["median_ms"] / ours["median_ms"]
        rss = sa["peak_rss_mib"] / ours["peak_rss_mib"]
        print(f"{label}: jhsdb/inspect wall {speed:.1f}x, peak RSS {rss:.1f}x")
        goals.append({"goal": f"{label} core: inspect --core median <= {GOAL_WALL_MS:.0f} ms",
                      "value": ours["median_ms"], "pass": ours["median_ms"] <= GOAL_WALL_MS})
        goals.append({"goal": f"{label} core: >= {GOAL_SPEEDUP:.0f}x faster than jhsdb jsnap",
                      "value": speed, "pass": speed >= GOAL_SPEEDUP})
    for g in goals:
        print(f"{'PASS' if g['pass'] else 'MISS'}  {g['goal']}  ({g['value']:.1f})")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "goals": goals}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
