#!/usr/bin/env bash
# Zen 4 guest: a fourth validation against the fourth calibration, rectwin-exec recording the core link (exec/core_link.c)
set -uo pipefail
cd /work/main
R=/work/cv/run6
T=topologies/localhost-cpu-epyc-zen4.yaml
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
( while true; do echo "$(date -u +%FT%TZ) $(cat /proc/loadavg)"; sleep 30; done ) > $R/load.log &
LP=$!
{
  echo "# validation start $(date -u +%FT%TZ)"
  experiments/validation/cpu-mpi.sh --topology $T /work/cv/link $R/val 5
  echo "# validation end $(date -u +%FT%TZ) rc=$?"
} > $R/validate.log 2>&1
kill $LP
echo done > $R/DONE
