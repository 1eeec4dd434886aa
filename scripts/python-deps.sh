#!/usr/bin/env bash
# Installs the Python packages the integration tests import, from PyPI, into
# ${HSINSPECT_PYTHON_DIR:-$HOME/.cache/hsinspect/python} (a `pip install --target` directory the
# tests put on PYTHONPATH; outside the source tree, never the system's site-packages):
#   * opentelemetry-proto (and its protobuf): the official OTLP message definitions, with which
#     tests/otlp/receiver.py decodes what `inspect serve --otlp` sends (tests/integration/otlp.rs,
#     formats.rs).
# Idempotent: a directory whose .complete marker names the pinned versions is left alone.
set -euo pipefail

dest="${HSINSPECT_PYTHON_DIR:-$HOME/.cache/hsinspect/python}"
python="${PYTHON:-python3}"
pins=(opentelemetry-proto==1.45.2)
want="${pins[*]}"

if [ "$(cat "$dest/.complete" 2>/dev/null || true)" = "$want" ] \
   && PYTHONPATH="$dest" "$python" -c 'import opentelemetry.proto.collector.metrics.v1.metrics_service_pb2' 2>/dev/null; then
  echo "python-deps: $want already in $dest"
  exit 0
fi
"$python" -m pip --version >/dev/null 2>&1 || {
  echo "python-deps: needs '$python -m pip' (apt-get install -y python3-pip)" >&2
  exit 1
}
echo "python-deps: installing $want into $dest"
rm -rf "$dest.new"
"$python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
  --target "$dest.new" "${pins[@]}"
PYTHONPATH="$dest.new" "$python" -c 'import opentelemetry.proto.collector.metrics.v1.metrics_service_pb2' || {
  echo "python-deps: opentelemetry-proto does not import from $dest.new" >&2
  exit 1
}
echo "$want" > "$dest.new/.complete"
rm -rf "$dest"
mv "$dest.new" "$dest"
