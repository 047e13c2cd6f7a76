#!/bin/bash
# RecIS (seed 001) table 1: MBU of the embedding gather, per-feature launches (PyTorch 15.00%,
# TensorFlow 1.70%) against RecIS's fused operator (47.50%), H20. MBU here is seed 001's: the
# minimum bytes (the fused op's: IDs, rows, message, no staging round trip) over the time rank 0
# spends in the lookup phase x HBM bandwidth, for several batches per rank. Also printed: the
# launches and mean bytes per launch (the x of `rectwin plot bwroofline`), and the same for the
# sender's ID partition (bucketize by owner; table 1's "ids partition": PyTorch 34.60%, RecIS
# 55.10%).
# Part 2, with EXEC=path/to/rectwin-exec: the same two launch patterns run for real by 4 CPU
# ranks (experiments/exec-cpu.yaml, DLRM with 26 tables capped at 100k rows) against the
# prediction on the calibrated localhost-cpu topology.
# usage: [EXEC=build/release/exec/rectwin-exec] experiments/papers/recis-fusion.sh [RECTWIN]
#        (ENGINE=analytic by default)
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/cli/rectwin}
ENGINE=${ENGINE:-analytic}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/mbu.py" <<'PY'
import csv, json, sys
def rank0(d):
    rows = [r for r in csv.DictReader(open(d + "/ops.csv"))
            if r["rank"] == "0" and r["phase"] == "emb.fwd." + sys.argv[4]]
    return (len(rows), sum(float(r["bytes"]) for r in rows),
            sum(float(r["end_s"]) - float(r["start_s"]) for r in rows))
bw = json.load(open(sys.argv[2] + "/summary.json"))["hardware"]["hbm_bw"]
_, minimum, _ = rank0(sys.argv[2])
for name, d in (("none", sys.argv[1]), ("sparse", sys.argv[2])):
    n, b, t = rank0(d)
    print("%-9s %-7s %9d %12.0f %11.2f %7.2f%%" % (sys.argv[3], name, n, b / n, t * 1e6,
                                                   100 * minimum / (t * bw)))
PY
row() { printf '%-9s %-7s %9s %12s %11s %8s\n' "$1" fusion launches bytes/launch "${2:-lookup}_us" mbu; }

echo "# paper (table 1, gather): TensorFlow 1.70%, PyTorch 15.00%, RecIS fused 47.50% MBU"
row batch
for b in 64 1024 16384; do
    for f in none sparse; do
        "$R" sim "$here/recis-fusion.yaml" --engine "$ENGINE" --out "$tmp/$f" --quiet \
            --set workload.batch_per_rank=$b --set plan.fusion=$f
    done
    python3 "$tmp/mbu.py" "$tmp/none" "$tmp/sparse" "$b" lookup
    python3 "$tmp/mbu.py" "$tmp/none" "$tmp/sparse" "$b" bucketize >> "$tmp/ids.txt"
done
# The sender's ID partition (bucketize by owner, fused with the same key): one op per feature
# reading and writing its own IDs, or one over every feature; same bytes, 26 launches against 1.
echo "# paper (table 1, ids partition): PyTorch 34.60%, RecIS fused 55.10% MBU"
row batch bucketize
cat "$tmp/ids.txt"
[ -n "${EXEC:-}" ] || exit 0
mpi=(mpirun --oversubscribe -np 4)
[ "$(id -u)" -ne 0 ] || mpi+=(--allow-run-as-root)
echo "# part 2: exec-cpu.yaml, 4 CPU ranks: predicted ($ENGINE, calibrated localhost-cpu) vs measured"
for f in none sparse; do
    "$R" sim "$here/../exec-cpu.yaml" --engine "$ENGINE" --out "$tmp/p-$f" --quiet \
        --set plan.fusion=$f
    "${mpi[@]}" "$EXEC" "$here/../exec-cpu.yaml" --quiet --out "$tmp/m-$f" --set plan.fusion=$f \
        > "$tmp/m-$f.log" 2>&1 || { cat "$tmp/m-$f.log"; exit 1; }
done
row source
python3 "$tmp/mbu.py" "$tmp/p-none" "$tmp/p-sparse" predicted lookup
python3 "$tmp/mbu.py" "$tmp/m-none" "$tmp/m-sparse" measured lookup
