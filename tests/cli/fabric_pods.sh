#!/usr/bin/env bash
# Three-tier fat-tree (scale_out.pod_leaves, topologies/dgx-h100-3tier.yaml: radix 64, 32 nodes
# per leaf and rail, pods of 4 leaves = 128 nodes). At 256 nodes each rail has 2 pods:
# `rectwin platform` writes a core host per rail and a pod uplink of 4 leaves x 32 ports x
# 400 Gb/s x 0.9 / (1 x 1) = 5.76e12 B/s with one switch latency (600 ns), and a leaf of pod 1
# reaches the core over its uplink and its pod's uplink; at 128 nodes (one pod) no route reaches
# the core. Contradicting values are refused at their line: levels other than 2, pod_leaves above
# radix/2, ecmp: hash, core_oversubscription without pods or below 1, more pods than radix.
set -euo pipefail
rectwin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/lib/refuse_platform.sh"
t="$src/topologies/dgx-h100-3tier.yaml"
"$rectwin" platform "$t" --nodes 256 -o "$out/a.xml" >/dev/null
grep -q '<host id="core-7"' "$out/a.xml" || { echo "pods: no core host"; exit 1; }
grep -q '<link id="pod-uplink-7-1" bandwidth="5760000000000Bps" latency="6.0000000000000008e-07s"' "$out/a.xml" || { echo "pods: no pod uplink"; exit 1; }
grep -q '<route src="leaf-7-4" dst="core-7" symmetrical="NO"><link_ctn id="uplink-7-4" direction="UP"/><link_ctn id="pod-uplink-7-1" direction="UP"/></route>' "$out/a.xml" || { echo "pods: no leaf-to-core route"; exit 1; }
grep -q '<route src="core-7" dst="leaf-7-0" symmetrical="NO"><link_ctn id="pod-uplink-7-0" direction="DOWN"/><link_ctn id="uplink-7-0" direction="DOWN"/></route>' "$out/a.xml" || { echo "pods: no core-to-leaf route"; exit 1; }
if grep -q '<route src="leaf-7-0" dst="leaf-7-4"' "$out/a.xml"; then echo "pods: a leaf pair across pods"; exit 1; fi
grep -q '<route src="leaf-7-0" dst="leaf-7-3"' "$out/a.xml" || { echo "pods: no leaf pair in a pod"; exit 1; }
"$rectwin" platform "$t" --nodes 128 -o "$out/b.xml" >/dev/null
if grep -q 'dst="core-' "$out/b.xml"; then echo "one pod: a route to the core"; exit 1; fi
# refused values, each located at its line
sed -e 's/^  levels: 2 .*/  levels: 1/' "$t" >"$out/l.yaml"
refuse_platform levels "$out/l.yaml" 256 '^  pod_leaves:' 'levels must be 2 (got 1'
sed -e 's/^  pod_leaves: 4 .*/  pod_leaves: 33/' "$t" >"$out/p.yaml"
refuse_platform pod_leaves "$out/p.yaml" 256 '^  pod_leaves:' 'allowed: 1 <= pod_leaves <= 32'
sed -e 's/^  radix: 64 .*/  radix: 64\n  ecmp: hash/' "$t" >"$out/h.yaml"
refuse_platform hash "$out/h.yaml" 256 '^  pod_leaves:' 'ecmp: hash is not modeled with pods'
sed -e 's/^  oversubscription: 1.0 .*/  oversubscription: 1.0\n  core_oversubscription: 2/' "$src/topologies/dgx-h100.yaml" >"$out/c.yaml"
refuse_platform core_without_pods "$out/c.yaml" 256 '^  core_oversubscription:' 'read only with pod_leaves'
sed -e 's/^  core_oversubscription: 1.0 .*/  core_oversubscription: 0.5/' "$t" >"$out/c2.yaml"
refuse_platform core_below_1 "$out/c2.yaml" 256 '^  core_oversubscription:' 'allowed: \[1, 64\]'
cp "$t" "$out/n.yaml"
refuse_platform too_many_pods "$out/n.yaml" 8200 '^  pod_leaves:' '65 pods, more than a core switch of radix 64'
# summary.json echoes the pod settings in both engines
for e in analytic simgrid; do
  "$rectwin" sim "$src/experiments/dlrm-criteo.yaml" --quiet --engine $e --out "$out/s$e" \
    --set topology.file="$t" --set topology.nodes=64 --set topology.scale_out.pod_leaves=1 \
    --set topology.scale_out.core_oversubscription=2
  python3 - "$out/s$e/summary.json" "$e" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["settings"]
p = s["platform"] if sys.argv[2] == "simgrid" else s
assert p["family"] == "fat_tree" and p["pod_leaves"] == 1 and p["core_oversubscription"] == 2, p
PY
done
