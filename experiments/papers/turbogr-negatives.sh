#!/bin/bash
# TurboGR (seed 002) table 7: per-NPU HBM of FuXi-large with 32, 64 and 128 negatives,
# baseline and with negative-embedding offload (segments of 100 tokens, double-buffered), on
# the scenario experiments/papers/turbogr-negatives.yaml; then the two other section 4.3
# strategies at 128 logits per token: fp16 negative embeddings, and 64 negatives with logit
# sharing k = 2 (paper table 8's "64->128").
# usage: experiments/papers/turbogr-negatives.sh [RECTWIN]   (ENGINE=analytic by default)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/cli/rectwin}
ENGINE=${ENGINE:-analytic}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # sets... -> summary.json in $tmp/o
    local args=()
    for s in "$@"; do args+=(--set "$s"); done
    "$R" sim "$here/turbogr-negatives.yaml" --engine "$ENGINE" --out "$tmp/o" "${args[@]}" > /dev/null 2>&1
}
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$tmp/o/summary.json"; }

echo "table 7: FuXi-large HBM per NPU (GB = 1e9 B; ratio of the 64 GB device)"
printf '  %-4s %-10s %9s %8s %11s %9s %9s\n' neg strategy HBM_GB ratio paper_GB paper_% iter_ms
declare -A paper=([32,baseline]="22.21 34.70" [32,offload]="17.42 27.22"
                  [64,baseline]="31.64 49.44" [64,offload]="23.44 36.63"
                  [128,baseline]="50.39 78.73" [128,offload]="34.27 53.55")
for n in 32 64 128; do
    for st in baseline offload; do
        off=false; [ $st = offload ] && off=true
        run model.negatives=$n "plan.negatives={offload: $off, segment: 100}"
        read -r pg pr <<< "${paper[$n,$st]}"
        printf '  %-4s %-10s %9.2f %7.2f%% %11s %8s%% %9.2f\n' $n $st \
            "$(field "j['peak_hbm_bytes']/1e9")" "$(field "100*j['peak_hbm_bytes']/j['hbm_capacity_bytes']")" \
            "$pg" "$pr" "$(field "1e3*j['iteration_time_s']")"
    done
done
echo "section 4.3.2-4.3.3 at 128 logits per token"
printf '  %-32s %9s %9s\n' strategy HBM_GB iter_ms
for v in "128 {dtype: dense}" "128 {dtype: fp16}" "64 {expansion: 2}" "64 {dtype: fp16, expansion: 2, offload: true}"; do
    read -r n cfg <<< "$v"
    run model.negatives=$n "plan.negatives=$cfg"
    printf '  %-32s %9.2f %9.2f\n' "$n neg $cfg" "$(field "j['peak_hbm_bytes']/1e9")" "$(field "1e3*j['iteration_time_s']")"
done
