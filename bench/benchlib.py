"""What the benchmark scripts share (bench.py, bench_core.py, bench_list.py, bench_serve.py,
bench_stat.py, bench_top.py, bench_musl.py, bench_threads.py, bench_info.py, windows.py):
running one command and measuring exactly that child, interleaved runs of several tools, its
peak RSS, percentiles, the release build of `inspect`, idle JVMs to measure against, and the
error for a missing precondition.

Python 3 standard library only. Import it with the bench directory on sys.path:

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import benchlib
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The JDK the benchmarks run their JVMs and reference tools on (scripts/setup-test-deps.sh).
DEFAULT_JDK = os.environ.get("HSINSPECT_JDK17", "/usr/lib/jvm/java-17-openjdk-amd64")
JDK_HINT = "install it with `apt-get install -y openjdk-17-jdk-headless` or pass --jdk DIR"
GNU_TIME = "/usr/bin/time"


class SetupError(Exception):
    """A precondition the benchmark cannot run without (the message says how to fix it)."""


def run_once(argv, out_path, env=None):
    """Runs argv with stdin from /dev/null, stdout to out_path and stderr to out_path + ".err";
    returns (wall_s, rusage, exit_code, stderr_text).

    posix_spawn (vfork-based in glibc) keeps this script's own overhead small and equal for every
    command; os.wait4 gives that child's own rusage (ru_utime + ru_stime: its CPU time, which the
    machine's load inflates less than the wall time). Not its peak RSS: see peak_rss_mib.
    argv[0] is looked up on PATH when it has no slash."""
    exe = argv[0] if "/" in argv[0] else shutil.which(argv[0])
    if exe is None:
        raise SetupError(f"{argv[0]} not found on PATH")
    err_path = out_path + ".err"
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
        (os.POSIX_SPAWN_OPEN, 2, err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
    ]
    t0 = time.perf_counter()
    pid = os.posix_spawn(exe, argv, env if env is not None else os.environ, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    with open(err_path, "r", errors="replace") as f:
        err = f.read()
    return wall, ru, os.waitstatus_to_exitcode(status), err


def cpu_s(ru):
    """User + system CPU seconds of a rusage."""
    return ru.ru_utime + ru.ru_stime


def peak_rss_mib(argv, tmp, runs=3, env=None):
    """The largest peak RSS (MiB) of `runs` runs of argv under GNU time (`%M`); None when
    /usr/bin/time (Debian package `time`) is missing. Raises RuntimeError when a run fails.

    os.wait4's ru_maxrss cannot be used for this: the kernel folds the RSS high-water mark of the
    address space the child had before exec (this Python process's, ~10-20 MiB, shared by
    posix_spawn's vfork) into the child's. GNU time's own footprint (~2 MiB) is the floor instead
    (measure /bin/true to see it)."""
    if not os.access(GNU_TIME, os.X_OK):
        return None
    out, report = os.path.join(tmp, "rss.out"), os.path.join(tmp, "rss.txt")
    peak = 0.0
    for _ in range(runs):
        _, _, code, err = run_once([GNU_TIME, "-o", report, "-f", "%M", *argv], out, env)
        with open(report) as f:
            last = f.read().split()[-1:]
        if code != 0 or not last or not last[0].isdigit():
            raise RuntimeError(f"{' '.join(argv)} under {GNU_TIME} exited with {code}: "
                               f"{err.strip()[-300:]}")
        peak = max(peak, int(last[0]) / 1024.0)
    return peak


def interleaved(commands, tmp, check):
    """Runs each `(name, argv, runs)` of `commands` round-robin (load changes hit every tool
    alike) until each has its runs; `check(name, stdout_text)` raises on an output that is not
    what the tool should print. Returns {name: {"walls": [s...], "cpus": [s...], "stderr": [...]}}.
    A non-zero exit status raises RuntimeError."""
    res = {name: {"walls": [], "cpus": [], "stderr": []} for name, _, _ in commands}
    for i in range(max(n for _, _, n in commands)):
        for name, argv, n in commands:
            if i >= n:
                continue
            out = os.path.join(tmp, "out")
            wall, ru, status, err = run_once(argv, out)
            with open(out, errors="replace") as f:
                text = f.read()
            if status != 0:
                raise RuntimeError(f"{' '.join(argv)} exited with {status}: {err.strip()[-500:]}")
            check(name, text)
            res[name]["walls"].append(wall)
            res[name]["cpus"].append(cpu_s(ru))
            res[name]["stderr"].append(err)
            print(f"  {name:<18} run {i + 1}: {wall * 1e3:9.1f} ms", file=sys.stderr)
    return res


def pct(values, p):
    """The p-th percentile (nearest rank) of values."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def build_inspect():
    """`cargo build --release` of the workspace; the path of target/release/inspect."""
    print("building: cargo build --release", file=sys.stderr)
    r = subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO)
    if r.returncode != 0:
        raise SetupError("cargo build --release failed (see above)")
    path = REPO / "target/release/inspect"
    if not path.exists():
        raise SetupError(f"{path} missing after the build")
    return path


# ----------------------------------------------------------------------------------------------
# Idle JVMs (bench_list.py, bench_serve.py, bench_top.py): compile IDLE_JAVA into a directory,
# then start_jvms(jdk, that directory, n).

# Small heap, C1 only, Serial GC, CDS on.
JVM_FLAGS = ["-Xmx16m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"]

IDLE_JAVA = """
public class BenchIdle {
    public static void main(String[] args) throws Exception {
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) { }
    }
}
"""


def start_jvms(jdk, classes, n):
    """Starts n idle JVMs; returns the Popen objects once all printed READY."""
    jvms = []
    try:
        for _ in range(n):
            jvms.append(subprocess.Popen(
                [f"{jdk}/bin/java", *JVM_FLAGS, "-cp", classes, "BenchIdle"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
        for p in jvms:
            if p.stdout.readline().strip() != b"READY":
                raise SetupError(f"JVM {p.pid} did not start")
    except BaseException:
        stop(jvms)
        raise
    return jvms


def stop(jvms):
    """Closes each JVM's stdin (it exits), then reaps it; kills one still running after 10 s."""
    for p in jvms:
        try:
            p.stdin.close()
        except OSError:
            pass
    for p in jvms:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
