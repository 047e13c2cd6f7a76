#!/bin/bash
# TurboGR (seed 002) tables 4, 5 and 1 on Ascend 910B1 nodes (topologies/ascend-910b.yaml,
# no per-experiment factors), 32 NPUs, scenario experiments/papers/turbogr.yaml.
#   table 4: flat vs hsp (groups of 16 NPUs: a group of one node, 8, does not fit 64 GB with a
#            replica of the 32M-row table, see README.md): AlltoAll and total comm time;
#   table 5: hsp sync vs semi_async: exposed (unmasked) communication and its share;
#   table 1: MFU of the HSTU and FuXi variants (hsp + semi_async).
# usage: experiments/papers/turbogr.sh [RECTWIN]   (ENGINE=analytic by default)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/cli/rectwin}
ENGINE=${ENGINE:-analytic}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # sets... -> summary.json in $tmp/o
    local args=()
    for s in "$@"; do args+=(--set "$s"); done
    "$R" sim "$here/turbogr.yaml" --engine "$ENGINE" --out "$tmp/o" "${args[@]}" > /dev/null
}
field() { # python expression over j (summary.json)
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); p=j['phases']; print($1)" "$tmp/o/summary.json"
}
a2a='1e3*sum(p.get(k,0) for k in ("emb.fwd.ids_a2a","emb.fwd.out_a2a","emb.bwd.grad_a2a"))'

echo "table 4: HSP (hstu-large, 32 NPUs)        paper: a2a 498 -> 120 ms (-75.9%), comm 613 -> 373 ms (-39.1%)"
printf '  %-10s %10s %10s %10s\n' plan a2a_ms comm_ms iter_ms
run plan.name=flat
fa=$(field "$a2a"); fc=$(field "1e3*j['comm_time_s']"); fi=$(field "1e3*j['iteration_time_s']")
run plan.name=hsp plan.group_size=16
ha=$(field "$a2a"); hc=$(field "1e3*j['comm_time_s']"); hi=$(field "1e3*j['iteration_time_s']")
printf '  %-10s %10.2f %10.2f %10.2f\n' flat "$fa" "$fc" "$fi" hsp "$ha" "$hc" "$hi"
python3 -c "import sys; a,b,c,d=map(float,sys.argv[1:]); print('  a2a %+.1f%%, comm %+.1f%%' % (100*(b/a-1), 100*(d/c-1)))" "$fa" "$ha" "$fc" "$hc"

echo "table 5: semi-async (hsp)                 paper: unmasked sparse comm 459.29 -> 29.37 ms (24.12% -> 2.19%)"
printf '  %-10s %12s %8s\n' overlap exposed_ms share
for ov in sync semi_async; do
    run plan.name=hsp plan.group_size=16 plan.overlap=$ov
    printf '  %-10s %12.2f %7.2f%%\n' $ov "$(field "1e3*j['exposed_comm_s']")" "$(field "100*j['exposed_comm_s']/j['iteration_time_s']")"
done

echo "table 1: MFU (hsp + semi_async, 32 NPUs)"
printf '  %-12s %9s %9s %s\n' model paper_% mfu_% note
paper=(hstu-tiny:0.43 hstu-small:1.96 hstu-medium:8.00 hstu-large:24.74 hstu-long:34.08
       fuxi-tiny:0.88 fuxi-small:3.78 fuxi-medium:16.76 fuxi-large:39.34 fuxi-long:54.71)
for e in "${paper[@]}"; do
    m=${e%%:*}
    if run "model.file=../../models/$m.yaml" plan.name=hsp plan.group_size=16 plan.overlap=semi_async 2> "$tmp/err"; then
        printf '  %-12s %9s %9.2f\n' "$m" "${e##*:}" "$(field "100*j['mfu']")"
    else
        printf '  %-12s %9s %9s %s\n' "$m" "${e##*:}" - "$(head -1 "$tmp/err")"
    fi
done
