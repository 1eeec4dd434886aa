#!/usr/bin/env bash
# The project's test command: installs what the tests need (idempotent), then runs every test,
# the Windows ones (cross-built, under Wine) included.
# Usage: scripts/test.sh [extra cargo test args, e.g. --test jdk8]   (the harness gets --include-ignored)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-deps.sh
# Wine, the Windows cross toolchain and the Windows JDK (its jvm.dll is also read by unit tests).
scripts/windows/setup.sh
# The library builds for macOS and Windows and without its live backend; no clap/anyhow in it.
scripts/check-portable.sh
# Every tier: tests that need a JDK, root or tools are #[ignore]d in plain `cargo test`.
cargo test --all-targets "$@" -- --include-ignored
# The Windows build and its tests under Wine (cached toolchain and prefix; a few minutes).
scripts/windows/test.sh
