#!/usr/bin/env bash
# Prints the path of an arm64 musl sysroot: Debian 12's musl-dev for arm64 (musl's headers), for
# clang to compile mimalloc's C for aarch64-unknown-linux-musl (scripts/release.sh and
# scripts/aarch64/test.sh set CC/CFLAGS/AR for that target from it). Fetched once with
# `mmdebstrap --arch=arm64 --variant=extract` (nothing runs under emulation) into
# ~/.cache/hsinspect/aarch64/musl-sysroot; needs root the first time (apt-get, mmdebstrap).
set -euo pipefail
S=${HSINSPECT_A64_CACHE:-$HOME/.cache/hsinspect/aarch64}/musl-sysroot
if [ ! -f "$S/.stamp" ]; then
  need=()
  for p in mmdebstrap arch-test clang llvm; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  if [ ${#need[@]} -gt 0 ]; then
    "$(dirname "${BASH_SOURCE[0]}")/../apt.sh" install -y -qq \
      --no-install-recommends "${need[@]}" >&2
  fi
  rm -rf "$S" "$S.part"; mkdir -p "$(dirname "$S")"
  mmdebstrap --quiet --arch=arm64 --variant=extract --include=musl-dev --format=directory \
    bookworm "$S.part" >&2
  mv "$S.part" "$S"; touch "$S/.stamp"
fi
[ -f "$S/usr/include/aarch64-linux-musl/stdlib.h" ] || { echo "musl-sysroot: no musl headers in $S" >&2; exit 1; }
echo "$S"
