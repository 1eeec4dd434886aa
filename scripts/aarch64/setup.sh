#!/usr/bin/env bash
# Installs what scripts/aarch64/test.sh needs on a Debian 12 x86_64 machine (as root). Idempotent;
# downloads and images are cached in ~/.cache/hsinspect/aarch64 (or $HSINSPECT_A64_CACHE):
#   * host packages: qemu-user-static (aarch64 binaries on this host), qemu-system-arm (an
#     aarch64 VM), mmdebstrap and arch-test (an arm64 Debian root without emulation), cpio, kmod,
#     e2fsprogs (initramfs, module dependencies, ext4 images built from a directory);
#   * the rustup target aarch64-unknown-linux-musl (linked with rust-lld: .cargo/config.toml);
#   * rootfs/: Debian 12 arm64 with OpenJDK 17 (jcmd, jstat, jps), unpacked by
#     `mmdebstrap --variant=extract` (no maintainer script runs, so nothing is emulated: ~2 min
#     instead of ~20), plus /opt/jdk-stripped, a copy of that JDK whose libjvm.so has no .symtab;
#     rootfs.img: that root as ext4 (the VM opens it with snapshot=on: never written);
#   * kernel/: Debian 12's arm64 kernel; initramfs.cpio.gz: busybox and the virtio/ext4 modules
#     (modules in Debian's arm64 kernel), mounting /dev/vda (root) and /dev/vdb (the test's payload)
#     and switching root to /mnt/run.sh;
#   * kernel16k/, initramfs-kernel16k.cpio.gz: the same for Debian 13's arm64 kernel with 16 KiB
#     pages (linux-image-arm64-16k), for aarch64/cores.sh.
set -euo pipefail
CACHE=${HSINSPECT_A64_CACHE:-$HOME/.cache/hsinspect/aarch64}
SUITE=bookworm
PKGS=openjdk-17-jdk-headless,busybox-static,bash,coreutils,diffutils,base-passwd,binutils,procps,util-linux,grep,sed,mawk,findutils
JH=/usr/lib/jvm/java-17-openjdk-arm64
key=$(echo "$SUITE $PKGS v1" | md5sum | cut -c1-12)
mkdir -p "$CACHE"
export DEBIAN_FRONTEND=noninteractive

need=()
for p in qemu-user-static qemu-system-arm mmdebstrap arch-test cpio kmod e2fsprogs; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "aarch64/setup: installing ${need[*]}"
  "$(dirname "$0")/../apt.sh" update -qq
  "$(dirname "$0")/../apt.sh" install -y -qq --no-install-recommends "${need[@]}"
fi
rustup target list --installed | grep -qx aarch64-unknown-linux-musl ||
  rustup target add aarch64-unknown-linux-musl

fetch() { # fetch NAME PACKAGES: an arm64 extract of PACKAGES (from $SUITE) as $CACHE/NAME.tar
  [ -s "$CACHE/$1.tar" ] && return
  echo "aarch64/setup: mmdebstrap arm64 $2"
  mmdebstrap --quiet --arch=arm64 --variant=extract --include="$2" --format=tar \
    "$SUITE" "$CACHE/$1.tar.part"
  mv "$CACHE/$1.tar.part" "$CACHE/$1.tar"
}
fetch "rootfs-$key" "$PKGS"
fetch kernel linux-image-arm64

R=$CACHE/rootfs
if [ "$(cat "$R/.stamp" 2>/dev/null)" != "$key" ]; then
  echo "aarch64/setup: unpacking the root"
  rm -rf "$R" "$CACHE/rootfs.img"; mkdir -p "$R"; tar -C "$R" -xf "$CACHE/rootfs-$key.tar"
  # what the skipped maintainer scripts would have made, as far as the test needs it
  cp "$R/usr/share/base-passwd/passwd.master" "$R/etc/passwd"
  cp "$R/usr/share/base-passwd/group.master" "$R/etc/group"
  [ -e "$R/bin/sh" ] || ln -s bash "$R/bin/sh"
  mkdir -p "$R"/{mnt,proc,sys,dev,run,tmp,opt}; chmod 1777 "$R/tmp"
  # a JDK whose libjvm.so keeps only .dynsym: -F must find the region through gHotSpotVMStructs
  cp -a "$R$JH" "$R/opt/jdk-stripped"
  qemu-aarch64-static -L "$R" "$R/usr/bin/strip" --strip-all --remove-section=.gnu_debuglink \
    "$R/opt/jdk-stripped/lib/server/libjvm.so"
  echo "$key" > "$R/.stamp"
