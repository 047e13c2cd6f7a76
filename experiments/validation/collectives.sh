#!/usr/bin/env bash
# Predictions for the rows of collectives.md: busbw in GB/s from the analytic and the simgrid
# engine, with the topology files as committed (no per-row tuning).
# usage: bash experiments/validation/collectives.sh [path/to/rectwin]
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${1:-build/release/cli/rectwin}
row() { # label topology nodes op bytes [algo]
  local label=$1 topo=$2 nodes=$3 op=$4 bytes=$5 algo=${6:-auto} out=""
  for e in analytic simgrid; do
    out+=" $($R collective --topology "$topo" --nodes "$nodes" --op "$op" --bytes "$bytes" \
             --algo "$algo" --engine "$e" --json |
             python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.1f %s" % (d["busbw_GBps"], d["algo"]))')"
  done
  echo "$label |$out"
}
row "H100 1x8 allreduce 8GiB"        topologies/dgx-h100.yaml 1 allreduce 8GiB
row "H100 1x8 allreduce 8GiB ring"   topologies/dgx-h100.yaml 1 allreduce 8GiB ring
row "H100 1x8 allgather 8GiB"        topologies/dgx-h100.yaml 1 allgather 8GiB
row "H100 1x8 alltoall 8GiB"         topologies/dgx-h100.yaml 1 alltoall 8GiB
row "H100 2x8 allreduce 8GiB ring"   topologies/dgx-h100.yaml 2 allreduce 8GiB ring
row "H100 6x8 alltoall 8GiB"         topologies/dgx-h100.yaml 6 alltoall 8GiB
row "A100 1x8 allreduce 4GiB"        topologies/dgx-a100.yaml 1 allreduce 4GiB
row "A100 2x8 4-NIC allreduce 8GiB"  experiments/validation/a100-4nic.yaml 2 allreduce 8GiB
row "A100 2x8 4-NIC allreduce 8GiB hier" experiments/validation/a100-4nic.yaml 2 allreduce 8GiB hierarchical
row "A100 3x8 4-NIC allreduce 128MiB" experiments/validation/a100-4nic.yaml 3 allreduce 128MiB
row "A100 3x8 4-NIC allreduce 128MiB hier" experiments/validation/a100-4nic.yaml 3 allreduce 128MiB hierarchical
row "A100 2x8 alltoall 8GiB"         topologies/dgx-a100.yaml 2 alltoall 8GiB
