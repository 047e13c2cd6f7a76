#!/usr/bin/env bash
# probe, calibration, then validation in 5 rounds; the load every 30 s
set -uo pipefail
cd /work/main
B=/work/cv/bin7
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
( while true; do echo "$(date -u +%FT%TZ) $(cat /proc/loadavg)"; sleep 30; done ) > /work/cv/run7/load.log &
LP=$!
{
  echo "# date: $(date -u +%FT%TZ); host: $(hostname); cache sizes (cpu0, sysfs): $(cat /sys/devices/system/cpu/cpu0/cache/index*/size | tr '\n' ' ')"
  echo "# /tmp/gather_probe 520 128 20000   (gcc -O2 gather_probe.c librectwin_kernels_cpu.a at abbb8a6)"
  /tmp/gather_probe 520 128 20000
  echo "# /tmp/gather_probe 520 1024 4000"
  /tmp/gather_probe 520 1024 4000
} > /work/cv/run7/gather-probe.log 2>&1
{
  echo "# calibration start $(date -u +%FT%TZ)"
  $B/cli/rectwin calibrate --device cpu --comm mpi --ranks 1,2,4 -o topologies/localhost-cpu.yaml -- --passes 5
  echo "# calibration end $(date -u +%FT%TZ) rc=$?"
} > /work/cv/run7/calibrate.log 2>&1
cp topologies/localhost-cpu.yaml /work/cv/run7/localhost-cpu.yaml
{
  echo "# validation start $(date -u +%FT%TZ)"
  experiments/validation/cpu-mpi.sh $B /work/cv/run7/val 5
  echo "# validation end $(date -u +%FT%TZ) rc=$?"
} > /work/cv/run7/validate.log 2>&1
kill $LP
echo done > /work/cv/run7/DONE
