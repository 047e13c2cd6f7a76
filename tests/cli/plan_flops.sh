#!/usr/bin/env bash
# `rectwin plan --json` on the shipped DLRM and DCN scenarios: the FLOPs per sample equal the
# layer arithmetic written out below, and train = forward + backward.
set -euo pipefail
rectwin=$1
src=$2
check() {
  "$rectwin" plan "$src/experiments/$1.yaml" --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
m = j['model']
fwd = $2
assert m['name'] == '$1', m['name']
assert m['flops_per_sample']['forward'] == fwd, (m['flops_per_sample']['forward'], fwd)
assert m['flops_per_sample']['backward'] == 2 * fwd
assert m['flops_per_sample']['train'] == 3 * fwd
assert sum(l['forward_flops'] for l in m['layers']) == fwd
assert m['params']['dense'] == $3, m['params']['dense']
assert m['params']['embedding'] == 177944275 * 128
ph = j['graph']['phases']
for p in ('emb.fwd.ids_a2a', 'emb.fwd.out_a2a', 'emb.bwd.grad_a2a', 'dense.allreduce'):
    assert ph[p]['bytes'] > 0, p
# The gradient AlltoAll mirrors the embedding AlltoAll byte for byte.
assert ph['emb.bwd.grad_a2a']['bytes'] == ph['emb.fwd.out_a2a']['bytes']
print('$1 ok: forward', fwd)
"
}
# DLRM: bottom 13-512-256-128; dot over 26 embeddings + 1 dense vector of 128 (2 n^2 d);
# top (128 + 27*26/2 = 479)-1024-1024-512-256-1.
bottom='2*(13*512 + 512*256 + 256*128)'
top479='2*(479*1024 + 1024*1024 + 1024*512 + 512*256 + 256*1)'
mlp_params='(13*512+512 + 512*256+256 + 256*128+128)'
check dlrm-criteo "$bottom + 2*27*27*128 + $top479" \
  "$mlp_params + (479*1024+1024 + 1024*1024+1024 + 1024*512+512 + 512*256+256 + 256*1+1)"
# DCN-v2: 3 low-rank (512) cross layers over 27*128 = 3456 inputs: 4*D*r each; top from 3456.
top3456='2*(3456*1024 + 1024*1024 + 1024*512 + 512*256 + 256*1)'
check dcn-criteo "$bottom + 3*4*3456*512 + $top3456" \
  "$mlp_params + 3*(2*3456*512 + 3456) + (3456*1024+1024 + 1024*1024+1024 + 1024*512+512 + 512*256+256 + 256*1+1)"
