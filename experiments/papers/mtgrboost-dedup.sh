#!/bin/bash
# MTGRBoost (seed 000) figure 16: throughput of the four ID dedup strategies (w/o unique,
# comm unique = stage 1, lookup unique = stage 2, two-stage) on GRM 4G from 16 GPUs up,
# A100 nodes. Same topology file and efficiencies as every scenario.
# usage: experiments/papers/mtgrboost-dedup.sh [RECTWIN]   (ENGINE=analytic by default)
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/cli/rectwin}
ENGINE=${ENGINE:-analytic}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rate() { # nodes dedup -> samples/s
    "$R" sim "$here/mtgrboost-dedup.yaml" --engine "$ENGINE" --out "$tmp/o" \
        --set topology.nodes="$1" --set plan.dedup="$2" > /dev/null 2>&1
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['samples_per_s'])" "$tmp/o/summary.json"
}

echo "# paper: two-stage 1.1x-3.7x over none, growing with GPUs; comm unique beats lookup unique"
printf '%-5s %10s %10s %10s %10s %8s %8s %8s\n' gpus none comm lookup two_stage comm_x lookup_x two_x
for nodes in 2 4 8 16; do
    n=$(rate $nodes none); c=$(rate $nodes comm); l=$(rate $nodes lookup); t=$(rate $nodes two_stage)
    python3 -c "import sys; g=sys.argv[1]; n,c,l,t=map(float,sys.argv[2:]); print('%-5s %10.0f %10.0f %10.0f %10.0f %7.2fx %7.2fx %7.2fx' % (g,n,c,l,t,c/n,l/n,t/n))" \
        $((nodes * 8)) "$n" "$c" "$l" "$t"
done
