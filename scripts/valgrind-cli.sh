#!/usr/bin/env bash
# Valgrind memcheck over a representative set of rectwin CLI runs (issue 12): every run must end
# with 0 errors and 0 bytes definitely lost, the SimGrid simulation child included (it is
# forked, so memcheck follows it). Not part of CI: it takes minutes. Prints one line per run.
#   scripts/valgrind-cli.sh [build/release/cli/rectwin]
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-build/release/cli/rectwin}
command -v valgrind >/dev/null || { echo "valgrind-cli: install valgrind first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=(
  "plan experiments/dcn-criteo.yaml"
  "sim experiments/dlrm-criteo.yaml --quiet --out $tmp/sg --set topology.nodes=2"
  "sim experiments/dlrm-criteo.yaml --engine analytic --quiet --out $tmp/an"
  "sim experiments/dlrm-criteo.yaml --engine analytic --quiet --out $tmp/hsp --set plan.name=hsp"
  "collective --topology topologies/dgx-h100.yaml --nodes 2 --op alltoall --bytes 1GiB --engine simgrid"
  "compare $tmp/an $tmp/an"
  "partition experiments/dlrm-criteo.yaml --towers 8"
  "plan experiments/dlrm-criteo.yaml --set topology.nodes=zero"
)
bad=0
for run in "${runs[@]}"; do
  # shellcheck disable=SC2086 # the runs are split on purpose
  valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite -q "$R" $run \
    >/dev/null 2>"$tmp/vg.err" && rc=0 || rc=$?
  if [ "$rc" -eq 99 ] || grep -qE "Invalid|uninitialised|definitely lost" "$tmp/vg.err"; then
    bad=$((bad + 1))
    echo "ERRORS: $run"
    grep -E "Invalid|uninitialised|definitely lost" "$tmp/vg.err" | head -5
  else
    echo "clean (exit $rc): $run"
  fi
done
echo "valgrind-cli: $((${#runs[@]} - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
