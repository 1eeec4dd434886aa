#!/usr/bin/env python3
"""`inspect serve`: one scrape of N idle JVMs, and the exporter's memory (python3 stdlib only).

Starts N idle JVMs (default 20; the flags of bench_list.py), then `inspect serve` on a free
loopback port (every JVM on the host: the scan does not skip other JVMs, so the page covers at
least N), and measures, interleaved so that load changes hit every command alike:
    GET /metrics        one scrape: /proc scan + every JVM's read + the page (client wall time;
                        also the exporter's own hsinspect_scrape_duration_seconds)
    inspect list        the scan alone, as a process (bench_list.py measures it in depth)
    /bin/true           the floor of starting a process from this script
and, fewer times, what an exporter that shells out to jstat pays: `jstat -snap` of one JVM
(x N for a whole scrape). Then the exporter's RSS (VmRSS and peak VmHWM from /proc).

Each metric dialect (`--names`) is measured with its own exporter, in the same run; a dialect
written `NAME+states` runs its exporter with `--thread-states` (each JVM's threads counted by
state without a stop), so the thread states' cost is the difference to NAME's row (and the
exporter's own hsinspect_thread_states_seconds is printed). Then the
OTLP push (`inspect serve --otlp ... --no-metrics -v`, every JVM of the host each interval) to a
receiver in this script that answers 200 to every POST: each batch's time (build and send, from
-v), its size, the exporter's CPU per push (utime+stime of /proc/<pid>/stat over --pushes
pushes after a first one) and its RSS, beside the scrape's.

Goals, printed as PASS/MISS (they never fail the run): a scrape of 20 JVMs <= 30 ms (median),
exporter RSS <= 15 MiB, in every dialect.

Usage:  bench/bench_serve.py [--jvms 20] [--runs 30] [--jstat-runs 3] [--inspect PATH] [--jdk DIR]
                               [--names hotspot,hotspot+states,micrometer,client_java,client_java_0,otel,otel+states]
                               [--pushes 20] [--push-interval-ms 1000] [--push-gzip]
It builds `cargo build --release` unless --inspect is given. Exit status 0 when the measurements
ran, 2 on a setup error. On a shared machine run it once: 20 JVMs take ~1 GB for a few seconds.
"""

import argparse
import http.server
import os
import re
import threading
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (  # noqa: E402  (bench/benchlib.py: what every benchmark shares)
    DEFAULT_JDK, IDLE_JAVA, SetupError, build_inspect, run_once, start_jvms, stop)

GOAL_SCRAPE_MS = 30.0
GOAL_RSS_MIB = 15.0


def get(port, path="/metrics"):
    """One GET on a fresh connection; returns (wall_s, body)."""
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        chunks = []
        while True:
            c = s.recv(1 << 16)
            if not c:
                break
            chunks.append(c)
    wall = time.perf_counter() - t0
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise SetupError(f"GET {path}: {head[:80]!r}")
    return wall, body.decode()


