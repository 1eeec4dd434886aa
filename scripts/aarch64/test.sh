#!/usr/bin/env bash
# aarch64 end to end, on this x86_64 machine (as root; scripts/aarch64/setup.sh installs and caches
# what it needs, and runs first):
#   1. qemu-user: the static aarch64 `inspect` (what release.sh ships) reads every testdata file
#      (text, json, prometheus, stat -gcutil and -gc) byte-identically to the x86_64 build, exit
#      status and errors included: the portable paths (PerfData parsing, formats, stat).
#   2. qemu-system-aarch64: Debian 12's arm64 kernel boots with the arm64 root of setup.sh, where
#      a real aarch64 JVM (Debian's OpenJDK 17) runs and the aarch64 `inspect` is checked against
#      that JDK's own tools: -F, --no-stop -F, <pid> and the file path against
#      `jcmd PerfCounter.print` (tests/integration/support's rule: the same names, and every counter that did
#      not move between the reads before and after has their value); `list` against `jps`;
#      `stat -gcutil` (-F and file) byte-identical to `jstat -gcutil`; -F on a JDK whose libjvm.so
#      is stripped (found through gHotSpotVMStructs) against its jcmd.
# Exit status 0 when every check passed; the VM's console is kept in $WORK/vm.log.
# Usage: scripts/aarch64/test.sh          (WORK=dir, default $CARGO_TARGET_DIR or target/aarch64-e2e)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
scripts/aarch64/setup.sh
CACHE=${HSINSPECT_A64_CACHE:-$HOME/.cache/hsinspect/aarch64}
WORK=${WORK:-$repo/target/aarch64-e2e}
T=aarch64-unknown-linux-musl
JDK17=${HSINSPECT_JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
t0=$(date +%s); stamp() { echo "aarch64: [$(( $(date +%s) - t0 ))s] $*"; }
die() { echo "aarch64: FAIL: $*" >&2; exit 1; }
[ -x "$JDK17/bin/javac" ] || die "no JDK 17 at $JDK17 (scripts/setup-test-deps.sh installs it)"

# The binaries: $HSINSPECT_A64_BIN and $HSINSPECT_STATIC_BIN when set (scripts/test.sh builds them
# in its quick-release profile and runs this beside the cargo tests), else built here in
# $HSINSPECT_STATIC_PROFILE (default: release).
if [ -n "${HSINSPECT_A64_BIN:-}" ] && [ -n "${HSINSPECT_STATIC_BIN:-}" ]; then
  A64=$HSINSPECT_A64_BIN X86=$HSINSPECT_STATIC_BIN
else
  P=${HSINSPECT_STATIC_PROFILE:-release}
  stamp "cargo build --profile $P --target $T (and the x86_64 build to compare with)"
  source scripts/musl-env.sh   # mimalloc's C: clang and an arm64 musl sysroot
  cargo build -q --profile "$P" --target $T --target x86_64-unknown-linux-musl
  A64=target/$T/$P/inspect X86=target/x86_64-unknown-linux-musl/$P/inspect
fi
readelf -hW "$A64" | grep -q 'Machine: *AArch64' || die "$A64 is not an aarch64 ELF"
rm -rf "$WORK"; mkdir -p "$WORK"

# ---- 1. qemu-user: the portable paths ------------------------------------------------------------
stamp "qemu-user: every testdata file through both builds"
n=0 bad=0
for f in testdata/{captures,stat,derived,malformed}/*.hsperf; do
  for mode in text json prometheus gcutil gc; do
    case $mode in gcutil|gc) args=(stat "-$mode" "$f");; *) args=(--format "$mode" "$f");; esac
    # json carries the wall-clock time of the read: masked
    a=$( { qemu-aarch64-static "$A64" "${args[@]}" 2>&1; echo "rc=$?"; } | sed -E 's/"timestamp":[0-9]+/"timestamp":T/g')
    x=$( { "$X86" "${args[@]}" 2>&1; echo "rc=$?"; } | sed -E 's/"timestamp":[0-9]+/"timestamp":T/g')
    n=$((n + 1))
    [ "$a" = "$x" ] || { bad=$((bad + 1)); echo "aarch64: differs: ${args[*]}"; diff <(echo "$x") <(echo "$a") | head -5; }
  done
done
echo "aarch64: qemu-user: $n runs, $bad differ"
[ "$bad" = 0 ] || die "the aarch64 build reads testdata differently"

# ---- 2. the VM ----------------------------------------------------------------------------------
stamp "payload: the aarch64 inspect, the test classes, run.sh"
PL=$WORK/payload; mkdir -p "$PL/classes"
cp "$A64" "$PL/inspect"
"$JDK17/bin/javac" --release 11 -d "$PL/classes" tests/java/Target.java
# tests/integration/support's assert_matches_reference: ours, then the references before and after it
cat > "$PL/cmpref.awk" <<'AWK'
BEGIN { FS = "=" }
FNR == 1 { file++ }
!/=/ { next }
{ name = $1; value = substr($0, length($1) + 2) }
file == 1 { ours[name] = value; n++ }
file == 2 { before[name] = value }
file == 3 { after[name] = value }
END {
  bad = 0; compared = 0
  for (k in ours) if (!(k in before) || !(k in after)) { print "only ours: " k; bad++ }
  for (k in before) if (!(k in ours)) { print "missing: " k; bad++ }
  for (k in after) if (!(k in ours)) { print "missing: " k; bad++ }
  for (k in ours) if ((k in before) && (k in after) && before[k] == after[k]) {
    compared++
    if (ours[k] != before[k]) { print k ": ours " ours[k] ", jcmd " before[k]; bad++ }
  }
  printf "%d counters, %d compared by value, %d wrong\n", n, compared, bad
  exit (bad > 0 || compared * 2 <= n)
}
AWK
cat > "$PL/run.sh" <<'RUN'
#!/bin/bash
# PID 1 in the aarch64 VM: the root read-only in effect (snapshot), this payload at /mnt, /tmp tmpfs.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8
JH=/usr/lib/jvm/java-17-openjdk-arm64 SJ=/opt/jdk-stripped I=/mnt/inspect O=/mnt/out
mkdir -p $O; cd $O
fails=0
say() { echo "A64: $*"; }
check() { # check NAME CMD...: stdout and stderr kept in $O/NAME.{out,err}
  local name=$1; shift; local s=$(date +%s%N)
  "$@" > $O/$name.out 2> $O/$name.err; local rc=$?
  say "$name rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms"
  [ $rc = 0 ] || { fails=$((fails + 1)); head -5 $O/$name.err $O/$name.out; }
  return $rc
}
ref() { check "$1" mawk -f /mnt/cmpref.awk "$2" "$3" "$4" && say "$(cat $O/$1.out)"; }
finish() { say "fails=$fails"; say "DONE"; sync; cd /; umount /mnt; busybox poweroff -f; }
start_jvm() { # start_jvm NAME JAVA_HOME: sets PID; the JVM exits when fd 8/9's fifo closes
  mkfifo /tmp/$1.in
  $2/bin/java -Xmx32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp /mnt/classes Target 4 \
    < /tmp/$1.in > /tmp/$1.log 2>&1 &
  PID=$!; eval "exec $3>/tmp/$1.in"
  for i in $(seq 1 3000); do grep -q READY /tmp/$1.log && return 0; sleep 0.1; done   # TCG on a busy host: a minute and more
  say "the JVM ($2) did not start: $(cat /tmp/$1.log)"; fails=$((fails + 1)); finish
}
say "booted in $(cut -d' ' -f1 /proc/uptime) s: $(uname -m) $(uname -r)"
s=$(date +%s); start_jvm jvm $JH 9; P=$PID; say "JVM $P ready in $(( $(date +%s) - s )) s"
check jcmd1 $JH/bin/jcmd $P PerfCounter.print
check forced $I -F -v $P
check jcmd2 $JH/bin/jcmd $P PerfCounter.print
ref cmp-forced forced.out jcmd1.out jcmd2.out
grep -h 'stopped\|symbols:' forced.err
check nostop $I --no-stop -F $P
check jcmd3 $JH/bin/jcmd $P PerfCounter.print
ref cmp-nostop nostop.out jcmd2.out jcmd3.out
check bypid $I $P
check byfile $I /tmp/hsperfdata_root/$P
check jcmd4 $JH/bin/jcmd $P PerfCounter.print
ref cmp-bypid bypid.out jcmd3.out jcmd4.out
ref cmp-byfile byfile.out jcmd3.out jcmd4.out
check stat-forced $I stat -gcutil -F $P
check stat-file $I stat -gcutil $P
check jstat $JH/bin/jstat -gcutil $P
check cmp-stat-forced cmp stat-forced.out jstat.out && say "$(cat jstat.out)"
check cmp-stat-file cmp stat-file.out jstat.out
# a second JVM, on the JDK whose libjvm.so is stripped
start_jvm stripped $SJ 8; S=$PID; say "stripped-libjvm JVM $S ready"
check jcmd5 $SJ/bin/jcmd $S PerfCounter.print
check stripped $I -F -v --no-cache $S   # the cache would answer: same build-id as the first JDK
check jcmd6 $SJ/bin/jcmd $S PerfCounter.print
ref cmp-stripped stripped.out jcmd5.out jcmd6.out
check stripped-vmstructs grep 'symbols: gHotSpotVMStructs' stripped.err
# list against jps: the same pids (jps lists itself, as Jps: left out)
check list $I list
check list-json $I list --format json
check jps $JH/bin/jps
grep -o '"pid": *[0-9]*' list-json.out | grep -o '[0-9]*$' | sort -n > list.pids
grep -v ' Jps$' jps.out | cut -d' ' -f1 | sort -n > jps.pids
check cmp-list cmp list.pids jps.pids && cat list.out
check list-both mawk -v p=$P '$1 == p && $6 == "both" && $NF == "Target" { ok = 1 } END { exit !ok }' list.out
exec 8>&- 9>&-
finish
RUN
chmod +x "$PL/run.sh"
rm -f "$WORK/payload.img"; mke2fs -q -F -t ext4 -L a64payload -d "$PL" "$WORK/payload.img" 256M

stamp "qemu-system-aarch64: boot, a JVM, the checks, power off"
s=$(date +%s)
timeout 1200 qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 2048 \
  -nographic -no-reboot -nic none \
  -kernel "$(ls "$CACHE"/kernel/boot/vmlinuz-*)" -initrd "$CACHE/initramfs.cpio.gz" \
  -append "console=ttyAMA0 panic=1 quiet" \
  -drive if=none,id=root,file="$CACHE/rootfs.img",format=raw,snapshot=on -device virtio-blk-pci,drive=root \
  -drive if=none,id=pl,file="$WORK/payload.img",format=raw -device virtio-blk-pci,drive=pl \
  < /dev/null 2>&1 | sed -u 's/\r$//' | tee "$WORK/vm.log" | grep --line-buffered -E '^(A64|init)' || true
stamp "the VM ran $(( $(date +%s) - s )) s"
grep -q '^A64: DONE' "$WORK/vm.log" || die "the VM did not finish (console: $WORK/vm.log)"
grep -q '^A64: fails=0$' "$WORK/vm.log" || die "checks failed inside the VM (console: $WORK/vm.log)"
stamp "all passed"
