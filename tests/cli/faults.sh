#!/usr/bin/env bash
# faults: `rectwin platform` writes the faulted platform (the degraded NIC at half bandwidth,
# one comment per fault), refuses an entry naming no link with its location and the allowed
# range, and a half-speed NIC on a 2-node AlltoAll doubles its time in both engines (even
# 256 MiB AlltoAll over 16 GPUs: each NIC moves 8 x 16 MiB per direction at 45 GB/s healthy).
set -euo pipefail
rectwin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/lib/refuse_platform.sh"
cp "$src/topologies/dgx-h100.yaml" "$out/t.yaml"
printf 'faults:\n  - {link: nic, node: 1, nic: 3, bandwidth: 0.5}\n' >>"$out/t.yaml"
"$rectwin" platform "$out/t.yaml" --nodes 2 -o "$out/p.xml" >/dev/null
grep -q '<link id="nic-1-3" bandwidth="22500000000Bps"' "$out/p.xml" || { echo "nic-1-3 not halved"; exit 1; }
grep -q '<link id="nic-1-2" bandwidth="45000000000Bps"' "$out/p.xml" || { echo "nic-1-2 changed"; exit 1; }
grep -q '<!-- fault: nic 1 3 keeps 0.5' "$out/p.xml" || { echo "no fault comment"; exit 1; }
refuse_platform "node 1 of a 1-node cluster" "$out/t.yaml" 1 'link: nic, node: 1' \
  'nic node 1 names no link of this cluster; allowed: node 0..0'
for e in analytic simgrid; do
  h=$("$rectwin" collective --topology "$src/topologies/dgx-h100.yaml" --nodes 2 --op alltoall --bytes 256MiB --engine $e --json)
  f=$("$rectwin" collective --topology "$out/t.yaml" --nodes 2 --op alltoall --bytes 256MiB --engine $e --json)
  python3 - "$h" "$f" "$e" <<'PY'
import json, sys
h, f = (json.loads(a)["time_s"] for a in sys.argv[1:3])
want = 8 * 268435456 / 16 / 45e9  # the healthy NIC's bytes per direction / bandwidth
assert abs(h - want) < 20e-6, (sys.argv[3], h, want)
assert abs(f - 2 * want) < 20e-6, (sys.argv[3], f, 2 * want)
PY
done
