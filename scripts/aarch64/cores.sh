#!/usr/bin/env bash
# Kernel cores of real aarch64 JVMs, for tests/integration/foreign_core.rs (the x86_64 build reading them):
# boots the arm64 VM of scripts/aarch64/setup.sh, starts two JVMs there (Debian's OpenJDK 17,
# and the copy whose libjvm.so has no .symtab), then boots it again on Debian 13's kernel with
# 16 KiB pages and starts the stripped one there (`stripped16k`); reads `jcmd <pid> PerfCounter.print` and
# `jstat -gc <pid>` of each twice (the second time held with SIGSTOP, as it dies), then kills each
# with SIGABRT: the VM's kernel writes the core
# at the JVM's coredump_filter. `jdk17` keeps its default: the kernel's 0x33 plus bits 2 and 3,
# which JDK 11+ sets itself (-XX:+DumpPrivateMappingsInCore, -XX:+DumpSharedMappingsInCore);
# `stripped` runs with -XX:-DumpPrivateMappingsInCore (a diagnostic flag; 0x3b: libjvm's read-only data, where the
# vmStructs walk reads its names, is left out of the core, as JDK 8 leaves it at 0x33).
#
# Cached, keyed by the arm64 root (its stamp and both libjvm.so files), this script and the Java
# programs it runs (tests/java/Target.java, ThreadsTarget.java, HeapTarget.java): a warm run
# only prints the directory. It holds, per JVM (`jdk17`, `stripped`, `stripped16k`): NAME.core
# (sparse), NAME.jcmd1, NAME.jcmd2 (the references, in that order; the second of the JVM held
# still until the kill),
# NAME.jstat1, NAME.jstat2 (`jstat -gc`), NAME.filter (/proc/<pid>/coredump_filter),
# NAME.pagesize (the kernel's); sysroot/ (the two libjvm.so files at the paths the JVMs mapped:
# what `--sysroot` needs; and JDK 17's bin/java, for `--exe`). And for the thread dumps (issue
# 29): `threads.core` of tests/java/ThreadsTarget.java on JDK 17, after `jcmd <pid> Thread.print
# -l` twice (`threads.jcmd1`, `threads.jcmd2`; a stopped JVM cannot answer jcmd, so the JVM runs
# until its SIGABRT). And for the heap (histo, heap, heapdump): `heap.core` of
# tests/java/HeapTarget.java on JDK 17 with G1 (-Xmx32m: 1 MiB regions, its int[300000]
# humongous; -Xshare:off, as the x86_64 JDK 17 G1 tests run it), after one jcmd attach that runs
# `GC.class_histogram -all`, `GC.heap_info`, `GC.class_histogram -all`, `GC.heap_info` (`jcmd -f`:
# one jcmd start-up under TCG instead of four), split into `heap.histo1`, `heap.info1`,
# `heap.histo2`, `heap.info2`, each as that command alone prints it (the `<pid>:` line first).
#
# Usage: scripts/aarch64/cores.sh   (prints the cache directory as its last line; exit 0)
# Needs what scripts/aarch64/setup.sh installs (run it first, as root); a cold run ~3-4 min.
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE=${HSINSPECT_A64_CACHE:-$HOME/.cache/hsinspect/aarch64}
R=$CACHE/rootfs
JH=/usr/lib/jvm/java-17-openjdk-arm64 SJ=/opt/jdk-stripped
die() { echo "aarch64/cores: FAIL: $*" >&2; exit 1; }
for f in "$R/.stamp" "$CACHE/rootfs.img" "$CACHE/initramfs-kernel.cpio.gz" \
  "$CACHE/initramfs-kernel16k.cpio.gz" "$R$JH/lib/server/libjvm.so" "$R$SJ/lib/server/libjvm.so"; do
  [ -e "$f" ] || die "$f is missing: run scripts/aarch64/setup.sh (as root) first"
done
for t in qemu-system-aarch64 debugfs mke2fs fallocate javac; do
  command -v $t >/dev/null || die "$t is not installed: run scripts/aarch64/setup.sh and scripts/setup-test-deps.sh"
done
key=$( { cat "$R/.stamp"; ls "$CACHE"/kernel*/boot/vmlinuz-*; cat "$0" tests/java/Target.java tests/java/ThreadsTarget.java tests/java/HeapTarget.java; } | md5sum | cut -c1-8)-$(
  cat "$R$JH/lib/server/libjvm.so" "$R$SJ/lib/server/libjvm.so" | md5sum | cut -c1-8)
