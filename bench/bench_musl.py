#!/usr/bin/env python3
"""The static (musl) build against the glibc build, in one run (python3 stdlib only).

musl's malloc is slower than glibc's for allocation-heavy code; this checks that the static
release binary (what users download) is not slower where it matters. On 20 idle JVMs (the flags
of bench_list.py), every build measured interleaved so that load changes hit all alike:
    inspect -F <pid>                    one-shot forced read (wall and CPU, median of --runs)
    inspect <pid>                       one-shot read of the hsperfdata file
    inspect list                        the /proc scan of every JVM
    a sample's CPU, no stop             inspect stat -F --no-stop -gcutil <pid> 0 N, minus 1 sample,
                                        divided by N-1 (bench_stat.py's rule)
    a sample's CPU, stopped             the same with the JVM's threads stopped (N/10 samples)
    GET /metrics                        one scrape of every JVM by `inspect serve` (client wall;
                                        one exporter per build, both up at once)
and each exporter's peak RSS. Verdict per row: a build more than 10% slower than the first
build (the reference, glibc by default) is a MISS; the goal is no MISS for musl.

Usage:  bench/bench_musl.py [--build NAME=PATH ...] [--env NAME:VAR=VALUE ...] [--jvms 20]
                              [--runs 30] [--samples 5000] [--jdk DIR] [--json FILE]
--env sets an environment variable for one build's runs only (e.g. to compare allocator
settings: --build musl-purge10=PATH --env musl-purge10:MIMALLOC_PURGE_DELAY=10).
Without --build it builds `cargo build --release` (glibc) and
`cargo build --release --target x86_64-unknown-linux-musl` (musl) and compares those two.
Run it as root (ptrace). Exit status 0 when the measurements ran, 2 on a setup error.
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
import bench_serve  # noqa: E402  (get, sample, status_kib)
from benchlib import (  # noqa: E402  (bench/benchlib.py: what every benchmark shares)
    DEFAULT_JDK, IDLE_JAVA, SetupError, run_once, start_jvms, stop)

REPO = Path(__file__).resolve().parent.parent
MUSL = "x86_64-unknown-linux-musl"
SLOWER_LIMIT = 1.10  # a build more than 10% slower than the reference misses


def build_default():
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=REPO, check=True)
    subprocess.run(["cargo", "build", "--release", "-q", "--target", MUSL], cwd=REPO, check=True)
    return [("glibc", str(REPO / "target/release/inspect")),
            ("musl", str(REPO / f"target/{MUSL}/release/inspect"))]


ENVS = {}  # build name -> the environment of its runs (--env)


def run_ok(argv, tmp, name):
    """(wall s, cpu s) of one run of build `name`; raises when it fails."""
    out = os.path.join(tmp, name + ".out")
    wall, ru, status, err = run_once(argv, out, ENVS.get(name))
    if status != 0:
        raise SetupError(f"{' '.join(argv)} failed ({status}): {err.strip()[:300]}")
    return wall, ru.ru_utime + ru.ru_stime


def one_shots(builds, pid, runs, tmp):
    """{row: {build: (median wall s, median cpu s)}} for the one-shot commands."""
    rows = {
        "inspect -F <pid>": lambda exe: [exe, "-F", str(pid)],
        "inspect <pid> (file)": lambda exe: [exe, str(pid)],
        "inspect list": lambda exe: [exe, "list"],
    }
    res = {}
    for row, argv in rows.items():
        walls = {n: [] for n, _ in builds}
        cpus = {n: [] for n, _ in builds}
        for n, exe in builds:  # warm-up: page cache, the symbol cache
            run_ok(argv(exe), tmp, n)
        for _ in range(runs):
            for n, exe in builds:
                w, c = run_ok(argv(exe), tmp, n)
                walls[n].append(w)
                cpus[n].append(c)
        res[row] = {n: (statistics.median(walls[n]), statistics.median(cpus[n])) for n, _ in builds}
    return res


def sample_cpu(builds, pid, samples, rounds, tmp, stop):
    """{build: median over rounds of the per-sample CPU s (N samples minus 1, over N-1)}."""
    flag = [] if stop else ["--no-stop"]
    per = {n: [] for n, _ in builds}
    for _ in range(rounds):
        for n, exe in builds:
            base = [exe, "stat", "-F", *flag, "-gcutil", str(pid), "0"]
            _, c_n = run_ok(base + [str(samples)], tmp, n)
            _, c_1 = run_ok(base + ["1"], tmp, n)
            per[n].append((c_n - c_1) / (samples - 1))
    return {n: statistics.median(v) for n, v in per.items()}


def scrapes(builds, runs, pids):
    """{build: (median client wall s, median hsinspect_scrape_duration_seconds, peak RSS MiB)}."""
    servers = {}
    try:
        ports = {}
        for n, exe in builds:
            p = subprocess.Popen([exe, "serve", "--listen", "127.0.0.1:0"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, env=ENVS.get(n))
            servers[n] = p
            line = p.stderr.readline().strip()
            ports[n] = int(line.rsplit(":", 1)[1].split("/")[0])
        for n, _ in builds:
            _, page = bench_serve.get(ports[n])  # warm
            missing = [p for p in pids if f'pid="{p}"' not in page]
            if missing:
                raise SetupError(f"{n}: the page misses JVMs {missing}")
        walls = {n: [] for n, _ in builds}
        internal = {n: [] for n, _ in builds}
        for _ in range(runs):
            for n, _ in builds:
                w, page = bench_serve.get(ports[n])
                walls[n].append(w)
                internal[n].append(bench_serve.sample(page, "hsinspect_scrape_duration_seconds"))
        return {n: (statistics.median(walls[n]), statistics.median(internal[n]),
                    bench_serve.status_kib(servers[n].pid, "VmHWM") / 1024) for n, _ in builds}
    finally:
        for p in servers.values():
            p.terminate()
            p.wait(timeout=10)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", action="append", default=[], metavar="NAME=PATH",
                    help="a build to compare (repeatable; the first is the reference)")
    ap.add_argument("--env", action="append", default=[], metavar="NAME:VAR=VALUE",
                    help="an environment variable for one build's runs (repeatable)")
    ap.add_argument("--jvms", type=int, default=20)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jdk", default=DEFAULT_JDK)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    try:
        builds = [tuple(b.split("=", 1)) for b in args.build] or build_default()
        if len(builds) < 2:
            raise SetupError("give at least two --build NAME=PATH")
        for n, exe in builds:
            if not os.access(exe, os.X_OK):
                raise SetupError(f"{n}: no executable at {exe}")
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "BenchIdle.java"
            src.write_text(IDLE_JAVA)
            subprocess.run([f"{args.jdk}/bin/javac", "-d", tmp, str(src)], check=True)
            # a private symbol cache: every build starts from the same (warmed) state
            os.environ["HSINSPECT_CACHE_DIR"] = os.path.join(tmp, "cache")
            for e in args.env:
                name, _, kv = e.partition(":")
                var, _, value = kv.partition("=")
                ENVS.setdefault(name, dict(os.environ))[var] = value
            jvms = start_jvms(args.jdk, tmp, args.jvms)
            try:
                pid = jvms[0].pid
                shots = one_shots(builds, pid, args.runs, tmp)
                nostop = sample_cpu(builds, pid, args.samples, args.rounds, tmp, stop=False)
                stopped = sample_cpu(builds, pid, max(args.samples // 10, 2), args.rounds, tmp,
                                     stop=True)
                scrape = scrapes(builds, args.runs, {p.pid for p in jvms})
            finally:
                stop(jvms)
    except (SetupError, subprocess.CalledProcessError, OSError, ValueError) as e:
        print(f"bench_musl: {e}", file=sys.stderr)
        return 2

    names = [n for n, _ in builds]
    ref = names[0]
    table = []  # (row, unit, {build: value})
    for row, v in shots.items():
        table.append((row + ", wall", "ms", {n: v[n][0] * 1e3 for n in names}))
        table.append((row + ", CPU", "ms", {n: v[n][1] * 1e3 for n in names}))
    table.append(("a sample's CPU, --no-stop", "us", {n: nostop[n] * 1e6 for n in names}))
    table.append(("a sample's CPU, stopped", "us", {n: stopped[n] * 1e6 for n in names}))
    table.append((f"GET /metrics, {args.jvms} JVMs (client wall)", "ms",
                  {n: scrape[n][0] * 1e3 for n in names}))
    table.append(("  hsinspect_scrape_duration_seconds", "ms",
                  {n: scrape[n][1] * 1e3 for n in names}))
    print(f"musl vs glibc: {args.jvms} idle JVMs, {args.runs} runs per one-shot row, "
          f"load {os.getloadavg()[0]:.2f}")
    for n, exe in builds:
        print(f"  {n}: {exe}")
    head = "".join(f"{n:>12}" for n in names)
    ratios = "".join(f"{n + '/' + ref:>14}" for n in names[1:])
    print(f"  {'what (median)':<44}{head}{ratios}  verdict")
    misses = []
    for row, unit, vals in table:
        cells = "".join(f"{vals[n]:>9.3f} {unit}" for n in names)
        rs = [vals[n] / vals[ref] if vals[ref] else float("nan") for n in names[1:]]
        bad = [n for n, r in zip(names[1:], rs) if r > SLOWER_LIMIT]
        misses += [(row, n) for n in bad]
        verdict = "MISS " + ",".join(bad) if bad else "ok"
        print(f"  {row:<44}{cells}" + "".join(f"{r:>13.2f}x" for r in rs) + f"  {verdict}")
    print("  exporter peak RSS: " + ", ".join(f"{n} {scrape[n][2]:.1f} MiB" for n in names))
    print(f"  goal: no build more than {(SLOWER_LIMIT - 1) * 100:.0f}% slower than {ref}: "
          + ("PASS" if not misses else "MISS (" + "; ".join(f"{n}: {r}" for r, n in misses) + ")"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"builds": dict(builds),
                       "rows": [{"what": r, "unit": u, **v} for r, u, v in table],
                       "rss_mib": {n: scrape[n][2] for n in names}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
