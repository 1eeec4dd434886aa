#!/usr/bin/env python3
"""`inspect threads <pid>` against `jcmd <pid> Thread.print` and `jhsdb jstack --pid <pid>` on one
JVM with many deep threads, in one run (python3 standard library only, with benchlib.py).

The JVM is tests/java/ThreadsTarget.java (its named test threads plus N "deep-i" threads, each
parked 20 frames deep: deep(20) -> parkForever -> LockSupport.park), on JDK 17 by default
(-Xmx256m). Measured, interleaved round-robin so that load changes hit every tool alike:
    inspect threads -v <pid>      (release build, the default: only the threads that run held;
                                   -v prints the walk and stop figures)
    inspect threads -v --hold-threads all <pid>       (every thread held for the whole walk)
    jcmd <pid> Thread.print       (attach + a safepoint in the target)
    jhsdb jstack --pid <pid>      (the Serviceability Agent; far slower: fewer runs)
wall time (median and spread of R runs, from posix_spawn to wait4), CPU time of the tool's own
process, peak RSS (GNU time %M, the largest of 3 runs; jhsdb 1), how many threads the default held, and
for `--hold-threads all` the JVM's hold: "stopped N threads for X ms" (first interrupt to last
detach) and the walk inside it ("walk: ... in Y ms"), so hold - walk is what stopping and
releasing every thread cost. Every run must list
all N deep threads (jhsdb: its output must name them).

Goals, printed as PASS/MISS (they never fail the run): inspect >= 10x faster than jcmd and >= 50x
faster than jhsdb (median wall), peak RSS <= 20 MiB.

Usage:  bench/bench_threads.py [--threads 1000] [--runs 7] [--jhsdb-runs 2] [--inspect PATH]
                                 [--jdk DIR] [--jhsdb PATH] [--json FILE]
It builds `cargo build --release` unless --inspect is given. Run it as root (ptrace; jhsdb).
Exit status 0 when the measurements ran (whatever the goals say), 2 on a setup error.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402  (bench/benchlib.py: what every benchmark shares)

GOAL_VS_JCMD = 10.0
GOAL_VS_JHSDB = 50.0
GOAL_RSS_MIB = 20.0

STOP_RE = re.compile(r"stopped (\d+) threads for ([\d.]+) ms")
WALK_RE = re.compile(r"walk: (\d+) threads, (\d+) frames in ([\d.]+) ms")


def start_target(jdk, classes, threads):
    """The ThreadsTarget JVM with `threads` deep threads, once it printed READY."""
    p = subprocess.Popen(
        [f"{jdk}/bin/java", "-Xmx256m", "-cp", classes, "ThreadsTarget", str(threads)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if p.stdout.readline().strip() != b"READY":
        benchlib.stop([p])
        raise benchlib.SetupError(f"ThreadsTarget did not start on {jdk}")
    return p


def deep_threads(text):
    """How many "deep-i" threads a dump names (jcmd and inspect: `"deep-i" #`; jhsdb:
    `"deep-i" #` too)."""
    return len(set(re.findall(r'^"(deep-\d+)"', text, re.M)))


def measure(commands, tmp, threads):
    """Interleaved runs (benchlib.interleaved); each must list all `threads` deep threads."""
    def check(name, text):
        if deep_threads(text) != threads:
            raise RuntimeError(f"{name} listed {deep_threads(text)} of {threads} deep threads")
    return benchlib.interleaved(commands, tmp, check)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7, help="runs of inspect and of jcmd (>= 5)")
    ap.add_argument("--jhsdb-runs", type=int, default=2)
    ap.add_argument("--inspect")
    ap.add_argument("--jdk", default=benchlib.DEFAULT_JDK)
    ap.add_argument("--jhsdb", help="default: the --jdk's bin/jhsdb (it must match the target)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    jdk = Path(args.jdk)
    jhsdb = Path(args.jhsdb) if args.jhsdb else jdk / "bin/jhsdb"
    try:
        for tool in ("java", "javac", "jcmd"):
            if not (jdk / "bin" / tool).exists():
                raise benchlib.SetupError(f"{jdk}/bin/{tool} missing: {benchlib.JDK_HINT}")
        if not jhsdb.exists():
            raise benchlib.SetupError(f"{jhsdb} missing (jhsdb is in the full JDK): "
                                      f"{benchlib.JDK_HINT}")
        if not os.access(benchlib.GNU_TIME, os.X_OK):
            raise benchlib.SetupError(f"{benchlib.GNU_TIME} missing: apt-get install -y time")
        inspect = Path(args.inspect) if args.inspect else benchlib.build_inspect()
        tmp = tempfile.mkdtemp(prefix="bench-threads-")
        src = benchlib.REPO / "tests/java/ThreadsTarget.java"
        r = subprocess.run([str(jdk / "bin/javac"), "--release", "11", "-d", tmp, str(src)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise benchlib.SetupError(f"javac {src} failed: {r.stderr}")
        print(f"starting ThreadsTarget with {args.threads} deep threads on {jdk}", file=sys.stderr)
        jvm = start_target(jdk, tmp, args.threads)
    except benchlib.SetupError as e:
        print(f"bench_threads: {e}", file=sys.stderr)
        return 2
    try:
        pid = str(jvm.pid)
        tasks = len(os.listdir(f"/proc/{pid}/task"))
        ours = [str(inspect), "threads", "-v", pid]
        every = [str(inspect), "threads", "-v", "--hold-threads", "all", pid]
        jcmd = [str(jdk / "bin/jcmd"), pid, "Thread.print"]
        jstack = [str(jhsdb), "jstack", "--pid", pid]
        commands = [("inspect threads", ours, args.runs),
                    ("inspect --hold all", every, args.runs),
                    ("jcmd Thread.print", jcmd, args.runs),
                    ("jhsdb jstack", jstack, args.jhsdb_runs)]
        # One untimed warm-up of the fast two (page cache, jcmd's attach listener).
        benchlib.run_once(ours, os.path.join(tmp, "warm"))
        benchlib.run_once(jcmd, os.path.join(tmp, "warm"))
        res = measure(commands, tmp, args.threads)
        rss = {
            "inspect threads": benchlib.peak_rss_mib(ours, tmp, 3),
            "inspect --hold all": benchlib.peak_rss_mib(every, tmp, 3),
            "jcmd Thread.print": benchlib.peak_rss_mib(jcmd, tmp, 1),
            "jhsdb jstack": benchlib.peak_rss_mib(jstack, tmp, 1),
        }
    finally:
        benchlib.stop([jvm])

    holds, walks = [], []
    for err in res["inspect --hold all"]["stderr"]:
        s, w = STOP_RE.search(err), WALK_RE.search(err)
        if s and w:
            holds.append(float(s.group(2)))
            walks.append(float(w.group(3)))
    med = {n: statistics.median(r["walls"]) * 1e3 for n, r in res.items()}
    print(f"\nJVM: {jdk} (pid {pid}), {tasks} OS threads, {args.threads} deep threads "
          f"(parked 20 frames deep); load average {os.getloadavg()[0]:.1f}")
    print(f"{'tool':<20} {'runs':>4} {'median ms':>10} {'min ms':>9} {'max ms':>9} "
          f"{'CPU ms':>8} {'peak RSS MiB':>13}")
    for name, r in res.items():
        w = [x * 1e3 for x in r["walls"]]
        print(f"{name:<20} {len(w):>4} {med[name]:>10.1f} {min(w):>9.1f} {max(w):>9.1f} "
              f"{statistics.median(r['cpus']) * 1e3:>8.1f} {rss[name]:>13.1f}")
    if holds:
        print(f"inspect --hold-threads all held the JVM: median {statistics.median(holds):.1f} ms "
              f"(max {max(holds):.1f}), of which the walk {statistics.median(walks):.1f} ms "
              f"(max {max(walks):.1f}); stop + release {statistics.median(holds) - statistics.median(walks):.1f} ms")
    held = [int(m.group(1)) for err in res["inspect threads"]["stderr"]
            for m in [re.search(r"held only the threads that ran: (\d+) of", err)] if m]
    if held:
        print(f"inspect threads (the default) held {min(held)}-{max(held)} threads a run")
    vs_all = med["jcmd Thread.print"] / med["inspect --hold all"]
    print(f"inspect threads --hold-threads all vs jcmd Thread.print: {vs_all:.1f}x faster")
    vs_jcmd = med["jcmd Thread.print"] / med["inspect threads"]
    vs_jhsdb = med["jhsdb jstack"] / med["inspect threads"]
    ours_rss = rss["inspect threads"]
    print(f"inspect threads vs jcmd Thread.print: {vs_jcmd:.1f}x faster (goal >= {GOAL_VS_JCMD:.0f}x) "
          f"{'PASS' if vs_jcmd >= GOAL_VS_JCMD else 'MISS'}")
    print(f"inspect threads vs jhsdb jstack: {vs_jhsdb:.1f}x faster (goal >= {GOAL_VS_JHSDB:.0f}x) "
          f"{'PASS' if vs_jhsdb >= GOAL_VS_JHSDB else 'MISS'}")
    print(f"inspect threads peak RSS: {ours_rss:.1f} MiB (goal <= {GOAL_RSS_MIB:.0f} MiB) "
          f"{'PASS' if ours_rss <= GOAL_RSS_MIB else 'MISS'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "os_threads": tasks, "jdk": str(jdk),
                       "median_ms": med, "walls_ms": {n: [x * 1e3 for x in r["walls"]]
                                                      for n, r in res.items()},
                       "cpu_ms": {n: [x * 1e3 for x in r["cpus"]] for n, r in res.items()},
                       "peak_rss_mib": rss, "hold_ms": holds, "walk_ms": walks}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
