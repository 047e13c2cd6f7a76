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
  "--set plan.name=sptt --set topology.nodes=2 --set topology.node.devices=2 --set plan.tower_module={\"kind\":\"linear\",\"compression\":2}"
  "--set plan.name=sptt --set topology.nodes=2 --set topology.node.devices=2 --set plan.tower_module={\"kind\":\"linear\",\"compression\":3} --set plan.sharding=column_wise --set plan.column_shards=2 --set plan.precision.comm=bf16"
  "--set model.file=exec-tiny-dcn-model.yaml"
  "--set model.file=exec-tiny-dcn-model.yaml --set plan.name=fused --set plan.sharding=row_wise"
  "--set plan.overlap=pipeline"
  "--set plan.overlap=semi_async --set plan.name=fused"
  "--set plan.overlap=pipeline --set plan.name=hsp --set plan.group_size=2 --set plan.sync=sparse"
  "--set plan.overlap=semi_async --set plan.name=sptt --set topology.nodes=2 --set topology.node.devices=2"
)
check_variants "${variants[@]}"
# Unpinned ranks time no core link: their round trip would time the scheduler.
run_exec "$TMP/unpinned" --iterations 1 --warmup 0 --cpu-bind none || {
  cat "$TMP/unpinned.log"
  fail "--cpu-bind none"
}
[ "$(json "$TMP/unpinned/summary.json" "j['settings']['local_rtt_us']")" = "[None, None]" ] ||
  fail "unpinned ranks timed a core link"
echo "plans: ${#variants[@]} passed, 0 failed; unpinned: no core link"
