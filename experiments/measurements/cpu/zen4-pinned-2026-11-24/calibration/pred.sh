#!/usr/bin/env bash
# The four predictions of every case and their tables (median and fastest run), headers first.
set -uo pipefail
cd /work/main
V=$1 T=topologies/localhost-cpu-epyc-zen4.yaml DESC=$2
C=$(git log --oneline -1 | cut -c1-8)
for v in "--pred pred" "--engine simgrid --cores 2 --pred pred-simgrid-cores2" \
         "--batches --pred pred-batches" \
         "--batches --engine simgrid --cores 2 --pred pred-batches-simgrid-cores2"; do
  p=$(echo "$v" | sed 's/.*--pred //')
  n=$p; [ "$p" = pred ] && n=; f=$V/table${n:+-$n}.txt
  { echo "# date: $(date -u +%FT%TZ); commit: $C (issue 9)"
    echo "# command: experiments/validation/cpu-mpi.sh --topology $T $v --predict-only build/me $V"
    echo "# $DESC"
    experiments/validation/cpu-mpi.sh --topology $T $v --predict-only build/me $V 2>/dev/null; } > $f.tmp && mv $f.tmp $f
  f2=$V/table${n:+-$n}-fastest.txt
  { echo "# date: $(date -u +%FT%TZ); commit: $C (issue 9)"
    echo "# command: experiments/validation/cpu-mpi.sh --topology $T $v --measured fastest build/me $V 0   (predictions made before with --predict-only)"
    echo "# $DESC"
    experiments/validation/cpu-mpi.sh --topology $T $v --measured fastest build/me $V 0 2>/dev/null; } > $f2.tmp && mv $f2.tmp $f2
done