fi
if [ ! -s "$CACHE/rootfs.img" ]; then
  mke2fs -q -F -t ext4 -L a64root -d "$R" "$CACHE/rootfs.img.part" 1500M
  mv "$CACHE/rootfs.img.part" "$CACHE/rootfs.img"
fi

# kernel NAME: $CACHE/NAME/ (boot/vmlinuz-*, lib/modules) from $CACHE/NAME.tar, and
# $CACHE/initramfs-NAME.cpio.gz: busybox and that kernel's virtio/ext4 modules (decompressed:
# busybox insmod takes plain .ko files), mounting /dev/vda (root) and /dev/vdb (the payload).
kernel() {
  local K=$CACHE/$1 ird=$CACHE/initramfs-$1.cpio.gz
  if [ ! -f "$K/.stamp" ]; then
    rm -rf "$K" "$ird"; mkdir -p "$K"
    tar -C "$K" -xf "$CACHE/$1.tar" --wildcards './boot' './lib/modules' './usr/lib/modules' 2>/dev/null || true
    # Debian 13 keeps modules in /usr/lib/modules only
    if [ ! -d "$K/lib/modules" ]; then mkdir -p "$K/lib"; mv "$K/usr/lib/modules" "$K/lib/"; fi
    depmod -b "$K" "$(ls "$K/lib/modules")"; touch "$K/.stamp"
  fi
  [ -s "$ird" ] && return
  local kv ir mods=() m ko b
  kv=$(ls "$K/lib/modules"); ir=$(mktemp -d)
  mkdir -p "$ir"/{bin,dev,proc,sys,newroot,lib/modules}; cp "$R/bin/busybox" "$ir/bin/"
  for m in virtio_pci virtio_blk ext4; do
    for ko in $(modprobe -d "$K" -S "$kv" --show-depends $m | awk '/^insmod/{print $2}'); do
      b=$(basename "$ko" .xz); [ -f "$ir/lib/modules/$b" ] && continue
      case $ko in *.xz) xz -dc "$ko" > "$ir/lib/modules/$b";; *) cp "$ko" "$ir/lib/modules/";; esac
      mods+=("$b")
    done
  done
  cat > "$ir/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in ${mods[*]}; do insmod /lib/modules/\$m || echo "init: insmod \$m failed"; done
for i in \$(seq 1 100); do [ -b /dev/vda ] && [ -b /dev/vdb ] && break; sleep 0.1; done
mount -t ext4 /dev/vda /newroot || { echo "init: cannot mount the root"; poweroff -f; }
mount -t ext4 /dev/vdb /newroot/mnt || { echo "init: cannot mount the payload"; poweroff -f; }
mount -t tmpfs -o size=512m tmpfs /newroot/tmp; mount -t tmpfs tmpfs /newroot/run
mount --move /dev /newroot/dev; mount --move /proc /newroot/proc; mount --move /sys /newroot/sys
exec switch_root /newroot /mnt/run.sh
INIT
  chmod +x "$ir/init"
  (cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1 > "$ird.part") && mv "$ird.part" "$ird"
  rm -rf "$ir"
}
kernel kernel
# the name aarch64/test.sh boots with
[ -s "$CACHE/initramfs.cpio.gz" ] || cp "$CACHE/initramfs-kernel.cpio.gz" "$CACHE/initramfs.cpio.gz"
# Debian 13's arm64 kernel built for 16 KiB pages (Debian 12 has none): aarch64/cores.sh makes a
# core on it, whose page size (AT_PAGESZ 16384) must decide how it is read.
SUITE=trixie fetch kernel16k linux-image-arm64-16k
kernel kernel16k
echo "aarch64/setup: ready ($CACHE)"
