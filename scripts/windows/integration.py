#!/usr/bin/env python3
"""Integration tests of inspect.exe under Wine against a Windows JDK 21 (run by scripts/windows/test.sh).

Each test starts real programs: a Windows JVM (java.exe running WinTarget), jcmd.exe, inspect.exe,
and a small non-JVM Windows program (sleeper.exe). Output of Windows programs ends lines in CRLF;
it is stripped before comparing.

Environment (set by test.sh): INSPECT_EXE, WIN_JAVA_HOME, WIN_JAVA2_HOME (a second major version),
WINEPREFIX; HOST_JAVAC (javac for the test class), HSINSPECT_LINUX_INSPECT (the Linux build, for
the minidump comparison), TEST_ONLY (comma-separated test names, optional).

`list`, `serve` and `top` are tested against one fleet of JVMs started once: JDK 21, JDK 17, JDK 21
with -XX:+PerfDisableSharedMem (invisible to jps), and JDK 21's jvm.dll embedded in embed.exe (a
launcher that is not java.exe, built here with mingw from embed.c).
"""
import json
import os
import random
import shutil
import re
import subprocess
import sys
import tempfile
import threading
import time

INSPECT = os.environ["INSPECT_EXE"]
JAVA_HOME = os.environ["WIN_JAVA_HOME"]
JAVA = os.path.join(JAVA_HOME, "bin", "java.exe")
JCMD = os.path.join(JAVA_HOME, "bin", "jcmd.exe")
JPS = os.path.join(JAVA_HOME, "bin", "jps.exe")
# A second major version (JDK 17), for list/serve/top.
JAVA2_HOME = os.environ.get("WIN_JAVA2_HOME", "")
HERE = os.path.dirname(os.path.abspath(__file__))
WORK = tempfile.mkdtemp(prefix="hsinspect-win-")


def fail(msg):
    raise AssertionError(msg)


def winpath(path):
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def build_fixtures():
    javac = os.environ.get("HOST_JAVAC", "/usr/lib/jvm/java-17-openjdk-amd64/bin/javac")
    if not os.path.exists(javac):
        fail(f"{javac} not found: the test class needs a host javac (scripts/setup-test-deps.sh installs JDK 17)")
    subprocess.run([javac, "--release", "11", "-d", WORK, os.path.join(HERE, "java", "WinTarget.java")], check=True)
    subprocess.run(["x86_64-w64-mingw32-gcc", "-O2", "-s", "-o", os.path.join(WORK, "sleeper.exe"),
                    os.path.join(HERE, "sleeper.c")], check=True)
    include = os.path.join(JAVA_HOME, "include")
    subprocess.run(["x86_64-w64-mingw32-gcc", "-O2", "-s", "-I", include, "-I", os.path.join(include, "win32"),
                    "-o", os.path.join(WORK, "embed.exe"), os.path.join(HERE, "embed.c")], check=True)


