#!/usr/bin/env python3
"""Makes (once) and caches the Windows minidump the thread-dump test reads; prints its directory.

The project's thread-dump target, tests/java/ThreadsTarget.java (named threads in known states, a
deadlock, a thread spinning in Java code), runs on the Windows JDK 21 under Wine; `jcmd.exe <pid>
Thread.print -l` is taken just before the dump and just after; windows/minidump.c (built with
mingw) writes a full-memory dump of it with MiniDumpWriteDump in between.

Cached in $HSINSPECT_TEST_CACHE/minidump-threads/<key>/ (default ~/.cache/hsinspect), the key made
of the JDK build (its `release` file) and the sources that shape the dump (minidump.c,
ThreadsTarget.java, this script's JVM flags); a later run with the same key reuses it. The
directory holds threads.mdmp, threads-jcmd-before.txt, threads-jcmd-after.txt, vmflags-jcmd.txt,
command-line-jcmd.txt (jcmd.exe's `VM.flags` and `VM.command_line`, taken before the dump),
histo-jcmd-{before,after}.txt and heap-info-jcmd-{before,after}.txt (`GC.class_histogram -all`
and `GC.heap_info` just before and just after the dump) (jcmd.exe's output,
CRLF removed) and info.json (pid, size, how long the dump took). Used by
tests/integration/minidump_threads.rs and windows/integration.py; scripts/test.sh runs it first.

Needs Wine, mingw-w64, a host javac and the Windows JDK (scripts/windows/setup.sh,
scripts/setup-test-deps.sh). Exits non-zero saying what is missing.
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
                       '. "$0/env.sh" && export WIN_JAVA_HOME HSINSPECT_TEST_CACHE && exec python3 "$0/threads_minidump.py" "$@"',
                       HERE, *sys.argv[1:]])

sys.path.insert(0, HERE)
import minidump as md  # noqa: E402  (the JDK's location, wine(), winpath(); env is set above)

CACHE = os.path.join(os.environ.get("HSINSPECT_TEST_CACHE", os.path.expanduser("~/.cache/hsinspect")),
                     "minidump-threads")
TARGET = os.path.join(HERE, "..", "..", "tests", "java", "ThreadsTarget.java")
SOURCES = [os.path.join(HERE, "minidump.c"), TARGET, os.path.abspath(__file__)]
# A small heap and code cache keep the full dump (and the time Wine takes to write it) small.
JVM_FLAGS = ["-Xms16m", "-Xmx64m", "-XX:+UseSerialGC", "-XX:ReservedCodeCacheSize=32m"]


def die(msg):
    print(f"windows/threads_minidump: {msg}", file=sys.stderr)
    sys.exit(1)


def key():
    release = os.path.join(md.JAVA_HOME, "release")
    if not os.path.exists(md.JAVA):
        die(f"no Windows JDK at {md.JAVA_HOME}: run scripts/windows/setup.sh")
    h = hashlib.sha256()
    for path in [release, *SOURCES]:
        with open(path, "rb") as f:
            h.update(f.read())
    h.update(" ".join(JVM_FLAGS).encode())
    build = os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(md.JAVA_HOME))))
    return f"{build}-{h.hexdigest()[:16]}"


def threads_targets():
    """The Windows pids of the ThreadsTarget JVMs in this Wine prefix (`jcmd.exe -l`)."""
    code, out, err = md.wine([md.JCMD, "-l"], timeout=120)
    if code != 0:
        die(f"jcmd.exe -l failed ({code}): {out} {err}")
    return {int(l.split()[0]) for l in out.splitlines() if l.split()[1:2] == ["ThreadsTarget"]}


def jcmd(pid, *command):
    """jcmd.exe's output of `command` for `pid`."""
    code, out, err = md.wine([md.JCMD, str(pid), *command], timeout=120)
    if code != 0:
        die(f"jcmd.exe {pid} {' '.join(command)} failed ({code}): {out[:2000]} {err[:2000]}")
    return out


def thread_print(pid):
    """jcmd.exe's `Thread.print -l` of `pid`."""
    code, out, err = md.wine([md.JCMD, str(pid), "Thread.print", "-l"], timeout=120)
    if code != 0 or not out.startswith(f"{pid}:\n"):
        die(f"jcmd.exe {pid} Thread.print -l failed ({code}): {out[:2000]} {err[:2000]}")
    return out


