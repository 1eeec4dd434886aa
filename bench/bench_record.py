#!/usr/bin/env python3
"""What `inspect record` costs: the CPU `inspect` takes and the throughput the target loses, on
one JVM with many threads of which a few busy (python3 standard library only, with benchlib.py).

The JVM is tests/java/HotTarget.java on JDK 17: --burners threads each doing a() and b() rounds
(its throughput: it prints its rounds so far every 100 ms, -Dhot.report=true), one thread in a
counted loop, and --parked parked threads (defaults 3 + 1 busy and 196 parked: 200 threads, 4
busy, as the goal names them). Windows of --seconds each alternate, --runs times:
    quiet:      nothing reads the JVM;
    recording:  `inspect record <pid> --rate 49 --duration <seconds>s -o FILE.txt` (release
                build), its CPU time (user + system, from wait4) over the window's length.
The target's throughput in each window is the rounds it reports over that window (its own
clock). The recording's throughput is compared with the mean of the quiet windows around it.

Goals, printed as PASS/MISS (they never fail the run): inspect at most 2 % of a core (median of
the recording windows), the target's throughput at least 98 % of its throughput without
recording (median ratio).

Usage:  bench/bench_record.py [--runs 3] [--seconds 10] [--burners 3] [--parked 196]
                              [--rate 49] [--inspect PATH] [--jdk DIR] [--json FILE]
It builds `cargo build --release` unless --inspect is given. Run it as root (ptrace).
Exit status 0 when the measurements ran (whatever the goals say), 2 on a setup error.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402  (bench/benchlib.py: what every benchmark shares)

GOAL_CPU_PCT = 2.0
GOAL_THROUGHPUT = 0.98


class Target:
    """HotTarget, its reports read on a thread: (rounds, nanoTime) pairs."""

    def __init__(self, jdk, classes, parked, burners):
        self.p = subprocess.Popen(
            [f"{jdk}/bin/java", "-Xmx256m", "-Dhot.report=true",
             "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,HotTarget::work",
             "-cp", classes, "HotTarget", str(parked), str(burners)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if self.p.stdout.readline().strip() != "READY":
            benchlib.stop([self.p])
            raise benchlib.SetupError(f"HotTarget did not start on {jdk}")
        self.pid = self.p.pid
        self.reports = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "rounds":
                with self.lock:
                    self.reports.append((int(parts[1]), int(parts[2])))

    def last(self):
        """The latest report, waiting for one if none came yet."""
        while True:
            with self.lock:
                if self.reports:
                    return self.reports[-1]
            time.sleep(0.01)


def throughput(a, b):
    """Rounds a second between two reports."""
    return (b[0] - a[0]) / ((b[1] - a[1]) / 1e9)


def quiet_window(target, seconds):
    start = target.last()
    time.sleep(seconds)
    return throughput(start, target.last())


def recording_window(target, inspect, seconds, rate, tmp, n):
    out = os.path.join(tmp, f"record-{n}.txt")
    start = target.last()
    began = time.monotonic()
    p = subprocess.Popen([str(inspect), "record", str(target.pid), "--rate", str(rate),
                          "--duration", f"{int(seconds * 1000)}ms", "-o", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - began
    end = target.last()
    err = p.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"inspect record failed: {err}")
    with open(out) as f:
        samples = sum(int(line.rsplit(" ", 1)[1]) for line in f if line.strip())
    os.remove(out)
    return {
        "throughput": throughput(start, end),
        "cpu_pct": 100.0 * benchlib.cpu_s(ru) / wall,
        "wall_s": wall,
        "samples": samples,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--burners", type=int, default=3)
    ap.add_argument("--parked", type=int, default=196)
    ap.add_argument("--rate", type=int, default=49)
    ap.add_argument("--inspect")
    ap.add_argument("--jdk", default=benchlib.DEFAULT_JDK)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    jdk = Path(args.jdk)
    try:
        for tool in ("java", "javac"):
            if not (jdk / "bin" / tool).exists():
                raise benchlib.SetupError(f"{jdk}/bin/{tool} missing: {benchlib.JDK_HINT}")
        inspect = Path(args.inspect) if args.inspect else benchlib.build_inspect()
        tmp = tempfile.mkdtemp(prefix="bench-record-")
        src = benchlib.REPO / "tests/java/HotTarget.java"
        r = subprocess.run([str(jdk / "bin/javac"), "--release", "11", "-d", tmp, str(src)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise benchlib.SetupError(f"javac {src} failed: {r.stderr}")
        print(f"starting HotTarget: {args.burners} burners, 1 looper, {args.parked} parked, "
              f"on {jdk}", file=sys.stderr)
        target = Target(jdk, tmp, args.parked, args.burners)
    except benchlib.SetupError as e:
        print(f"bench_record: {e}", file=sys.stderr)
        return 2
    try:
        threads = len(os.listdir(f"/proc/{target.pid}/task"))
        quiet = [quiet_window(target, args.seconds)]
        recorded = []
        for n in range(args.runs):
            rec = recording_window(target, inspect, args.seconds, args.rate, tmp, n)
            quiet.append(quiet_window(target, args.seconds))
            rec["ratio"] = rec["throughput"] / statistics.mean(quiet[-2:])
            recorded.append(rec)
            print(f"  window {n + 1}: inspect {rec['cpu_pct']:.2f} % of a core, "
                  f"{rec['samples']} stacks; target {rec['throughput']:.1f} rounds/s "
                  f"({100 * rec['ratio']:.1f} % of the quiet windows around it)",
                  file=sys.stderr)
    finally:
        benchlib.stop([target.p])
    cpu = statistics.median(r["cpu_pct"] for r in recorded)
    ratio = statistics.median(r["ratio"] for r in recorded)
    load = os.getloadavg()[0]
    print(f"JVM: {jdk}, {threads} tasks ({args.burners + 1} busy Java threads, {args.parked} "
          f"parked); load average {load:.1f}")
    print(f"quiet windows: {', '.join(f'{q:.1f}' for q in quiet)} rounds/s")
    print(f"inspect record at {args.rate} Hz: {cpu:.2f} % of a core (median of {args.runs} "
          f"windows of {args.seconds:g} s; goal <= {GOAL_CPU_PCT} %) "
          f"{'PASS' if cpu <= GOAL_CPU_PCT else 'MISS'}")
    print(f"target throughput while recorded: {100 * ratio:.1f} % of its throughput without "
          f"(goal >= {100 * GOAL_THROUGHPUT:.0f} %) {'PASS' if ratio >= GOAL_THROUGHPUT else 'MISS'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"quiet": quiet, "recorded": recorded, "cpu_pct": cpu, "ratio": ratio,
                       "load": load, "threads": threads}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
