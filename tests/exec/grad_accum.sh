#!/usr/bin/env bash
# plan.grad_accum (MTGRBoost, seed 000): both simulation engines run k micro-batches and one
# update (the forward phases k times, the gradient AlltoAll and updates once, less activation
# memory), and rectwin-exec executes the same ops: k micro-batches of B/k samples train as one
# batch of B, every op moves the graph's bytes, and the loss falls. What exec cannot run yet it
# refuses by name before any rank trains.
source "$(dirname "$0")/lib.sh"
HSTU=$SRC/tests/data/exec-tiny-hstu.yaml
[ -n "$RECTWIN" ] || fail "usage: grad_accum.sh EXEC SRC RECTWIN"
for engine in analytic simgrid; do
  for k in 1 2; do
    "$RECTWIN" sim "$HSTU" --engine $engine --quiet --out "$TMP/$engine-$k" --set plan.grad_accum=$k ||
      fail "$engine grad_accum $k"
  done
  python3 - "$TMP/$engine-1" "$TMP/$engine-2" $engine <<'PY' || fail "$engine: accumulation is not in the graph"
import csv, json, sys
def load(d):
    ops = {}
    for r in csv.DictReader(open(d + "/ops.csv")):
        if r["rank"] == "0": ops[r["phase"]] = ops.get(r["phase"], 0) + 1
    return json.load(open(d + "/summary.json")), ops
(a, oa), (b, ob) = load(sys.argv[1]), load(sys.argv[2])
for ph in ("emb.fwd.lookup", "emb.fwd.out_a2a", "dense.fwd", "dense.bwd"):
    assert ob[ph] == 2 * oa[ph], ph
for ph in ("emb.bwd.grad_a2a", "emb.bwd.update", "dense.allreduce", "dense.update"):
    assert ob[ph] == oa[ph], ph
assert b["peak_hbm_bytes"] < a["peak_hbm_bytes"]
print("%s: iteration %.1f -> %.1f us, peak HBM %d -> %d B" % (sys.argv[3], 1e6 * a["iteration_time_s"],
      1e6 * b["iteration_time_s"], a["peak_hbm_bytes"], b["peak_hbm_bytes"]))
PY
done

# Exec: the DLRM-shaped tiny model with plain SGD for the dense and every sparse table, so no
# optimizer divides by the gradient's own magnitude (semantics.py --adaptive says why that
# would need a looser bound).
sed -e 's/dense_optimizer: adam/dense_optimizer: sgd/' -e 's/, optimizer: [a-z_]*}/}/' \
  "$SRC/tests/data/exec-tiny-model.yaml" >"$TMP/sgd-model.yaml"
sed -e 's#file: exec-tiny-model.yaml#file: sgd-model.yaml#' -e "s#\.\./\.\./topologies#$SRC/topologies#" \
  "$SRC/tests/data/exec-tiny.yaml" >"$TMP/sgd.yaml"
SCEN=$TMP/sgd.yaml

# steps NAME K [args...]: 3 steps with the byte check and --dump into $TMP/NAME; prints the
# op-rank byte checks and fails on any mismatch.
steps() {
  local name=$1 k=$2 checked
  shift 2
  mkdir -p "$TMP/$name"
  run_exec "$TMP/$name.out" --iterations 3 --warmup 0 --check-bytes --dump "$TMP/$name" \
    --set plan.grad_accum="$k" "$@" || {
    cat "$TMP/$name.out.log" >&2
    fail "$name"
  }
  checked=$(json "$TMP/$name.out/summary.json" "j['settings']['bytes_checked_ops']")
  [ "$(json "$TMP/$name.out/summary.json" "j['settings']['bytes_mismatched_ops']")" = 0 ] ||
    fail "$name: bytes differ from the graph"
  [ "$checked" -gt 0 ] || fail "$name: nothing byte-checked"
  echo "$checked"
}

