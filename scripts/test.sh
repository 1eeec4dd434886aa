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
#      tool and no network. A test that needs one of them and is not `#[ignore = "needs ..."]`
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
scripts/setup-test-deps.sh
# Wine, the Windows cross toolchain and the Windows JDK (its jvm.dll is also read by unit tests).
scripts/windows/setup.sh
# The minidumps of a Windows JVM that tests/integration/minidump.rs and windows/integration.py read: made once
# under Wine (30-90 s here, up to 2-3 minutes on a slow machine), then cached.
python3 scripts/windows/minidump.py >/dev/null
# The minidump of a Windows ThreadsTarget JVM that tests/integration/minidump_threads.rs reads (under a
# minute cold, then cached).
python3 scripts/windows/threads_minidump.py >/dev/null
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
# The static (musl) release binary: tests/integration/static_binary.rs runs it in an empty root, tests/integration/image.rs
# builds the FROM scratch image of deploy/Containerfile from it.
rustup target list --installed | grep -qx x86_64-unknown-linux-musl ||
  rustup target add x86_64-unknown-linux-musl
(source scripts/musl-env.sh && cargo build --release --target x86_64-unknown-linux-musl)
# The static aarch64 binary: tests/integration/foreign_core.rs runs it under qemu-user on x86_64 cores
# (scripts/aarch64/test.sh uses the same build). That test and its aarch64 cores (made once in
# the VM by scripts/aarch64/cores.sh, cached) need scripts/aarch64/setup.sh, run above.
rustup target list --installed | grep -qx aarch64-unknown-linux-musl ||
  rustup target add aarch64-unknown-linux-musl
(source scripts/musl-env.sh && cargo build --release --target aarch64-unknown-linux-musl)
# The library builds for macOS and Windows and without its live backend; no clap/anyhow in it.
scripts/check-portable.sh

step "every test (--include-ignored)"
cargo test --workspace --all-targets --no-fail-fast "${cargo_args[@]}" -- --include-ignored "${test_args[@]}"
step "cargo tests passed"

# The Windows build and its tests under Wine (cached toolchain and prefix; a few minutes).
scripts/windows/test.sh
# aarch64: the static aarch64 build on the testdata under qemu-user, then against a real aarch64
# JVM under qemu-system-aarch64 (cached root and kernel; ~2-3 minutes warm).
scripts/aarch64/test.sh
step "aarch64 passed"
step "all passed"
