#!/usr/bin/env bash
# The jagged sequence (GR) path: HSTU and FuXi models with sampled softmax and an MTGR model
# (four sequence tables, MMoE head, BCE) run under every plan that
# supports sequence features, with sequence balancing and overlap, moving exactly the graph's
# bytes; plans agree on one step; the next-item loss falls on planted sequences.
source "$(dirname "$0")/lib.sh"
SCEN=$SRC/tests/data/exec-tiny-hstu.yaml
variants=(
  ""
  "--set plan.sharding=row_wise"
  "--set plan.name=hsp --set plan.group_size=2"
  "--set plan.name=fused --set plan.sharding=row_wise"
  "--set plan.dedup=two_stage --set plan.sharding=column_wise --set plan.column_shards=2"
  "--set plan.balance=dynamic_batching"
  "--set plan.balance=token_realloc --set plan.name=hsp --set plan.group_size=2 --set plan.sync=sparse"
  "--set plan.balance=token_realloc --set plan.overlap=semi_async"
  "--set plan.overlap=pipeline --set plan.dedup=comm"
  "--set model.file=exec-tiny-fuxi-model.yaml --set plan.name=hsp --set plan.group_size=2 --set plan.balance=token_realloc"
  "--set model.file=exec-tiny-mtgr-model.yaml --set plan.name=fused --set plan.merge=true --set plan.balance=dynamic_batching"
  "--set model.file=exec-tiny-mtgr-model.yaml --set plan.sharding=row_wise --set plan.dedup=two_stage --set plan.overlap=pipeline"
)
check_variants "${variants[@]}"
one_step flat
one_step row --set plan.sharding=row_wise
one_step hsp --set plan.name=hsp --set plan.group_size=2
one_step fused --set plan.name=fused
py=$(dirname "$0")/semantics.py
# The item table uses Adam at sparse_lr 0.05 (see semantics.py for the adaptive bound).
for v in row hsp fused; do
  python3 "$py" "$TMP/flat" "$TMP/$v" close --adaptive 0 --lr 0.05 || fail "$v differs from flat"
done
# Half of the planted tokens follow their predecessor (exec/batch.h), so the loss can at most
# roughly halve; 200 steps of this toy model take it below 0.9 of the first batch's.
run_exec "$TMP/train" --iterations 200 --warmup 0 || fail "training run"
first=$(json "$TMP/train/summary.json" "j['settings']['loss_first']")
last=$(json "$TMP/train/summary.json" "j['settings']['loss_last']")
echo "next-item loss $first -> $last"
python3 -c "import sys; f,l=map(float,sys.argv[1:]); sys.exit(0 if l < 0.9*f else 1)" "$first" "$last" ||
  fail "the next-item loss did not fall: $first -> $last"
echo "gr: $((${#variants[@]} + 4)) passed, 0 failed"