class WinProcess:
    """A Windows program under Wine whose stdout is collected by a thread; its first `PID <n>` line
    gives its Windows pid. Stdin stays open until close(); closing it ends WinTarget and sleeper."""

    def __init__(self, argv, ready="PID ", pid_line=True, wait_s=90):
        self.proc = subprocess.Popen(["wine", *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.lines = []
        self.lock = threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()
        deadline = time.time() + wait_s
        while time.time() < deadline:
            with self.lock:
                if any(l.startswith(ready) for l in self.lines):
                    break
            if self.proc.poll() is not None:
                fail(f"{argv} exited with {self.proc.returncode} before printing {ready!r}: {self.lines}")
            time.sleep(0.05)
        else:
            fail(f"{argv} did not print {ready!r} within {wait_s} s")
        if pid_line:
            self.pid = int(next(l for l in self.lines if l.startswith("PID ")).split()[1])

    def _pump(self):
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\r\n")
            with self.lock:
                self.lines.append((line) if not line.startswith("TICK") else f"TICK {time.time()}")

    def ticks_since(self, t):
        with self.lock:
            return sum(1 for l in self.lines if l.startswith("TICK ") and float(l.split()[1]) >= t)

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def jvm(*jvm_args, exit_after_ms=-1, threads=0, java=JAVA):
    args = [java, *jvm_args, "-cp", winpath(WORK), "WinTarget", str(exit_after_ms), str(threads)]
    return WinProcess(args, ready="READY")


def embedded_jvm():
    """WinTarget in a JVM created by embed.exe through JNI_CreateJavaVM (no java.exe)."""
    dll = os.path.join(JAVA_HOME, "bin", "server", "jvm.dll")
    return WinProcess([os.path.join(WORK, "embed.exe"), winpath(dll), winpath(WORK), "WinTarget", "-1", "0"],
                      ready="READY")


_FLEET = None


def fleet():
    """The JVMs list/serve/top are tested against, started once (concurrently: ~3 s each), by
    name: jdk21, jdk17, noshared (-XX:+PerfDisableSharedMem), embedded (embed.exe)."""
    global _FLEET
    if _FLEET is None:
        if not os.path.exists(os.path.join(JAVA2_HOME, "bin", "java.exe")):
            fail(f"no second Windows JDK at {JAVA2_HOME!r}: run scripts/windows/setup.sh")
        starts = {
            "jdk21": lambda: jvm(),
            "jdk17": lambda: jvm(java=os.path.join(JAVA2_HOME, "bin", "java.exe")),
            "noshared": lambda: jvm("-XX:+PerfDisableSharedMem"),
            "embedded": embedded_jvm,
        }
        started, errors = {}, []

        def start(name):
            try:
                started[name] = starts[name]()
            except Exception as e:  # reported below
                errors.append(f"{name}: {e}")
        threads = [threading.Thread(target=start, args=(n,)) for n in starts]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            for p in started.values():
                p.close()
            fail(f"the fleet did not start: {errors}")
        _FLEET = started
    return _FLEET


def stop_fleet():
    global _FLEET
    for p in (_FLEET or {}).values():
        p.close()
    _FLEET = None


def run(argv, timeout=60):
    out = subprocess.run(["wine", *argv], capture_output=True, timeout=timeout)
    text = lambda b: b.decode(errors="replace").replace("\r\n", "\n")
    return out.returncode, text(out.stdout), text(out.stderr)


def inspect(*args, timeout=60):
    return run([INSPECT, *map(str, args)], timeout=timeout)


def counters(text):
    return dict(l.split("=", 1) for l in text.splitlines() if "=" in l)


def jcmd_counters(pid):
    code, out, err = run([JCMD, str(pid), "PerfCounter.print"])
    if code != 0 or not out.startswith(f"{pid}:"):
        fail(f"jcmd.exe {pid} PerfCounter.print failed ({code}): {out} {err}")
    return counters(out)


def assert_matches_reference(ours, before, after, what):
    """Same names as both reference reads; every counter equal in both has exactly that value."""
    for name, ref in (("before", before), ("after", after)):
        if set(ours) != set(ref):
            fail(f"{what}: counter names differ from jcmd's read {name}: "
                 f"only ours {sorted(set(ours) - set(ref))}, only jcmd's {sorted(set(ref) - set(ours))}")
    compared = 0
    for name, value in ours.items():
        if before[name] == after[name]:
            if value != before[name]:
                fail(f"{what}: counter {name}: ours {value}, jcmd {before[name]}")
            compared += 1
    if compared <= len(ours) // 2:
        fail(f"{what}: only {compared} of {len(ours)} counters were stable enough to compare")
    return compared


def assert_fails_saying(args, says, what):
    """inspect.exe `args` exits 1 with `says` in its message."""
    code, _, err = inspect(*args)
    if code != 1 or says not in err:
        fail(f"{what}: inspect.exe {' '.join(map(str, args))} should exit 1 saying {says!r}: exit {code}: {err}")


def bracketed(pid, args, tries=3):
    """inspect.exe `args` against jcmd.exe read just before and just after. A counter equal in
    both reads may still have changed and changed back in between (sun.ci.lastSize in a JVM whose
    JIT is busy): a mismatch is retried, up to `tries` brackets in all."""
    for attempt in range(1, tries + 1):
        before = jcmd_counters(pid)
        ours, _ = inspect_counters(*args)
        after = jcmd_counters(pid)
        try:
            n = assert_matches_reference(ours, before, after, f"inspect.exe {args}")
            return f"{len(ours)} counters, {n} compared by value (bracket {attempt})"
        except AssertionError:
            if attempt == tries:
                raise


def inspect_counters(*args):
    code, out, err = inspect(*args)
    if code != 0:
        fail(f"inspect.exe {' '.join(map(str, args))} failed ({code}): {err}")
    return counters(out), err


# ---- tests ----------------------------------------------------------------------------------

def test_forced_and_shared_reads_match_jcmd():
    j = jvm()
    try:
        jcmd_counters(j.pid)  # the first attach starts the Attach Listener: settle its counters
        for args in (["-F", j.pid], [j.pid], ["--no-stop", "-F", j.pid]):
            n = bracketed(j.pid, args)
            print(f"    inspect.exe {' '.join(map(str, args))}: {n}")
        _, err = inspect_counters("-v", "-F", j.pid)
        if "stopped by a debug attach" not in err:
            fail(f"-v does not report the stop: {err}")
        _, err = inspect_counters("-v", j.pid)
        if f"file mapping hsperfdata_" not in err:
            fail(f"the shared read did not use the named mapping: {err}")
    finally:
        j.close()


def test_saved_file_reads_back():
    j = jvm()
    try:
        save = os.path.join(WORK, f"saved-{j.pid}.hsperf")
        ours, _ = inspect_counters("--save", winpath(save), "-F", j.pid)
        again, _ = inspect_counters(winpath(save))
        if again != ours:
            fail("the saved region does not read back as the same counters")
    finally:
        j.close()


def test_perf_disable_shared_mem_needs_forced_read():
    """jcmd's PerfCounter.print reads the shared memory (jvmstat) too, so it shows nothing for such
    a JVM: the reference is jcmd's read of a twin JVM started the same way without the flag."""
    j = jvm("-XX:+PerfDisableSharedMem")
    twin = jvm()
    try:
        code, out, _ = run([JCMD, str(j.pid), "PerfCounter.print"])
        if counters(out):
            fail(f"jcmd.exe showed counters of a -XX:+PerfDisableSharedMem JVM: the premise is wrong")
        ours, _ = inspect_counters("-F", j.pid)
        reference = jcmd_counters(twin.pid)
        if set(ours) != set(reference):
            fail(f"-F on a -XX:+PerfDisableSharedMem JVM: names differ from jcmd's on its twin: "
                 f"only ours {sorted(set(ours) - set(reference))}, only jcmd's {sorted(set(reference) - set(ours))}")
        if "-XX:+PerfDisableSharedMem" not in ours["java.rt.vmArgs"] or ours["sun.rt.javaCommand"] != reference["sun.rt.javaCommand"]:
            fail(f"-F read another JVM's counters: vmArgs {ours['java.rt.vmArgs']}, command {ours['sun.rt.javaCommand']}")
        assert_fails_saying([j.pid], f"inspect -F {j.pid}", "-XX:+PerfDisableSharedMem JVM")
    finally:
        j.close()
        twin.close()


def test_use_perf_data_off_is_a_clear_error():
    j = jvm("-XX:-UsePerfData")
    try:
        what = "-XX:-UsePerfData JVM"
        assert_fails_saying(["-F", j.pid], "perf data is disabled in the target (-XX:-UsePerfData)", what)
        assert_fails_saying([j.pid], "no hsperfdata file", what)
    finally:
        j.close()


def test_not_a_jvm_and_no_such_pid():
    s = WinProcess([os.path.join(WORK, "sleeper.exe")])
    try:
        says = f"process {s.pid} (sleeper.exe) is not a HotSpot JVM: no jvm.dll"
        assert_fails_saying(["-F", s.pid], says, "non-JVM")
        assert_fails_saying([s.pid], "no hsperfdata file", "non-JVM")
    finally:
        s.close()
    for args in (["-F", 999999], [999999]):
        assert_fails_saying(args, "no process with pid 999999", "no such pid")


def test_jvm_exiting_during_reads_gives_results_or_clear_errors():
    j = jvm(exit_after_ms=2500)
    results = {"ok": 0, "exited": 0}
    try:
        while j.proc.poll() is None or results["exited"] == 0:
            code, out, err = inspect("-F", j.pid, timeout=30)
            if code == 0:
                if "sun.rt.createVmBeginTime=" not in out:
                    fail(f"a successful read without the counters: {out[:200]}")
                results["ok"] += 1
            elif code == 1 and re.search(rf"process {j.pid} exited|no process with pid {j.pid}", err):
                results["exited"] += 1
            else:
                fail(f"a read of an exiting JVM ended with {code}: {err}")
            if results["exited"] + results["ok"] > 200:
                fail("the JVM did not exit")
    finally:
        j.close()
    print(f"    {results['ok']} reads succeeded, {results['exited']} said the JVM exited")


def test_killing_inspect_mid_read_leaves_the_jvm_running():
    """SIGKILL of inspect.exe's Wine process (the process vanishes, as with TerminateProcess) at
    random points of the last part of its run, where the debug attach and the read are."""
    # Idle threads make the attach longer (one debug event each): a wider window to kill in.
    j = jvm(threads=300)
    rng = random.Random(int(os.environ.get("SEED", "8")))
    want = int(os.environ.get("KILLS", "15"))
    try:
        code, _, err = inspect("-v", "-F", j.pid)
        if code != 0:
            fail(f"inspect.exe -F failed: {err}")
        print("    " + next(l for l in err.splitlines() if "debug attach" in l))
        runs = []
        for _ in range(3):
            t0 = time.time()
            if inspect("-F", j.pid)[0] != 0:
                fail("inspect.exe -F failed")
            runs.append(time.time() - t0)
        took = min(runs)
        kills = attempts = 0
        while kills < want:
            attempts += 1
            if attempts > 4 * want:
                fail(f"only {kills} of {attempts} runs were still running when killed")
            p = subprocess.Popen(["wine", INSPECT, "-F", str(j.pid)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(took * 0.4, took * 0.95))
            if p.poll() is None:
                p.kill()
                kills += 1
            p.wait()
            t = time.time()
            time.sleep(0.5)
            if j.ticks_since(t) < 3:
                fail("the JVM stopped ticking after inspect.exe was killed")
        # No debugger is left attached: another forced (stopping) read works.
        ours, _ = inspect_counters("-F", j.pid)
        if "java.threads.live" not in ours:
            fail("the JVM cannot be read after the kills")
        print(f"    {kills} of {attempts} runs killed mid-run (a run takes {took * 1000:.0f} ms); the JVM kept ticking")
    finally:
        j.close()


def jps():
    """`jps.exe -l` as {pid: main}, without jps itself."""
    code, out, err = run([JPS, "-l"])
    if code != 0:
        fail(f"jps.exe -l failed ({code}): {err}")
    seen = {}
    for line in out.splitlines():
        pid, _, main = line.strip().partition(" ")
        if pid.isdigit() and not main.endswith("sun.tools.jps.Jps"):
            seen[int(pid)] = main
    return seen


def test_list_matches_jps():
    """`inspect.exe list` against `jps.exe -l`: every JVM jps shows, with the same main; and the
    ones jps cannot show (-XX:+PerfDisableSharedMem), found by their jvm.dll."""
    f = fleet()
    theirs = jps()
    code, out, err = inspect("list", "--format", "json")
    if code != 0:
        fail(f"inspect.exe list --format json failed ({code}): {err}")
    import json
    ours = {j["pid"]: j for j in json.loads(out)}
    for name, p in f.items():
        if p.pid not in ours:
            fail(f"list does not show the {name} JVM {p.pid}: {sorted(ours)}")
    for pid, main in theirs.items():
        if pid not in ours:
            fail(f"jps shows {pid} ({main}), list does not: {sorted(ours)}")
        if main and ours[pid]["main"] != main:
            fail(f"JVM {pid}: jps says main {main!r}, list {ours[pid]['main']!r}")
    noshared = ours[f["noshared"].pid]
    if f["noshared"].pid in theirs:
        fail("jps shows the -XX:+PerfDisableSharedMem JVM: the premise is wrong")
    if noshared["readable"] != "-F" or noshared["main"] != "WinTarget" or noshared["info_from"] != "memory":
        fail(f"the -XX:+PerfDisableSharedMem JVM: {noshared}")
    for name, major in (("jdk21", "21."), ("jdk17", "17.")):
        j = ours[f[name].pid]
        if not j["jvm_version"].startswith(major) or j["readable"] != "both" or j["main"] != "WinTarget":
            fail(f"the {name} JVM: {j}")
        if j["comm"].lower() != "java.exe" or "uid" in j or not j["user"] or j["user"] == "?":
            fail(f"the {name} JVM's process: {j}")
    emb = ours[f["embedded"].pid]
    if emb["comm"].lower() != "embed.exe" or emb["readable"] != "both" or not emb["jvm_version"].startswith("21."):
        fail(f"the embedded JVM: {emb}")
    code, text, err = inspect("list")
    lines = text.splitlines()
    if code != 0 or not lines or not lines[0].split()[:3] == ["PID", "NSPID", "USER"]:
        fail(f"inspect.exe list (text) failed ({code}): {text} {err}")
    for p in f.values():
        if not any(l.split()[0] == str(p.pid) for l in lines[1:] if l.strip()):
            fail(f"inspect.exe list (text) does not show {p.pid}: {text}")
    print(f"    {len(ours)} JVMs listed, {len(theirs)} shown by jps.exe -l; "
          f"embedded main {emb['main']!r} (jps: {theirs.get(f['embedded'].pid)!r})")


def test_list_says_why_and_leaves_out_non_jvms():
    """A -XX:-UsePerfData JVM is listed, `neither`, with the reason and the fix, its version from
    its JDK's release file; a non-JVM program (sleeper.exe) is not listed."""
    import json
    j = jvm("-XX:-UsePerfData")
    s = WinProcess([os.path.join(WORK, "sleeper.exe")])
    try:
        # Younger than 2 s, a JVM with no region may still be starting (so list says).
        time.sleep(2.5)
        code, out, err = inspect("list", "--format", "json")
        if code != 0:
            fail(f"inspect.exe list --format json failed ({code}): {err}")
        ours = {x["pid"]: x for x in json.loads(out)}
        if s.pid in ours:
            fail(f"list shows the non-JVM sleeper.exe {s.pid}: {ours[s.pid]}")
        mine = ours.get(j.pid)
        with open(os.path.join(JAVA_HOME, "release")) as r:
            release = dict(l.strip().split("=", 1) for l in r if "=" in l)
        version = release.get("JAVA_RUNTIME_VERSION", release.get("JAVA_VERSION", "")).strip('"')
        if not mine or mine["readable"] != "neither" or "-XX:-UsePerfData" not in (mine["reason"] or "") \
                or mine["jvm_version"] != version or mine["info_from"] != "cmdline":
            fail(f"the -XX:-UsePerfData JVM {j.pid} (release version {version!r}): {mine}")
        code, text, err = inspect("list")
        row = next((l for l in text.splitlines() if l.split() and l.split()[0] == str(j.pid)), "")
        if "perf data is disabled" not in row or "[java.exe]" not in row:
            fail(f"inspect.exe list (text) row of the -XX:-UsePerfData JVM: {row!r}")
    finally:
        j.close()
        s.close()
    print(f"    {row.strip()}")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port, deadline_s=60):
    """GET /metrics with curl (Wine's sockets are the host's), retried until the server answers."""
    deadline = time.time() + deadline_s
    while True:
        out = subprocess.run(["curl", "-sf", "--max-time", "30", f"http://127.0.0.1:{port}/metrics"],
                             capture_output=True)
        if out.returncode == 0:
            return out.stdout.decode()
        if time.time() > deadline:
            fail(f"no answer on port {port} within {deadline_s} s (curl exit {out.returncode})")
        time.sleep(0.5)


def check_page(page, f, what):
    """promtool accepts the page; every fleet JVM is exported."""
    out = subprocess.run(["promtool", "check", "metrics"], input=page.encode(), capture_output=True)
    if out.returncode != 0:
        fail(f"{what}: promtool check metrics: {out.stdout.decode()} {out.stderr.decode()}")
    for name, p in f.items():
        if f'pid="{p.pid}"' not in page:
            fail(f"{what}: the {name} JVM {p.pid} is not exported")
    if "hsinspect_jvms" not in page:
        fail(f"{what}: no hsinspect_jvms")


def test_serve_scraped_and_stopped_by_ctrl_c():
    """`inspect.exe serve` in a console: scraped with curl, the page checked by promtool, stopped
    by Ctrl-C (Wine turns SIGINT into the console's CTRL_C_EVENT)."""
    import signal
    if not shutil.which("promtool"):
        fail("promtool not found: scripts/setup-test-deps.sh installs Prometheus")
    f = fleet()
    port = free_port()
    p = subprocess.Popen(["wine", INSPECT, "serve", "--listen", f"127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        t0 = time.time()
        page = scrape(port)
        took = time.time() - t0
        check_page(page, f, "serve")
        t0 = time.time()
        page = scrape(port)
        second = time.time() - t0
        p.send_signal(signal.SIGINT)
        try:
            code = p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            fail("inspect.exe serve did not stop within 20 s of Ctrl-C")
        err = p.stderr.read().decode(errors="replace")
        if code != 0 or "inspect serve: stopped" not in err:
            fail(f"serve after Ctrl-C: exit {code}: {err}")
        print(f"    {len(page)} bytes, {page.count(chr(10))} lines; first answer after {took:.1f} s "
              f"(start + scrape), a scrape {second * 1000:.0f} ms; stopped cleanly by Ctrl-C")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_serve_tls():
    """`serve --web.config.file` with TLS (rustls on ring, built for Windows): curl verifies the
    certificate and gets the page; plain HTTP on the same port gets no page."""
    f = fleet()
    d = os.path.join(WORK, "tls")
    os.makedirs(d, exist_ok=True)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", os.path.join(d, "server.key"), "-out", os.path.join(d, "server.crt"),
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"],
                   check=True, capture_output=True)
    with open(os.path.join(d, "web.yml"), "w") as w:
        w.write("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n")
    port = free_port()
    p = subprocess.Popen(["wine", INSPECT, "serve", "--listen", f"127.0.0.1:{port}",
                          "--web.config.file", winpath(os.path.join(d, "web.yml"))],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while True:
            out = subprocess.run(["curl", "-sf", "--max-time", "30", "--cacert", os.path.join(d, "server.crt"),
                                  f"https://127.0.0.1:{port}/metrics"], capture_output=True)
            if out.returncode == 0:
                break
            if time.time() > deadline or p.poll() is not None:
                fail(f"no TLS answer on {port} (curl exit {out.returncode}): {out.stderr.decode()}")
            time.sleep(0.5)
        page = out.stdout.decode()
        for name, j in f.items():
            if f'pid="{j.pid}"' not in page:
                fail(f"over TLS: the {name} JVM {j.pid} is not exported")
        plain = subprocess.run(["curl", "-sf", "--max-time", "5", f"http://127.0.0.1:{port}/metrics"],
                               capture_output=True)
        if plain.returncode == 0:
            fail("plain HTTP got the page from a TLS listener")
    finally:
        p.kill()
        p.wait()
    print(f"    {len(page)} bytes over TLS, certificate verified by curl")


def test_serve_process_metrics_from_the_windows_apis():
    """`serve --names client_java`: process_* of every fleet JVM from hsinspect::process_usage
    (GetProcessTimes, the working set, ProcessVmCounters), checked by promtool and against the
    JVM's own figures: a start time within the fleet's life, resident memory above the heap
    committed at start, CPU seconds growing between two scrapes."""
    f = fleet()
    port = free_port()
    p = subprocess.Popen(["wine", INSPECT, "serve", "--listen", f"127.0.0.1:{port}", "--names", "client_java"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        first = scrape(port)
        time.sleep(2)
        page = scrape(port)
    finally:
        p.kill()
        p.wait()
    out = subprocess.run(["promtool", "check", "metrics"], input=page.encode(), capture_output=True)
    if out.returncode != 0:
        fail(f"promtool check metrics: {out.stdout.decode()} {out.stderr.decode()}")

    def values(text, family):
        got = {}
        for line in text.splitlines():
            m = re.match(rf'{family}{{.*pid="(\d+)".*}} (\S+)$', line)
            if m:
                got[int(m.group(1))] = float(m.group(2))
        return got
    now = time.time()
    cpu0, cpu = values(first, "process_cpu_seconds_total"), values(page, "process_cpu_seconds_total")
    rss, start = values(page, "process_resident_memory_bytes"), values(page, "process_start_time_seconds")
    vsz = values(page, "process_virtual_memory_bytes")
    for name, j in f.items():
        if not (now - 600 < start.get(j.pid, 0) < now):
            fail(f"the {name} JVM {j.pid}: process_start_time_seconds {start.get(j.pid)}, now {now}")
        if not rss.get(j.pid, 0) > 16 << 20 or not vsz.get(j.pid, 0) > rss[j.pid]:
            fail(f"the {name} JVM {j.pid}: resident {rss.get(j.pid)}, virtual {vsz.get(j.pid)}")
        if not cpu.get(j.pid, 0) > cpu0.get(j.pid, 0) > 0:
            fail(f"the {name} JVM {j.pid}: CPU seconds {cpu0.get(j.pid)} then {cpu.get(j.pid)} (its ticker spins)")
    print(f"    process_* of {len(f)} JVMs: RSS {min(rss.values()) / 2**20:.0f}-{max(rss.values()) / 2**20:.0f} MiB, "
          f"CPU {min(cpu.values()):.2f}-{max(cpu.values()):.2f} s")


def test_serve_as_a_windows_service():
    """--install-service, then Wine's service manager starts it (`sc start`), it is scraped, stops
    on `sc stop` (the port closes, the service reports STOPPED), and --uninstall-service removes it."""
    f = fleet()
    port = free_port()
    inspect("serve", "--uninstall-service")  # a service left by an interrupted run: gone
    code, _, err = inspect("serve", "--install-service", "--listen", f"127.0.0.1:{port}")
    if code != 0 or "installed the service hsinspect" not in err:
        fail(f"--install-service: exit {code}: {err}")
    try:
        code, out, err = run(["sc", "start", "hsinspect"])
        if code != 0:
            fail(f"sc start hsinspect: exit {code}: {out} {err}")
        check_page(scrape(port), f, "the service")
        code, out, err = run(["sc", "stop", "hsinspect"])
        if code != 0:
            fail(f"sc stop hsinspect: exit {code}: {out} {err}")
        deadline = time.time() + 20
        while True:
            _, out, _ = run(["sc", "query", "hsinspect"])
            closed = subprocess.run(["curl", "-s", "--max-time", "2", f"http://127.0.0.1:{port}/"],
                                    capture_output=True).returncode != 0
            if "STOPPED" in out and closed:
                break
            if time.time() > deadline:
                fail(f"the service did not stop within 20 s: {out}")
            time.sleep(0.5)
    finally:
        code, _, err = inspect("serve", "--uninstall-service")
    if code != 0 or "removed the service hsinspect" not in err:
        fail(f"--uninstall-service: exit {code}: {err}")
    _, out, _ = run(["sc", "query", "hsinspect"])
    if "STOPPED" in out or "RUNNING" in out:
        fail(f"the service is still there: {out}")
    print("    installed, started by sc, scraped, stopped by sc, removed")


def test_top_batch_and_full_screen():
    """`inspect.exe top -b` frames (text and JSON) list every fleet JVM, live, with CPU and RSS
    from the Windows process APIs (hsinspect::process_usage: GetProcessTimes, the working set)
    and the JVM's own figures; the full-screen view starts in tmux under Wine's console and `q`
    ends it with status 0. (Wine 8's console garbles a full-screen redraw on a Unix terminal, so
    the rows are checked in batch mode, not on the screen.)"""
    import json
    f = fleet()
    code, out, err = inspect("top", "-b", "-n", "2", "-d", "1", timeout=120)
    if code != 0:
        fail(f"inspect.exe top -b failed ({code}): {err}")
    frames = out.split("\n\n")
    if len(frames) != 2 or not frames[1].startswith("inspect top - "):
        fail(f"top -b -n 2: {out}")
    last = frames[1].splitlines()
    for name, p in f.items():
        row = next((l for l in last if l.split() and l.split()[0] == str(p.pid)), None)
        if row is None:
            fail(f"top -b does not show the {name} JVM {p.pid}: {frames[1]}")
    code, out, err = inspect("top", "-b", "-n", "2", "-d", "1", "--format", "json", timeout=120)
    if code != 0:
        fail(f"inspect.exe top -b --format json failed ({code}): {err}")
    rows = [json.loads(l) for l in out.splitlines() if l.strip()]
    for name, p in f.items():
        mine = [r for r in rows if r["pid"] == p.pid]
        if len(mine) != 2:
            fail(f"top --format json: {len(mine)} rows of the {name} JVM {p.pid} in 2 frames: {out}")
        r = mine[-1]
        if r["state"] != "live" or not r["cpu_percent"] or r["cpu_percent"] <= 0 \
                or not r["rss_bytes"] or r["rss_bytes"] < 16 << 20 or not r["threads"] or r["threads"] < 6:
            fail(f"top --format json, the {name} JVM: {r}")
    if not shutil.which("tmux"):
        fail("tmux not found: scripts/setup-test-deps.sh installs it")
    session = f"hsinspect-wintop-{os.getpid()}"
    env_cmd = " ".join(f"{k}={shlex_quote(os.environ[k])}" for k in ("WINEPREFIX", "WINEDEBUG", "WINEDLLOVERRIDES", "WINEARCH") if k in os.environ)
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "40",
                    f"env {env_cmd} wine {shlex_quote(INSPECT)} top -d 1; echo TOP-EXITED $?; sleep 30"], check=True)
    try:
        deadline = time.time() + 60
        screen = ""
        while time.time() < deadline:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True).stdout.decode()
            if "help" in screen and "PID" in screen:
                break
            time.sleep(0.5)
        else:
            fail(f"the full-screen view did not show within 60 s:\n{screen}")
        time.sleep(1.5)  # a refresh or two
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        deadline = time.time() + 20
        while time.time() < deadline:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True).stdout.decode()
            if "TOP-EXITED" in screen:
                break
            time.sleep(0.3)
        if "TOP-EXITED 0" not in screen:
            fail(f"q did not end the full-screen view with status 0:\n{screen}")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    cpu = ", ".join(f"{n} {next(r for r in rows[::-1] if r['pid'] == p.pid)['cpu_percent']:.1f}%" for n, p in f.items())
    print(f"    top -b: {len(last) - 2} rows (CPU {cpu}); the full-screen view started and quit on q")


def shlex_quote(s):
    import shlex
    return shlex.quote(s)


def test_minidump_read_by_inspect_exe_matches_linux_build():
    """The minidumps of Windows JVMs that scripts/windows/minidump.py makes (once; cached) read by
    inspect.exe under Wine give exactly what the Linux build prints from them: the counters, stat -gc,
    -v's account (paths aside), HotSpot's own hs_err_pid<pid>.mdmp, and, for the MiniDumpNormal one,
    the error and exit status 1.
    tests/integration/minidump.rs checks the Linux build's output against jcmd.exe's."""
    linux = os.environ.get("HSINSPECT_LINUX_INSPECT", "")
    if not os.access(linux, os.X_OK):
        fail(f"no Linux inspect at {linux!r} (HSINSPECT_LINUX_INSPECT): build it with `cargo build` (scripts/test.sh does)")
    made = subprocess.run(["python3", os.path.join(HERE, "minidump.py")], capture_output=True, text=True)
    if made.returncode != 0:
        fail(f"minidump.py failed: {made.stderr}")
    dumps = made.stdout.strip()
    with open(os.path.join(dumps, "info.json")) as f:
        crash = json.load(f)["crash"]["file"]  # HotSpot's own hs_err_pid<pid>.mdmp
    for kind, args in (("full", ["--core"]), ("full", ["-v", "--core"]), ("full", ["stat", "-gc", "--core"]),
                       ("normal", ["--core"]), (crash[:-len(".mdmp")], ["-v", "--core"])):
        path = os.path.join(dumps, f"{kind}.mdmp")
        t0 = time.time()
        code, out, err = inspect(*args, winpath(path))
        took = time.time() - t0
        ref = subprocess.run([linux, *args, path], capture_output=True, text=True)
        # Paths aside (Z:\... under Wine), the same bytes.
        err = err.replace(winpath(path), path)
        if (code, out, err) != (ref.returncode, ref.stdout, ref.stderr):
            fail(f"inspect.exe {' '.join(args)} {kind}.mdmp: exit {code}, Linux {ref.returncode}\n"
                 f"stdout differs: {out != ref.stdout}\nstderr: {err!r}\nLinux stderr: {ref.stderr!r}")
        if kind == "full" and args == ["--core"] and len(counters(out)) < 150:
            fail(f"inspect.exe --core full.mdmp printed only {len(counters(out))} counters")
        if kind == "normal" and (code != 1 or "procdump -ma" not in err):
            fail(f"the MiniDumpNormal dump was not refused with the fix: exit {code}: {err}")
        print(f"    inspect.exe {' '.join(args)} {kind}.mdmp: exit {code}, same as Linux ({took:.2f} s under Wine)")


def test_threads_minidump_read_by_inspect_exe_matches_linux_build():
    """The minidump of a Windows ThreadsTarget JVM that scripts/windows/threads_minidump.py makes
    (once; cached) read by `inspect.exe threads --core` under Wine gives exactly what the Linux build
    prints from it, as text and JSON, and -v's account (paths aside).
    tests/integration/minidump_threads.rs checks the Linux build's dump against jcmd.exe's."""
    linux = os.environ.get("HSINSPECT_LINUX_INSPECT", "")
    if not os.access(linux, os.X_OK):
        fail(f"no Linux inspect at {linux!r} (HSINSPECT_LINUX_INSPECT): build it with `cargo build` (scripts/test.sh does)")
    made = subprocess.run(["python3", os.path.join(HERE, "threads_minidump.py")], capture_output=True, text=True)
    if made.returncode != 0:
        fail(f"threads_minidump.py failed: {made.stderr}")
    path = os.path.join(made.stdout.strip(), "threads.mdmp")
    for args in (["threads", "--core"], ["threads", "--format", "json", "--core"]):
        t0 = time.time()
        code, out, err = inspect(*args, winpath(path))
        took = time.time() - t0
        ref = subprocess.run([linux, *args, path], capture_output=True, text=True)
        if (code, out, err) != (ref.returncode, ref.stdout, ref.stderr):
            fail(f"inspect.exe {' '.join(args)} threads.mdmp: exit {code}, Linux {ref.returncode}\n"
                 f"stdout differs: {out != ref.stdout}\nstderr: {err!r}\nLinux stderr: {ref.stderr!r}")
        if code != 0 or '"t-spin"' not in out:
            fail(f"inspect.exe {' '.join(args)} threads.mdmp: exit {code}, no t-spin thread:\n{out[:2000]}")
        print(f"    inspect.exe {' '.join(args)} threads.mdmp: exit 0, same as Linux ({took:.2f} s under Wine)")
    # -v: the same account but for the path and the times.
    code, _, err = inspect("threads", "-v", "--core", winpath(path))
    ref = subprocess.run([linux, "threads", "-v", "--core", path], capture_output=True, text=True)
    timeless = lambda s: re.sub(r"in [0-9.]+ ms", "in _ ms", s.replace(winpath(path), path))
    if code != 0 or timeless(err) != timeless(ref.stderr):
        fail(f"inspect.exe threads -v: exit {code}\n{err}\nLinux:\n{ref.stderr}")


# ---- inspect.exe threads <pid> against jcmd.exe Thread.print -l --------------------------------

# The named threads of tests/java/ThreadsTarget.java that every dump must hold
# (tests/integration/threads.rs NAMED).
THREADS_NAMED = ["main", "t-object-wait", "t-deadlock-1", "t-deadlock-2", "t-juc-deadlock-1",
                 "t-juc-deadlock-2", "t-sleep", "t-park", "t-accept", "t-clinit-owner",
                 "t-clinit-waiter", "t-reflective", "t-recursion", "t-spin"]
# Threads running Java code (no frame anchor): walked from their registers; their top frame is
# compared without its line (tests/integration/threads.rs RUNNING_JAVA).
THREADS_RUNNING_JAVA = ["t-spin"]


def normalize_frame(line):
    """`\tat java.lang.Object.wait(java.base@21.0.8/Object.java:338)` →
    `java.lang.Object.wait(java.base@21.0.8/Object.java:338)`: the frame as printed, module prefix
    and all (tests/integration/support/jcmd.rs normalize_frame)."""
    body = line.strip()
    while body.startswith("at "):
        body = body[3:]
    return body


def parse_thread_dump(text):
    """The Java threads (those with `#<id>`) of a `Thread.print` dump, jcmd's or ours, by name:
    id, nid, os_prio=, `java.lang.Thread.State`, frames, cpu= (ms) (tests/integration/threads.rs parse)."""
    out, current = {}, None
    for line in text.splitlines():
        if line.startswith('"'):
            current = None
            end = line.find('" ', 1)
            if end < 0:
                continue
            name, after = line[1:end], line[end + 2:]
            words = after.split()
            if not words or not words[0].startswith("#") or not words[0][1:].isdigit():
                continue  # the VM's own threads have no Java id
            current = {"id": int(words[0][1:]), "state": None, "frames": [],
                       "nid": next((w[4:] for w in words if w.startswith("nid=")), None),
                       "os_prio": next((w[8:] for w in words if w.startswith("os_prio=")), None),
                       "cpu": next((float(w[4:-2]) for w in words if w.startswith("cpu=") and w.endswith("ms")), None)}
            out[name] = current
        elif current is not None:
            if line.startswith("   java.lang.Thread.State: "):
                current["state"] = line[len("   java.lang.Thread.State: "):]
            elif line.startswith("\tat "):
                current["frames"].append(normalize_frame(line))
    return out


def top_frames(name, t):
    top = t["frames"][:10]
    if name in THREADS_RUNNING_JAVA and top and "(" in top[0]:
        top[0] = top[0][:top[0].index("(")]
    return top


def threads_agree(first, ours_text, second):
    """tests/integration/threads_field.rs agree: every Java thread in both of jcmd's dumps is in
    ours with the same id and nid; its state and os_prio= where jcmd's two agree; its top 10 frames where
    jcmd's two agree (counted). Returns how many threads' frames were compared."""
    a, b, ours = parse_thread_dump(first), parse_thread_dump(second), parse_thread_dump(ours_text)
    for name in THREADS_NAMED:
        if name not in ours:
            fail(f"{name} missing from ours:\n{ours_text}")
    compared = 0
    for name, x in a.items():
        y = b.get(name)
        if y is None or name == "Attach Listener":  # started by jcmd itself
            continue
        o = ours.get(name)
        if o is None:
            fail(f"thread {name} in both jcmd.exe dumps, not in ours:\n{ours_text}")
        if (o["id"], o["nid"]) != (x["id"], x["nid"]):
            fail(f"{name}: id/nid ours {o['id']}/{o['nid']}, jcmd.exe {x['id']}/{x['nid']}\n{ours_text}")
        if x["os_prio"] == y["os_prio"] and o["os_prio"] != x["os_prio"]:
            fail(f"{name}: os_prio ours {o['os_prio']}, jcmd.exe {x['os_prio']}\n{ours_text}")
        if x["state"] == y["state"] and o["state"] != x["state"]:
            fail(f"{name}: java.lang.Thread.State ours {o['state']}, jcmd.exe {x['state']}\n{ours_text}")
        if top_frames(name, x) != top_frames(name, y):
            continue
        if top_frames(name, o) != top_frames(name, x):
            fail(f"{name}: top 10 frames ours {top_frames(name, o)}, jcmd.exe {top_frames(name, x)}\n{ours_text}")
        compared += 1
    return compared


# Threads whose lock lines must be compared (tests/integration/threads.rs LOCKING).
THREADS_LOCKING = ["t-object-wait", "t-deadlock-1", "t-deadlock-2", "t-juc-deadlock-1",
                   "t-juc-deadlock-2", "t-park", "t-clinit-waiter"]


def parse_locks(text):
    """The Java threads of a `Thread.print -l` dump by name, each its frames with the lock lines
    under them (`- locked <...>`, ...) and its ownable synchronizers; and the deadlock section
    (tests/integration/threads.rs parse_locks)."""
    at = text.find("Found one Java-level deadlock:")
    threads, deadlocks = (text, "") if at < 0 else (text[:at], text[at:])
    out, current, synchronizers = {}, None, False
    for line in threads.splitlines():
        if line.startswith('"'):
            current, synchronizers = None, False
            end = line.find('" ', 1)
            if end > 0 and line[end + 2:].startswith("#"):
                current = out.setdefault(line[1:end], {"stack": [], "synchronizers": []})
        elif current is not None:
            if line.strip() == "Locked ownable synchronizers:":
                synchronizers = True
            elif line.startswith("\tat "):
                current["stack"].append(normalize_frame(line))
            elif line.startswith("\t- "):
                if synchronizers:
                    if line[3:] != "None":
                        current["synchronizers"].append(line[3:])
                else:
                    current["stack"].append("- " + line[3:])
    section = "\n".join("\tat " + normalize_frame(l) if l.startswith("\tat ") else l
                        for l in deadlocks.splitlines())
    return out, section.rstrip()


def top_with_locks(stack, n=10):
    out, frames = [], 0
    for line in stack:
        if not line.startswith("-"):
            frames += 1
            if frames > n:
                break
        out.append(line)
    return out


def locks_agree(first, ours_text, second):
    """tests/integration/threads.rs agree_locks: every Java thread whose top 10 frames and lock
    lines are the same in jcmd's two dumps has them in ours (THREADS_LOCKING among them); our
    ownable synchronizers are among jcmd's; the deadlock section is jcmd's. Returns how many
    threads were compared."""
    (a, dl_a), (b, dl_b), (ours, dl_ours) = parse_locks(first), parse_locks(second), parse_locks(ours_text)
    compared = []
    for name, x in a.items():
        y = b.get(name)
        if y is None or name == "Attach Listener" or name in THREADS_RUNNING_JAVA:
            continue
        o = ours.get(name)
        if o is None:
            fail(f"{name} not in ours:\n{ours_text}")
        if top_with_locks(x["stack"]) == top_with_locks(y["stack"]):
            if top_with_locks(o["stack"]) != top_with_locks(x["stack"]):
                fail(f"{name}: frames and lock lines ours {top_with_locks(o['stack'])}, "
                     f"jcmd.exe {top_with_locks(x['stack'])}")
            compared.append(name)
        for sync in o["synchronizers"]:
            if sync not in x["synchronizers"] and sync not in y["synchronizers"]:
                fail(f"{name}: ownable synchronizer {sync} not in jcmd.exe's {x['synchronizers']}")
    missing = [n for n in THREADS_LOCKING if n not in compared]
    if missing:
        fail(f"lock lines of {missing} not compared (not stable in jcmd.exe's dumps?)\n{first}")
    if dl_a != dl_b or "Found 2 deadlocks." not in dl_a:
        fail(f"jcmd.exe's deadlock sections differ or find no deadlocks:\n{dl_a}\n---\n{dl_b}")
    if dl_ours != dl_a:
        fail(f"deadlock section ours:\n{dl_ours}\njcmd.exe:\n{dl_a}")
    return len(compared)


def jcmd_thread_print(pid):
    code, out, err = run([JCMD, str(pid), "Thread.print", "-l"], timeout=120)
    if code != 0 or not out.startswith(f"{pid}:\n") or "Full thread dump" not in out:
        fail(f"jcmd.exe {pid} Thread.print -l failed ({code}): {out[:2000]} {err[:2000]}")
    return out


def threads_target():
    """tests/java/ThreadsTarget.java on the Windows JDK 21, started and READY; its pid is the
    ThreadsTarget JVM that `jcmd.exe -l` lists and did not list before (it prints none)."""
    javac = os.environ.get("HOST_JAVAC", "/usr/lib/jvm/java-17-openjdk-amd64/bin/javac")
    classes = os.path.join(WORK, "threads")
    subprocess.run([javac, "--release", "11", "-nowarn", "-XDsuppressNotes", "-d", classes,
                    os.path.join(HERE, "..", "..", "tests", "java", "ThreadsTarget.java")],
                   check=True, capture_output=True)

    def listed():
        code, out, err = run([JCMD, "-l"], timeout=120)
        if code != 0:
            fail(f"jcmd.exe -l failed ({code}): {out} {err}")
        return {int(l.split()[0]) for l in out.splitlines() if l.split()[1:2] == ["ThreadsTarget"]}

    others = listed()
    target = WinProcess([JAVA, "-Xmx64m", "-cp", winpath(classes), "ThreadsTarget"], ready="READY",
                        pid_line=False, wait_s=180)
    ours = listed() - others
    if len(ours) != 1:
        target.close()
        fail(f"not one new ThreadsTarget JVM in jcmd.exe -l: {ours} (before: {others})")
    target.pid = ours.pop()
    return target


def test_threads_live_matches_jcmd_exe():
    """`inspect.exe threads <pid>` of a Windows JDK 21 ThreadsTarget JVM (held by the debug attach
    `-F` uses; t-spin, running Java code, walked from its `GetThreadContext` registers) agrees
    with `jcmd.exe <pid> Thread.print -l` taken before and after, as the Linux agreement tests
    require (same threads, ids, nids; states and top 10 frames where jcmd's two dumps agree; at
    least 12 threads compared; their lock lines, the ownable synchronizers and the deadlock
    section, as `locks_agree`); t-spin's cpu= (GetThreadTimes while held) is between jcmd.exe's
    two; the JVM runs on afterwards (t-spin's CPU time grows, jcmd.exe
    answers, a second stopping dump works)."""
    j = threads_target()
    try:
        jcmd_thread_print(j.pid)  # the first attach starts the Attach Listener: then in both dumps
        before = jcmd_thread_print(j.pid)
        t0 = time.time()
        code, ours, err = inspect("threads", "-v", j.pid, timeout=120)
        took = time.time() - t0
        if code != 0:
            fail(f"inspect.exe threads {j.pid}: exit {code}: {err}")
        after = jcmd_thread_print(j.pid)
        compared = threads_agree(before, ours, after)
        if compared < 12:
            fail(f"only {compared} threads were stable enough to compare\n{ours}")
        locked = locks_agree(before, ours, after)
        if locked < 12:
            fail(f"only {locked} threads' lock lines were stable enough to compare\n{ours}")
        spin = parse_thread_dump(ours)["t-spin"]["frames"]
        if not (spin and spin[0].startswith("ThreadsTarget.spin(") and spin[-1].startswith("java.lang.Thread.run(")):
            fail(f"t-spin not walked from its registers: {spin}\n{ours}")
        # cpu= read while held (GetThreadTimes): between jcmd.exe's before and after.
        cpu = [parse_thread_dump(t)["t-spin"]["cpu"] for t in (before, ours, after)]
        if None in cpu or not cpu[0] <= cpu[1] <= cpu[2]:
            fail(f"t-spin cpu= (ms) jcmd.exe before, ours, jcmd.exe after: {cpu}")
        stop = next((l for l in err.splitlines() if "debug attach" in l), None)
        if stop is None:
            fail(f"inspect.exe threads -v names no debug attach:\n{err}")
        # Not left suspended: the spinning thread's CPU time grows after the dump.
        time.sleep(0.5)
        later = jcmd_thread_print(j.pid)
        spun = (parse_thread_dump(after)["t-spin"]["cpu"], parse_thread_dump(later)["t-spin"]["cpu"])
        if None in spun or spun[1] <= spun[0]:
            fail(f"t-spin's cpu= did not grow after the dump (jcmd.exe after, 0.5 s later): {spun}")
        # No debugger left attached: a second stopping dump works.
        code, again, err2 = inspect("threads", j.pid, timeout=120)
        if code != 0 or "t-spin" not in again:
            fail(f"a second inspect.exe threads {j.pid}: exit {code}: {err2}")
        walk = next((l for l in err.splitlines() if "walk: " in l), "").strip()
        print(f"    {compared} threads agree with jcmd.exe, {locked} with their lock lines and the deadlocks; inspect.exe threads took {took:.2f} s under Wine; "
              f"t-spin cpu= {cpu[0]:.0f} <= {cpu[1]:.0f} <= {cpu[2]:.0f} ms, then {spun[1]:.0f} ms 0.5 s later")
        print(f"    {stop.strip()}; {walk}")
    finally:
        j.close()


def main():
    try:
        run_tests()
    finally:
        stop_fleet()
        shutil.rmtree(WORK, ignore_errors=True)


def run_tests():
    build_fixtures()
    # The prefix's first Wine program starts Wine's services (explorer, services.exe, ...), which
    # inherit its standard handles and outlive it: started here with none of ours, so that a test's
    # first captured run (`run`) is not held open by them until the wineserver exits.
    subprocess.run(["wine", "cmd", "/c", "exit"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")]
    only = [t for t in os.environ.get("TEST_ONLY", "").split(",") if t]
    failed = []
    passed = 0
    for name, f in tests:
        if only and name not in only:
            continue
        t0 = time.time()
        try:
            f()
            passed += 1
            print(f"ok   {name} ({time.time() - t0:.1f} s)")
        except Exception as e:  # report every test, then fail
            print(f"FAIL {name} ({time.time() - t0:.1f} s): {e}")
            failed.append(name)
    if failed:
        print(f"windows integration: failed: {', '.join(failed)}")
    # The plain closing line a test runner prints.
    print(f"{passed} passed, {len(failed)} failed")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
