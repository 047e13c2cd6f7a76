#!/usr/bin/env bash
# What the collective tables alone change: each committed measurement predicted (simgrid,
# node.cores 2, every batch, against each case's fastest run) with the kernel tables of the
# calibration it was validated against and either calibration's collective tables: "hot"
# (one buffer, the calibration at 26035d0) or "cold" (cache-cold pools, 2026-11-23 07:23).
# Usage: ab.sh BUILD_DIR OUTDIR   (writes OUTDIR/ab-<measurement>-<kernels>-kernels-<collectives>-collectives.txt)
# Deterministic; about 4 minutes on 2 cores. The predictions go to temporary copies.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
B=${1:?usage: ab.sh BUILD_DIR OUTDIR} out=${2:?usage: ab.sh BUILD_DIR OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" show 26035d0:topologies/localhost-cpu.yaml >"$tmp/hot.yaml"
git -C "$root" show c6c319a:topologies/localhost-cpu.yaml >"$tmp/cold.yaml"
python3 "$here/swap_collectives.py" "$tmp/hot.yaml" "$tmp/cold.yaml" "$tmp/hot-kernels-cold-collectives.yaml"
python3 "$here/swap_collectives.py" "$tmp/cold.yaml" "$tmp/hot.yaml" "$tmp/cold-kernels-hot-collectives.yaml"
cp "$tmp/hot.yaml" "$tmp/hot-kernels-hot-collectives.yaml"
cp "$tmp/cold.yaml" "$tmp/cold-kernels-cold-collectives.yaml"
M=$root/experiments/measurements/cpu
# measurement set | the calibration it was validated against
for pair in validation-2026-11-23-hot-collectives:hot validation-2026-11-23-0804:cold validation-2026-11-23-0823:cold; do
  set=${pair%%:*} k=${pair##*:}
  for c in hot cold; do
    topo=$tmp/$k-kernels-$c-collectives.yaml
    rm -rf "$tmp/meas" && cp -r "$M/$set" "$tmp/meas"
    t=$out/ab-$set-$k-kernels-$c-collectives.txt
    {
      echo "# date: $(date -u +%FT%TZ); commit: $(git -C "$root" rev-parse --short HEAD)"
      echo "# command: experiments/measurements/cpu/cache-cold/ab.sh (measurements of $set; $k calibration's kernels, $c calibration's collectives)"
      "$root/experiments/validation/cpu-mpi.sh" --batches --engine simgrid --cores 2 --topology "$topo" \
        --pred pred-batches-simgrid-cores2 --measured fastest --predict-only "$B" "$tmp/meas" 2>/dev/null
    } >"$t.tmp"
    mv "$t.tmp" "$t"
    printf '%-40s %-5s kernels, %-4s collectives: ' "$set" "$k" "$c"
    grep -E 'MAPE, all|phases >= 5%|dense.allreduce:' "$t" | sed 's/  */ /g' | tr '\n' ';'
    echo
  done
done
