#!/usr/bin/env bash
# a second validation of the fourth calibration (the same binaries of f3fb937), 5 rounds; load every 30 s
set -uo pipefail
cd /work/main
R=/work/cv/run4
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
( while true; do echo "$(date -u +%FT%TZ) $(cat /proc/loadavg)"; sleep 30; done ) > $R/load2.log &
LP=$!
{
  echo "# validation start $(date -u +%FT%TZ)"
  experiments/validation/cpu-mpi.sh --topology /work/cv/run4/localhost-cpu-epyc-zen4.yaml /work/cv/pin $R/val2 5
  echo "# validation end $(date -u +%FT%TZ) rc=$?"
} > $R/validate2.log 2>&1
kill $LP
echo done > $R/DONE2
