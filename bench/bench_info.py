#!/usr/bin/env python3
"""`inspect info --flags <pid>` against `jinfo -flags <pid>`, `jcmd <pid> VM.flags` and
`jhsdb jinfo --flags --pid <pid>` on one idle JVM, in one run (python3 standard library only,
with benchlib.py).

The JVM is benchlib's idle BenchIdle on JDK 17 by default. Measured, interleaved round-robin so
that load changes hit every tool alike: wall time (median and spread of R runs, from posix_spawn
to wait4), CPU time of the tool's own process, peak RSS (GNU time %M, the largest of 3 runs;
jhsdb 1). Every run's flags must be the JVM's: the `-XX:` line jcmd printed first (the flags do
not move), in inspect's and jinfo's output.

Goals, printed as PASS/MISS (they never fail the run): inspect >= 10x faster than jinfo and
jcmd, >= 50x faster than jhsdb (median wall), peak RSS <= 20 MiB.

Usage:  bench/bench_info.py [--runs 9] [--jhsdb-runs 2] [--inspect PATH] [--jdk DIR] [--json FILE]
It builds `cargo build --release` unless --inspect is given. Run it as root (the memory read
needs ptrace access; jhsdb too).
Exit status 0 when the measurements ran (whatever the goals say), 2 on a setup error.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402  (bench/benchlib.py: what every benchmark shares)

GOAL_VS_JINFO = 10.0
GOAL_VS_JHSDB = 50.0
GOAL_RSS_MIB = 20.0


def measure(commands, tmp, flags_line):
    """Interleaved runs (benchlib.interleaved); each must print the JVM's flags line (jhsdb
    prints the flags its own way)."""
    def check(name, text):
        if not name.startswith("jhsdb") and flags_line not in text:
            raise RuntimeError(f"{name} did not print the JVM's flags: {text[:500]}")
    return benchlib.interleaved(commands, tmp, check)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=9, help="runs of inspect, jinfo and jcmd")
    ap.add_argument("--jhsdb-runs", type=int, default=2)
    ap.add_argument("--inspect")
    ap.add_argument("--jdk", default=benchlib.DEFAULT_JDK)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    jdk = Path(args.jdk)
    try:
        for tool in ("java", "javac", "jcmd", "jinfo", "jhsdb"):
            if not (jdk / "bin" / tool).exists():
                raise benchlib.SetupError(f"{jdk}/bin/{tool} missing: {benchlib.JDK_HINT}")
        if not os.access(benchlib.GNU_TIME, os.X_OK):
            raise benchlib.SetupError(f"{benchlib.GNU_TIME} missing: apt-get install -y time")
        inspect = Path(args.inspect) if args.inspect else benchlib.build_inspect()
        tmp = tempfile.mkdtemp(prefix="bench-info-")
        src = os.path.join(tmp, "BenchIdle.java")
        with open(src, "w") as f:
            f.write(benchlib.IDLE_JAVA)
        r = subprocess.run([str(jdk / "bin/javac"), "-d", tmp, src],
                                    capture_output=True, text=True)
        if r.returncode != 0:
            raise benchlib.SetupError(f"javac failed: {r.stderr}")
        [jvm] = benchlib.start_jvms(jdk, tmp, 1)
    except benchlib.SetupError as e:
        print(f"bench_info: {e}", file=sys.stderr)
        return 2
    try:
        pid = str(jvm.pid)
        jcmd = [str(jdk / "bin/jcmd"), pid, "VM.flags"]
        out = subprocess.run(jcmd, capture_output=True, text=True).stdout
        flags_line = out.splitlines()[1].strip()
        ours = [str(inspect), "info", "--flags", pid]
        jinfo = [str(jdk / "bin/jinfo"), "-flags", pid]
        jhsdb = [str(jdk / "bin/jhsdb"), "jinfo", "--flags", "--pid", pid]
        commands = [("inspect info", ours, args.runs), ("jinfo -flags", jinfo, args.runs),
                    ("jcmd VM.flags", jcmd, args.runs), ("jhsdb jinfo", jhsdb, args.jhsdb_runs)]
        benchlib.run_once(ours, os.path.join(tmp, "warm"))
        res = measure(commands, tmp, flags_line)
        rss = {name: benchlib.peak_rss_mib(argv, tmp, 3 if name == "inspect info" else 1)
               for name, argv, _ in commands}
    finally:
        benchlib.stop([jvm])

    med = {n: statistics.median(r["walls"]) * 1e3 for n, r in res.items()}
    print(f"\nJVM: {jdk} (pid {pid}); load average {os.getloadavg()[0]:.1f}")
    print(f"{'tool':<18} {'runs':>4} {'median ms':>10} {'min ms':>9} {'max ms':>9} "
          f"{'CPU ms':>8} {'peak RSS MiB':>13}")
    for name, r in res.items():
        w = [x * 1e3 for x in r["walls"]]
        print(f"{name:<18} {len(w):>4} {med[name]:>10.1f} {min(w):>9.1f} {max(w):>9.1f} "
              f"{statistics.median(r['cpus']) * 1e3:>8.1f} {rss[name]:>13.1f}")
    for other, goal in (("jinfo -flags", GOAL_VS_JINFO), ("jcmd VM.flags", GOAL_VS_JINFO),
                        ("jhsdb jinfo", GOAL_VS_JHSDB)):
        x = med[other] / med["inspect info"]
        print(f"inspect info vs {other}: {x:.1f}x faster (goal >= {goal:.0f}x) "
              f"{'PASS' if x >= goal else 'MISS'}")
    ours_rss = rss["inspect info"]
    print(f"inspect info peak RSS: {ours_rss:.1f} MiB (goal <= {GOAL_RSS_MIB:.0f} MiB) "
          f"{'PASS' if ours_rss <= GOAL_RSS_MIB else 'MISS'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"jdk": str(jdk), "median_ms": med, "peak_rss_mib": rss,
                       "walls_ms": {n: [x * 1e3 for x in r["walls"]] for n, r in res.items()}},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
