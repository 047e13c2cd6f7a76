#!/usr/bin/env bash
# Per-table precision (MTGRBoost, seed 000: hot tables fp32, cold fp16/bf16; model
# tests/data/exec-tiny-mixed-model.yaml with precision.embedding unset): both simulation
# engines charge the narrower tables less memory and lookup bytes, and rectwin-exec stores each
# table in its own dtype under every exchange variant, moving exactly the graph's bytes, and
# trains (the loss falls).
source "$(dirname "$0")/lib.sh"
[ -n "$RECTWIN" ] || fail "usage: table_precision.sh EXEC SRC RECTWIN"
mixed=(--set model.file=exec-tiny-mixed-model.yaml --set "plan.precision={dense: fp32, comm: fp32}")
fp32=(--set model.file=exec-tiny-mixed-model.yaml)
for engine in analytic simgrid; do
  "$RECTWIN" sim "$SCEN" --engine $engine --quiet --out "$TMP/$engine-fp32" "${fp32[@]}" || fail "$engine fp32"
  "$RECTWIN" sim "$SCEN" --engine $engine --quiet --out "$TMP/$engine-mixed" "${mixed[@]}" || fail "$engine mixed"
  python3 - "$TMP/$engine-fp32/summary.json" "$TMP/$engine-mixed/summary.json" $engine <<'PY' || fail "$engine: per-table precision is not charged"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert b["peak_hbm_bytes"] < a["peak_hbm_bytes"]
assert b["phases"]["emb.fwd.lookup"] <= a["phases"]["emb.fwd.lookup"]
print("%s: peak HBM %d -> %d B, lookup %.3g -> %.3g s" % (sys.argv[3], a["peak_hbm_bytes"],
      b["peak_hbm_bytes"], a["phases"]["emb.fwd.lookup"], b["phases"]["emb.fwd.lookup"]))
PY
done
run_exec "$TMP/mixed" --iterations 3 --warmup 0 --check-bytes "${mixed[@]}" || { cat "$TMP/mixed.log"; fail "mixed"; }
[ "$(json "$TMP/mixed/summary.json" "j['settings']['bytes_mismatched_ops']")" = 0 ] || fail "bytes differ"
for v in "--set plan.sharding=row_wise --set plan.dedup=two_stage" "--set plan.name=hsp --set plan.group_size=2" \
  "--set plan.name=fused" "--set plan.sharding=column_wise --set plan.column_shards=2"; do
  # shellcheck disable=SC2086
  run_exec "$TMP/v" --iterations 2 --warmup 0 --check-bytes "${mixed[@]}" $v || { cat "$TMP/v.log"; fail "$v"; }
  [ "$(json "$TMP/v/summary.json" "j['settings']['bytes_mismatched_ops']")" = 0 ] || fail "bytes differ: $v"
  echo "ok: mixed precision $v"
done
run_exec "$TMP/train" --iterations 60 --warmup 0 "${mixed[@]}" || fail "training run"
first=$(json "$TMP/train/summary.json" "j['settings']['loss_first']")
last=$(json "$TMP/train/summary.json" "j['settings']['loss_last']")
echo "loss with fp16/bf16 cold tables: $first -> $last"
python3 -c "import sys; f,l=map(float,sys.argv[1:]); sys.exit(0 if l < f else 1)" "$first" "$last" ||
  fail "the loss did not fall"
echo "table_precision: passed"
