#!/usr/bin/env bash
# workload.sequence_layout padded (the baseline of seeds 000 and 002): both simulation engines
# charge the padded dense work and memory, rectwin-exec runs the padded layout with the
# conversions' bytes checked against the graph, and one step trains exactly as jagged does
# (within semantics.py's close bounds: the padded GEMMs see more rows, and a BLAS may block
# them another way; bit for bit for HSTU on the Intel Xeon guest's OpenBLAS, not on the AMD
# EPYC guest's) while the layers run on more tokens.
source "$(dirname "$0")/lib.sh"
SCEN=$SRC/tests/data/exec-tiny-hstu.yaml
[ -n "$RECTWIN" ] || fail "usage: seq_layout.sh EXEC SRC RECTWIN"
for engine in analytic simgrid; do
  for l in jagged padded; do
    "$RECTWIN" sim "$SCEN" --engine $engine --quiet --out "$TMP/$engine-$l" \
      --set workload.sequence_layout=$l || fail "$engine $l"
  done
  python3 - "$TMP/$engine-jagged/summary.json" "$TMP/$engine-padded/summary.json" $engine <<'PY' || fail "$engine: padding is not charged"
import json, sys
j, p = (json.load(open(f)) for f in sys.argv[1:3])
for k in ("dense.fwd", "dense.bwd"):
    assert p["phases"][k] > j["phases"][k], k
assert p["peak_hbm_bytes"] > j["peak_hbm_bytes"]
assert p["mfu"] < j["mfu"]
print("%s: dense fwd+bwd %.3g -> %.3g s, peak HBM %d -> %d B, MFU %.4f -> %.4f" % (
    sys.argv[3], j["phases"]["dense.fwd"] + j["phases"]["dense.bwd"],
    p["phases"]["dense.fwd"] + p["phases"]["dense.bwd"], j["peak_hbm_bytes"],
    p["peak_hbm_bytes"], j["mfu"], p["mfu"]))
PY
done
check_variants "--set workload.sequence_layout=padded" \
  "--set workload.sequence_layout=padded --set plan.overlap=pipeline --set plan.balance=token_realloc" \
  "--set workload.sequence_layout=padded --set model.file=exec-tiny-fuxi-model.yaml --set plan.name=hsp --set plan.group_size=2"
py=$(dirname "$0")/semantics.py
one_step hj
one_step hp --set workload.sequence_layout=padded
python3 "$py" "$TMP/hj" "$TMP/hp" close --adaptive 0 --lr 0.05 || fail "padded HSTU differs from jagged"
m=--set\ model.file=exec-tiny-mtgr-model.yaml
# shellcheck disable=SC2086
one_step mj $m
# shellcheck disable=SC2086
one_step mp $m --set workload.sequence_layout=padded
python3 "$py" "$TMP/mj" "$TMP/mp" close --adaptive 0,1,2,3 --lr 0.05 || fail "padded MTGR differs"
grep -q seq_pad "$TMP/hp.out/ops.csv" || fail "exec did not time the padding"
echo "seq_layout: passed"
