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
. "$here/ab_predict.sh"
B=${1:?usage: ab.sh BUILD_DIR OUTDIR} out=${2:?usage: ab.sh BUILD_DIR OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" show 26035d0:topologies/localhost-cpu.yaml >"$tmp/hot.yaml"
git -C "$root" show c6c319a:topologies/localhost-cpu.yaml >"$tmp/cold.yaml"
python3 "$here/swap_tables.py" collectives "$tmp/hot.yaml" "$tmp/cold.yaml" "$tmp/hot-kernels-cold-collectives.yaml"
python3 "$here/swap_tables.py" collectives "$tmp/cold.yaml" "$tmp/hot.yaml" "$tmp/cold-kernels-hot-collectives.yaml"
cp "$tmp/hot.yaml" "$tmp/hot-kernels-hot-collectives.yaml"
cp "$tmp/cold.yaml" "$tmp/cold-kernels-cold-collectives.yaml"
# measurement set | the calibration it was validated against
for pair in validation-2026-11-23-hot-collectives:hot validation-2026-11-23-0804:cold validation-2026-11-23-0823:cold; do
  set=${pair%%:*} k=${pair##*:}
  for c in hot cold; do
    t=$out/ab-$set-$k-kernels-$c-collectives.txt
    ab_predict "$root" "$B" "$set" "$tmp/$k-kernels-$c-collectives.yaml" "$t" \
      "experiments/measurements/cpu/cache-cold/ab.sh (measurements of $set; $k calibration's kernels, $c calibration's collectives)"
    printf '%-40s %-5s kernels, %-4s collectives: ' "$set" "$k" "$c"
    grep -E 'MAPE, all|phases >= 5%|dense.allreduce:' "$t" | sed 's/  */ /g' | tr '\n' ';'
    echo
  done
done
