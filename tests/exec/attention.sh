#!/usr/bin/env bash
# plan.attention unfused (seed 000; kernels/cpu/attention_unfused.c): rectwin-exec runs the
# HSTU and FuXi attention as separate kernels over materialized causal scores on the CPU
# backend. For each model, one step matches fused attention within semantics.py's close bound
# (the passes keep the fused kernels' summation order; only the rounding of the split
# expressions differs), the byte check passes, and the next-item loss falls over 200 steps
# along the fused run's trajectory.
source "$(dirname "$0")/lib.sh"
SCEN=$SRC/tests/data/exec-tiny-hstu.yaml
py=$(dirname "$0")/semantics.py
for m in hstu fuxi; do
  model="--set model.file=exec-tiny-$m-model.yaml"
  # shellcheck disable=SC2086
  one_step $m-fused $model --set plan.attention=fused
  # shellcheck disable=SC2086
  one_step $m-unfused $model --set plan.attention=unfused
  # The item table uses Adam at sparse_lr 0.05 (see semantics.py for the adaptive bound).
  python3 "$py" "$TMP/$m-fused" "$TMP/$m-unfused" close --adaptive 0 --lr 0.05 ||
    fail "$m: unfused attention differs from fused"
  check_variants "$model --set plan.attention=unfused" \
    "$model --set plan.attention=unfused --set plan.name=fused"
  for a in fused unfused; do
    # shellcheck disable=SC2086
    run_exec "$TMP/train-$m-$a" --iterations 200 --warmup 0 $model --set plan.attention=$a || {
      cat "$TMP/train-$m-$a.log"
      fail "$m: training run $a"
    }
  done
  python3 - "$TMP/train-$m-fused/summary.json" "$TMP/train-$m-unfused/summary.json" $m <<'PY' ||
import json, sys
f, u = (json.load(open(p))["settings"] for p in sys.argv[1:3])
print("%s next-item loss: fused %.6g -> %.6g, unfused %.6g -> %.6g" %
      (sys.argv[3], f["loss_first"], f["loss_last"], u["loss_first"], u["loss_last"]))
assert abs(f["loss_first"] - u["loss_first"]) <= 1e-6 * abs(f["loss_first"]), "first losses differ"
assert u["loss_last"] < 0.9 * u["loss_first"], "the unfused loss did not fall"
# 200 steps compound rounding differences; the trajectories stay within 1% of each other.
assert abs(f["loss_last"] - u["loss_last"]) <= 1e-2 * abs(f["loss_last"]), "last losses differ"
PY
    fail "$m: unfused training"
done
echo "attention: passed"
