#!/usr/bin/env bash
# Study A, regenerated: the sweep (240 analytic points, ~15 s with -j 2 on 2 cores), its CSV
# copied here, and the plots. From anywhere: bash experiments/whatif/nic-rail/run.sh [rectwin]
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=$(realpath "${1:-build/release/cli/rectwin}")
D=experiments/whatif/nic-rail
W=results/whatif/nic-rail
rm -rf $W # a fresh sweep: finished points would otherwise be kept (rectwin sweep resumes)

"$R" sweep $D/nic-rail.yaml -j 2 --out $W --quiet
cp $W/sweep.csv $D/sweep.csv

# Subsets of the table for the plots (rows by column value), with an engine column for the
# plots' titles (kept for tables written before the sweep CSV had its own engine column).
subset() { # OUT COL=VALUE...
  python3 - $D/sweep.csv "$@" <<'PY'
import csv, sys
src, out, conds = sys.argv[1], sys.argv[2], [c.split('=', 1) for c in sys.argv[3:]]
r = csv.DictReader(open(src, newline=''))
with open(out, 'w', newline='') as f:
    w = csv.DictWriter(f, r.fieldnames + ([] if 'engine' in r.fieldnames else ['engine']), lineterminator='\n')
    w.writeheader()
    w.writerows(dict(row, engine='analytic') for row in r if all(row[k] == v for k, v in conds))
PY
}
subset $D/rail.csv topology.scale_out.rail_optimized=true
subset $D/fattree.csv topology.scale_out.rail_optimized=false
subset $D/4096.csv topology.nodes=512 topology.scale_out.nic_bw=400Gbps

cd $D
"$R" plot scaling rail.csv --by plan.name,topology.scale_out.nic_bw -o scaling-rail.png --size 1200x700
"$R" plot scaling fattree.csv --by plan.name,topology.scale_out.nic_bw -o scaling-fattree.png --size 1200x700
"$R" plot breakdown 4096.csv --by plan.name,topology.scale_out.rail_optimized -o breakdown-4096.png --size 1200x650
