#!/bin/bash
# TurboGR (seed 002) figure 2(b): FuXi-long at up to 8k tokens, padded baseline against jagged
# (workload.sequence_layout), scenario experiments/papers/turbogr-padding.yaml. Prints per layout
# the iteration and dense time, the activation memory of the worst rank, peak HBM and the
# padding fraction (padded tokens that are not real, from the seq_pad/seq_unpad bytes).
# usage: experiments/papers/turbogr-padding.sh [RECTWIN]   (ENGINE=analytic by default)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/cli/rectwin}
ENGINE=${ENGINE:-analytic}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "figure 2(b): FuXi-long, 8k tokens       paper: latency 961.21 -> 431.13 ms (2.2x), memory 47.77 -> 14.31 GB (-70%)"
echo "  (paper: padded PyTorch operators -> jagged fusion operators; here: padding alone, same kernels)"
printf '  %-7s %10s %10s %9s %9s %8s\n' layout iter_ms dense_ms act_GB peak_GB padding
for l in padded jagged; do
    "$R" sim "$here/turbogr-padding.yaml" --engine "$ENGINE" --out "$tmp/$l" \
        --set workload.sequence_layout=$l > "$tmp/$l.txt" 2>&1
    act=$(awk '/^ *activations /{print $2}' "$tmp/$l.txt")
    python3 - "$tmp/$l" "$l" "$act" <<'PY'
import csv, json, sys
d, layout, act = sys.argv[1], sys.argv[2], float(sys.argv[3])
j = json.load(open(d + "/summary.json"))
p = j["phases"]
pad = unpad = 0.0
for r in csv.DictReader(open(d + "/ops.csv")):
    if r["rank"] == "0" and r["name"] == "seq_pad": pad = float(r["bytes"])
    if r["rank"] == "0" and r["name"] == "seq_unpad": unpad = float(r["bytes"])
# pad moves (real + padded) tokens, unpad 2 x real: padded / real = 2 pad / unpad - 1.
frac = "-" if not unpad else "%.1f%%" % (100 * (1 - 1 / (2 * pad / unpad - 1)))
print("  %-7s %10.2f %10.2f %9.2f %9.2f %8s" % (layout, 1e3 * j["iteration_time_s"],
      1e3 * (p["dense.fwd"] + p["dense.bwd"]), act, j["peak_hbm_bytes"] / 1e9, frac))
PY
done
python3 - "$tmp/padded/summary.json" "$tmp/jagged/summary.json" <<'PY'
import json, sys
p, j = (json.load(open(f)) for f in sys.argv[1:])
print("  jagged/padded: latency %.2fx faster, peak HBM %+.1f%% (paper: 2.23x, -70.0%%)" % (
    p["iteration_time_s"] / j["iteration_time_s"],
    100 * (j["peak_hbm_bytes"] / p["peak_hbm_bytes"] - 1)))
PY
