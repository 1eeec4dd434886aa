#!/usr/bin/env bash
# The project's test command: installs what the tests need (idempotent), then runs every test.
# Usage: scripts/test.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-deps.sh
cargo test --all-targets "$@"
