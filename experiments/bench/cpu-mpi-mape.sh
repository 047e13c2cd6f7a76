#!/usr/bin/env bash
# The CPU + MPI validation figures of issue 9 (experiments/validation/cpu-mpi.md): iteration-time
# MAPE (dev = DLRM flat, held out = every other case, all; by rank count and model), per-phase
# MAPE and the machine's noise, printed by experiments/validation/cpu-mpi.sh from the prediction
# and the rectwin-exec runs of each case.
#
# usage: experiments/bench/cpu-mpi-mape.sh [--dir DIR [--topology FILE]]
#                                                              # the newest committed runs (the
#                                                              # headline of cpu-mpi.md: $HEADLINE
#                                                              # on topologies/localhost-cpu-epyc-zen4.yaml),
#                                                              # or DIR (for instance an earlier run):
#                                                              # four predictions (below) of each case
#        (--topology: the calibration DIR was predicted with, where it is not
#        topologies/localhost-cpu.yaml: the runs of another machine, for instance
#        --dir experiments/measurements/cpu/epyc-2026-11-23/validation
#        --topology topologies/localhost-cpu-epyc.yaml; it goes before the modes below)
#        experiments/bench/cpu-mpi-mape.sh --repredict [BUILD_DIR]
#                                                              # predict again (deterministic, all four,
#                                                              # about 2 minutes) against the committed
#                                                              # measurements, in a temp copy
#        experiments/bench/cpu-mpi-mape.sh --rerun [BUILD_DIR] # predict and measure again (5 runs
#                                                              # per case, ~15 min on 2 cores) into a
#                                                              # temp dir, then print the same figures
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
V=$root/experiments/measurements/cpu/validation
HEADLINE=experiments/measurements/cpu/zen4-pinned-2026-11-24/validation-4
TOPO=()
if [ $# = 0 ]; then
  V=$root/$HEADLINE
  TOPO=(--topology "$root/topologies/localhost-cpu-epyc-zen4.yaml")
fi
if [ "${1:-}" = --dir ]; then
  [ -d "${2:-}" ] || { echo "cpu-mpi-mape.sh: --dir '${2:-}': not a directory; allowed: a validation directory (experiments/measurements/cpu/validation*)" >&2; exit 2; }
  V=$(cd "$2" && pwd)
  shift 2
fi
if [ "${1:-}" = --topology ]; then
  [ -f "${2:-}" ] || { echo "cpu-mpi-mape.sh: --topology '${2:-}': no such file; allowed: a calibrated topology (topologies/localhost-cpu*.yaml)" >&2; exit 2; }
  TOPO=(--topology "$2")
  shift 2
fi
figures() { grep -i 'mape\|noise\|predictions:\|core link'; }
# The four predictions cpu-mpi.md compares: the analytic engine on the N-rank curves, the
# simgrid engine with the measured machine's 2 shared cores (nproc on the development machine)
# on the 1-rank curves, each on the first batch only or on every batch rectwin-exec timed.
variants=("--pred pred" "--engine simgrid --cores 2 --pred pred-simgrid-cores2"
  "--batches --pred pred-batches" "--batches --engine simgrid --cores 2 --pred pred-batches-simgrid-cores2")
# The every-batch predictions again against each case's fastest repeat, the measurement that
# pairs with the calibration's fastest-of-passes tables (cpu-mpi.md).
# And the simgrid one against the fastest repeat whose core link stayed in the machine's fast
# state (cpu-mpi.sh --measured fastest-link; the fastest repeat where exec recorded no link).
fastest=("--batches --measured fastest --pred pred-batches"
  "--batches --engine simgrid --cores 2 --measured fastest --pred pred-batches-simgrid-cores2"
  "--batches --engine simgrid --cores 2 --measured fastest-link --pred pred-batches-simgrid-cores2")
B=${2:-$root/build/release}
cpu_mpi() { "$root/experiments/validation/cpu-mpi.sh" ${TOPO[@]+"${TOPO[@]}"} "$@"; }
# Predicts the variants from the second on (FIRST=2) or all (FIRST=1) into DIR's cases, then
# prints every variant's figures against DIR's measurements.
predict_and_print() { # DIR FIRST
  local v
  for v in "${variants[@]:$(($2 - 1))}"; do
    # shellcheck disable=SC2086
    cpu_mpi $v --predict-only "$B" "$1" 2>/dev/null | figures
  done
  for v in "${fastest[@]}"; do
    # shellcheck disable=SC2086
    cpu_mpi $v "$B" "$1" 0 | figures
  done
}
case "${1:-}" in
  --rerun)
    out=$(mktemp -d)
    echo "raw results: $out" >&2
    cpu_mpi "$B" "$out" 5 | figures # measures, and predicts the first variant
    predict_and_print "$out" 2
    ;;
  --repredict)
    out=$(mktemp -d)
    cp -r "$V/." "$out"
    echo "raw results: $out" >&2
    predict_and_print "$out" 1
    ;;
  *)
    for v in "${variants[@]}" "${fastest[@]}"; do
      # shellcheck disable=SC2086
      cpu_mpi $v "$B" "$V" 0 | figures
    done
    ;;
esac
