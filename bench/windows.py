#!/usr/bin/env python3
"""Windows benchmark under Wine: inspect.exe against jcmd.exe on ONE Windows JVM, in one run.

Wall time (median and p90 of N runs, interleaved round-robin so drifts hit every command alike) of
    wine cmd /c exit                   Wine's cost of running a (small) Windows program
    wine true.exe                      the floor: an empty mingw program (`int main(){return 0;}`)
    inspect.exe -F <pid>               forced read (debug-attach stop)
    inspect.exe --no-stop -F <pid>     forced read without stopping the JVM
    inspect.exe <pid>                  the named file mapping
    jcmd.exe <pid> PerfCounter.print   the JDK's tool
    inspect.exe list                   every JVM on the host (toolhelp snapshots, a read of each)
    jps.exe -l                         the JDK's list
and the ratio of medians jcmd.exe / inspect.exe (for `list`: jps.exe / inspect.exe list), raw and
with the floor (true.exe) subtracted from both.
Wine's costs are not Windows': compare the ratios, not the absolute times.

Usage: bench/windows.py [--runs 20] [--jcmd-runs 8]   (after scripts/windows/test.sh
--build-only, which builds inspect.exe and sets up Wine; this script is run by nothing else).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# integration.py (the Windows fixtures and helpers) is scripts/windows's.
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts", "windows"))
import benchlib  # noqa: E402  (bench/benchlib.py: what every benchmark shares)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--jcmd-runs", type=int, default=8)
    a = ap.parse_args()
    import integration as it  # needs INSPECT_EXE, WIN_JAVA_HOME (see test.sh)

    it.build_fixtures()
    true_exe = os.path.join(it.WORK, "true.exe")
    subprocess.run(["x86_64-w64-mingw32-gcc", "-O2", "-s", "-x", "c", "-o", true_exe, "-"],
                   input=b"int main(void) { return 0; }\n", check=True)
    jvm = it.jvm(threads=100)
    pid = str(jvm.pid)
    commands = {
        "wine cmd /c exit": ["cmd", "/c", "exit"],
        "wine true.exe": [true_exe],
        "inspect.exe -F": [it.INSPECT, "-F", pid],
        "inspect.exe --no-stop -F": [it.INSPECT, "--no-stop", "-F", pid],
        "inspect.exe <pid>": [it.INSPECT, pid],
        "jcmd.exe PerfCounter.print": [it.JCMD, pid, "PerfCounter.print"],
        "inspect.exe list": [it.INSPECT, "list"],
        "jps.exe -l": [it.JPS, "-l"],
    }
    times = {k: [] for k in commands}
    out = os.path.join(it.WORK, "bench.out")
    try:
        for argv in commands.values():  # warm-up (and a check that each works)
            res = subprocess.run(["wine", *argv], capture_output=True)
            if res.returncode != 0:
                sys.exit(f"{argv} failed: {res.stderr.decode(errors='replace')}")
        for i in range(a.runs):
            for name, argv in commands.items():
                if name.startswith(("jcmd", "jps")) and i >= a.jcmd_runs:
                    continue
                wall, _, code, err = benchlib.run_once(["wine", *argv], out)
                if code != 0:
                    sys.exit(f"{name} exited with {code}: {err.strip()[-300:]}")
                times[name].append(wall)
    finally:
        jvm.close()
        shutil.rmtree(it.WORK, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    p90 = {k: benchlib.pct(v, 90) for k, v in times.items()}
    floor = med["wine true.exe"]
    jcmd = med["jcmd.exe PerfCounter.print"]
    print(f"JVM: Windows JDK 21 under Wine, 100 idle threads; {a.runs} runs ({a.jcmd_runs} of jcmd.exe)")
    print(f"{'command':30} {'median ms':>10} {'p90 ms':>8} {'ref/this':>10} {'minus true.exe':>15}")
    for k in commands:
        # `list` is compared with jps, the rest with jcmd.
        ref = med["jps.exe -l"] if k in ("inspect.exe list", "jps.exe -l") else jcmd
        ratio = ref / med[k]
        net = f"{(ref - floor) / (med[k] - floor):15.1f}" if med[k] > floor else f"{'-':>15}"
        print(f"{k:30} {med[k] * 1e3:10.1f} {p90[k] * 1e3:8.1f} {ratio:10.1f} {net}")


if __name__ == "__main__":
    main()
