#!/usr/bin/env bash
# Hot (one buffer) against cache-cold (a 520 MiB pool: twice the 260 MiB L3 sysfs reports)
# AllReduce, 2 ranks, at the sizes of rectwin-exec's dense AllReduces in the CPU validation
# (HSTU 788480, DLRM 9475588, DCN 64178180 bytes), alternating, three rounds; then the DLRM
# size on a zero-filled pool, twice.
# Usage: run.sh OUTDIR   (writes OUTDIR/allreduce-pool.log)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
mpicc -O2 -o "$out/allreduce_pool" "$here/allreduce_pool.c"
run=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && run+=(--allow-run-as-root)
{
  echo "# date: $(date -u +%FT%TZ); host: $(hostname); $(mpirun --version | head -1)"
  echo "# cache sizes (cpu0, sysfs): $(cat /sys/devices/system/cpu/cpu0/cache/index*/size | tr '\n' ' ')"
  for round in 1 2 3; do
    for bytes in 788480 9475588 64178180; do
      reps=200
      [ "$bytes" -gt 10000000 ] && reps=30
      for pool in 0 520; do
        echo -n "round $round: "
        "${run[@]}" -np 2 "$out/allreduce_pool" "$bytes" "$pool" "$reps"
      done
    done
  done
  # the pool zero-filled: how the first try filled it
  for round in 1 2; do
    echo -n "round $round: "
    "${run[@]}" -np 2 "$out/allreduce_pool" 9475588 520 200 zero
  done
  echo "# load: $(cat /proc/loadavg)"
} | tee "$out/allreduce-pool.log"
