#!/usr/bin/env bash
# The library's shape, checked (issue 15): it builds for an OS with no live backend (macOS) and
# for Windows, with and without its optional parts, and it depends on neither clap nor anyhow.
# Usage: scripts/check-portable.sh   (run by scripts/test.sh; a minute or two with a warm cache)
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(aarch64-apple-darwin x86_64-pc-windows-gnu)
installed="$(rustup target list --installed)"
for t in "${targets[@]}"; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
for t in "${targets[@]}"; do
  echo "check-portable: cargo check --target $t (library, CLI, examples)"
  cargo check --quiet --target "$t" --workspace --lib --bins --examples
done
echo "check-portable: the library without its live backend"
cargo check --quiet -p hsinspect-core --no-default-features --lib --examples
cargo check --quiet -p hsinspect --no-default-features --bins
# What the library links: its normal dependencies, not the private dependencies of a proc-macro
# that runs only at build time (the minidump crate's prost-derive uses anyhow internally).
deps="$(cargo tree --quiet -e normal,no-proc-macro -p hsinspect-core --prefix none --target all)"
for forbidden in clap anyhow; do
  if grep -q "^$forbidden v" <<<"$deps"; then
    echo "check-portable: hsinspect-core depends on $forbidden (it belongs to the CLI)" >&2
    exit 1
  fi
done
echo "check-portable: ok (no clap or anyhow in what hsinspect-core links)"
