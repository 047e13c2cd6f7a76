#!/usr/bin/env bash
# What the cache-cold embedding kernel curves alone change: each measurement set predicted
# (simgrid, node.cores 2, every batch, against each case's fastest run) with the tables of the
# calibration it was validated against, once with its own gather_pool and sparse_* curves and
# once with the other calibration's: "hot" (each call repeating one set of IDs, the calibration
# at e0ad318, 2026-11-23 07:23) or "cold" (new IDs every call, the calibration at eab88bd, 10:48).
# Usage: ab-embedding.sh BUILD_DIR OUTDIR
#   (writes OUTDIR/ab-<measurement>-<calibration>-tables-<embedding>-embedding.txt)
# Deterministic; about 6 minutes on 2 cores. The predictions go to temporary copies.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
. "$here/ab_predict.sh"
B=${1:?usage: ab-embedding.sh BUILD_DIR OUTDIR} out=${2:?usage: ab-embedding.sh BUILD_DIR OUTDIR}
HOT=e0ad318 COLD=eab88bd
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" show $HOT:topologies/localhost-cpu.yaml >"$tmp/hot.yaml"
git -C "$root" show $COLD:topologies/localhost-cpu.yaml >"$tmp/cold.yaml"
python3 "$here/swap_tables.py" embedding "$tmp/hot.yaml" "$tmp/cold.yaml" "$tmp/hot-tables-cold-embedding.yaml"
python3 "$here/swap_tables.py" embedding "$tmp/cold.yaml" "$tmp/hot.yaml" "$tmp/cold-tables-hot-embedding.yaml"
cp "$tmp/hot.yaml" "$tmp/hot-tables-hot-embedding.yaml"
cp "$tmp/cold.yaml" "$tmp/cold-tables-cold-embedding.yaml"
# measurement set | the calibration it was validated against
for pair in validation-2026-11-23-0823:hot validation:cold; do
  set=${pair%%:*} k=${pair##*:}
  for e in hot cold; do
    t=$out/ab-$set-$k-tables-$e-embedding.txt
    ab_predict "$root" "$B" "$set" "$tmp/$k-tables-$e-embedding.yaml" "$t" \
      "experiments/measurements/cpu/cache-cold/ab-embedding.sh (measurements of $set; the $k calibration's tables, the $e calibration's embedding curves)" \
      python3 "$here/emb_phases.py"
    printf '%-32s %-4s tables, %-4s embedding: ' "$set" "$k" "$e"
    grep -E 'MAPE, all|phases >= 5%|emb.\* phase MAPE' "$t" | sed 's/  */ /g' | tr '\n' ';'
    echo
  done
done
