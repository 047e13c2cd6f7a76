#!/usr/bin/env bash
# plan.attention unfused (seed 000; kernels/cpu/attention_unfused.c): rectwin-exec runs the HSTU
# attention as separate kernels over materialized causal scores on the CPU backend. One step
# matches fused attention within semantics.py's close bound (the passes keep the fused kernel's
# summation order; only rounding of the split expressions differs), the byte check passes, the
# next-item loss falls over 200 steps, and FuXi (fused position and time channels only) is
# refused, located.
source "$(dirname "$0")/lib.sh"
SCEN=$SRC/tests/data/exec-tiny-hstu.yaml
py=$(dirname "$0")/semantics.py
one_step fused --set plan.attention=fused
one_step unfused --set plan.attention=unfused
# The item table uses Adam at sparse_lr 0.05 (see semantics.py for the adaptive bound).
python3 "$py" "$TMP/fused" "$TMP/unfused" close --adaptive 0 --lr 0.05 ||
  fail "unfused attention differs from fused"
check_variants "--set plan.attention=unfused" "--set plan.attention=unfused --set plan.name=fused"
for a in fused unfused; do
  run_exec "$TMP/train-$a" --iterations 200 --warmup 0 --set plan.attention=$a || {
    cat "$TMP/train-$a.log"
    fail "training run $a"
  }
done
python3 - "$TMP/train-fused/summary.json" "$TMP/train-unfused/summary.json" <<'PY' ||
import json, sys
f, u = (json.load(open(p))["settings"] for p in sys.argv[1:3])
print("next-item loss: fused %.6g -> %.6g, unfused %.6g -> %.6g" %
      (f["loss_first"], f["loss_last"], u["loss_first"], u["loss_last"]))
assert abs(f["loss_first"] - u["loss_first"]) <= 1e-6 * abs(f["loss_first"]), "first losses differ"
assert u["loss_last"] < 0.9 * u["loss_first"], "the unfused loss did not fall"
# 200 steps compound rounding differences; the trajectories stay within 1% of each other.
assert abs(f["loss_last"] - u["loss_last"]) <= 1e-2 * abs(f["loss_last"]), "last losses differ"
PY
  fail "unfused training"
if run_exec "$TMP/fuxi" --set model.file=exec-tiny-fuxi-model.yaml --set plan.attention=unfused; then
  fail "attention unfused ran a fuxi model"
fi
grep -q "key 'plan.attention': attention unfused is not executed by rectwin-exec for fuxi layer .*allowed: attention fused" "$TMP/fuxi.log" || {
  cat "$TMP/fuxi.log"
  fail "fuxi unfused: no located refusal"
}
echo "attention: passed"
