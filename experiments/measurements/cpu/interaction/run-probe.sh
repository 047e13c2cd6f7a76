#!/bin/bash
# The interaction probe, old and new kernels alternated, each run a fresh process (fresh
# allocation), on core 1. Usage: run-probe.sh PROBE ROUNDS > LOG
set -eu
probe=$1 rounds=$2
echo "# date: $(date -u +%FT%TZ); host: $(hostname); $(grep -m1 'model name' /proc/cpuinfo); family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model' /proc/cpuinfo | cut -d: -f2); commit $(git rev-parse --short HEAD)"
echo "# OPENBLAS_NUM_THREADS=1 taskset -c 1 $probe old|new CAP; load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
    for cap in 14155776 16777216; do
        for k in old new; do OPENBLAS_NUM_THREADS=1 taskset -c 1 "$probe" $k $cap; done
    done
done
echo "# end $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
