#!/usr/bin/env bash
# Predicted busbw against published nccl-tests size sweeps (experiments/validation/nccl-tests.md):
# every row runs `rectwin collective ... --json` with both engines on the topology as committed
# (no per-row factor) and prints one markdown table row: system, op, size, published busbw,
# source, analytic and simgrid busbw (algorithm, protocol), error of each against the published,
# and the analytic figure of two variants of the file: without NCCL's channel, tree and NVLS
# tuning (every call on all of NCCL's channels, trees at the ring's protocol factors, NVLS at
# efficiency.intra) and without
# `protocols:` (the scalar model).
# usage: bash experiments/validation/nccl-tests.sh [path/to/rectwin]
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${1:-build/release/cli/rectwin}
H100=topologies/dgx-h100.yaml
# The same file without its `collective.protocols` section (and p2p_channels): the scalar
# alpha-beta model with base_latency, for the "scalar" column.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -e '/^  protocols:/,/^  p2p_channels:/d' -e '/^  channels:/d' -e '/^  nvls: {/d' "$H100" \
  >"$tmp/dgx-h100-scalar.yaml"
# The same file without NCCL's channel, tree and NVLS tuning (`channels:`, `nvls:` and the
# protocols' `threads`, `thread_threshold`, `tree_bandwidth`, `tree_correction`): every ring
# and tree call on all channels and at the protocol's ring factor, NVLS at efficiency.intra,
# for the "no channel/tree/NVLS tuning" column (the model before that tuning).
python3 - "$H100" >"$tmp/dgx-h100-notuning.yaml" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r",\s*threads: \d+, thread_threshold: \d+\}", "}", s)
s = re.sub(r",\s*tree_bandwidth: [0-9.]+", "", s)
s = re.sub(r",\s*tree_correction: \[[^\]]*\]", "", s)
print(re.sub(r"(?m)^  (channels:|nvls: \{).*\n", "", s), end="")
PY

# label|topology|nodes|gpus per node (0: all)|op|algo|nccl-tests size (B)|published busbw (GB/s)|source
# Published figures are the out-of-place busbw column of the posted nccl-tests output.
published() {
  cat <<'ROWS'
H100 HGX, 2 nodes x 8, 8x CX-7 400G IB|H100|2|0|allreduce|auto|32768|1.80|[1]
H100 HGX, 2 nodes x 8, 8x CX-7 400G IB|H100|2|0|allreduce|auto|262144|10.10|[1]
H100 HGX, 2 nodes x 8, 8x CX-7 400G IB|H100|2|0|allreduce|auto|1048576|27.33|[1]
H100 HGX, 2 nodes x 8, 8x CX-7 400G IB|H100|2|0|allreduce|auto|4194304|83.33|[1]
H100 HGX, 2 nodes x 8, 8x CX-7 400G IB|H100|2|0|allreduce|auto|33554432|234.81|[1]
H100 HGX, 2 nodes x 8, 8x CX-7 400G IB|H100|2|0|allreduce|auto|268435456|392.35|[1]
H100 HGX, 2 nodes x 8, 8x CX-7 400G IB|H100|2|0|allreduce|auto|1073741824|448.90|[1]
H100 HGX, 2 nodes x 8, 8x CX-7 400G IB|H100|2|0|allreduce|auto|8589934592|468.46|[1]
H100, 1 node x 8 (NVLS)|H100|1|0|allreduce|auto|134217728|382.99|[2]
H100, 1 node x 8 (NVLS)|H100|1|0|allreduce|auto|268435456|412.35|[2]
H100, 1 node x 8 (NVLS)|H100|1|0|allreduce|auto|536870912|431.81|[2]
H100, 1 node x 8 (NVLS)|H100|1|0|allreduce|auto|1073741824|465.25|[2]
H100, 1 node x 8 (NVLS)|H100|1|0|allreduce|auto|2147483648|468.57|[2]
H100, 1 node x 8 (NVLS)|H100|1|0|allreduce|auto|4294967296|473.60|[2]
H200 (A3 Ultra), 2 nodes x 8, 8x CX-7 RoCE|H100|2|0|allgather|auto|32768|0.53|[4]
H200 (A3 Ultra), 2 nodes x 8, 8x CX-7 RoCE|H100|2|0|allgather|auto|262144|3.85|[4]
H200 (A3 Ultra), 2 nodes x 8, 8x CX-7 RoCE|H100|2|0|allgather|auto|1048576|12.33|[4]
H200 (A3 Ultra), 2 nodes x 8, 8x CX-7 RoCE|H100|2|0|allgather|auto|4194304|47.26|[4]
H200 (A3 Ultra), 2 nodes x 8, 8x CX-7 RoCE|H100|2|0|allgather|auto|33554432|170.80|[4]
H200 (A3 Ultra), 2 nodes x 8, 8x CX-7 RoCE|H100|2|0|allgather|auto|268435456|286.80|[4]
H200 (A3 Ultra), 2 nodes x 8, 8x CX-7 RoCE|H100|2|0|allgather|auto|1073741824|324.13|[4]
H200 (A3 Ultra), 2 nodes x 8, 8x CX-7 RoCE|H100|2|0|allgather|auto|8589934592|328.85|[4]
H100, 1 node x 4|H100|1|4|alltoall|auto|524288000|334.90|[3]
ROWS
}

