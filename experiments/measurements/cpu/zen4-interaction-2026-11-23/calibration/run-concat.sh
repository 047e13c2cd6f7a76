#!/usr/bin/env bash
# Zen 4 guest: validation in 5 rounds with exec's row-copy concatenation (the third
# calibration's tables, unchanged); load every 30 s
set -uo pipefail
cd /work/main
R=/work/cv/run4
T=topologies/localhost-cpu-epyc-zen4.yaml
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
( while true; do echo "$(date -u +%FT%TZ) $(cat /proc/loadavg)"; sleep 30; done ) > $R/load.log &
LP=$!
{
  echo "# validation start $(date -u +%FT%TZ)"
  experiments/validation/cpu-mpi.sh --topology $T /work/cv/cc $R/val 5
  echo "# validation end $(date -u +%FT%TZ) rc=$?"
} > $R/validate.log 2>&1
kill $LP
echo done > $R/DONE
