#!/usr/bin/env bash
# A sweep table for the gallery until `rectwin sweep` lands: DLRM on 1 to 64 DGX H100 nodes
# under the flat, fused and hsp plans (analytic engine), one CSV row per point with the swept
# keys and the summary figures the plots read. Usage: sweep.sh RECTWIN WORKDIR > sweep.csv
set -euo pipefail
R=$1
W=$2
for plan in flat fused hsp; do
  for nodes in 1 2 4 8 16 32 64; do
    $R sim experiments/dlrm-criteo.yaml --engine analytic --quiet --out "$W/$plan-$nodes" \
      --set plan.name=$plan --set topology.nodes=$nodes
    echo "$W/$plan-$nodes $plan $nodes"
  done
done | python3 -c '
import csv, json, sys
keys = ["scenario", "engine", "topology", "ranks", "iteration_time_s", "samples_per_s", "mfu",
        "mbu", "comm_time_s", "exposed_comm_s"]
rows, phases = [], []
for line in sys.stdin:
    d, plan, nodes = line.split()
    s = json.load(open(d + "/summary.json"))
    row = {"plan.name": plan, "topology.nodes": nodes, **{k: s[k] for k in keys}}
    for p, v in s["phases"].items():
        phases += [p] if p not in phases else []
        row["phases." + p] = v
    rows.append(row)
w = csv.DictWriter(sys.stdout, ["plan.name", "topology.nodes"] + keys + ["phases." + p for p in phases])
w.writeheader()
w.writerows(rows)
'
