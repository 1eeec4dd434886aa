#!/usr/bin/env python3
"""Integration tests of inspect.exe under Wine against a Windows JDK 21 (run by scripts/windows/test.sh).

Each test starts real programs: a Windows JVM (java.exe running WinTarget), jcmd.exe, inspect.exe,
and a small non-JVM Windows program (sleeper.exe). Output of Windows programs ends lines in CRLF;
it is stripped before comparing.

Environment (set by test.sh): INSPECT_EXE, WIN_JAVA_HOME, WINEPREFIX; HOST_JAVAC (javac for the test
class), HSINSPECT_LINUX_INSPECT (the Linux build, for the minidump comparison), TEST_ONLY
(comma-separated test names, optional).
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


class WinProcess:
    """A Windows program under Wine whose stdout is collected by a thread; its first `PID <n>` line
    gives its Windows pid. Stdin stays open until close(); closing it ends WinTarget and sleeper."""

    def __init__(self, argv, ready="PID "):
        self.proc = subprocess.Popen(["wine", *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.lines = []
        self.lock = threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()
        deadline = time.time() + 90
        while time.time() < deadline:
            with self.lock:
                if any(l.startswith(ready) for l in self.lines):
                    break
            if self.proc.poll() is not None:
                fail(f"{argv} exited with {self.proc.returncode} before printing {ready!r}: {self.lines}")
            time.sleep(0.05)
        else:
            fail(f"{argv} did not print {ready!r} within 90 s")
        pid_line = next(l for l in self.lines if l.startswith("PID "))
        self.pid = int(pid_line.split()[1])

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


def jvm(*jvm_args, exit_after_ms=-1, threads=0):
    args = [JAVA, *jvm_args, "-cp", winpath(WORK), "WinTarget", str(exit_after_ms), str(threads)]
    return WinProcess(args, ready="READY")


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


def test_minidump_read_by_inspect_exe_matches_linux_build():
    """The minidumps of Windows JVMs that scripts/windows/minidump.py makes (once; cached) read by
    inspect.exe under Wine give exactly what the Linux build prints from them: the counters, stat -gc,
    -v's account (paths aside), HotSpot's own hs_err_pid<pid>.mdmp, and, for the MiniDumpNormal one,
    the error and exit status 1.
    tests/minidump.rs checks the Linux build's output against jcmd.exe's."""
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


def main():
    try:
        run_tests()
    finally:
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
