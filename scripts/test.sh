#!/usr/bin/env bash
# The project's test command (run as root; CI runs it): installs what the tests need
# (idempotent, cached), then runs every test in both tiers, the Windows ones (cross-built, under
# Wine) included. Anything missing makes a test fail and say how to get it.
#
#   1. setup: scripts/setup-test-deps.sh (JDKs, gdb, Prometheus, test users, ...) and
#      scripts/windows/setup.sh (Wine, the Windows cross toolchain and JDK), then
#      scripts/windows/minidump.py and threads_minidump.py (a Windows JVM's minidumps, made once and cached);
#   2. the fast tier, exactly as plain `cargo test` runs it on a laptop, but with each test binary
#      run by scripts/fast-tier-runner.sh: as an unprivileged user, with no JDK or other test
#      tool and no network. A test that needs one of them and is not `#[ignore = "requires ..."]`
#      fails here;
#   3. the carved jvm.dll fixture is reproducible from the real jvm.dll; scripts/check-portable.sh
#      (the library builds for macOS and Windows and without its live backend);
#   4. every test, ignored ones included (`cargo test --workspace --all-targets --no-fail-fast --
#      --include-ignored`: every test binary runs, and all failures are listed at the end);
#   5. scripts/windows/test.sh: the Windows build, its unit tests under Wine, inspect.exe against
#      a Windows JVM.
# Usage: scripts/test.sh [extra cargo test args, e.g. --test integration, or -- <filter> such as live::]
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
step() { echo "test.sh: $* ($(( $(date +%s) - t0 )) s)"; }
# JDKs, gdb, Prometheus, Wine and the Windows JDKs, the arm64 VM, the minidumps and aarch64
# cores the tests read: scripts/setup.sh (its parts at once; cached, a few seconds when warm).
scripts/setup.sh
step "setup done"

# The arguments for the test binaries go after `--`; `--include-ignored` joins them.
cargo_args=() test_args=()
seen_dashes=false
for a in "$@"; do
  if ! $seen_dashes && [ "$a" = -- ]; then seen_dashes=true; continue; fi
  if $seen_dashes; then test_args+=("$a"); else cargo_args+=("$a"); fi
done

host=$(rustc -vV | sed -n 's/^host: //p')
runner_var="CARGO_TARGET_$(echo "$host" | tr 'a-z-' 'A-Z_')_RUNNER"
step "fast tier (plain cargo test) as an unprivileged user without JDK or network"
env "$runner_var=$PWD/scripts/fast-tier-runner.sh" \
  cargo test --workspace "${cargo_args[@]}" -- "${test_args[@]}"
step "fast tier passed"

python3 scripts/carve-jvm-dll.py --check
# The static (musl) binaries, in the quick-release profile (Cargo.toml): tests/integration/static_binary.rs
# runs the x86_64 one in an empty root, tests/integration/image.rs builds the FROM scratch image of
# deploy/Containerfile from it; tests/integration/foreign_core.rs and scripts/aarch64/test.sh run
# the aarch64 one under qemu.
export HSINSPECT_STATIC_PROFILE=quick-release
for t in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
  rustup target list --installed | grep -qx $t || rustup target add $t
done
(source scripts/musl-env.sh &&
  cargo build --profile $HSINSPECT_STATIC_PROFILE --target x86_64-unknown-linux-musl --target aarch64-unknown-linux-musl)
export HSINSPECT_STATIC_BIN=$PWD/target/x86_64-unknown-linux-musl/$HSINSPECT_STATIC_PROFILE/inspect
export HSINSPECT_A64_BIN=$PWD/target/aarch64-unknown-linux-musl/$HSINSPECT_STATIC_PROFILE/inspect
# The library builds for macOS and Windows and without its live backend; no clap/anyhow in it.
scripts/check-portable.sh

# aarch64 end to end (the static aarch64 build under qemu-user, then in a qemu-system-aarch64 VM;
# a few minutes, mostly one emulated CPU) runs beside the cargo tests, which leave part of the
# machine idle while they wait on JVMs; its output is printed when it ends.
scripts/aarch64/test.sh >target/aarch64-test.log 2>&1 & aarch64=$!
step "every test (--include-ignored)"
# A hang must not end as CI's bare timeout: .ci/run sets HSINSPECT_CI_DEADLINE (epoch seconds, a
# few minutes before CI's own limit); if the cargo tests still run then, the process tree (each
# process's state, kernel wait channel, age and command line: the JVMs, jcmd, gdb, inspect) is
# printed for the log. (Each external command a test runs has a deadline of its own,
# tests/integration/support/deadline.rs; this is for a wait outside them.)
watchdog=
if [ -n "${HSINSPECT_CI_DEADLINE:-}" ]; then
  left=$(( HSINSPECT_CI_DEADLINE - $(date +%s) ))
  (
    trap 'kill $nap 2>/dev/null; exit 0' TERM
    sleep $(( left > 0 ? left : 0 )) & nap=$!
    wait $nap
    echo "test.sh: the CI deadline is near and the cargo tests still run ($(( $(date +%s) - t0 )) s); what runs:" >&2
    below() { echo "$1"; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do below "$c"; done; }
    ps --forest -ww -o pid,ppid,stat,etimes,wchan:24,args -p "$(below $$ | paste -sd,)" >&2
  ) & watchdog=$!
fi
cargo_rc=0
cargo test --workspace --all-targets --no-fail-fast "${cargo_args[@]}" -- --include-ignored "${test_args[@]}" || cargo_rc=$?
[ -z "$watchdog" ] || kill $watchdog 2>/dev/null || true
step "cargo tests ended (exit $cargo_rc)"

# The Windows build and its tests under Wine (cached toolchain and prefix; a few minutes).
windows_rc=0
HSINSPECT_WIN_PROFILE=quick-release scripts/windows/test.sh || windows_rc=$?
step "windows ended (exit $windows_rc)"
aarch64_rc=0
wait $aarch64 || aarch64_rc=$?
cat target/aarch64-test.log
step "aarch64 ended (exit $aarch64_rc)"
[ $cargo_rc = 0 ] && [ $windows_rc = 0 ] && [ $aarch64_rc = 0 ] || {
  echo "test.sh: failed: cargo tests $cargo_rc, windows $windows_rc, aarch64 $aarch64_rc" >&2
  exit 1
}
step "all passed"
