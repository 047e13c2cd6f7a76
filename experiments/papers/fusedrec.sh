#!/bin/bash
# FusedRec (seed 003) section 5: AlltoAll rounds and message sizes, fused vs per-feature
# (figure 7a, W_0 on 32 GPUs), and the throughput gain over TFRA and TFRA-fused (figure 6,
# 8 to 128 H20 GPUs). Same topology file and efficiencies as every scenario.
# usage: experiments/papers/fusedrec.sh [RECTWIN]   (ENGINE=analytic by default)
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/cli/rectwin}
ENGINE=${ENGINE:-analytic}
sc=$here/fusedrec.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sets() { for s in "$@"; do printf -- '--set\n%s\n' "$s"; done; }

traffic() { # sets... -> "rounds id_msg_bytes emb_msg_bytes" (per rank and AlltoAll call)
    mapfile -t a < <(sets "$@")
    "$R" plan "$sc" --json "${a[@]}" 2> /dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["graph"]["phases"]
i, o = p["emb.fwd.ids_a2a"], p["emb.fwd.out_a2a"]
print(i["ops"], i["bytes_per_rank"] / i["ops"], o["bytes_per_rank"] / o["ops"])'
}

iter() { # sets... -> iteration time (s)
    mapfile -t a < <(sets "$@")
    "$R" sim "$sc" --engine "$ENGINE" --out "$tmp/o" "${a[@]}" > /dev/null 2>&1
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['iteration_time_s'])" "$tmp/o/summary.json"
}

echo "# rounds and message sizes, 32 GPUs (paper figure 7a: 11.4x fewer rounds per dimension, 8.16x more entries per AlltoAll)"
read -r pr pi po <<< "$(traffic plan.grouping=per_feature)"
read -r fr fi fo <<< "$(traffic plan.grouping=spec_groups)"
printf '%-12s %8s %14s %14s\n' grouping rounds id_B/call emb_B/call
printf '%-12s %8d %14.0f %14.0f\n' per_feature "$pr" "$pi" "$po" spec_groups "$fr" "$fi" "$fo"
python3 -c "import sys; a=list(map(float,sys.argv[1:])); print('fewer rounds %.1fx, larger ID messages %.1fx, larger embedding messages %.1fx' % (a[0]/a[3], a[4]/a[1], a[5]/a[2]))" \
    "$pr" "$pi" "$po" "$fr" "$fi" "$fo"

echo
echo "# throughput gain (paper figure 6: +37.8% over TFRA, +16.7% over TFRA-fused, on average)"
printf '%-5s %11s %11s %11s %10s %10s\n' gpus tfra_ms tfra_fused_ms fusedrec_ms vs_tfra vs_tfra_fused
for nodes in 1 2 4 8 16; do
    t=$(iter topology.nodes=$nodes plan.grouping=per_feature)
    tf=$(iter topology.nodes=$nodes plan.variant=tfra_fused)
    f=$(iter topology.nodes=$nodes)
    python3 -c "import sys; t,tf,f=map(float,sys.argv[2:]); print('%-5s %11.3f %11.3f %11.3f %+9.1f%% %+9.1f%%' % (sys.argv[1], t*1e3, tf*1e3, f*1e3, (t/f-1)*100, (tf/f-1)*100))" \
        $((nodes * 8)) "$t" "$tf" "$f"
done
