#!/usr/bin/env python3
"""`inspect top -b` against `jstat -gcutil <pid> 1s` per JVM, on many idle JVMs, in one run
(python3 standard library only).

Starts N idle JVMs (default 50; -Xmx16m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto),
waits until each has printed READY, then, one after the other, for S seconds each (default 60):
    inspect top -b -d 1 -n S --format json      (the default: /proc rescanned at most every 10 s)
    inspect top -b -d 1 -n S --rescan 1         (/proc rescanned every second: what it saves)
    jstat -gcutil <pid> 1s S, for every JVM      (what a person does today), all at once
and reports each one's CPU (user + system, as % of one core over its wall time) and memory:
`inspect top`'s peak RSS (GNU time %M), the jstat processes' summed RSS (VmRSS of each, read
half way through). It checks that `inspect top` showed every JVM it started, in every frame.

Goals, printed as PASS/MISS (they never fail the run): `inspect top` (default options) at most 1%
of one core on average, at most 10 MiB peak RSS.

Usage:  bench/bench_top.py [--jvms 50] [--seconds 60] [--inspect PATH] [--jdk DIR]
It builds `cargo build --release` unless --inspect is given. Run it as root (so every JVM is
read from memory, as `inspect top` reads it in use). Exit status: 0 when the measurements ran,
2 on a setup error (no JDK, build failed, a JVM did not start).
On a shared machine run it once: 50 JVMs plus 50 jstat take ~4 GB and a few CPU-minutes.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (  # noqa: E402  (bench/benchlib.py: what every benchmark shares)
    DEFAULT_JDK, GNU_TIME, IDLE_JAVA, JVM_FLAGS, SetupError, build_inspect, start_jvms, stop)

GOAL_CPU_PERCENT = 1.0
GOAL_RSS_MIB = 10.0

def run_top(inspect, seconds, extra, tmp):
    """`inspect top -b` under GNU time: (wall s, cpu s, peak RSS MiB, stdout)."""
    tfile = os.path.join(tmp, "time")
    out = os.path.join(tmp, "top.out")
    argv = [GNU_TIME, "-o", tfile, "-f", "%e %U %S %M",
            inspect, "top", "-b", "-d", "1", "-n", str(seconds), *extra]
    with open(out, "w") as f:
        status = subprocess.run(argv, stdout=f, stderr=subprocess.DEVNULL).returncode
    if status != 0:
        raise SetupError(f"{' '.join(argv)} exited with status {status}")
    with open(tfile) as f:
        wall, user, sys_, rss_kib = f.read().split()[-4:]
    with open(out) as f:
        text = f.read()
    return float(wall), float(user) + float(sys_), int(rss_kib) / 1024, text


def vm_rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_jstats(jdk, pids, seconds):
    """`jstat -gcutil <pid> 1s <seconds>` for every pid at once: (wall s, summed cpu s, summed
    RSS MiB half way through)."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen([f"{jdk}/bin/jstat", "-gcutil", str(p), "1s", str(seconds)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for p in pids]
    time.sleep(seconds / 2)
    rss = sum(vm_rss_mib(p.pid) for p in procs)
    cpu = 0.0
    for p in procs:
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        cpu += ru.ru_utime + ru.ru_stime
        if p.returncode != 0:
            raise SetupError(f"jstat -gcutil {p.args[2]} exited with status {p.returncode}")
    return time.perf_counter() - t0, cpu, rss


def check_shown(text, jvms, seconds):
    frames = {}
    for line in text.splitlines():
        row = json.loads(line)
        frames.setdefault(row["timestamp"], set()).add(row["pid"])
    want = {p.pid for p in jvms}
    if len(frames) != seconds:
        raise SetupError(f"inspect top printed {len(frames)} frames, not {seconds}")
    for ts, pids in frames.items():
        if not want <= pids:
            raise SetupError(f"frame {ts} misses JVMs {sorted(want - pids)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jvms", type=int, default=50)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--inspect", help="the inspect binary (default: build target/release/inspect)")
    ap.add_argument("--jdk", default=DEFAULT_JDK)
    args = ap.parse_args()

    jdk = args.jdk
    for tool in ("java", "javac", "jstat"):
        if not os.access(f"{jdk}/bin/{tool}", os.X_OK):
            raise SetupError(f"no {jdk}/bin/{tool}: install JDK 17 "
                             "(apt-get install -y openjdk-17-jdk-headless) or pass --jdk DIR")
    if not os.access(GNU_TIME, os.X_OK):
        raise SetupError(f"no {GNU_TIME} (for peak RSS): apt-get install -y time")
    inspect = args.inspect
    if inspect is None:
        inspect = str(build_inspect())

    with tempfile.TemporaryDirectory(prefix="bench-top-") as tmp:
        src = Path(tmp) / "BenchIdle.java"
        src.write_text(IDLE_JAVA)
        if subprocess.run([f"{jdk}/bin/javac", "-d", tmp, str(src)]).returncode != 0:
            raise SetupError("javac failed")
        print(f"# {args.jvms} idle JVMs ({' '.join(JVM_FLAGS)}), {args.seconds} s each, "
              f"load {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}")
        jvms = start_jvms(jdk, tmp, args.jvms)
        try:
            time.sleep(2.0)  # let the last ones finish their start-up work
            rows = []
            for label, extra in [
                ("inspect top -b (rescan <= 10 s)", ["--format", "json"]),
                ("inspect top -b --rescan 1", ["--format", "json", "--rescan", "1"]),
            ]:
                wall, cpu, rss, text = run_top(inspect, args.seconds, extra, tmp)
                check_shown(text, jvms, args.seconds)
                rows.append((label, wall, cpu, rss))
            wall, cpu, rss = run_jstats(jdk, [p.pid for p in jvms], args.seconds)
            rows.append((f"jstat -gcutil <pid> 1s x {args.jvms}", wall, cpu, rss))
            print(f"  {'command':<36} {'wall':>7} {'CPU':>9} {'% of a core':>12} {'RSS':>10}")
            for label, wall, cpu, rss in rows:
                print(f"  {label:<36} {wall:>6.1f}s {cpu:>8.2f}s {cpu / wall * 100:>11.2f}% "
                      f"{rss:>6.1f} MiB")
            _, wall, cpu, rss = rows[0]
            jstat_cpu = rows[2][2] / rows[2][1]
            pct = cpu / wall * 100
            print(f"  jstat per JVM costs {jstat_cpu / (cpu / wall):.0f}x the CPU of inspect top "
                  f"for all {args.jvms}")
            print(f"  goal: <= {GOAL_CPU_PERCENT:.0f}% of a core: "
                  f"{'PASS' if pct <= GOAL_CPU_PERCENT else 'MISS'} ({pct:.2f}%)")
            print(f"  goal: <= {GOAL_RSS_MIB:.0f} MiB RSS: "
                  f"{'PASS' if rss <= GOAL_RSS_MIB else 'MISS'} ({rss:.1f} MiB peak)")
        finally:
            stop(jvms)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SetupError as e:
        print(f"bench_top: {e}", file=sys.stderr)
        sys.exit(2)
