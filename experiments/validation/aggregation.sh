#!/usr/bin/env bash
# Flow aggregation error: the flat DLRM scenario simulated with one flow per device pair
# (simgrid.flows=pairs) and with flows aggregated onto links (flows=links), 16 to 128 GPUs,
# on the DGX H100 fabric as described and with 2:1 oversubscription and 4-node leaves (so
# that traffic crosses leaves and congests). Prints iteration times and the difference.
# usage: bash experiments/validation/aggregation.sh [path/to/rectwin]
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${1:-build/release/cli/rectwin}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
iter() { # nodes flows extra-sets...
  local n=$1 f=$2; shift 2
  "$R" sim experiments/dlrm-criteo.yaml --quiet --out "$out/r" --set topology.nodes="$n" \
    --set topology.simgrid.flows="$f" "$@"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["iteration_time_s"])' "$out/r/summary.json"
}
echo "gpus fabric pairs_ms links_ms diff_%"
for fabric in "as-described" "2:1,radix8"; do
  sets=()
  [ "$fabric" = "as-described" ] || sets=(--set topology.scale_out.oversubscription=2 --set topology.scale_out.radix=8)
  for n in 2 4 8 16; do
    p=$(iter "$n" pairs "${sets[@]}")
    l=$(iter "$n" links "${sets[@]}")
    python3 -c "import sys; p,l=float(sys.argv[1]),float(sys.argv[2]); print('%d %s %.4f %.4f %+.3f' % (int(sys.argv[3])*8, sys.argv[4], p*1e3, l*1e3, (l-p)/p*100))" "$p" "$l" "$n" "$fabric"
  done
done
