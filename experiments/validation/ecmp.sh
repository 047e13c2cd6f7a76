#!/usr/bin/env bash
# ECMP collisions (scale_out.ecmp, issue 10): flat DLRM (experiments/dlrm-criteo.yaml) on DGX H100
# nodes with 4-node leaves (scale_out.radix 8: 4 spine ports per leaf and rail) at 64 and 128
# GPUs, non-blocking and 2:1 oversubscribed. Prints the iteration time and the embedding output
# AlltoAll (emb.fwd.out_a2a) under the analytic engine (which assumes balanced ECMP) and SimGrid
# with balanced ECMP and with the flow hash.
# Usage: bash experiments/validation/ecmp.sh [path/to/rectwin]
set -euo pipefail
bin=${1:-build/release/cli/rectwin}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "gpus oversub analytic_ms balanced_ms hash_ms hash_vs_balanced_% a2a_analytic_us a2a_balanced_us a2a_hash_us flows"
for nodes in 8 16; do
    for os in 1 2; do
        set_args=(--set topology.nodes=$nodes --set topology.scale_out.radix=8
                  --set topology.scale_out.oversubscription=$os)
        "$bin" sim experiments/dlrm-criteo.yaml --quiet --engine analytic --out "$out/analytic" "${set_args[@]}"
        for e in balanced hash; do
            "$bin" sim experiments/dlrm-criteo.yaml --quiet --engine simgrid --out "$out/$e" \
                "${set_args[@]}" --set topology.scale_out.ecmp=$e
        done
        python3 - "$out" "$nodes" "$os" <<'PY'
import json, sys
out, nodes, os_ = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = {e: json.load(open(f"{out}/{e}/summary.json")) for e in ("analytic", "balanced", "hash")}
t = {e: r[e]["iteration_time_s"] * 1e3 for e in r}
a = {e: r[e]["phases"]["emb.fwd.out_a2a"] * 1e6 for e in r}
print(f"{8 * nodes} {os_} {t['analytic']:.4f} {t['balanced']:.4f} {t['hash']:.4f} "
      f"{100 * (t['hash'] - t['balanced']) / t['balanced']:+.2f} {a['analytic']:.1f} "
      f"{a['balanced']:.1f} {a['hash']:.1f} {r['hash']['settings']['flows']}")
PY
    done
done
