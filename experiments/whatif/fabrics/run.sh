#!/usr/bin/env bash
# Which network does each plan need? TorchRec DLRM on Criteo 1TB (experiments/dlrm-criteo.yaml,
# 2048 samples per GPU) on 32, 64 and 128 DGX H100 nodes (256, 512, 1024 GPUs), plans flat, hsp
# and sptt, SimGrid engine, on nine fabrics:
#   fat_tree 1:1 balanced   topologies/dgx-h100.yaml (radix 64: 32 nodes per leaf and rail)
#   fat_tree 1:1 hash       the same with scale_out.ecmp: hash
#   fat_tree 2:1 balanced   scale_out.oversubscription: 2
#   fat_tree 2:1 hash       both
#   rail_only               topologies/dgx-h100-rail-only.yaml (one 64-port switch per rail)
#   torus                   topologies/dgx-h100-torus.yaml, dims [8,4], [8,8], [16,8]
#   dragonfly               topologies/dgx-h100-dragonfly.yaml, 2, 4, 8 groups of 16 routers,
#                           global_links floor(128 / (groups - 1)) = 128, 42, 18
#   3tier_core_1:1          topologies/dgx-h100-3tier.yaml with pod_leaves: 1 (a pod per leaf and
#                           rail: 32 nodes), so every leaf crossing goes through the core
#   3tier_core_2:1          the same with core_oversubscription: 2
# Writes fabrics.csv (one row per point; a refused point has its reason) and
# experiments/measurements/cpu/fabrics/fabrics.log (the raw output, with the command and date).
# From anywhere: bash experiments/whatif/fabrics/run.sh [rectwin]    (~2 min on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=$(realpath "${1:-build/release/cli/rectwin}")
D=experiments/whatif/fabrics
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
log=experiments/measurements/cpu/fabrics/fabrics.log
{
    echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) $(nproc) cores: bash $D/run.sh $R"
} >"$log"
echo "fabric,gpus,plan,iteration_s,comm_s,exposed_comm_s,wall_s,refused" >$D/fabrics.csv
fabrics=("fat_tree_1:1_balanced" "fat_tree_1:1_hash" "fat_tree_2:1_balanced" "fat_tree_2:1_hash" "rail_only" "torus"
         "dragonfly" "3tier_core_1:1" "3tier_core_2:1")
for fabric in "${fabrics[@]}"; do
    case $fabric in
    rail_only) set_fabric=(--set topology.file=$PWD/topologies/dgx-h100-rail-only.yaml) ;;
    torus | dragonfly) set_fabric=() ;; # set per node count below
    fat_tree_1:1_balanced) set_fabric=() ;;
    fat_tree_1:1_hash) set_fabric=(--set topology.scale_out.ecmp=hash) ;;
    fat_tree_2:1_balanced) set_fabric=(--set topology.scale_out.oversubscription=2) ;;
    fat_tree_2:1_hash) set_fabric=(--set topology.scale_out.oversubscription=2
                                   --set topology.scale_out.ecmp=hash) ;;
    3tier_core_1:1) set_fabric=(--set topology.file=$PWD/topologies/dgx-h100-3tier.yaml
                                --set topology.scale_out.pod_leaves=1) ;;
    3tier_core_2:1) set_fabric=(--set topology.file=$PWD/topologies/dgx-h100-3tier.yaml
                                --set topology.scale_out.pod_leaves=1
                                --set topology.scale_out.core_oversubscription=2) ;;
    esac
    for nodes in 32 64 128; do
        # torus: 2D, dims with the node count (8 x 4, 8 x 8, 16 x 8 routers)
        [ $fabric = torus ] && set_fabric=(--set topology.file=$PWD/topologies/dgx-h100-torus.yaml
                                           --set "topology.scale_out.dims=[$((nodes < 128 ? 8 : 16)),$((nodes / (nodes < 128 ? 8 : 16)))]")
        # dragonfly: one node per router, 16 routers per group, 128 global channels per group
        [ $fabric = dragonfly ] && set_fabric=(--set topology.file=$PWD/topologies/dgx-h100-dragonfly.yaml
                                               --set topology.scale_out.groups=$((nodes / 16))
                                               --set topology.scale_out.global_links=$((128 / (nodes / 16 - 1))))
        for plan in flat hsp sptt; do
            set_plan=(--set plan.name=$plan)
            # sptt: one tower per hosts_per_tower nodes, at most 26 towers (one feature each)
            [ $plan = sptt ] && set_plan+=(--set plan.hosts_per_tower=$((nodes / 16)))
            echo "## $fabric nodes=$nodes plan=$plan: $R sim experiments/dlrm-criteo.yaml --engine simgrid --set topology.nodes=$nodes ${set_plan[*]} ${set_fabric[*]}" >>"$log"
            start=$(date +%s.%N)
            if "$R" sim experiments/dlrm-criteo.yaml --engine simgrid --out "$out/r" \
                --set topology.nodes=$nodes "${set_plan[@]}" "${set_fabric[@]}" >>"$log" 2>"$out/err"; then
                wall=$(echo "$(date +%s.%N) - $start" | bc)
                python3 - "$out/r/summary.json" "$fabric" $((8 * nodes)) $plan "$wall" >>$D/fabrics.csv <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]},{sys.argv[3]},{sys.argv[4]},{s['iteration_time_s']:.6g},"
      f"{s['comm_time_s']:.6g},{s['exposed_comm_s']:.6g},{float(sys.argv[5]):.2f},")
PY
            else
                cat "$out/err" >>"$log"
                why=$(tr ',\n' ';  ' <"$out/err" | sed 's/^.*key .scale_out.family.: //')
                echo "$fabric,$((8 * nodes)),$plan,,,,,\"$why\"" >>$D/fabrics.csv
            fi
            rm -rf "$out/r"
        done
    done
done
cat $D/fabrics.csv >>"$log"
