#!/usr/bin/env bash
# The CPU + MPI validation figures of issue 9 (experiments/validation/cpu-mpi.md): iteration-time
# MAPE (dev = DLRM flat, held out = every other case, all), per-phase MAPE and the machine's
# noise, printed by experiments/validation/cpu-mpi.sh from the prediction and the rectwin-exec
# runs of each case.
#
# usage: experiments/bench/cpu-mpi-mape.sh                     # the committed runs under
#                                                              # experiments/measurements/cpu/validation
#        experiments/bench/cpu-mpi-mape.sh --rerun [BUILD_DIR] # predict and measure again (3 runs
#                                                              # per case, ~15 min on 2 cores) into a
#                                                              # temp dir, then print the same figures
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = --rerun ]; then
  out=$(mktemp -d)
  echo "raw results: $out" >&2
  "$root/experiments/validation/cpu-mpi.sh" "${2:-$root/build/release}" "$out" 3 | grep -i 'mape\|noise'
else
  "$root/experiments/validation/cpu-mpi.sh" "$root/build/release" \
    "$root/experiments/measurements/cpu/validation" 0 | grep -i 'mape\|noise'
fi
