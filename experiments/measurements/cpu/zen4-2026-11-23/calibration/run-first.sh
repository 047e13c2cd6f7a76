#!/usr/bin/env bash
# Zen 4 guest: linear_bwd probe (kernels before and after the fix), calibration, then the
# validation in 5 rounds with the fixed kernels and in 5 rounds with the old ones; load every 30 s
set -uo pipefail
cd /work/main
R=/work/cv/run
T=topologies/localhost-cpu-epyc-zen4.yaml
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
( while true; do echo "$(date -u +%FT%TZ) $(cat /proc/loadavg)"; sleep 30; done ) > $R/load.log &
LP=$!
for v in old new; do
  {
    echo "# date: $(date -u +%FT%TZ); host: $(hostname); $(grep -m1 'model name' /proc/cpuinfo); family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model' /proc/cpuinfo | cut -d: -f2); cache sizes (cpu0, sysfs): $(cat /sys/devices/system/cpu/cpu0/cache/index*/size | tr '\n' ' ')"
    echo "# OPENBLAS_NUM_THREADS=1 taskset -c 1 ./lbwd_parts (gcc -O2 -I kernels lbwd_parts.c librectwin_kernels_cpu.a -lopenblas -lm; kernels $v: $( [ $v = old ] && echo edd9727 || echo 'edd9727 + the linear_bwd fix'))"
    taskset -c 1 /work/cv/lbwd_$v
  } > $R/lbwd-$v.log 2>&1
done
{
  echo "# calibration start $(date -u +%FT%TZ)"
  /work/cv/new/cli/rectwin calibrate --device cpu --comm mpi --ranks 1,2,4 -o $T -- --passes 5
  echo "# calibration end $(date -u +%FT%TZ) rc=$?"
} > $R/calibrate.log 2>&1
cp $T $R/
for v in new old; do
  {
    echo "# validation ($v kernels) start $(date -u +%FT%TZ)"
    experiments/validation/cpu-mpi.sh --topology $T /work/cv/$v $R/val-$v 5
    echo "# validation ($v kernels) end $(date -u +%FT%TZ) rc=$?"
  } > $R/validate-$v.log 2>&1
done
kill $LP
echo done > $R/DONE
