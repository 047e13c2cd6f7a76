#!/usr/bin/env bash
# An interrupted run cleans up (issue 12): SIGTERM during a SimGrid simulation removes the
# temporary platform file and ends the simulation child with its parent; the next run removes
# the temporaries of a run that was killed outright (their process no longer exists).
set -euo pipefail
rectwin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
mkdir "$tmp/t"
TMPDIR=$tmp/t "$rectwin" sim "$src/experiments/dlrm-criteo.yaml" --set topology.nodes=512 \
  --quiet --out "$tmp/r" >/dev/null 2>&1 &
parent=$!
child=""
for _ in $(seq 1 200); do # wait for the simulation child (the platform file exists by then)
  child=$(pgrep -P "$parent" || true)
  [ -n "$child" ] && break
  sleep 0.1
done
[ -n "$child" ] || fail "no simulation child appeared"
ls "$tmp/t"/rectwin-platform-* >/dev/null 2>&1 || fail "no temporary platform file to clean"
kill -TERM "$parent"
rc=0
wait "$parent" || rc=$?
[ "$rc" -eq 143 ] || fail "exit $rc, not 143 (SIGTERM)"
for _ in $(seq 1 50); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$child" 2>/dev/null; then fail "the simulation child outlived its parent"; fi
if ls "$tmp/t"/rectwin-platform-* >/dev/null 2>&1; then fail "the platform file was left"; fi
[ ! -e "$tmp/r/summary.json" ] || fail "an interrupted run published results"
echo "ok: SIGTERM during a simulation"
# A temporary of a process that no longer exists is removed by the next run into that directory.
mkdir -p "$tmp/s"
dead=999999
while kill -0 "$dead" 2>/dev/null; do dead=$((dead - 1)); done
touch "$tmp/s/ops.csv.tmp.$dead"
"$rectwin" sim "$src/experiments/dlrm-criteo.yaml" --engine analytic --quiet --out "$tmp/s"
[ ! -e "$tmp/s/ops.csv.tmp.$dead" ] || fail "the stale temporary was kept"
echo "ok: stale temporaries removed"
echo "interrupt: 2 passed, 0 failed"