# k micro-batches of B/k against one batch of B, after 3 steps. Each micro-batch's loss
# gradient is scaled by the global batch, so the step is the same sum of per-sample gradients;
# the sparse gradients reach the owner in the whole batch's ID order and are summed in the same
# order as with k = 1. Only the dense parameter gradients are summed in another order (per
# micro-batch, then over micro-batches), a reordered float sum: semantics.py close mode, 1e-6
# relative to the largest magnitude in the same row (its docstring). Iteration 0's pooled
# embeddings are bitwise the same (the tables have not moved yet), within 1e-6 the loss (the
# micro-batches' means weighted by their samples).
# Without stage-1 dedup the owner joins the micro-batches' ID messages into the whole batch's
# (flat, fused per feature, TFRA's separate count messages); with it (fused's default) the whole
# batch's distinct IDs are sent again.
variants=(
  "flat-table:--set plan.sharding=table_wise"
  "flat-row:--set plan.sharding=row_wise"
  "flat-row-dedup:--set plan.sharding=row_wise --set plan.dedup=two_stage"
  "fused:--set plan.name=fused"
  "fused-per-feature:--set plan.name=fused --set plan.grouping=per_feature --set plan.dedup=none"
  "tfra-fused:--set plan.name=fused --set plan.variant=tfra_fused --set plan.grouping=all --set plan.dedup=none"
)
for v in "${variants[@]}"; do
  name=${v%%:*}
  # shellcheck disable=SC2086
  c1=$(steps "$name-1" 1 ${v#*:})
  for k in 2 4; do
    # shellcheck disable=SC2086
    ck=$(steps "$name-$k" $k ${v#*:})
    # The micro-batches' forward ops are checked k times, the update's once.
    [ "$ck" -gt "$c1" ] || fail "$name: k=$k checked $ck op-ranks, k=1 $c1"
    python3 "$SRC/tests/exec/semantics.py" "$TMP/$name-1" "$TMP/$name-$k" close >"$TMP/cmp.log" || {
      cat "$TMP/cmp.log"
      fail "$name: k=$k does not train as k=1"
    }
    echo "ok: $name k=$k byte-exact ($ck op-rank checks, k=1: $c1), same parameters as k=1:"
    sed 's/^/    /' "$TMP/cmp.log"
  done
done

# Sequence tables (HSTU's jagged tokens, sampled softmax) are sliced by sample too: byte-exact.
SCEN=$HSTU
mkdir -p "$TMP/hstu"
run_exec "$TMP/hstu" --iterations 2 --warmup 0 --check-bytes --set plan.grad_accum=2 || {
  cat "$TMP/hstu.log"
  fail "hstu grad_accum 2"
}
[ "$(json "$TMP/hstu/summary.json" "j['settings']['bytes_mismatched_ops']")" = 0 ] ||
  fail "hstu: bytes differ from the graph"
echo "ok: hstu k=2 byte-exact"

# The loss falls on planted labels with k = 2 (training.sh's bound: the last of 60 steps below
# 0.8 of the first).
SCEN=$SRC/tests/data/exec-tiny.yaml
run_exec "$TMP/train" --iterations 60 --warmup 0 --set plan.grad_accum=2 || {
  cat "$TMP/train.log"
  fail "training with grad_accum 2"
}
first=$(json "$TMP/train/summary.json" "j['settings']['loss_first']")
last=$(json "$TMP/train/summary.json" "j['settings']['loss_last']")
echo "ok: k=2 loss $first -> $last"
python3 -c "import sys; f,l=map(float,sys.argv[1:]); sys.exit(0 if 0.3 < f < 1.2 and l < 0.8*f else 1)" \
  "$first" "$last" || fail "k=2 loss did not fall: $first -> $last"

# Refused by name, before any rank trains: plans other than flat and fused.
if run_exec "$TMP/x" --set plan.grad_accum=2 --set plan.name=hsp --set plan.group_size=2; then
  fail "rectwin-exec ran plan.grad_accum 2 with hsp"
fi
grep -q "plan.grad_accum 2 with plan hsp is not executed by rectwin-exec yet" "$TMP/x.log" ||
  { cat "$TMP/x.log"; fail "no reason given"; }
grep -q "allowed: plans flat and fused" "$TMP/x.log" || fail "no allowed set given"
[ ! -e "$TMP/x/summary.json" ] || fail "a refused run wrote results"
echo "grad_accum: passed"