def make(dest):
    for tool in ("wine", "x86_64-w64-mingw32-gcc"):
        if shutil.which(tool) is None:
            die(f"{tool} not found: run scripts/windows/setup.sh")
    javac = os.environ.get("HOST_JAVAC", "/usr/lib/jvm/java-17-openjdk-amd64/bin/javac")
    if not os.path.exists(javac):
        die(f"{javac} not found: scripts/setup-test-deps.sh installs JDK 17 (or set HOST_JAVAC)")
    work = tempfile.mkdtemp(prefix="hsinspect-threads-minidump-")
    try:
        classes = os.path.join(work, "classes")
        subprocess.run([javac, "--release", "11", "-nowarn", "-XDsuppressNotes", "-d", classes, TARGET],
                       check=True, capture_output=True)
        dumper = os.path.join(work, "minidump.exe")
        subprocess.run(["x86_64-w64-mingw32-gcc", "-O2", "-s", "-o", dumper, SOURCES[0], "-ldbghelp"], check=True)
        # The target prints no pid of its own: ours is the ThreadsTarget JVM that was not there before.
        others = threads_targets()
        proc = subprocess.Popen(["wine", md.JAVA, *JVM_FLAGS, "-cp", md.winpath(classes), "ThreadsTarget"],
                                cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        lines, ready = [], threading.Event()

        def pump():
            for raw in proc.stdout:
                line = raw.decode(errors="replace").rstrip("\r\n")
                lines.append(line)
                if line == "READY":
                    ready.set()

        threading.Thread(target=pump, daemon=True).start()
        try:
            if not ready.wait(180):
                die(f"ThreadsTarget did not start under Wine within 180 s: {lines}")
            ours = threads_targets() - others
            if len(ours) != 1:
                die(f"not one new ThreadsTarget JVM in jcmd.exe -l: {ours} (before: {others})")
            pid = ours.pop()
            # The first attach starts the Attach Listener: the dumps then show it in both.
            thread_print(pid)
            before = thread_print(pid)
            # The flags and command line (they do not move): what `inspect info --core` reads.
            vm_flags = jcmd(pid, "VM.flags")
            command_line = jcmd(pid, "VM.command_line")
            # The heap around the dump: what `inspect histo --core` and `heap --core` read.
            histo_before = jcmd(pid, "GC.class_histogram", "-all")
            heap_before = jcmd(pid, "GC.heap_info")
            path = os.path.join(dest, "threads.mdmp")
            t0 = time.time()
            code, out, err = md.wine([dumper, str(pid), "full", md.winpath(path)], timeout=600)
            if code != 0:
                die(f"minidump.exe {pid} full failed ({code}): {out} {err}")
            info = {"pid": pid, "jvm_flags": JVM_FLAGS, "seconds": round(time.time() - t0, 1),
                    "bytes": os.path.getsize(path), "writer": out.strip()}
            print(f"windows/threads_minidump: dump of {pid}: {info}", file=sys.stderr)
            heap_after = jcmd(pid, "GC.heap_info")
            histo_after = jcmd(pid, "GC.class_histogram", "-all")
            after = thread_print(pid)
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for name, text in (("threads-jcmd-before.txt", before), ("threads-jcmd-after.txt", after),
                           ("vmflags-jcmd.txt", vm_flags), ("command-line-jcmd.txt", command_line),
                           ("histo-jcmd-before.txt", histo_before), ("histo-jcmd-after.txt", histo_after),
                           ("heap-info-jcmd-before.txt", heap_before),
                           ("heap-info-jcmd-after.txt", heap_after)):
            with open(os.path.join(dest, name), "w") as f:
                f.write(text)
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
            print(f"windows/threads_minidump: writing the thread-dump test dump ({k}; under a minute under Wine)",
                  file=sys.stderr)
            partial = dest + ".partial"
            shutil.rmtree(partial, ignore_errors=True)
            os.makedirs(partial)
            make(partial)
            os.rename(partial, dest)
            print(f"windows/threads_minidump: made in {time.time() - t0:.0f} s", file=sys.stderr)
            for old in os.listdir(CACHE):
                if old not in (k, ".lock"):
                    shutil.rmtree(os.path.join(CACHE, old), ignore_errors=True)
    print(dest)


if __name__ == "__main__":
    main()
