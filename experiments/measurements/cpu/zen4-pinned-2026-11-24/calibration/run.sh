#!/usr/bin/env bash
# Zen 4 guest, fourth calibration: ranks pinned in blocks by the cpu device (f3fb937, cpu_bind.c);
# then the validation in 5 rounds; load every 30 s
set -uo pipefail
cd /work/main
R=/work/cv/run4
T=topologies/localhost-cpu-epyc-zen4.yaml
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
( while true; do echo "$(date -u +%FT%TZ) $(cat /proc/loadavg)"; sleep 30; done ) > $R/load.log &
LP=$!
{
  echo "# calibration start $(date -u +%FT%TZ)"
  /work/cv/pin/cli/rectwin calibrate --device cpu --comm mpi --ranks 1,2,4 -o $T -- --passes 5
  echo "# calibration end $(date -u +%FT%TZ) rc=$?"
} > $R/calibrate.log 2>&1
cp $T $R/
{
  echo "# validation start $(date -u +%FT%TZ)"
  experiments/validation/cpu-mpi.sh --topology $T /work/cv/pin $R/val 5
  echo "# validation end $(date -u +%FT%TZ) rc=$?"
} > $R/validate.log 2>&1
kill $LP
echo done > $R/DONE
