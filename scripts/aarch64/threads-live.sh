#!/usr/bin/env bash
# A live thread dump inside the aarch64 VM, for tests/integration/foreign_core.rs
# (`aarch64_live_thread_dump_in_the_vm_matches_jcmd`): boots the arm64 VM of
# scripts/aarch64/setup.sh under qemu-system-aarch64, starts tests/java/ThreadsTarget.java on
# Debian's arm64 JDK 17 there, and takes `jcmd <pid> Thread.print -l` (jcmd1), the static
# aarch64 build's `inspect threads -v <pid>` (ours, ours.err, its exit status in ours.rc), and
# jcmd again (jcmd2), then the JVM's State line (state: it must not be left stopped).
#
# Cached, keyed by the arm64 root, the kernel, this script and the aarch64 binary: the same build
# is checked once; a new build boots the VM again (~1.5-3 minutes under TCG).
#
# Usage: scripts/aarch64/threads-live.sh [AARCH64_INSPECT]   (default: $HSINSPECT_A64_BIN, else
# target/aarch64-unknown-linux-musl/release/inspect); prints the output directory as its last
# line. Needs what scripts/aarch64/setup.sh installs (run it first, as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE=${HSINSPECT_A64_CACHE:-$HOME/.cache/hsinspect/aarch64}
R=$CACHE/rootfs
BIN=${1:-${HSINSPECT_A64_BIN:-target/aarch64-unknown-linux-musl/release/inspect}}
die() { echo "aarch64/threads-live: FAIL: $*" >&2; exit 1; }
for f in "$R/.stamp" "$CACHE/rootfs.img" "$CACHE/initramfs.cpio.gz" "$BIN"; do
  [ -e "$f" ] || die "$f is missing: run scripts/aarch64/setup.sh (as root) and build the aarch64 binary first"
done
for t in qemu-system-aarch64 debugfs mke2fs javac; do
  command -v $t >/dev/null || die "$t is not installed: run scripts/aarch64/setup.sh and scripts/setup-test-deps.sh"
done
key=$( { cat "$R/.stamp"; ls "$CACHE"/kernel/boot/vmlinuz-*; cat "$0" tests/java/ThreadsTarget.java "$BIN"; } | md5sum | cut -c1-12)
OUT=$CACHE/threads-live/$key
exec 8>"$CACHE/threads-live.lock"; flock 8   # one run at a time
if [ -f "$OUT/.done" ]; then echo "$OUT"; exit 0; fi
t0=$(date +%s)
echo "aarch64/threads-live: a live thread dump in the VM (cache $OUT)" >&2
rm -rf "$CACHE/threads-live"; mkdir -p "$OUT.part"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
PL=$W/payload; mkdir -p "$PL/classes"
javac --release 11 -d "$PL/classes" tests/java/ThreadsTarget.java
cp "$BIN" "$PL/inspect"
cat > "$PL/run.sh" <<'RUN'
#!/bin/bash
# PID 1 in the aarch64 VM: the root (snapshot), this payload at /mnt, /tmp tmpfs.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8
JH=/usr/lib/jvm/java-17-openjdk-arm64 O=/mnt/out
mkdir -p $O; cd $O
say() { echo "A64: $*"; }
finish() { say "DONE"; sync; cd /; umount /mnt; busybox poweroff -f; }
mkfifo /tmp/t.in
$JH/bin/java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp /mnt/classes ThreadsTarget \
  < /tmp/t.in > /tmp/t.log 2>&1 &
P=$!; exec 9>/tmp/t.in
for i in $(seq 1 3000); do grep -q READY /tmp/t.log && break; sleep 0.1; done   # TCG: a minute and more
grep -q READY /tmp/t.log || { say "ThreadsTarget did not start: $(cat /tmp/t.log)"; finish; }
say "ThreadsTarget $P ready at $(cut -d' ' -f1 /proc/uptime) s"
$JH/bin/jcmd $P Thread.print -l > jcmd1 < /dev/null || { say "jcmd failed"; finish; }
/mnt/inspect threads -v $P > ours 2> ours.err < /dev/null; echo $? > ours.rc
$JH/bin/jcmd $P Thread.print -l > jcmd2 < /dev/null || { say "jcmd failed"; finish; }
grep '^State:' /proc/$P/status > state
say "inspect threads rc=$(cat ours.rc), $(grep -c '^"' ours) threads; $(cat state)"
exec 9>&-; wait $P
say "OK"
finish
RUN
chmod +x "$PL/run.sh"
mke2fs -q -F -t ext4 -L a64payload -d "$PL" "$W/payload.img" 256M
echo "aarch64/threads-live: qemu-system-aarch64 (boot, ThreadsTarget, jcmd, inspect threads, jcmd, power off)" >&2
timeout 1200 qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 2048 \
  -nographic -no-reboot -nic none \
  -kernel "$(ls "$CACHE"/kernel/boot/vmlinuz-*)" -initrd "$CACHE/initramfs.cpio.gz" \
  -append "console=ttyAMA0 panic=1 quiet" \
  -drive if=none,id=root,file="$CACHE/rootfs.img",format=raw,snapshot=on -device virtio-blk-pci,drive=root \
  -drive if=none,id=pl,file="$W/payload.img",format=raw -device virtio-blk-pci,drive=pl \
  < /dev/null 2>&1 | sed -u 's/\r$//' > "$W/vm.log" || true
grep '^A64' "$W/vm.log" >&2 || true
grep -q '^A64: OK' "$W/vm.log" || { tail -30 "$W/vm.log" >&2; die "the VM did not take the dumps"; }
for f in jcmd1 ours ours.err ours.rc jcmd2 state; do
  debugfs -R "dump /out/$f $OUT.part/$f" "$W/payload.img" < /dev/null 2>/dev/null
  [ -e "$OUT.part/$f" ] || die "$f was not written in the VM"
done
touch "$OUT.part/.done"; mv "$OUT.part" "$OUT"
echo "aarch64/threads-live: done in $(( $(date +%s) - t0 )) s" >&2
echo "$OUT"
