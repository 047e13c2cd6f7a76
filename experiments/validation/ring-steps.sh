#!/usr/bin/env bash
# The bulk ring (every step's bytes in one round of concurrent flows, the engine adding the
# analytic per-step latency) against the step-wise ring (2(n-1) steps for AllReduce, each
# member's step waiting for its predecessor's previous step on the same channel; optionally
# C pipelined chunks: steps + C - 1 rounds), on DGX H100 nodes: `rectwin collective` ring
# AllReduce at 8 to 64 GPUs and three sizes, with the shipped NCCL protocol latencies (nccl)
# and without the protocols section (alpha-beta: the per-step latencies are the platform's
# hop latencies, as the simulated links have them); then flat DLRM with a ring dense
# AllReduce (plan.dense_allreduce=ring) at 16 and 64 GPUs.
# usage: bash experiments/validation/ring-steps.sh [path/to/rectwin]
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${1:-build/release/cli/rectwin}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
topo() { # name steps chunks latency-model
  local drop='/^NEVER/d'
  [ "$4" = nccl ] || drop='/^  protocols:/,/tree: {base: 8.4us/d'
  sed -e "s/^  links_top: 50 .*/  links_top: 50\n  collective_steps: $2\n  chunks: $3/" \
      -e "$drop" topologies/dgx-h100.yaml >"$out/$1.yaml"
}
coll() { # topology nodes bytes engine
  "$R" collective --topology "$out/$1.yaml" --nodes "$2" --op allreduce --bytes "$3" \
    --algo ring --engine "$4" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["time_s"])'
}
echo "gpus latency bytes analytic_us bulk_us steps_us steps4_us steps_vs_bulk_% steps4_vs_bulk_%"
for fabric in nccl alpha-beta; do
  topo bulk bulk 1 $fabric; topo steps steps 1 $fabric; topo steps4 steps 4 $fabric
  for nodes in 1 2 4 8; do
    for bytes in 65536 1048576 67108864; do
      a=$(coll bulk $nodes $bytes analytic); b=$(coll bulk $nodes $bytes simgrid)
      s=$(coll steps $nodes $bytes simgrid); c=$(coll steps4 $nodes $bytes simgrid)
      python3 -c "import sys; a,b,s,c=map(float,sys.argv[1:5]); print('%d %s %s %.2f %.2f %.2f %.2f %+.3f %+.3f' % (int(sys.argv[5])*8, sys.argv[6], sys.argv[7], a*1e6, b*1e6, s*1e6, c*1e6, (s-b)/b*100, (c-b)/b*100))" "$a" "$b" "$s" "$c" "$nodes" "$fabric" "$bytes"
    done
  done
done
echo
echo "gpus scenario bulk_ms steps_ms diff_% dense.allreduce_bulk_us dense.allreduce_steps_us"
for nodes in 2 8; do
  for mode in bulk steps; do
    "$R" sim experiments/dlrm-criteo.yaml --quiet --out "$out/$mode" --set topology.nodes="$nodes" \
      --set plan.dense_allreduce=ring --set topology.simgrid.collective_steps=$mode
  done
  python3 - "$out/bulk/summary.json" "$out/steps/summary.json" "$nodes" <<'PY'
import json, sys
b, s = (json.load(open(p)) for p in sys.argv[1:3])
ib, i_s = b['iteration_time_s'], s['iteration_time_s']
print('%d dlrm-ring %.4f %.4f %+.3f %.1f %.1f' % (int(sys.argv[3]) * 8, ib * 1e3, i_s * 1e3, (i_s - ib) / ib * 100,
      b['phases']['dense.allreduce'] * 1e6, s['phases']['dense.allreduce'] * 1e6))
PY
done
