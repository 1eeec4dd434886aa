#!/usr/bin/env bash
# Builds the release: a static `inspect` for each Linux architecture and its tarball.
#   dist/inspect-<version>-<target>.tar.gz   inspect-<version>-<target>/{inspect, README.md,
#                                            LICENSE-MIT, LICENSE-APACHE, docs/, completions/, man/,
#                                            jstack, jmap, jinfo, jstat, jcmd, jps -> inspect}
#   dist/SHA256SUMS                          sha256sum of every tarball (`sha256sum -c` checks it)
# Targets: x86_64-unknown-linux-musl and aarch64-unknown-linux-musl (static; they run on any
# distribution and in a FROM scratch image). aarch64 links with rust-lld (.cargo/config.toml), so
# only mimalloc's C needs a compiler per target (scripts/musl-env.sh: musl-gcc, clang with an arm64
# musl sysroot); `rustup target add` is run for missing targets.
# Completions (bash, zsh, fish, elvish, powershell) and the man pages come from the binary itself
# (`inspect completions <shell>`, `inspect manpage --out-dir`), run from the x86_64 build.
# Usage: scripts/release.sh [target ...]     (TARGETS default: both)
# The tarballs are reproducible for a commit: names sorted, owner root, mtime the commit's time.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
version=$(cargo metadata --no-deps --format-version 1 |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "hsinspect"))')
mtime=$(git log -1 --format=%ct 2>/dev/null || date +%s)
# the C compilers for mimalloc's C on the musl targets
source scripts/musl-env.sh
installed=$(rustup target list --installed)
for t in "${targets[@]}"; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done

dist=dist; stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$dist"
for t in "${targets[@]}"; do
  echo "release: cargo build --release --target $t"
  cargo build --release --locked --target "$t"
  bin=target/$t/release/inspect
  # static: no interpreter (PT_INTERP) and no needed libraries
  if readelf -lW "$bin" | grep -q 'Requesting program interpreter' || readelf -dW "$bin" | grep -q NEEDED; then
    echo "release: $bin is not statically linked" >&2; exit 1
  fi
done

# completions and man pages: the CLI is the same on every target; run a build this host can run
host_bin=
for t in "${targets[@]}"; do
  if "target/$t/release/inspect" --version >/dev/null 2>&1; then host_bin=target/$t/release/inspect; break; fi
done
if [ -z "$host_bin" ]; then
  cargo build --release --locked; host_bin=target/release/inspect
fi
extras=$stage/extras; mkdir -p "$extras/completions" "$extras/man"
"$host_bin" completions bash > "$extras/completions/inspect.bash"
"$host_bin" completions zsh > "$extras/completions/_inspect"
"$host_bin" completions fish > "$extras/completions/inspect.fish"
"$host_bin" completions elvish > "$extras/completions/inspect.elv"
"$host_bin" completions powershell > "$extras/completions/_inspect.ps1"
"$host_bin" manpage --out-dir "$extras/man"

for t in "${targets[@]}"; do
  name=inspect-$version-$t; dir=$stage/$name
  mkdir -p "$dir"
  install -m 0755 "target/$t/release/inspect" "$dir/inspect"
  install -m 0644 README.md LICENSE-MIT LICENSE-APACHE "$dir/"
  # The README's pages, and the JDK tools' names (`inspect links`, src/multicall.rs' TOOLS) as
  # relative links beside the binary.
  cp -r docs "$dir/"
  for tool in jstack jmap jinfo jstat jcmd jps; do ln -s inspect "$dir/$tool"; done
  cp -r "$extras/completions" "$extras/man" "$dir/"
  chmod -R u=rwX,go=rX "$dir"
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -cf - "$name" |
    gzip -n -9 > "$dist/$name.tar.gz"
  echo "release: $dist/$name.tar.gz ($(du -h "$dist/$name.tar.gz" | cut -f1))"
done
(cd "$dist" && sha256sum inspect-"$version"-*.tar.gz > SHA256SUMS && cat SHA256SUMS)
