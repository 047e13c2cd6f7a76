#!/bin/bash
# MTGRBoost (seed 000) figure 14: throughput without and with sequence balancing, GRM 4G
# (models/mtgr-small.yaml) on 8 to 64 A100 GPUs (topologies/dgx-a100.yaml, no per-experiment
# factors), scenario experiments/papers/mtgrboost-balance.yaml (exact mode: every rank's
# lengths are sampled). Paper: GRM 4G gains 4.4% on average, gains grow with the GPU count.
# usage: experiments/papers/mtgrboost-balance.sh [RECTWIN]   (ENGINE=analytic by default)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/cli/rectwin}
ENGINE=${ENGINE:-analytic}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tput() { # nodes balance -> samples/s
    "$R" sim "$here/mtgrboost-balance.yaml" --engine "$ENGINE" --out "$tmp/o" --set topology.nodes=$1 \
        --set plan.balance=$2 > /dev/null
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['samples_per_s'])" "$tmp/o/summary.json"
}

printf '%-5s %12s %12s %12s %9s %9s\n' gpus none dyn_batch token_realloc dyn_gain realloc_gain
for nodes in 1 2 4 8; do
    a=$(tput $nodes none); b=$(tput $nodes dynamic_batching); c=$(tput $nodes token_realloc)
    python3 -c "
import sys
g,a,b,c=sys.argv[1],*map(float,sys.argv[2:])
print('%-5s %12.0f %12.0f %12.0f %8.1f%% %8.1f%%' % (g,a,b,c,100*(b/a-1),100*(c/a-1)))" $((nodes * 8)) "$a" "$b" "$c"
done
