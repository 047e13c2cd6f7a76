#!/usr/bin/env bash
# The plot of collectives.md: predicted busbw (analytic engine; the SimGrid engine agrees on
# every row of the table) against the nccl-tests size from 1 KiB to 8 GiB for each system and
# op of the table that has a published figure, with those figures as points.
# Writes collectives-busbw.dat and draws collectives-busbw.png with collectives-busbw.gp.
# usage: bash experiments/validation/collectives-plot.sh [path/to/rectwin]   (~5 s)
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${1:-build/release/cli/rectwin}
V=experiments/validation
sizes="1KiB 4KiB 16KiB 64KiB 256KiB 1MiB 4MiB 16MiB 64MiB 128MiB 256MiB 1GiB 4GiB 8GiB"
series() { # title topology nodes op [algo]: one gnuplot data block, "bytes busbw_GBps"
  echo "# $1"
  echo "\"$1\""
  for s in $sizes; do
    $R collective --topology "$2" --nodes "$3" --op "$4" --bytes "$s" --algo "${5:-auto}" \
      --engine analytic --json |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["bytes"], "%.3f" % d["busbw_GBps"], d["algo"])'
  done
  printf '\n\n'
}
{
  echo "# predicted busbw (GB/s) by nccl-tests size (bytes), rectwin collective --engine analytic"
  series "H100 1x8 AllReduce (auto: NVLS from 256 KiB)" topologies/dgx-h100.yaml 1 allreduce
  series "H100 1x8 AllReduce ring" topologies/dgx-h100.yaml 1 allreduce ring
  series "H100 1x8 AllGather" topologies/dgx-h100.yaml 1 allgather
  series "H100 6x8 AlltoAll" topologies/dgx-h100.yaml 6 alltoall
  series "A100 1x8 AllReduce" topologies/dgx-a100.yaml 1 allreduce
  series "A100+4 HDR 2x8 AllReduce" $V/a100-4nic.yaml 2 allreduce
  series "A100+4 HDR 3x8 AllReduce" $V/a100-4nic.yaml 3 allreduce
} >$V/collectives-busbw.dat
cd $V && gnuplot collectives-busbw.gp && echo "wrote $V/collectives-busbw.png"
