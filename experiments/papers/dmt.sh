#!/bin/bash
# DMT (seed 004) figures 10 and 11: SPTT and SPTT + tower module speedup over flat, DLRM and
# DCN, DGX H100 (topologies/dgx-h100.yaml, no per-experiment factors), 16 to 64 hosts.
# Towers: 16 (26 Criteo features fit at most 26), so 1, 2 and 4 hosts per tower.
# Tower modules: DLRM linear, DCN crossnet, compression 2.
# usage: [ENGINE=analytic|simgrid] [SHARDING=table_wise] experiments/papers/dmt.sh [RECTWIN]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/cli/rectwin}
ENGINE=${ENGINE:-analytic}
SHARDING=${SHARDING:-}   # e.g. SHARDING=table_wise overrides both plans' sharding
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

iter() { # scenario, sets... -> iteration time (s)
    local sc=$1; shift
    local args=()
    for s in "$@"; do args+=(--set "$s"); done
    [ -z "$SHARDING" ] || args+=(--set "plan.sharding=$SHARDING")
    "$R" sim "$here/$sc" --engine "$ENGINE" --out "$tmp/o" "${args[@]}" > /dev/null
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['iteration_time_s'])" "$tmp/o/summary.json"
}

printf '%-5s %-6s %-5s %12s %12s %12s %9s %9s %9s\n' model hosts towers flat_ms sptt_ms sptt_tm_ms sptt_x dmt_x tm_gain
for model in dlrm dcn; do
    tm="{kind: linear, compression: 2}"
    [ $model = dcn ] && tm="{kind: crossnet, compression: 2}"
    for hosts in 16 32 64; do
        k=$((hosts / 16))
        common=(topology.nodes=$hosts plan.hosts_per_tower=$k)
        f=$(iter dmt-$model.yaml topology.nodes=$hosts plan.name=flat)
        s=$(iter dmt-$model.yaml "${common[@]}")
        t=$(iter dmt-$model.yaml "${common[@]}" "plan.tower_module=$tm")
        python3 -c "
import sys
f,s,t=map(float,sys.argv[4:7])
print('%-5s %-6s %-5s %12.3f %12.3f %12.3f %9.2f %9.2f %9.2f' % (sys.argv[1],sys.argv[2],sys.argv[3],f*1e3,s*1e3,t*1e3,f/s,f/t,s/t))
" $model $hosts $((hosts / k)) "$f" "$s" "$t"
    done
done