predict() { # topology nodes gpn op algo bytes engine -> "busbw algo proto"
  local gpn=()
  [ "$3" != 0 ] && gpn=(--gpus-per-node "$3")
  "$R" collective --topology "$1" --nodes "$2" "${gpn[@]}" --op "$4" --algo "$5" --bytes "$6" \
    --engine "$7" --json |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.2f %s" % (d["busbw_GBps"], d["algo"]))'
}

echo "| system | op | size (B) | published busbw (GB/s) | source | analytic | simgrid | error analytic | error simgrid | no channel/tree/NVLS tuning, analytic | scalar model (no protocols), analytic |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
published | while IFS='|' read -r label topo nodes gpn op algo bytes pub src; do
  scalar=$topo nochan=$topo
  [ "$topo" = H100 ] && topo=$H100 scalar=$tmp/dgx-h100-scalar.yaml nochan=$tmp/dgx-h100-notuning.yaml
  read -r c _ <<<"$(predict "$scalar" "$nodes" "$gpn" "$op" "$algo" "$bytes" analytic)"
  read -r nc _ <<<"$(predict "$nochan" "$nodes" "$gpn" "$op" "$algo" "$bytes" analytic)"
  read -r a aalgo <<<"$(predict "$topo" "$nodes" "$gpn" "$op" "$algo" "$bytes" analytic)"
  # The simgrid platform gives every NIC a device: a node run on fewer GPUs than its NICs has
  # no platform, so that row has the analytic figure only.
  s=-
  [ "$gpn" = 0 ] && read -r s _ <<<"$(predict "$topo" "$nodes" "$gpn" "$op" "$algo" "$bytes" simgrid)"
  python3 - "$label" "$op" "$bytes" "$pub" "$src" "$a" "$aalgo" "$s" "$nc" "$c" <<'PY'
import sys
label, op, size, pub, src, a, algo, s, nc, c = sys.argv[1:]
pub, a = float(pub), float(a)
err = lambda x: "%+.0f %%" % (100 * (x - pub) / pub)
sg, esg = (f"{float(s):.2f}", err(float(s))) if s != "-" else ("n/a", "n/a")
print(f"| {label} | {op} | {int(size)} | {pub:.2f} | {src} | {a:.2f} ({algo}) | {sg} | {err(a)} | {esg} "
      f"| {float(nc):.2f} ({err(float(nc))}) | {float(c):.2f} ({err(float(c))}) |")
PY
done
