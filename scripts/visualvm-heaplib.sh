#!/usr/bin/env bash
# Puts VisualVM's heap library (org-graalvm-visualvm-lib-jfluid-heap.jar, package
# org.graalvm.visualvm.lib.jfluid.heap: an HPROF reader independent of the JDK and of hsinspect)
# in ${HSINSPECT_VISUALVM_DIR:-$HOME/.cache/hsinspect/visualvm}/ and prints the jar's path as its
# last line. tests/java/HprofCheck.java reads the heap dumps of `inspect heapdump` with it
# (tests/integration/support/hprof.rs). The jar comes from Debian's `visualvm` package, fetched
# with `apt-get download` and unpacked with `dpkg -x`: nothing is installed. The jar needs no
# other jar of VisualVM.
# Idempotent: a directory whose .complete marker names the package version is left alone.
# scripts/setup-test-deps.sh runs it (and so scripts/setup.sh, scripts/test.sh and .ci/run).
set -euo pipefail

dest="${HSINSPECT_VISUALVM_DIR:-$HOME/.cache/hsinspect/visualvm}"
name=org-graalvm-visualvm-lib-jfluid-heap.jar
inside=usr/share/visualvm/visualvm/modules/$name

if [ -s "$dest/$name" ] && [ -s "$dest/.complete" ]; then
  echo "visualvm-heaplib: $(cat "$dest/.complete") already in $dest" >&2
  echo "$dest/$name"
  exit 0
fi

mkdir -p "$(dirname "$dest")"
work="$(mktemp -d "$(dirname "$dest")/.visualvm.XXXXXX")"
trap 'rm -rf "$work"' EXIT
download() { (cd "$work" && apt-get -o APT::Sandbox::User=root download -qq visualvm >&2); }
if ! download; then
  echo "visualvm-heaplib: apt-get download failed; updating the package lists" >&2
  "$(cd "$(dirname "$0")" && pwd)/apt.sh" update -qq >&2
  download
fi
deb=("$work"/visualvm_*.deb)
[ -f "${deb[0]}" ] || { echo "visualvm-heaplib: apt-get download left no visualvm_*.deb" >&2; exit 1; }
version="$(dpkg-deb -f "${deb[0]}" Version)"
dpkg -x "${deb[0]}" "$work/root"
[ -s "$work/root/$inside" ] || {
  echo "visualvm-heaplib: visualvm $version has no /$inside" >&2
  exit 1
}
mkdir -p "$work/out"
cp "$work/root/$inside" "$work/out/$name"
echo "visualvm $version" >"$work/out/.complete"
rm -rf "$dest"
mv "$work/out" "$dest"
echo "visualvm-heaplib: visualvm $version's $name in $dest" >&2
echo "$dest/$name"
