#!/usr/bin/env bash
# Fabric keys of scale_out. ecmp: `hash` makes `rectwin platform` write one uplink per spine port and the spines
# as hosts (DGX H100, radix 8: 4 nodes and 4 spine ports per leaf and rail, 8 nodes = 2 leaves),
# `balanced` (the default) the one aggregated uplink; a bad value is refused with its location
# and the allowed values; summary.json echoes the setting for both engines. family: rail_only
# (topologies/dgx-h100-rail-only.yaml) writes no uplink and no spine, and refuses more nodes than
# one rail switch serves (radix 64) at the `family:` line. family: torus and dragonfly at the end.
set -euo pipefail
rectwin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/lib/refuse_platform.sh"
sed -e 's/^  radix: 64 .*/  radix: 8/' "$src/topologies/dgx-h100.yaml" >"$out/b.yaml"
sed -e 's/^  radix: 8$/  radix: 8\n  ecmp: hash/' "$out/b.yaml" >"$out/h.yaml"
grep -q '^  ecmp: hash' "$out/h.yaml" || { echo "test setup: no ecmp line"; exit 1; }
"$rectwin" platform "$out/b.yaml" --nodes 8 -o "$out/b.xml" >/dev/null
"$rectwin" platform "$out/h.yaml" --nodes 8 -o "$out/h.xml" >/dev/null
grep -q '<link id="uplink-0-1"' "$out/b.xml" || { echo "balanced: no aggregated uplink"; exit 1; }
if grep -q 'spine-' "$out/b.xml"; then echo "balanced: spines written"; exit 1; fi
# 4 ports x 400 Gb/s x 0.9 / 4 ports -> each port 45e9 B/s
grep -q '<link id="uplink-7-1-3" bandwidth="45000000000Bps"' "$out/h.xml" || { echo "hash: no port link"; exit 1; }
grep -q '<host id="spine-7-3"' "$out/h.xml" || { echo "hash: no spine host"; exit 1; }
grep -q '<route src="leaf-7-1" dst="spine-7-3"' "$out/h.xml" || { echo "hash: no leaf-to-spine route"; exit 1; }
sed -e 's/ecmp: hash/ecmp: random/' "$out/h.yaml" >"$out/x.yaml"
refuse_platform "ecmp: random" "$out/x.yaml" 8 'ecmp: random' 'balanced.*hash'
for e in analytic simgrid; do
  "$rectwin" sim "$src/experiments/dlrm-criteo.yaml" --quiet --engine $e --out "$out/$e" \
    --set topology.file="$out/h.yaml" --set topology.nodes=8
  python3 - "$out/$e/summary.json" "$e" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["settings"]
got = s["platform"]["ecmp"] if sys.argv[2] == "simgrid" else s["ecmp"]
assert got.startswith("hash") if sys.argv[2] == "simgrid" else got.startswith("balanced assumed"), got
PY
done
# summary.json names the family in both engines; the analytic engine says what it leaves out
for e in analytic simgrid; do
  "$rectwin" sim "$src/experiments/dlrm-criteo.yaml" --quiet --engine $e --out "$out/t$e" \
    --set topology.file="$src/topologies/dgx-h100-torus.yaml" --set topology.nodes=16
  python3 - "$out/t$e/summary.json" "$e" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["settings"]
got = s["platform"]["family"] if sys.argv[2] == "simgrid" else s["family"]
assert got == "torus", got
assert sys.argv[2] == "simgrid" or "simgrid engine only" in s["family_model"], s
PY
done
"$rectwin" platform "$src/topologies/dgx-h100-rail-only.yaml" --nodes 64 -o "$out/r.xml" >/dev/null
if grep -q 'uplink\|spine-' "$out/r.xml"; then echo "rail_only: uplinks written"; exit 1; fi
grep -q '<host id="leaf-7-0"' "$out/r.xml" || { echo "rail_only: no switch of rail 7"; exit 1; }
refuse_platform "rail_only, 65 nodes on radix 64" "$src/topologies/dgx-h100-rail-only.yaml" 65 \
  '^  family: rail_only' '65 nodes exceed the 64 one rail switch serves'
# family: torus (topologies/dgx-h100-torus.yaml, dims [4, 4] = 16 nodes): a torus link carries
# 8 NICs x 400 Gb/s x 0.9 / (2 x 2 dims) = 90e9 B/s per direction; node 0 (0, 0) -> node 5
# (1, 1) goes +x then +y (dimension order); dims whose product is not the node count, and a
# dims of one entry, are refused at the `dims:` line.
t="$src/topologies/dgx-h100-torus.yaml"
"$rectwin" platform "$t" --nodes 16 -o "$out/t.xml" >/dev/null
grep -q '<link id="torus-15-1" bandwidth="90000000000Bps" latency="6.0000000000000008e-07s"' "$out/t.xml" || { echo "torus: no link"; exit 1; }
if grep -q 'uplink\|spine-' "$out/t.xml"; then echo "torus: uplinks written"; exit 1; fi
grep -q '<route src="gpu-0" dst="gpu-40" symmetrical="NO"><link_ctn id="nic-0-0" direction="UP"/><link_ctn id="torus-0-0" direction="UP"/><link_ctn id="torus-1-1" direction="UP"/><link_ctn id="nic-5-0" direction="DOWN"/></route>' "$out/t.xml" || { echo "torus: not dimension order"; exit 1; }
refuse_platform "torus, 16 routers for 8 nodes" "$t" 8 '^  dims: \[4, 4\]' \
  'torus dims multiply to 16 routers but the cluster has 8 nodes'
sed -e 's/^  dims: \[4, 4\]/  dims: [16]/' "$t" >"$out/t1.yaml"
refuse_platform "torus dims: [16]" "$out/t1.yaml" 16 '^  dims: \[16\]' 'dims has 1 entries; allowed: 2 or 3'
# family: dragonfly (topologies/dgx-h100-dragonfly.yaml: 2 groups of 16 routers, 128 global
# channels per pair: 8 per router, 32 nodes): a local link carries one NIC's 400 Gb/s x 0.9 =
# 45e9 B/s, a global link its 8 channels, 360e9 B/s; node 1 (group 0, router 1) -> node 30
# (group 1, router 14) takes router 1's own global link, then a local hop in group 1; a node
# count that is not a multiple of 32 routers is refused at the `groups:` line.
d="$src/topologies/dgx-h100-dragonfly.yaml"
"$rectwin" platform "$d" --nodes 32 --pair-routes yes -o "$out/d.xml" >/dev/null
grep -q '<link id="local-1-3-15" bandwidth="45000000000Bps"' "$out/d.xml" || { echo "dragonfly: no local link"; exit 1; }
grep -q '<link id="global-0-1-15" bandwidth="360000000000Bps"' "$out/d.xml" || { echo "dragonfly: no global link"; exit 1; }
grep -q '<route src="gpu-8" dst="gpu-240" symmetrical="NO"><link_ctn id="nic-1-0" direction="UP"/><link_ctn id="global-0-1-1" direction="UP"/><link_ctn id="local-1-1-14" direction="UP"/><link_ctn id="nic-30-0" direction="DOWN"/></route>' "$out/d.xml" || { echo "dragonfly: not minimal"; exit 1; }
refuse_platform "dragonfly, 40 nodes on 32 routers" "$d" 40 '^  groups: 2' \
  '40 nodes do not fill 2 groups x 16 routers evenly'
