#!/usr/bin/env python3
"""hsinspect's benchmark: `inspect` against the JDK's own tools on ONE JVM in one run.

What it measures (python3 standard library only):

1. Wall time (median, p90 of N runs) and peak RSS (the child's ru_maxrss from os.wait4) of
     inspect -F <pid>               forced read (ptrace stop, warm symbol cache)
     inspect --no-cache -F <pid>    forced read, symbols looked up in libjvm every time
     inspect --no-stop -F <pid>     forced read without stopping the JVM
     inspect <pid>                  the hsperfdata file
     jcmd <pid> PerfCounter.print
     jstat -J-Djstat.showUnsupported=true -snap <pid>
     jhsdb jsnap --all --pid <pid>
   each against the same JVM (bench/StallTarget.java, 100 idle threads, spinner parked), plus
   /bin/true as the floor of starting a process from this script.

2. The stall a read causes in that JVM: its spinner thread reads System.nanoTime() in a loop and
   records the longest gap between two reads per window. Baseline windows (no tool runs) are
   interleaved with windows that contain exactly one run of a tool, of the same length; the stall
   beyond noise is median(max gap with the tool) - median(max gap without).

3. The goals, printed as PASS/MISS next to the figures (they never fail the run):
   inspect -F >= 100x faster than jcmd (median wall), inspect -F peak RSS <= 12 MiB,
   inspect -F stall < 1 ms beyond noise.

Usage:  bench/bench.py [--runs 30] [--jdk-runs 10] [--jhsdb-runs 5] [--stall-windows 20]
                         [--inspect PATH] [--jdk DIR] [--json FILE] [--core [--core-args ARGS]]
It builds `cargo build --release` unless --inspect is given, compiles the target with the JDK's
javac into a temp dir, starts and kills its JVM, and removes its temp files. Exit status: 0 when
the measurements ran (whatever the goals say), 2 on a setup error (no JDK, build failed, ...).
"""

import argparse
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (  # noqa: E402  (bench/benchlib.py: what every benchmark shares)
    DEFAULT_JDK, GNU_TIME, JDK_HINT, REPO, SetupError, build_inspect, pct, peak_rss_mib, run_once)

EXPECT = "java.threads.live"  # a counter every tool prints (jhsdb jsnap has no sun.perfdata.*)
GOAL_SPEEDUP = 100.0  # inspect -F at least this many times faster than jcmd (median wall)
GOAL_RSS_MIB = 12.0  # inspect -F peak RSS at most this
GOAL_STALL_MS = 1.0  # inspect -F stall beyond noise below this


# ----------------------------------------------------------------------------------------------
# Checking a run (running one command: benchlib.run_once).


def check_output(name, out_path, code, err, expect):
    """Raises RuntimeError when a run failed or printed nothing recognisable."""
    if code != 0:
        raise RuntimeError(f"{name} exited with {code}: {err.strip()[-400:]}")
    if expect:
        with open(out_path, "r", errors="replace") as f:
            text = f.read()
        if expect not in text:
            raise RuntimeError(f"{name} printed no '{expect}' (stderr: {err.strip()[-400:]})")


# ----------------------------------------------------------------------------------------------
# The target JVM.


