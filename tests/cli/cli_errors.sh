#!/usr/bin/env bash
# The CLI exits non-zero with a file:line:col message on bad input, writes no result files,
# and documents every command.
set -euo pipefail
rectwin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
grep -q 'collective' <<<"$("$rectwin" --help)"
for c in plan sim collective; do grep -q -- '--' <<<"$("$rectwin" $c --help)"; done
if "$rectwin" sim "$src/experiments/dlrm-criteo.yaml" --out "$out/r" --set topology.nodes=zero 2>"$out/err"; then
  echo "accepted a bad --set"; exit 1
fi
grep -q "^--set:1:.*key 'topology.nodes'" "$out/err" || { cat "$out/err"; exit 1; }
[ ! -e "$out/r" ] || { echo "a failed run left $out/r behind"; exit 1; }
printf 'name: x\nmodel: {file: %s/models/dlrm-criteo.yaml}\ntopology: {file: %s/topologies/dgx-h100.yaml, nodes: 1}\nplan: {name: flat, sharding: row_wise}\nworkload: {batch_per_rank: 8}\n' "$src" "$src" >"$out/bad.yaml"
if "$rectwin" plan "$out/bad.yaml" 2>"$out/err"; then echo "accepted more shards than rows"; exit 1; fi
grep -q "bad.yaml:4:.*more shards than rows" "$out/err" || { cat "$out/err"; exit 1; }
# The exec keys: the model's training section and the workload's warm-up are checked too.
if "$rectwin" plan "$src/experiments/exec-cpu.yaml" --set model.training.dense_optimizer=rmsprop 2>"$out/err"; then
  echo "accepted dense_optimizer rmsprop"; exit 1
fi
grep -q "^--set:1:.*dense_optimizer.*allowed: sgd, adam" "$out/err" || { cat "$out/err"; exit 1; }
if "$rectwin" plan "$src/experiments/exec-cpu.yaml" --set workload.warmup=-1 2>"$out/err"; then
  echo "accepted a negative warm-up"; exit 1
fi
grep -q "^--set:1:.*workload.warmup" "$out/err" || { cat "$out/err"; exit 1; }
# node.cores below the node's devices: the analytic engine cannot share cores over time.
if "$rectwin" sim "$src/experiments/exec-cpu.yaml" --engine analytic --out "$out/c" --set topology.nodes=1 \
  --set topology.node.devices=4 --set topology.node.cores=2 2>"$out/err"; then
  echo "the analytic engine accepted 2 cores for 4 devices"; exit 1
fi
grep -q "^--set:3:.*key 'topology.node.cores'.*allowed: --engine simgrid" "$out/err" || { cat "$out/err"; exit 1; }
if "$rectwin" frobnicate 2>/dev/null; then exit 1; fi
if "$rectwin" sim 2>/dev/null; then exit 1; fi
echo "cli errors ok"
