#!/usr/bin/env python3
"""Benchmark of `inspect stat` sampling, against jstat on the same JVM in one run.

What it measures (python3 standard library only; CPU time and peak RSS are each child's own,
from os.wait4):

1. CPU time per sample, no stop:
     inspect stat -F --no-stop -gcutil <pid> 1ms 10000
     jstat -gcutil <pid> 1ms 10000
   per sample = (CPU of N samples - CPU of 1 sample) / (N - 1), so process start-up (and the JVM
   start of jstat) is left out; /bin/true is run as the floor of starting a process at all.
   Goal: inspect <= 20 us of CPU a sample.
   The same with interval 0 (back to back) shows the sample's own cost without the wake-ups, and
   a python3 loop of 1 ms sleeps the CPU cost of waking up every millisecond at all.
2. Memory flat: peak RSS (GNU time %M) of `inspect stat -F --no-stop -gcutil <pid> 0 100000`
   against `... 0 1000` (interval 0: back to back). Goal: within 1 MiB.
3. Cost of a stopped sample against the JVM's thread count: `inspect stat -F -gcutil <pid> 0 200`
   on JVMs with a few thread counts (default 20, 500, 2000 idle threads), per-sample wall and CPU
   time (the same difference of 200 and 1 samples), and that per thread.

The JVM is bench/StallTarget.java (idle threads, spinner parked) on JDK 17.

Usage:  bench/bench_stat.py [--samples 10000] [--threads 20,500,2000] [--inspect PATH]
                              [--jdk DIR] [--json FILE]
It builds `cargo build --release` unless --inspect is given. Exit status 0 when the measurements
ran (whatever the goals say), 2 on a setup error.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (bench/bench.py: Target, compile_target, jdk_tools)
import benchlib  # noqa: E402  (bench/benchlib.py: what every benchmark shares)

GOAL_CPU_US = 20.0
GOAL_RSS_MIB = 1.0


def run(argv, tmp, name):
    """(wall s, cpu s, peak RSS KiB, output lines) of one run; raises on failure."""
    out = os.path.join(tmp, name + ".out")
    wall, ru, status, err = benchlib.run_once(argv, out)
    if status != 0:
        raise RuntimeError(f"{' '.join(argv)} failed (status {status}): {err.strip()[:500]}")
    with open(out, "rb") as f:
        lines = f.read().count(b"\n")
    return wall, benchlib.cpu_s(ru), ru.ru_maxrss, lines


def peak_rss(argv, tmp):
    """Peak RSS in KiB of one run under GNU time (%M) (benchlib.peak_rss_mib says why not
    wait4's ru_maxrss)."""
    return round(benchlib.peak_rss_mib(argv, tmp, 1) * 1024)


def per_sample(argv_n, argv_1, n, tmp, name, expect_lines=None):
    """Per-sample (wall, cpu) in seconds: the run of n samples minus the run of one."""
    w_n, c_n, rss_n, lines = run(argv_n, tmp, name + "-n")
    if lines < (n if expect_lines is None else expect_lines):
        raise RuntimeError(f"{name}: {lines} lines for {n} samples")
    w_1, c_1, _, _ = run(argv_1, tmp, name + "-1")
    return (w_n - w_1) / (n - 1), (c_n - c_1) / (n - 1), rss_n, c_n, c_1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--threads", default="20,500,2000")
    ap.add_argument("--inspect")
    ap.add_argument("--jdk", default=benchlib.DEFAULT_JDK)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    jdk = Path(args.jdk)
    try:
        tools, missing = bench.jdk_tools(jdk)
        if not os.access(benchlib.GNU_TIME, os.X_OK):
            raise benchlib.SetupError(f"{benchlib.GNU_TIME} not found: apt-get install -y time")
        if "jstat" in missing:
            raise benchlib.SetupError(f"no jstat in {jdk}: {benchlib.JDK_HINT}")
        inspect = (str(Path(args.inspect).resolve()) if args.inspect
                   else str(benchlib.build_inspect()))
    except benchlib.SetupError as e:
        print(f"bench_stat: {e}", file=sys.stderr)
        return 2
    n = args.samples
    results = {"samples": n, "date": time.strftime("%Y-%m-%d %H:%M:%S"),
               "load": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="bench-stat-") as tmp:
        classes = bench.compile_target(jdk, tmp)
        # 1. CPU per sample, no stop, on one JVM.
        target = bench.Target(jdk, classes, 20)
        try:
            p = str(target.pid)
            w, _, _, _ = run(["/bin/true"], tmp, "true")
            results["true_wall_ms"] = w * 1e3
            ins = [inspect, "stat", "-F", "--no-stop", "-gcutil", p]
            iw, ic, _, icn, ic1 = per_sample(ins + ["1ms", str(n)], ins, n, tmp, "inspect")
            # The floor of waking up every 1 ms: a process that only sleeps (python3's sleep loop).
            sleeper = [sys.executable, "-c",
                       "import sys, time\nfor _ in range(int(sys.argv[1])): time.sleep(0.001)"]
            _, fc, _, _, _ = per_sample(sleeper + [str(n)], sleeper + ["1"], n, tmp, "sleeper",
                                        expect_lines=0)
            # The same back to back (interval 0): the sample itself, without the wake-ups.
            _, bc, _, _, _ = per_sample(ins + ["0", str(n)], ins, n, tmp, "inspect-b2b")
            js = [tools["jstat"], "-gcutil", p]
            jw, jc, _, jcn, jc1 = per_sample(js + ["1ms", str(n)], js, n, tmp, "jstat")
            results["nostop"] = {
                "inspect_cpu_us": ic * 1e6, "inspect_total_cpu_s": icn,
                "inspect_one_sample_cpu_ms": ic1 * 1e3,
                "jstat_cpu_us": jc * 1e6, "jstat_total_cpu_s": jcn,
                "jstat_one_sample_cpu_ms": jc1 * 1e3,
                "ratio": jc / ic if ic > 0 else None,
                "inspect_back_to_back_cpu_us": bc * 1e6,
                "sleep_1ms_floor_cpu_us": fc * 1e6,
            }
            # 2. Memory: peak RSS after 1,000 and after 100,000 back-to-back samples.
            rss_1k = peak_rss(ins + ["0", "1000"], tmp)
            rss_100k = peak_rss(ins + ["0", "100000"], tmp)
            results["rss"] = {"after_1000_kib": rss_1k, "after_100000_kib": rss_100k}
        finally:
            target.close()
        # 3. Stopped samples against the thread count.
        results["stop"] = []
        for threads in [int(t) for t in args.threads.split(",") if t]:
            target = bench.Target(jdk, classes, threads)
            try:
                p = str(target.pid)
                ins = [inspect, "stat", "-F", "-gcutil", p]
                live = len(os.listdir(f"/proc/{p}/task"))
                sw, sc, _, _, _ = per_sample(ins + ["0", "200"], ins, 200, tmp, f"stop-{threads}")
                results["stop"].append({"java_threads": threads, "os_threads": live,
                                        "wall_us": sw * 1e6, "cpu_us": sc * 1e6,
                                        "wall_us_per_thread": sw * 1e6 / live})
            finally:
                target.close()

    ns = results["nostop"]
    print(f"\ninspect stat sampling, {n} samples, load {results['load']:.2f} "
          f"({results['date']}); /bin/true {results['true_wall_ms']:.2f} ms wall")
    print(f"{'':40} {'CPU/sample':>12} {'1-sample run CPU':>17}")
    print(f"{'inspect stat -F --no-stop -gcutil 1ms':40} {ns['inspect_cpu_us']:10.1f} us "
          f"{ns['inspect_one_sample_cpu_ms']:14.1f} ms")
    print(f"{'inspect stat ... 0 (back to back)':40} {ns['inspect_back_to_back_cpu_us']:10.1f} us")
    print(f"{'a process that only sleeps 1 ms (floor)':40} {ns['sleep_1ms_floor_cpu_us']:10.1f} us")
    print(f"{'jstat -gcutil 1ms':40} {ns['jstat_cpu_us']:10.1f} us "
          f"{ns['jstat_one_sample_cpu_ms']:14.1f} ms")
    ok = ns["inspect_cpu_us"] <= GOAL_CPU_US
    print(f"jstat / inspect CPU per sample: {ns['ratio']:.1f}x; goal <= {GOAL_CPU_US:.0f} us: "
          f"{'PASS' if ok else 'MISS'}")
    r = results["rss"]
    grew = (r["after_100000_kib"] - r["after_1000_kib"]) / 1024
    print(f"peak RSS: {r['after_1000_kib'] / 1024:.2f} MiB after 1,000 samples, "
          f"{r['after_100000_kib'] / 1024:.2f} MiB after 100,000 (+{grew:.2f} MiB); goal within "
          f"{GOAL_RSS_MIB:.0f} MiB: {'PASS' if grew <= GOAL_RSS_MIB else 'MISS'}")
    print(f"\n{'stopped samples (-F)':24} {'threads':>8} {'wall/sample':>12} {'CPU/sample':>12} "
          f"{'wall/thread':>12}")
    for s in results["stop"]:
        print(f"{'':24} {s['os_threads']:8d} {s['wall_us'] / 1e3:9.2f} ms {s['cpu_us'] / 1e3:9.2f} ms "
              f"{s['wall_us_per_thread']:9.1f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