class Target:
    """bench/StallTarget.java running on the benchmark JDK; talks the reset/report protocol."""

    def __init__(self, jdk, classes, threads):
        self.proc = subprocess.Popen(
            [str(jdk / "bin/java"), "-Xmx32m", "-XX:+UseSerialGC", "-Xshare:auto",
             # no periodic cleanup safepoint: it would stop the spinner at random, as noise
             "-XX:+UnlockDiagnosticVMOptions", "-XX:GuaranteedSafepointInterval=0",
             "-cp", str(classes), "StallTarget", str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.pid = self.proc.pid
        line = self.proc.stdout.readline().strip()
        if line != "READY":
            self.close()
            raise SetupError(f"the target JVM did not start (said {line!r})")

    def spinner_tid(self):
        """The spinner thread's tid (its native name is the Java thread name)."""
        for t in os.listdir(f"/proc/{self.pid}/task"):
            try:
                with open(f"/proc/{self.pid}/task/{t}/comm") as f:
                    if f.read().strip() == "spinner":
                        return int(t)
            except OSError:
                continue
        raise RuntimeError("no thread named 'spinner' in the target")

    def set_spinner_realtime(self, on, priority=10):
        """SCHED_FIFO (on) or SCHED_OTHER for the spinner only. Under SCHED_FIFO other processes
        on the machine cannot preempt it, so its gaps come from the tool (ptrace stop,
        safepoint), not from the machine's load. The kernel's RT throttling
        (kernel.sched_rt_runtime_us, 950 ms per second) still stops a FIFO thread that runs a
        whole second, so windows longer than RT_WINDOW_LIMIT_S run SCHED_OTHER."""
        if on:
            os.sched_setscheduler(self.spinner_tid(), os.SCHED_FIFO, os.sched_param(priority))
        else:
            os.sched_setscheduler(self.spinner_tid(), os.SCHED_OTHER, os.sched_param(0))

    def _ask(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().strip()
        if not line:
            raise RuntimeError(f"the target JVM exited (after {cmd!r})")
        return line

    def reset(self):
        reply = self._ask("reset")
        if reply != "ok":
            raise RuntimeError(f"target answered {reply!r} to reset")

    def report(self):
        reply = self._ask("report")
        try:
            fields = dict(kv.split("=", 1) for kv in reply.split())
            gaps = fields.pop("gaps", "")
            rep = {k: int(v) for k, v in fields.items()}
            rep["gaps"] = [tuple(int(x) for x in g.split(":")) for g in gaps.split(",") if g]
            return rep
        except ValueError:
            raise RuntimeError(f"target answered {reply[:200]!r} to report")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ----------------------------------------------------------------------------------------------
# Setup.


def jdk_tools(jdk):
    """The JDK's java/javac (required) and jcmd/jstat/jhsdb (each optional, with a message)."""
    for required in ("java", "javac"):
        if not (jdk / "bin" / required).exists():
            raise SetupError(f"{jdk / 'bin' / required} not found: {JDK_HINT}")
    tools, missing = {}, []
    for name in ("jcmd", "jstat", "jhsdb"):
        p = jdk / "bin" / name
        if p.exists() and os.access(p, os.X_OK):
            tools[name] = str(p)
        else:
            missing.append(name)
            print(f"bench: {p} not found: its rows are left out ({JDK_HINT})", file=sys.stderr)
    return tools, missing


def compile_target(jdk, tmp):
    classes = Path(tmp) / "classes"
    classes.mkdir()
    src = REPO / "bench/StallTarget.java"
    r = subprocess.run([str(jdk / "bin/javac"), "-d", str(classes), str(src)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SetupError(f"javac failed on {src}:\n{r.stderr}")
    return classes


# ----------------------------------------------------------------------------------------------
# The measurements.


def commands(inspect, tools, pid, runs, jdk_runs, jhsdb_runs):
    """(name, argv, runs, text the output must contain) for each measured command."""
    p = str(pid)
    i = str(inspect)
    cmds = [
        ("/bin/true (spawn floor)", ["/bin/true"], runs, None),
        ("inspect -F", [i, "-F", p], runs, EXPECT),
        ("inspect --no-cache -F", [i, "--no-cache", "-F", p], runs, EXPECT),
        ("inspect --no-stop -F", [i, "--no-stop", "-F", p], runs, EXPECT),
        ("inspect <pid>", [i, p], runs, EXPECT),
    ]
    if "jcmd" in tools:
        cmds.append(("jcmd PerfCounter.print", [tools["jcmd"], p, "PerfCounter.print"],
                     jdk_runs, EXPECT))
    if "jstat" in tools:
        cmds.append(("jstat -snap", [tools["jstat"], "-J-Djstat.showUnsupported=true", "-snap",
                                     p], jdk_runs, EXPECT))
    if "jhsdb" in tools:
        cmds.append(("jhsdb jsnap --all", [tools["jhsdb"], "jsnap", "--all", "--pid", p],
                     jhsdb_runs, EXPECT))
    return cmds


def measure_times(cmds, tmp, env):
    """Runs each command once untimed (warm-up), then its N runs, interleaved round-robin so
    slow drifts in machine load hit every tool alike. Returns name -> stats dict."""
    out = os.path.join(tmp, "out")
    samples = {name: {"wall": [], "rss": [], "cpu": []} for name, *_ in cmds}
    failures = {}
    live = list(cmds)
    for name, argv, _, expect in cmds:
        _, _, code, err = run_once(argv, out, env)
        try:
            check_output(name, out, code, err, expect)
        except RuntimeError as e:
            failures[name] = str(e)
            print(f"bench: {e}", file=sys.stderr)
    live = [c for c in cmds if c[0] not in failures]
    rounds = max(c[2] for c in live) if live else 0
    for r in range(rounds):
        for name, argv, n, expect in live:
            if r >= n or name in failures:
                continue
            wall, ru, code, err = run_once(argv, out, env)
            try:
                check_output(name, out, code, err, expect)
            except RuntimeError as e:
                failures[name] = str(e)
                print(f"bench: {e}", file=sys.stderr)
                continue
            s = samples[name]
            s["wall"].append(wall * 1e3)
            s["rss"].append(ru.ru_maxrss / 1024.0)
            s["cpu"].append((ru.ru_utime + ru.ru_stime) * 1e3)
        print(f"  round {r + 1}/{rounds}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    rss, rss_how = measure_rss(live, tmp, env, failures)
    result = {}
    for name, argv, n, _ in cmds:
        s = samples[name]
        if name in failures or not s["wall"]:
            result[name] = {"argv": argv, "error": failures.get(name, "no runs")}
            continue
        result[name] = {
            "argv": argv,
            "runs": len(s["wall"]),
            "median_ms": statistics.median(s["wall"]),
            "p90_ms": pct(s["wall"], 90),
            "min_ms": min(s["wall"]),
            "cpu_median_ms": statistics.median(s["cpu"]),
            "peak_rss_mib": rss.get(name, max(s["rss"])),
            "rss_how": rss_how,
        }
    return result


def measure_rss(cmds, tmp, env, failures, k=3):
    """Peak RSS (MiB) of each command, the largest of min(k, N) runs under GNU time (%M)
    (benchlib.peak_rss_mib says why not wait4's ru_maxrss). Without /usr/bin/time, returns {}
    and the wait4 figure, an upper bound, is used."""
    if not os.access(GNU_TIME, os.X_OK):
        print("bench: /usr/bin/time not found (apt-get install -y time): peak RSS is the wait4 "
              "ru_maxrss, an upper bound that includes this script's own RSS", file=sys.stderr)
        return {}, "wait4 ru_maxrss (upper bound: includes the Python spawner's RSS)"
    rss = {}
    for name, argv, n, _ in cmds:
        if name in failures:
            continue
        try:
            rss[name] = peak_rss_mib(argv, tmp, min(k, n), env)
        except RuntimeError as e:
            print(f"bench: peak RSS of {name} not measured ({e})", file=sys.stderr)
    return rss, f"GNU time %M, largest of {k} runs"


STOPPED_RE = re.compile(r"stopped (\d+) threads for ([0-9.]+) ms")


def gaps_in(rep, a, b):
    """The longest listed gap (ms) overlapping [a, b] (CLOCK_MONOTONIC ns), and how many of the
    overlapping gaps exceed 100 us and 1 ms."""
    longest, c100, c1 = 0.0, 0, 0
    for s, ln in rep["gaps"]:
        if s < b and s + ln > a:
            longest = max(longest, ln / 1e6)
            c100 += ln > 100_000
            c1 += ln > 1_000_000
    return longest, c100, c1


RT_WINDOW_LIMIT_S = 0.4  # longest window run with a SCHED_FIFO spinner (RT throttling: 0.95 s per s)


def measure_stall(target, stall_cmds, windows, tmp, env, rt=False, expected_ms=None):
    """For each tool: `windows` pairs of (window with one run of the tool, baseline window of the
    same length with nothing run). Java's System.nanoTime() and Python's time.monotonic_ns() are
    both CLOCK_MONOTONIC, so the spinner's gaps are matched to the tool's run [start, end]; the
    baseline is the same interval, at the same offset, in the baseline window.
    Returns name -> stats dict (gaps in ms)."""
    out = os.path.join(tmp, "stall-out")
    lead = 0.01  # seconds of spinning before the tool starts and after it ends
    result = {}
    for name, argv in stall_cmds:
        tool, base, stopped_ms, whole = [], [], [], []
        # FIFO only when the tool's windows stay well below RT throttling's 950 ms per second
        p90 = (expected_ms or {}).get(name)
        fifo = rt and p90 is not None and p90 / 1e3 + 2 * lead < RT_WINDOW_LIMIT_S
        if rt:
            target.set_spinner_realtime(fifo)
        rest = fifo
        c100 = c1 = b100 = b1 = 0
        error = None
        for _ in range(windows):
            target.reset()
            w0 = time.monotonic_ns()
            time.sleep(lead)
            a = time.monotonic_ns()
            _, _, code, err = run_once(argv, out, env)
            b = time.monotonic_ns()
            time.sleep(lead)
            rep = target.report()
            length = (time.monotonic_ns() - w0) / 1e9
            if code != 0:
                error = f"{name} exited with {code}: {err.strip()[-300:]}"
                break
            if rest:
                time.sleep(length)  # see below
            m = STOPPED_RE.search(err)
            if m:
                stopped_ms.append(float(m.group(2)))
            g, x100, x1 = gaps_in(rep, a, b)
            tool.append(g)
            whole.append(rep["maxgap_ns"] / 1e6)
            c100 += x100
            c1 += x1
            # the baseline: same length, nothing run, the same interval [a, b] relative to reset
            target.reset()
            v0 = time.monotonic_ns()
            time.sleep(length)
            rep = target.report()
            g, x100, x1 = gaps_in(rep, v0 + (a - w0), v0 + (b - w0))
            base.append(g)
            b100 += x100
            b1 += x1
            if rest:
                # keep a SCHED_FIFO spinner under half the time on its CPU: no RT throttling
                time.sleep(length)
        if error:
            print(f"bench: {error}", file=sys.stderr)
            result[name] = {"argv": argv, "error": error}
            continue
        n = len(tool)
        r = {
            "argv": argv,
            "spinner_policy": "SCHED_FIFO" if fifo else "SCHED_OTHER",
            "windows": n,
            "maxgap_median_ms": statistics.median(tool),
            "maxgap_p90_ms": pct(tool, 90),
            "maxgap_max_ms": max(tool),
            "baseline_median_ms": statistics.median(base),
            "baseline_p90_ms": pct(base, 90),
            "baseline_max_ms": max(base),
            "stall_beyond_noise_ms": statistics.median(tool) - statistics.median(base),
            "gaps_over_100us_per_run": c100 / n,
            "gaps_over_1ms_per_run": c1 / n,
            "baseline_gaps_over_100us_per_run": b100 / n,
            "baseline_gaps_over_1ms_per_run": b1 / n,
            "whole_window_maxgap_median_ms": statistics.median(whole),
        }
        if stopped_ms:
            r["inspect_reported_stop_median_ms"] = statistics.median(stopped_ms)
            r["inspect_reported_stop_max_ms"] = max(stopped_ms)
        result[name] = r
        print(f"  stall: {name} done", file=sys.stderr)
    return result


# ----------------------------------------------------------------------------------------------
# Output.


def print_tables(times, stall, goals, info):
    print()
    print(f"JVM: {info['jvm']}, pid {info['pid']}, {info['threads']} idle threads; "
          f"inspect: {info['inspect']}; {info['cpus']} CPUs; load avg {info['loadavg']}")
    base = times.get("inspect -F", {}).get("median_ms")
    print()
    hdr = f"{'tool':<26} {'runs':>4} {'median ms':>10} {'p90 ms':>9} {'cpu ms':>8} " \
          f"{'x inspect -F':>13} {'peak RSS MiB':>13}"
    print(hdr)
    print("-" * len(hdr))
    for name, r in times.items():
        if "error" in r:
            print(f"{name:<26} FAILED: {r['error'][:90]}")
            continue
        ratio = f"{r['median_ms'] / base:.1f}x" if base else "-"
        print(f"{name:<26} {r['runs']:>4} {r['median_ms']:>10.2f} {r['p90_ms']:>9.2f} "
              f"{r['cpu_median_ms']:>8.2f} {ratio:>13} {r['peak_rss_mib']:>13.1f}")
    print()
    print("Stall: longest gap between two System.nanoTime() reads of the target's spinner thread "
          "while the tool ran;")
    print("baseline: the same interval in a same-length window with no tool run. "
          "'>1ms/run': gaps over 1 ms per run (tool / baseline).")
    print("spinner: its scheduling policy (SCHED_FIFO keeps the machine's load out of the gaps; "
          "windows over 0.4 s run SCHED_OTHER because of RT throttling).")
    hdr = f"{'tool':<22} {'runs':>4} {'gap med ms':>11} {'gap p90':>8} {'gap max':>8} " \
          f"{'base med':>9} {'base p90':>9} {'beyond noise':>13} {'>1ms/run':>11} " \
          f"{'inspect says stopped ms':>24} {'spinner':>11}"
    print(hdr)
    print("-" * len(hdr))
    for name, r in stall.items():
        if "error" in r:
            print(f"{name:<22} FAILED: {r['error'][:90]}")
            continue
        said = ""
        if "inspect_reported_stop_median_ms" in r:
            said = f"{r['inspect_reported_stop_median_ms']:.3f} (max " \
                   f"{r['inspect_reported_stop_max_ms']:.3f})"
        over = f"{r['gaps_over_1ms_per_run']:.1f}/{r['baseline_gaps_over_1ms_per_run']:.1f}"
        print(f"{name:<22} {r['windows']:>4} {r['maxgap_median_ms']:>11.3f} "
              f"{r['maxgap_p90_ms']:>8.3f} {r['maxgap_max_ms']:>8.3f} "
              f"{r['baseline_median_ms']:>9.3f} {r['baseline_p90_ms']:>9.3f} "
              f"{r['stall_beyond_noise_ms']:>13.3f} {over:>11} {said:>24} "
              f"{r['spinner_policy']:>11}")
    print()
    print("Goals")
    for g in goals:
        print(f"  {g['verdict']:<4}  {g['goal']}: {g['measured']}")


def judge(times, stall):
    goals = []
    ins = times.get("inspect -F", {})
    jc = times.get("jcmd PerfCounter.print", {})
    if "median_ms" in ins and "median_ms" in jc:
        ratio = jc["median_ms"] / ins["median_ms"]
        goals.append({"goal": f"inspect -F >= {GOAL_SPEEDUP:.0f}x faster than jcmd (median wall)",
                      "measured": f"{ratio:.1f}x ({ins['median_ms']:.2f} ms vs "
                                  f"{jc['median_ms']:.1f} ms)",
                      "value": ratio, "verdict": "PASS" if ratio >= GOAL_SPEEDUP else "MISS"})
    else:
        goals.append({"goal": f"inspect -F >= {GOAL_SPEEDUP:.0f}x faster than jcmd",
                      "measured": "not measured (inspect -F or jcmd missing/failed)",
                      "value": None, "verdict": "MISS"})
    if "peak_rss_mib" in ins:
        rss = ins["peak_rss_mib"]
        goals.append({"goal": f"inspect -F peak RSS <= {GOAL_RSS_MIB:.0f} MiB",
                      "measured": f"{rss:.1f} MiB", "value": rss,
                      "verdict": "PASS" if rss <= GOAL_RSS_MIB else "MISS"})
    st = stall.get("inspect -F", {})
    if "stall_beyond_noise_ms" in st:
        s = st["stall_beyond_noise_ms"]
        goals.append({"goal": f"inspect -F stall < {GOAL_STALL_MS:.0f} ms beyond noise",
                      "measured": f"{s:.3f} ms (median max gap {st['maxgap_median_ms']:.3f} ms "
                                  f"vs baseline {st['baseline_median_ms']:.3f} ms; p90 "
                                  f"{st['maxgap_p90_ms']:.3f} ms)",
                      "value": s, "verdict": "PASS" if s < GOAL_STALL_MS else "MISS"})
    return goals


# ----------------------------------------------------------------------------------------------


def run_core_hook(core_args):
    """Calls bench/bench_core.py's main() (the core-file benchmark) if the file exists."""
    path = Path(__file__).resolve().parent / "bench_core.py"
    if not path.exists():
        print(f"bench: --core: {path} is missing (the core-file benchmark is not written yet)",
              file=sys.stderr)
        return 2
    sys.path.insert(0, str(path.parent))
    import bench_core  # noqa: E402  (only present when the core benchmark exists)

    saved = sys.argv
    sys.argv = [str(path)] + shlex.split(core_args or "")
    try:
        rc = bench_core.main()
    finally:
        sys.argv = saved
    return rc if isinstance(rc, int) else 0


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Benchmark inspect against jcmd/jstat/jhsdb on one JVM (wall time, peak RSS, "
                    "stall).")
    ap.add_argument("--runs", type=int, default=30, help="runs of each inspect variant (30)")
    ap.add_argument("--jdk-runs", type=int, default=10, help="runs of jcmd and jstat (10)")
    ap.add_argument("--jhsdb-runs", type=int, default=5, help="runs of jhsdb jsnap (5)")
    ap.add_argument("--stall-windows", type=int, default=20,
                    help="windows per tool in the stall test, inspect variants (20)")
    ap.add_argument("--stall-jdk-windows", type=int, default=3,
                    help="windows per JDK tool in the stall test (3)")
    ap.add_argument("--threads", type=int, default=100, help="idle threads in the target (100)")
    ap.add_argument("--inspect", type=Path, help="use this inspect binary, do not build")
    ap.add_argument("--jdk", type=Path, default=Path(DEFAULT_JDK),
                    help=f"JDK home for the target and tools ({DEFAULT_JDK})")
    ap.add_argument("--no-stall", action="store_true", help="skip the stall measurement")
    ap.add_argument("--rt", dest="rt", action="store_true", default=None,
                    help="run the target's spinner thread SCHED_FIFO during the stall test, so "
                         "the machine's load does not preempt it (default when root)")
    ap.add_argument("--no-rt", dest="rt", action="store_false",
                    help="leave the spinner SCHED_OTHER")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--core", action="store_true",
                    help="then run the core-file benchmark (bench/bench_core.py main())")
    ap.add_argument("--core-args", default="", help="arguments for bench_core (one string)")
    args = ap.parse_args(argv)
    if min(args.runs, args.jdk_runs, args.jhsdb_runs) < 1 or args.stall_windows < 1:
        ap.error("run and window counts must be at least 1")

    # SIGTERM/SIGHUP end the run through the cleanup below, like Ctrl-C does.
    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)

    target = None
    try:
        with tempfile.TemporaryDirectory(prefix="hsinspect-bench-") as tmp:
            try:
                jdk = args.jdk
                tools, missing = jdk_tools(jdk)
                inspect = args.inspect.resolve() if args.inspect else build_inspect()
                if not os.access(inspect, os.X_OK):
                    raise SetupError(f"--inspect {inspect}: not an executable")
                classes = compile_target(jdk, tmp)
                # A private symbol cache, so the run neither uses nor changes the user's.
                env = dict(os.environ, HSINSPECT_CACHE_DIR=os.path.join(tmp, "cache"))
                target = Target(jdk, classes, args.threads)
            except SetupError as e:
                print(f"bench: {e}", file=sys.stderr)
                return 2
            time.sleep(1.0)  # let the JVM finish its start-up compilation
            jvm = subprocess.run([str(jdk / "bin/java"), "-version"], capture_output=True,
                                 text=True).stderr.splitlines()
            info = {"jvm": jvm[1] if len(jvm) > 1 else str(jdk), "jdk": str(jdk),
                    "pid": target.pid, "threads": args.threads, "inspect": str(inspect),
                    "cpus": os.cpu_count(), "loadavg": " ".join(f"{x:.2f}" for x in
                                                                os.getloadavg()),
                    "missing_tools": missing}
            print(f"bench: target JVM pid {target.pid}; timing the tools", file=sys.stderr)
            cmds = commands(inspect, tools, target.pid, args.runs, args.jdk_runs,
                            args.jhsdb_runs)
            times = measure_times(cmds, tmp, env)
            stall = {}
            if not args.no_stall:
                print("bench: measuring the stall", file=sys.stderr)
                # -v only adds inspect's own "stopped N threads for X ms" line on stderr.
                sc = [("inspect -F", [str(inspect), "-v", "-F", str(target.pid)]),
                      ("inspect --no-stop -F", [str(inspect), "--no-stop", "-F",
                                                str(target.pid)])]
                rt = args.rt if args.rt is not None else os.geteuid() == 0
                if rt:
                    try:
                        target.set_spinner_realtime(True)
                    except (OSError, RuntimeError) as e:
                        print(f"bench: cannot make the spinner SCHED_FIFO ({e}); it stays "
                              f"SCHED_OTHER and the machine's load shows up as noise",
                              file=sys.stderr)
                        rt = False
                # warm-up: the spinner loop gets JIT-compiled (OSR) outside measured windows
                for _ in range(5):
                    target.reset()
                    time.sleep(0.1)
                    target.report()
                    time.sleep(0.1)
                expected = {n: r.get("p90_ms") for n, r in times.items()}
                expected["inspect -F"] = times.get("inspect -F", {}).get("p90_ms", 50.0)
                stall = measure_stall(target, sc, args.stall_windows, tmp, env, rt, expected)
                jdk_sc = [(n, a) for n, a, _, _ in cmds
                          if n in ("jcmd PerfCounter.print", "jhsdb jsnap --all")]
                stall.update(measure_stall(target, jdk_sc, args.stall_jdk_windows, tmp, env,
                                           rt, expected))
            info["loadavg_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
            goals = judge(times, stall)
            print_tables(times, stall, goals, info)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump({"info": info, "times": times, "stall": stall, "goals": goals}, f,
                              indent=2)
                print(f"\nJSON written to {args.json}")
    except KeyboardInterrupt as e:
        print(f"bench: interrupted ({e or 'Ctrl-C'}); cleaned up", file=sys.stderr)
        return 130
    finally:
        if target is not None:
            target.close()
    if args.core:
        return run_core_hook(args.core_args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
