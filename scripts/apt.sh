#!/usr/bin/env bash
# apt-get for the setup scripts, which run at once (scripts/setup.sh): one call at a time, and a
# lock held by another apt waited for. apt-get's DPkg::Lock::Timeout waits for the dpkg lock
# only; `apt-get update` fails at once on the package lists' lock (/var/lib/apt/lists/lock) when
# another update holds it, as two setup parts, or a new machine's boot-time apt-daily, do.
# So: our own calls queue on one flock, and a call that still meets a foreign lock ("Could not
# get lock") is retried every 5 s for up to 15 minutes. Output and exit status are apt-get's.
#
# Usage: scripts/apt.sh ARGS...   (as `apt-get ARGS...`; DEBIAN_FRONTEND=noninteractive)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
lock=/run/lock/hsinspect-apt.lock
[ -d /run/lock ] || lock=/tmp/hsinspect-apt.lock
exec 9>"$lock"
flock 9
err=$(mktemp)
trap 'rm -f "$err"' EXIT
deadline=$(( $(date +%s) + 900 ))
while :; do
  rc=0
  apt-get -o DPkg::Lock::Timeout=900 "$@" 2>"$err" || rc=$?
  cat "$err" >&2
  [ "$rc" = 0 ] && exit 0
  if grep -q 'Could not get lock' "$err" && [ "$(date +%s)" -lt "$deadline" ]; then
    echo "apt.sh: another apt holds a lock; retrying in 5 s" >&2
    sleep 5
    continue
  fi
  exit "$rc"
done
