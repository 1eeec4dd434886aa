#!/usr/bin/env bash
# The Windows build and its tests, on Debian under Wine (run by scripts/test.sh):
#   1. scripts/windows/setup.sh (toolchain, Wine prefix, Windows JDK 21; idempotent, cached);
#   2. cross-build inspect.exe for x86_64-pc-windows-gnu (-Zbuild-std with Debian's rustc-web),
#      in its own target directory (~/.cache/hsinspect/target-win) so the Linux build is untouched;
#   3. the library's unit tests, built for Windows and run under Wine;
#   4. integration.py: inspect.exe against Windows JVMs, jcmd.exe and jps.exe under Wine (`-F`,
#      `<pid>`, `list`, `serve` in a console and as a service, `top`), and on the minidumps of
#      minidump.py (cached) against the Linux build, HSINSPECT_LINUX_INSPECT (default
#      target/debug/inspect, which scripts/test.sh's cargo test builds).
# Usage: scripts/windows/test.sh [--build-only]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
export HSINSPECT_LINUX_INSPECT=${HSINSPECT_LINUX_INSPECT:-$PWD/target/debug/inspect}
"$here/setup.sh"
. "$here/env.sh"
export CARGO_TARGET_DIR=${HSINSPECT_WIN_TARGET_DIR:-$HSINSPECT_TEST_CACHE/target-win}
# One flag set for the build and the tests, so the std built for the target is shared.
# The profile: $HSINSPECT_WIN_PROFILE, else release (scripts/test.sh sets quick-release, Cargo.toml).
PROFILE=${HSINSPECT_WIN_PROFILE:-release}
BUILD=(-Zbuild-std --target "$WIN_TARGET" --profile "$PROFILE")
t0=$(date +%s)
"$WIN_CARGO" build "${BUILD[@]}" --bin inspect
export INSPECT_EXE="$CARGO_TARGET_DIR/$WIN_TARGET/$PROFILE/inspect.exe"
echo "windows/test: built $INSPECT_EXE in $(( $(date +%s) - t0 )) s"
[ "${1:-}" = --build-only ] && exit 0
# Start the prefix's wineserver once for the whole run (each wine call would otherwise start it),
# and stop it, with Wine's service processes, when the run ends however it ends: nothing of the
# tests is left running on the machine.
wineserver -p 60 </dev/null >/dev/null 2>&1 || true
trap 'wineserver -k >/dev/null 2>&1 || true' EXIT
# The library's unit tests (the CLI's own run on Linux; its Windows parts are integration.py's).
"$WIN_CARGO" test "${BUILD[@]}" --lib
export WIN_JAVA_HOME WIN_JAVA2_HOME
python3 "$here/integration.py"
echo "windows/test: done in $(( $(date +%s) - t0 )) s"
