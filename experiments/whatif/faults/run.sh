#!/usr/bin/env bash
# One degraded NIC, regenerated: the SimGrid sweep (24 points) and the analytic sweep (24
# points, ~15 s), their CSVs copied here, a table of slowdowns and the plots.
# From anywhere: bash experiments/whatif/faults/run.sh [rectwin]
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=$(realpath "${1:-build/release/cli/rectwin}")
D=experiments/whatif/faults
W=results/whatif
rm -rf $W/faults-simgrid $W/faults-analytic # fresh sweeps, not resumed

"$R" sweep $D/simgrid.yaml -j 2 --quiet --out $W/faults-simgrid
"$R" sweep $D/analytic.yaml -j 2 --quiet --out $W/faults-analytic
cp $W/faults-simgrid/sweep.csv $D/simgrid.csv
cp $W/faults-analytic/sweep.csv $D/analytic.csv

# slowdown.csv: per engine, node count and plan, the healthy and the faulted iteration and
# their ratio; plot-<engine>.csv: the sweep rows with the fault written as a short label.
python3 - $D <<'PY'
import csv, sys
d = sys.argv[1]
out = csv.writer(open(f'{d}/slowdown.csv', 'w', newline=''), lineterminator='\n')
out.writerow(['engine', 'gpus', 'plan', 'healthy_s', 'one_nic_half_s', 'slowdown'])
for eng in ['simgrid', 'analytic']:
    rows = list(csv.DictReader(open(f'{d}/{eng}.csv', newline='')))
    t = {}
    for r in rows:
        t[(r['topology.faults'] != '[]', int(r['ranks']), r['plan.name'])] = float(r['iteration_time_s'])
    for (faulted, gpus, plan), v in sorted(t.items(), key=lambda k: (k[0][1], k[0][2])):
        if faulted: continue
        f = t[(True, gpus, plan)]
        out.writerow([eng, gpus, plan, f'{v:.6g}', f'{f:.6g}', f'{f / v:.3f}'])
    with open(f'{d}/plot-{eng}.csv', 'w', newline='') as f:
        w = csv.DictWriter(f, rows[0].keys(), lineterminator='\n')
        w.writeheader()
        for r in rows:
            r['topology.faults'] = 'healthy' if r['topology.faults'] == '[]' else 'nic-0-3 half'
            w.writerow(r)
PY

cd $D
for eng in simgrid analytic; do
  "$R" plot scaling plot-$eng.csv --by plan.name,topology.faults -o scaling-$eng.png --size 1200x650
done
