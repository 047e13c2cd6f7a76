#!/usr/bin/env bash
# Where the two engines differ because collectives run concurrently and share links (issue 10):
# flat DLRM (experiments/dlrm-criteo.yaml) on DGX H100 nodes under plan.overlap, where batch i's
# dense AllReduce (sync_comm stream) meets the embedding AlltoAlls (comm stream). Prints the
# iteration time and the dense AllReduce's time for both engines.
# Usage: bash experiments/validation/congestion.sh [path/to/rectwin]
set -euo pipefail
bin=${1:-build/release/cli/rectwin}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "overlap gpus analytic_ms simgrid_ms diff_% allreduce_analytic_us allreduce_simgrid_us"
for overlap in sync pipeline semi_async; do
    for nodes in 2 8; do
        for engine in analytic simgrid; do
            "$bin" sim experiments/dlrm-criteo.yaml --quiet --engine "$engine" --out "$out/$engine" \
                --set topology.nodes=$nodes --set plan.overlap=$overlap
        done
        python3 - "$out" "$overlap" "$nodes" <<'PY'
import json, sys
out, overlap, nodes = sys.argv[1], sys.argv[2], int(sys.argv[3])
a = json.load(open(f"{out}/analytic/summary.json"))
s = json.load(open(f"{out}/simgrid/summary.json"))
ta, ts = a["iteration_time_s"], s["iteration_time_s"]
print(f"{overlap} {8 * nodes} {ta * 1e3:.4f} {ts * 1e3:.4f} {100 * (ts - ta) / ta:+.2f} "
      f"{a['phases']['dense.allreduce'] * 1e6:.1f} {s['phases']['dense.allreduce'] * 1e6:.1f}")
PY
    done
done