def sample(page, name):
    for line in page.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise SetupError(f"{name} not on the page")


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def measure(args, inspect, jstat, names, jvms, tmp, lists, trues, jstats):
    """One exporter writing `names`: its scrapes, interleaved with `inspect list`, /bin/true and
    (a few times) jstat; then its RSS."""
    serve = None
    try:
        dialects, _, states = names.partition("+")
        argv = [inspect, "serve", "--listen", "127.0.0.1:0", "--names", dialects]
        if states:
            argv.append("--thread-states")
        serve = subprocess.Popen(argv,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        line = serve.stderr.readline().strip()
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        _, page = get(port)  # warm: the symbol cache, the first scan
        found = int(sample(page, "hsinspect_jvms"))
        pids = {p.pid for p in jvms}
        missing = [p for p in pids if f'pid="{p}"' not in page]
        if missing:
            raise SetupError(f"the {names} page misses JVMs {missing}")
        out = os.path.join(tmp, "out")
        walls, internal, state_times = [], [], []
        for i in range(args.runs):
            w, page = get(port)
            walls.append(w)
            internal.append(sample(page, "hsinspect_scrape_duration_seconds"))
            if states:
                state_times.append(sample(page, "hsinspect_thread_states_seconds"))
            lists.append(run_once([inspect, "list"], out)[0])
            trues.append(run_once(["/bin/true"], out)[0])
            if len(jstats) < args.jstat_runs:
                argv = [jstat, "-J-Djstat.showUnsupported=true", "-snap", str(jvms[0].pid)]
                jstats.append(run_once(argv, out)[0])
        rss = status_kib(serve.pid, "VmRSS") / 1024
        hwm = status_kib(serve.pid, "VmHWM") / 1024
        page_kib = len(page.encode()) / 1024
        return walls, internal, rss, hwm, page_kib, found, state_times
    finally:
        if serve:
            serve.terminate()
            serve.wait(timeout=10)


class Sink(http.server.BaseHTTPRequestHandler):
    """An OTLP receiver that takes every POST (200, empty body)."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


PUSH_LINE = re.compile(r"OTLP (\w+): (\d+) JVMs, (\d+) points, (\d+) bytes \((\d+) on the wire\), "
                       r"(\d+) request\(s\), ([\d.]+) ms")


def measure_push(args, inspect):
    """The push: batches of every JVM each interval to a local receiver. Returns
    (batch ms list, jvms, points, bytes, wire bytes, CPU ms per push, RSS MiB, peak MiB)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    serve = None
    try:
        argv = [inspect, "serve", "--otlp", f"http://127.0.0.1:{server.server_address[1]}",
                "--no-metrics", "--otlp-interval", f"{args.push_interval_ms}ms", "-v"]
        if args.push_gzip:
            argv += ["--otlp-compression", "gzip"]
        serve = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        batches, cpu0 = [], None
        while len(batches) < args.pushes:
            line = serve.stderr.readline()
            if not line:
                raise SetupError("serve --otlp exited")
            m = PUSH_LINE.search(line)
            if not m:
                continue
            if m.group(1) != "sent":
                raise SetupError(f"push not sent: {line.strip()}")
            if cpu0 is None:
                cpu0 = cpu_seconds(serve.pid)  # after the first push (symbol cache, warm-up)
                continue
            batches.append(m)
        cpu = (cpu_seconds(serve.pid) - cpu0) / args.pushes * 1e3
        rss = status_kib(serve.pid, "VmRSS") / 1024
        hwm = status_kib(serve.pid, "VmHWM") / 1024
        last = batches[-1]
        return ([float(b.group(7)) for b in batches], int(last.group(2)), int(last.group(3)),
                int(last.group(4)), int(last.group(5)), cpu, rss, hwm)
    finally:
        if serve:
            serve.terminate()
            serve.wait(timeout=10)
        server.shutdown()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jvms", type=int, default=20)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--jstat-runs", type=int, default=3)
    ap.add_argument("--inspect")
    ap.add_argument("--jdk", default=DEFAULT_JDK)
    ap.add_argument("--names",
                    default="hotspot,hotspot+states,micrometer,client_java,client_java_0,otel,"
                            "otel+states",
                    help="the dialects to measure, each with its own exporter (NAME+states: "
                         "with --thread-states)")
    ap.add_argument("--pushes", type=int, default=20, help="OTLP pushes measured (0: none)")
    ap.add_argument("--push-interval-ms", type=int, default=1000)
    ap.add_argument("--push-gzip", action="store_true", help="push with gzip")
    args = ap.parse_args()
    push = None
    results = {}
    try:
        inspect = args.inspect
        if not inspect:
            inspect = str(build_inspect())
        jstat = f"{args.jdk}/bin/jstat"
        if not os.access(jstat, os.X_OK):
            raise SetupError(f"no jstat at {jstat}: install openjdk-17-jdk-headless")
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "BenchIdle.java"
            src.write_text(IDLE_JAVA)
            subprocess.run([f"{args.jdk}/bin/javac", "-d", tmp, str(src)], check=True)
            jvms = start_jvms(args.jdk, tmp, args.jvms)
            lists, trues, jstats = [], [], []
            try:
                for names in args.names.split(","):
                    results[names] = measure(args, inspect, jstat, names, jvms, tmp,
                                             lists, trues, jstats)
                if args.pushes > 0:
                    push = measure_push(args, inspect)
            finally:
                stop(jvms)
    except (SetupError, subprocess.CalledProcessError, OSError, ValueError) as e:
        print(f"bench_serve: {e}", file=sys.stderr)
        return 2

    ms = lambda xs: statistics.median(xs) * 1e3  # noqa: E731
    true_ms, jstat_ms = ms(trues), ms(jstats)
    found = max(r[5] for r in results.values())
    print(f"inspect serve, {args.jvms} JVMs started, {found} on the page, "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"  {'what':<44} {'median':>10} {'x /bin/true':>12}")
    rows = []
    for names, (walls, internal, _, _, page_kib, _, state_times) in results.items():
        rows.append((f"GET /metrics --names {names} ({page_kib:.0f} KiB)", ms(walls)))
        rows.append(("  hsinspect_scrape_duration_seconds", ms(internal)))
        if state_times:
            rows.append(("  hsinspect_thread_states_seconds", ms(state_times)))
    rows += [
        ("inspect list (scan only, a process)", ms(lists)),
        ("jstat -snap, one JVM", jstat_ms),
        (f"jstat -snap x {found} (estimate)", jstat_ms * found),
        ("/bin/true", true_ms),
    ]
    for name, v in rows:
        print(f"  {name:<44} {v:>7.2f} ms {v / true_ms:>11.1f}x")
    for names, (walls, _, rss, hwm, _, n, _) in results.items():
        scrape = ms(walls)
        per20 = scrape * 20 / n
        print(f"  {names}: one scrape is {jstat_ms * n / scrape:.0f}x faster than jstat per JVM; "
              f"exporter RSS {rss:.1f} MiB (peak {hwm:.1f} MiB)")
        print(f"    goal: scrape of 20 JVMs <= {GOAL_SCRAPE_MS:.0f} ms: "
              f"{'PASS' if per20 <= GOAL_SCRAPE_MS else 'MISS'} ({scrape:.1f} ms for {n}, "
              f"{per20:.1f} ms per 20)")
        print(f"    goal: exporter RSS <= {GOAL_RSS_MIB:.0f} MiB: "
              f"{'PASS' if hwm <= GOAL_RSS_MIB else 'MISS'} (peak {hwm:.1f} MiB)")
    if push:
        batch_ms, n, points, size, wire, cpu, rss, hwm = push
        print(f"  OTLP push of {n} JVMs every {args.push_interval_ms} ms "
              f"({'gzip' if args.push_gzip else 'no compression'}), {len(batch_ms)} pushes:")
        print(f"    a batch (scan, reads, encode, POST): {statistics.median(batch_ms):.1f} ms median, "
              f"{max(batch_ms):.1f} ms max; {points} points, {size / 1024:.0f} KiB "
              f"({wire / 1024:.0f} KiB on the wire)")
        print(f"    exporter CPU {cpu:.1f} ms a push; RSS {rss:.1f} MiB (peak {hwm:.1f} MiB)")
        print(f"    goal: exporter RSS <= {GOAL_RSS_MIB:.0f} MiB: "
              f"{'PASS' if hwm <= GOAL_RSS_MIB else 'MISS'} (peak {hwm:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
