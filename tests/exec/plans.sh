#!/usr/bin/env bash
# Every executable plan and sharding runs on 4 CPU ranks (DLRM's and DCN's shapes), and in the first iteration every
# kernel and collective of the embedding exchanges and the dense AllReduce moves exactly the
# bytes the op graph says (--check-bytes makes a difference fatal).
source "$(dirname "$0")/lib.sh"
variants=(
  "--set plan.sharding=table_wise"
  "--set plan.sharding=row_wise"
  "--set plan.sharding=column_wise --set plan.column_shards=2"
  "--set plan.dedup=comm"
  "--set plan.dedup=lookup --set plan.sharding=row_wise"
  "--set plan.dedup=two_stage --set plan.sharding=column_wise --set plan.column_shards=2"
  "--set plan.merge=true --set plan.dedup=two_stage"
  "--set plan.name=fused"
  "--set plan.name=fused --set plan.sharding=row_wise --set plan.grouping=all"
  "--set plan.name=fused --set plan.grouping=per_feature --set plan.dedup=none"
  "--set plan.name=fused --set plan.variant=tfra_fused --set plan.grouping=all"
  "--set plan.name=fused --set plan.merge=true"
  "--set plan.name=hsp --set plan.group_size=2 --set plan.sync=sparse"
  "--set plan.name=hsp --set plan.group_size=2"
  "--set plan.name=hsp --set plan.group_size=2 --set plan.sharding=column_wise --set plan.column_shards=2"
  "--set plan.name=hsp --set plan.group_size=1 --set plan.sync=sparse --set plan.sharding=row_wise"
  "--set workload.id_bytes=4 --set plan.sharding=row_wise"
  "--set plan.precision.comm=fp16"
  "--set plan.precision.comm=bf16 --set plan.sharding=row_wise --set plan.dedup=two_stage"
  "--set plan.precision.comm=fp16 --set plan.name=sptt --set topology.nodes=2 --set topology.node.devices=2"
  "--set plan.precision.embedding=fp16 --set plan.name=fused"
  "--set plan.name=sptt --set topology.nodes=2 --set topology.node.devices=2"
  "--set plan.name=sptt --set topology.nodes=2 --set topology.node.devices=2 --set plan.sharding=row_wise"
  "--set plan.name=sptt --set topology.nodes=2 --set topology.node.devices=2 --set plan.sharding=column_wise --set plan.column_shards=2 --set plan.towers.assignment=strided"
  "--set plan.name=sptt --set plan.hosts_per_tower=2"
  "--set model.file=exec-tiny-dcn-model.yaml"
  "--set model.file=exec-tiny-dcn-model.yaml --set plan.name=fused --set plan.sharding=row_wise"
  "--set plan.overlap=pipeline"
  "--set plan.overlap=semi_async --set plan.name=fused"
  "--set plan.overlap=pipeline --set plan.name=hsp --set plan.group_size=2 --set plan.sync=sparse"
  "--set plan.overlap=semi_async --set plan.name=sptt --set topology.nodes=2 --set topology.node.devices=2"
)
i=0
for v in "${variants[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  run_exec "$TMP/v$i" --iterations 3 --warmup 0 --check-bytes $v || {
    cat "$TMP/v$i.log"
    fail "variant '$v'"
  }
  [ "$(json "$TMP/v$i/summary.json" "j['engine']")" = exec ] || fail "engine of '$v'"
  checked=$(json "$TMP/v$i/summary.json" "j['settings']['bytes_checked_ops']")
  [ "$checked" -gt 0 ] || fail "no op byte-checked for '$v'"
  [ "$(json "$TMP/v$i/summary.json" "j['settings']['bytes_mismatched_ops']")" = 0 ] ||
    fail "bytes differ for '$v'"
  ranks=$(python3 -c "import csv,sys; print(len({r['rank'] for r in csv.DictReader(open(sys.argv[1]))}))" "$TMP/v$i/ops.csv")
  [ "$ranks" = 4 ] || fail "ops.csv of '$v' has $ranks ranks"
  echo "ok: $v ($checked op-rank byte checks)"
done
echo "plans: ${#variants[@]} passed, 0 failed"
