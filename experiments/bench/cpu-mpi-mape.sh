#!/usr/bin/env bash
# The CPU + MPI validation figures of issue 9 (experiments/validation/cpu-mpi.md): iteration-time
# MAPE (dev = DLRM flat, held out = every other case, all; by rank count and model), per-phase
# MAPE and the machine's noise, printed by experiments/validation/cpu-mpi.sh from the prediction
# and the rectwin-exec runs of each case.
#
# usage: experiments/bench/cpu-mpi-mape.sh                     # the committed runs under
#                                                              # experiments/measurements/cpu/validation:
#                                                              # the analytic predictions (pred/) and the
#                                                              # simgrid ones with node.cores 2
#                                                              # (pred-simgrid-cores2/)
#        experiments/bench/cpu-mpi-mape.sh --repredict [BUILD_DIR]
#                                                              # predict again (deterministic, both
#                                                              # variants) against the committed
#                                                              # measurements, in a temp copy
#        experiments/bench/cpu-mpi-mape.sh --rerun [BUILD_DIR] # predict and measure again (3 runs
#                                                              # per case, ~15 min on 2 cores) into a
#                                                              # temp dir, then print the same figures
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
V=$root/experiments/measurements/cpu/validation
figures() { grep -i 'mape\|noise\|predictions:'; }
# The measured machine had 2 cores (nproc on the development machine, cpu-mpi.md).
CORES=(--engine simgrid --cores 2 --pred pred-simgrid-cores2)
case "${1:-}" in
  --rerun)
    out=$(mktemp -d)
    echo "raw results: $out" >&2
    "$root/experiments/validation/cpu-mpi.sh" "${2:-$root/build/release}" "$out" 3 | figures
    "$root/experiments/validation/cpu-mpi.sh" "${CORES[@]}" --predict-only "${2:-$root/build/release}" "$out" 2>/dev/null | figures
    ;;
  --repredict)
    out=$(mktemp -d)
    cp -r "$V/." "$out"
    echo "raw results: $out" >&2
    "$root/experiments/validation/cpu-mpi.sh" --predict-only "${2:-$root/build/release}" "$out" 2>/dev/null | figures
    "$root/experiments/validation/cpu-mpi.sh" "${CORES[@]}" --predict-only "${2:-$root/build/release}" "$out" 2>/dev/null | figures
    ;;
  *)
    "$root/experiments/validation/cpu-mpi.sh" "$root/build/release" "$V" 0 | figures
    "$root/experiments/validation/cpu-mpi.sh" "${CORES[@]}" "$root/build/release" "$V" 0 | figures
    ;;
esac
