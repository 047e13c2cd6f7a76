#!/usr/bin/env bash
# Study B, regenerated: the SimGrid sweep (24 points, ~35 s with -j 2 on 2 cores), the analytic
# sweep (84 points, ~30 s), their CSVs copied here, and the plots.
# From anywhere: bash experiments/whatif/oversubscription/run.sh [rectwin]
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=$(realpath "${1:-build/release/cli/rectwin}")
D=experiments/whatif/oversubscription
W=results/whatif
rm -rf $W/oversubscription-simgrid $W/oversubscription-analytic # fresh sweeps, not resumed

"$R" sweep $D/simgrid.yaml -j 2 --quiet --out $W/oversubscription-simgrid
"$R" sweep $D/analytic.yaml -j 2 --quiet --out $W/oversubscription-analytic
cp $W/oversubscription-simgrid/sweep.csv $D/simgrid.csv
cp $W/oversubscription-analytic/sweep.csv $D/analytic.csv

# Tables for the plots: rows chosen by column value, with an engine column (the title names
# it) and the oversubscription written as a ratio ("2:1") for the legends.
subset() { # SRC ENGINE OUT COL=VALUE...
  python3 - "$@" <<'PY'
import csv, sys
src, engine, out = sys.argv[1:4]
conds = [c.split('=', 1) for c in sys.argv[4:]]
r = csv.DictReader(open(src, newline=''))
o = 'topology.scale_out.oversubscription'
with open(out, 'w', newline='') as f:
    w = csv.DictWriter(f, r.fieldnames + ([] if 'engine' in r.fieldnames else ['engine']), lineterminator='\n')
    w.writeheader()
    for row in r:
        if all(row[k] == v for k, v in conds):
            w.writerow(dict(row, engine=engine, **{o: row[o] + ':1'}))
PY
}
subset $D/simgrid.csv simgrid $D/simgrid-plot.csv
subset $D/analytic.csv analytic $D/analytic-plot.csv
subset $D/simgrid.csv simgrid $D/simgrid-256.csv topology.nodes=32

cd $D
"$R" plot scaling simgrid-plot.csv --by plan.name,topology.scale_out.oversubscription \
  -o scaling-simgrid.png --size 1200x650
"$R" plot scaling analytic-plot.csv --by plan.name,topology.scale_out.oversubscription \
  -o scaling-analytic.png --size 1200x700
"$R" plot breakdown simgrid-256.csv --by plan.name,topology.scale_out.oversubscription \
  -o breakdown-simgrid-256.png --size 1100x600
