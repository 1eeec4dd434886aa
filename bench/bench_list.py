#!/usr/bin/env python3
"""`inspect list` against `jps -l` on many idle JVMs, in one run (python3 standard library only).

Starts N idle JVMs (default 50; small heap, C1 only, Serial GC, CDS on: -Xmx16m
-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto), waits until each has printed READY, then
measures, interleaved so that load changes hit every command alike:
    inspect list        (warm symbol cache, filled by one `inspect -F`, as in use)
    jps -l              (the JDK's own lister; it sees only JVMs with a file in its /tmp)
    /bin/true           (the floor of starting a process from this script)
wall time (median of R runs; jps gets fewer runs, it costs ~100x more) and peak RSS (GNU time
%M, so /usr/bin/time is needed; its own ~2 MiB is the floor, see /bin/true). Then it stops
all JVMs but one and measures again. It checks that `inspect list` listed every JVM it started.

Goals, printed as PASS/MISS (they never fail the run): N JVMs listed in <= 50 ms, 1 JVM in <= 5 ms
(median wall of `inspect list`).

Usage:  bench/bench_list.py [--jvms 50] [--runs 15] [--jps-runs 5] [--inspect PATH] [--jdk DIR]
It builds `cargo build --release` unless --inspect is given. Exit status: 0 when the measurements
ran, 2 on a setup error (no JDK, build failed, a JVM did not start).
On a shared machine run it once, briefly: 50 JVMs take ~2 GB and a few CPU-seconds to start.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (  # noqa: E402  (bench/benchlib.py: what every benchmark shares)
    DEFAULT_JDK, GNU_TIME, IDLE_JAVA, JVM_FLAGS, SetupError, build_inspect, cpu_s, peak_rss_mib,
    run_once, start_jvms, stop)

GOAL_MANY_MS = 50.0
GOAL_ONE_MS = 5.0



def measure(commands, tmp):
    """Interleaved runs of each command; returns
    {name: (median_wall_ms, peak_rss_mib, last_out, median_cpu_ms)}."""
    walls = {name: [] for name, _, _ in commands}
    cpus = {name: [] for name, _, _ in commands}
    outs = {}
    for i in range(max(n for _, _, n in commands)):
        for name, argv, n in commands:
            if i >= n:
                continue
            out = os.path.join(tmp, "out")
            wall, ru, status, err = run_once(argv, out)
            if status != 0:
                raise SetupError(f"{' '.join(argv)} exited with status {status}: {err[-300:]}")
            walls[name].append(wall)
            cpus[name].append(cpu_s(ru))
            with open(out) as f:
                outs[name] = f.read()
    return {name: (statistics.median(walls[name]) * 1e3, peak_rss_mib(argv, tmp, 2), outs[name],
                   statistics.median(cpus[name]) * 1e3)
            for name, argv, _ in commands}


def report(label, results, goal_ms):
    true_ms = results["/bin/true"][0]
    jps_ms = results["jps -l"][0]
    print(f"\n{label}")
    print(f"  {'command':<14} {'median wall':>12} {'x faster than jps':>18} {'x /bin/true':>12} "
          f"{'peak RSS':>10} {'median CPU':>11}")
    for name, (ms, mib, _, cpu) in results.items():
        print(f"  {name:<14} {ms:>9.2f} ms {jps_ms / ms:>17.1f}x {ms / true_ms:>11.1f}x "
              f"{mib:>6.1f} MiB {cpu:>8.2f} ms")
    ms = results["inspect list"][0]
    verdict = "PASS" if ms <= goal_ms else "MISS"
    print(f"  goal: inspect list <= {goal_ms:.0f} ms: {verdict} ({ms:.2f} ms)")
    return ms


def check_listed(results, jvms):
    listed = {j["pid"] for j in json.loads(results["inspect list"][2])}
    missing = [p.pid for p in jvms if p.pid not in listed]
    if missing:
        raise SetupError(f"inspect list missed JVMs {missing}")
    jps_pids = {int(l.split()[0]) for l in results["jps -l"][2].splitlines() if l.strip()}
    seen_by_jps = sum(p.pid in jps_pids for p in jvms)
    others = len(listed) - len(jvms)
    print(f"  inspect list listed all {len(jvms)} JVMs (and {others} other JVMs already on the "
          f"host); jps -l listed {seen_by_jps} of them")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jvms", type=int, default=50)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--jps-runs", type=int, default=5)
    ap.add_argument("--inspect", help="the inspect binary (default: build target/release/inspect)")
    ap.add_argument("--jdk", default=DEFAULT_JDK)
    args = ap.parse_args()

    jdk = args.jdk
    for tool in ("java", "javac", "jps"):
        if not os.access(f"{jdk}/bin/{tool}", os.X_OK):
            raise SetupError(f"no {jdk}/bin/{tool}: install JDK 17 "
                             "(apt-get install -y openjdk-17-jdk-headless) or pass --jdk DIR")
    if not os.access(GNU_TIME, os.X_OK):
        raise SetupError(f"no {GNU_TIME} (for peak RSS): apt-get install -y time")
    inspect = args.inspect
    if inspect is None:
        inspect = str(build_inspect())

    with tempfile.TemporaryDirectory(prefix="bench-list-") as tmp:
        src = Path(tmp) / "BenchIdle.java"
        src.write_text(IDLE_JAVA)
        if subprocess.run([f"{jdk}/bin/javac", "-d", tmp, str(src)]).returncode != 0:
            raise SetupError("javac failed")
        load = os.getloadavg()[0]
        print(f"# {args.jvms} idle JVMs ({' '.join(JVM_FLAGS)}), load {load:.1f}, "
              f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}")
        jvms = start_jvms(jdk, tmp, args.jvms)
        try:
            time.sleep(1.0)  # let the last ones finish their start-up work
            commands = lambda: [
                ("inspect list", [inspect, "list", "--format", "json"], args.runs),
                ("jps -l", [f"{jdk}/bin/jps", "-l"], args.jps_runs),
                ("/bin/true", ["/bin/true"], args.runs),
            ]
            # `inspect list` writes nothing: a forced read fills the symbol cache, as any use of
            # `inspect -F` on this JDK build does.
            run_once([inspect, "-F", "--no-stop", str(jvms[0].pid)], os.path.join(tmp, "warm"))
            many = measure(commands(), tmp)
            report(f"{args.jvms} JVMs", many, GOAL_MANY_MS)
            check_listed(many, jvms)
            stop(jvms[1:])
            jvms = jvms[:1]
            one = measure(commands(), tmp)
            report("1 JVM", one, GOAL_ONE_MS)
            check_listed(one, jvms)
        finally:
            stop(jvms)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (SetupError, RuntimeError) as e:
        print(f"bench_list: {e}", file=sys.stderr)
        sys.exit(2)
