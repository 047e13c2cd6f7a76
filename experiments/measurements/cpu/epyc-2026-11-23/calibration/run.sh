#!/usr/bin/env bash
# probes, calibration of the AMD EPYC guest, then validation in 5 rounds; the load every 30 s
set -uo pipefail
cd /work/main
B=/work/cv/bin8
R=/work/cv/run8
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
( while true; do echo "$(date -u +%FT%TZ) $(cat /proc/loadavg)"; sleep 30; done ) > $R/load.log &
LP=$!
{
  echo "# date: $(date -u +%FT%TZ); host: $(hostname); $(grep -m1 'model name' /proc/cpuinfo); cache sizes (cpu0, sysfs): $(cat /sys/devices/system/cpu/cpu0/cache/index*/size | tr '\n' ' ')"
  echo "# /tmp/gather_probe 520 128 20000   (gcc -O2 gather_probe.c librectwin_kernels_cpu.a at 052ad5d)"
  /tmp/gather_probe 520 128 20000
  echo "# /tmp/gather_probe 520 1024 4000"
  /tmp/gather_probe 520 1024 4000
} > $R/gather-probe.log 2>&1
{
  echo "# date: $(date -u +%FT%TZ); OPENBLAS_NUM_THREADS=1 taskset -c 1 /tmp/gemm_trans (gcc -O2 gemm_trans.c librectwin_kernels_cpu.a -lopenblas at 052ad5d)"
  taskset -c 1 /tmp/probe/gemm_trans
} > $R/gemm-trans.log 2>&1
{
  echo "# calibration start $(date -u +%FT%TZ)"
  $B/cli/rectwin calibrate --device cpu --comm mpi --ranks 1,2,4 -o topologies/localhost-cpu-epyc.yaml -- --passes 5
  echo "# calibration end $(date -u +%FT%TZ) rc=$?"
} > $R/calibrate.log 2>&1
cp topologies/localhost-cpu-epyc.yaml $R/localhost-cpu-epyc.yaml
{
  echo "# validation start $(date -u +%FT%TZ)"
  experiments/validation/cpu-mpi.sh --topology topologies/localhost-cpu-epyc.yaml $B $R/val 5
  echo "# validation end $(date -u +%FT%TZ) rc=$?"
} > $R/validate.log 2>&1
kill $LP
echo done > $R/DONE