OUT=$CACHE/cores/$key
# One run at a time (two would remove each other's half-made cores): the later one waits, then
# finds them made.
exec 8>"$CACHE/cores.lock"; flock 8
if [ -f "$OUT/.done" ]; then echo "$OUT"; exit 0; fi
t0=$(date +%s)
echo "aarch64/cores: making the cores in the VM (cache $OUT)" >&2
rm -rf "$CACHE/cores"; mkdir -p "$OUT.part"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
mkdir -p "$W/classes"
javac --release 11 -d "$W/classes" tests/java/Target.java tests/java/ThreadsTarget.java \
  tests/java/HeapTarget.java
cat > "$W/run.sh" <<'RUN'
#!/bin/bash
# PID 1 in the aarch64 VM: the root (snapshot), this payload at /mnt, /tmp tmpfs.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8
JH=/usr/lib/jvm/java-17-openjdk-arm64 SJ=/opt/jdk-stripped O=/mnt/out
mkdir -p $O; cd $O
say() { echo "A64: $*"; }
finish() { say "DONE"; sync; cd /; umount /mnt; busybox poweroff -f; }
ulimit -c unlimited   # PID 1 starts with RLIMIT_CORE 0: the SIGABRT cores need this
echo "$O/%e-%p.core" > /proc/sys/kernel/core_pattern
# the page size the JVMs run with (KernelPageSize of a mapping, in kB)
pagesize=$(( $(sed -n 's/^KernelPageSize: *\([0-9]*\) kB/\1/p' /proc/self/smaps | head -1) * 1024 ))
say "kernel $(uname -r), $pagesize-byte pages"
start_jvm() { # start_jvm NAME JAVA_HOME FD FLAGS..: the JVM exits when its fifo (on FD) closes
  mkfifo /tmp/$1.in
  MALLOC_ARENA_MAX=2 $2/bin/java -Xmx32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -XX:ReservedCodeCacheSize=16m -XX:CompressedClassSpaceSize=32m "${@:4}" -cp /mnt/classes Target 4 \
    < /tmp/$1.in > /tmp/$1.log 2>&1 &
  echo $! > /tmp/$1.pid; eval "exec $3>/tmp/$1.in"
}
ready() { # ready NAME: waits for READY (TCG on a busy host: a minute and more)
  for i in $(seq 1 3000); do
    grep -q READY /tmp/$1.log && return 0
    kill -0 "$(cat /tmp/$1.pid)" 2>/dev/null || break
    sleep 0.1
  done
  say "the JVM $1 did not start: $(cat /tmp/$1.log)"; finish
}
# HeapTarget (20000 of each kind: tests/integration/support/histo.rs's COUNT) on G1 starts
# first, with the JVMs of /mnt/jvms (NAME JAVA_HOME FLAGS...): their start-ups overlap.
if [ -s /mnt/heap ]; then
  mkfifo /tmp/heap.in
  MALLOC_ARENA_MAX=2 $JH/bin/java -Xmx32m -XX:+UseG1GC -Xshare:off -XX:TieredStopAtLevel=1 \
    -XX:ReservedCodeCacheSize=16m -XX:CompressedClassSpaceSize=32m -cp /mnt/classes HeapTarget 20000 \
    < /tmp/heap.in > /tmp/heap.log 2>&1 &
  echo $! > /tmp/heap.pid; exec 7>/tmp/heap.in
