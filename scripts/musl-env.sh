# Sourced (bash) by the scripts that build the static (musl) binaries: a C compiler for the
# musl targets, which compile mimalloc's C (the musl builds' allocator, src/os/unix.rs).
#   x86_64-unknown-linux-musl:  Debian's musl-gcc (musl-tools), which cc-rs picks by itself;
#   aarch64-unknown-linux-musl: clang against an arm64 musl sysroot (aarch64/musl-sysroot.sh),
#                               archived with llvm-ar; linked by rust-lld (.cargo/config.toml).
# Installs musl-tools, clang and llvm when missing (root, apt-get). Idempotent.
musl_env_need=()
for p in musl-tools clang llvm; do dpkg -s "$p" >/dev/null 2>&1 || musl_env_need+=("$p"); done
if [ ${#musl_env_need[@]} -gt 0 ]; then
  "$(dirname "${BASH_SOURCE[0]}")/apt.sh" install -y -qq \
    --no-install-recommends "${musl_env_need[@]}" >&2
fi
musl_env_sysroot=$("$(dirname "${BASH_SOURCE[0]}")/aarch64/musl-sysroot.sh")
export CC_aarch64_unknown_linux_musl=clang AR_aarch64_unknown_linux_musl=llvm-ar
export CFLAGS_aarch64_unknown_linux_musl="--sysroot=$musl_env_sysroot -isystem $musl_env_sysroot/usr/include/aarch64-linux-musl"
unset musl_env_need musl_env_sysroot