fi
fd=3
while read -r n jh flags; do start_jvm $n $jh $fd $flags; echo $jh > /tmp/$n.home; fd=$((fd + 1)); done < /mnt/jvms
while read -r n _; do
  ready $n; P=$(cat /tmp/$n.pid); jh=$(cat /tmp/$n.home)
  say "$n: JVM $P ready at $(cut -d' ' -f1 /proc/uptime) s"
  cat /proc/$P/coredump_filter > $n.filter; echo $pagesize > $n.pagesize
  { $jh/bin/jcmd $P PerfCounter.print > $n.jcmd1 && $jh/bin/jstat -gc $P > $n.jstat1; } < /dev/null ||
    { say "$n: jcmd or jstat failed"; finish; }
  # Held still (SIGSTOP) from the second reads to its death, so they are what the core holds:
  # a running JVM moves counters (monitor deflations, ...) in the seconds jcmd takes under TCG.
  # jcmd's PerfCounter.print and jstat read the hsperfdata file, which a stopped JVM still has.
  kill -STOP $P
  until grep -q '^State:[[:space:]]*T' /proc/$P/status; do sleep 0.05; done
  { $jh/bin/jcmd $P PerfCounter.print > $n.jcmd2 && $jh/bin/jstat -gc $P > $n.jstat2; } < /dev/null ||
    { say "$n: jcmd or jstat failed"; kill -CONT $P; finish; }
  kill -ABRT $P; kill -CONT $P; wait $P
  say "$n: exit status $? after SIGABRT, filter $(cat $n.filter), $(ls -s --block-size=1M *-$P.core 2>&1)"
  mv ./*-$P.core $n.core || { say "$n: no core"; finish; }
done < /mnt/jvms
if [ -s /mnt/heap ]; then
  ready heap; P=$(cat /tmp/heap.pid)
  say "heap: JVM $P ready at $(cut -d' ' -f1 /proc/uptime) s"
  printf '%s\n' "GC.class_histogram -all" GC.heap_info "GC.class_histogram -all" GC.heap_info > /tmp/heap.cmds
  $JH/bin/jcmd $P -f /tmp/heap.cmds > /tmp/heap.jcmd < /dev/null || { say "heap: jcmd failed"; finish; }
  # jcmd prints `<pid>:` once, then each command's output: a histogram ends at its `Total` line,
  # GC.heap_info runs until the next histogram's header.
  # (mawk: the root is unpacked without maintainer scripts, so no `awk` alternative)
  mawk -v pid="$P:" '
    NR == 1 { if ($0 != pid) exit 1; s = 1; next }
    s == 2 && /^ *num +#instances/ { s = 3 }
    { f = s == 1 ? "heap.histo1" : s == 2 ? "heap.info1" : s == 3 ? "heap.histo2" : "heap.info2"
      if (!(f in seen)) { print pid > f; seen[f] = 1 }
      print > f }
    (s == 1 || s == 3) && $1 == "Total" { s++ }
    END { exit !(s == 4) }' /tmp/heap.jcmd 2>/tmp/heap.split ||
    { say "heap: jcmd's output not split ($(cat /tmp/heap.split)): $(cat /tmp/heap.jcmd)"; finish; }
  kill -ABRT $P; wait $P
  say "heap: exit status $? after SIGABRT, $(ls -s --block-size=1M *-$P.core 2>&1)"
  mv ./*-$P.core heap.core || { say "heap: no core"; finish; }
fi
if [ -s /mnt/threads ]; then
  # ThreadsTarget (named threads in known states, a deadlock): two thread dumps, then its core.
  mkfifo /tmp/threads.in
  MALLOC_ARENA_MAX=2 $JH/bin/java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -XX:ReservedCodeCacheSize=16m -XX:CompressedClassSpaceSize=32m -cp /mnt/classes ThreadsTarget \
    < /tmp/threads.in > /tmp/threads.log 2>&1 &
  echo $! > /tmp/threads.pid; exec 9>/tmp/threads.in
  ready threads; P=$(cat /tmp/threads.pid)
  say "threads: JVM $P ready at $(cut -d' ' -f1 /proc/uptime) s"
  { $JH/bin/jcmd $P Thread.print -l > threads.jcmd1 && $JH/bin/jcmd $P Thread.print -l > threads.jcmd2; } < /dev/null ||
    { say "threads: jcmd failed"; finish; }
  kill -ABRT $P; wait $P
  say "threads: exit status $? after SIGABRT, $(ls -s --block-size=1M *-$P.core 2>&1)"
  mv ./*-$P.core threads.core || { say "threads: no core"; finish; }
fi
say "OK"
finish
RUN
chmod +x "$W/run.sh"
STRIPPED_FLAGS="-XX:+UnlockDiagnosticVMOptions -XX:-DumpPrivateMappingsInCore"
vm() { # vm KERNEL [threads] [heap] NAME JAVA_HOME FLAGS [NAME JAVA_HOME FLAGS]...: the cores of those JVMs, in $OUT.part
  local kernel=$1 PL=$W/payload-$1 n f; shift
  mkdir -p "$PL"; cp -r "$W/classes" "$W/run.sh" "$PL/"; : > "$PL/jvms"; : > "$PL/threads"; : > "$PL/heap"
  # `threads` first: also the ThreadsTarget JVM (its dumps and core); `heap`: the HeapTarget one
  if [ "$1" = threads ]; then echo yes > "$PL/threads"; shift; fi
  if [ "$1" = heap ]; then echo yes > "$PL/heap"; shift; fi
  while [ $# -gt 0 ]; do echo "$1 $2 $3" >> "$PL/jvms"; shift 3; done
  mke2fs -q -F -t ext4 -L a64payload -d "$PL" "$W/payload.img" 4G
  echo "aarch64/cores: qemu-system-aarch64 on $kernel (boot, $(wc -l < "$PL/jvms") JVMs, their cores, power off)" >&2
  timeout 1200 qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 2048 \
    -nographic -no-reboot -nic none \
    -kernel "$(ls "$CACHE/$kernel"/boot/vmlinuz-*)" -initrd "$CACHE/initramfs-$kernel.cpio.gz" \
    -append "console=ttyAMA0 panic=1 quiet" \
    -drive if=none,id=root,file="$CACHE/rootfs.img",format=raw,snapshot=on -device virtio-blk-pci,drive=root \
    -drive if=none,id=pl,file="$W/payload.img",format=raw -device virtio-blk-pci,drive=pl \
    < /dev/null 2>&1 | sed -u 's/\r$//' > "$W/vm-$kernel.log" || true
  grep '^A64' "$W/vm-$kernel.log" >&2 || true
  grep -q '^A64: OK' "$W/vm-$kernel.log" || { tail -30 "$W/vm-$kernel.log" >&2; die "the VM ($kernel) did not make the cores"; }
  while read -r n _; do
    for f in core jcmd1 jcmd2 jstat1 jstat2 filter pagesize; do
      debugfs -R "dump /out/$n.$f $OUT.part/$n.$f" "$W/payload.img" < /dev/null 2>/dev/null
      [ -s "$OUT.part/$n.$f" ] || die "$n.$f was not written in the VM"
    done
    # debugfs writes the holes of the sparse core out as zeros: make them holes again
    fallocate --dig-holes "$OUT.part/$n.core"
  done < "$PL/jvms"
  if [ -s "$PL/threads" ]; then
    for f in core jcmd1 jcmd2; do
      debugfs -R "dump /out/threads.$f $OUT.part/threads.$f" "$W/payload.img" < /dev/null 2>/dev/null
      [ -s "$OUT.part/threads.$f" ] || die "threads.$f was not written in the VM"
    done
    fallocate --dig-holes "$OUT.part/threads.core"
  fi
  if [ -s "$PL/heap" ]; then
    for f in core histo1 info1 histo2 info2; do
      debugfs -R "dump /out/heap.$f $OUT.part/heap.$f" "$W/payload.img" < /dev/null 2>/dev/null
      [ -s "$OUT.part/heap.$f" ] || die "heap.$f was not written in the VM"
    done
    fallocate --dig-holes "$OUT.part/heap.core"
  fi
  rm -f "$W/payload.img"
}
vm kernel threads heap jdk17 $JH "" stripped $SJ "$STRIPPED_FLAGS"
vm kernel16k stripped16k $SJ "$STRIPPED_FLAGS"
[ "$(cat "$OUT.part/stripped16k.pagesize")" = 16384 ] || die "the 16k kernel ran with $(cat "$OUT.part/stripped16k.pagesize")-byte pages"
for lib in $JH $SJ; do
  mkdir -p "$OUT.part/sysroot$lib/lib/server"
  cp "$R$lib/lib/server/libjvm.so" "$OUT.part/sysroot$lib/lib/server/"
done
# the launcher too: --exe for a core without NT_FILE (the dynamic linker's list is walked from it)
mkdir -p "$OUT.part/sysroot$JH/bin"; cp "$R$JH/bin/java" "$OUT.part/sysroot$JH/bin/"
touch "$OUT.part/.done"; mv "$OUT.part" "$OUT"
echo "aarch64/cores: made in $(( $(date +%s) - t0 )) s; $(du -sh "$OUT" | cut -f1) on disk" >&2
echo "$OUT"
