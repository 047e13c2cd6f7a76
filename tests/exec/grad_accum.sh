#!/usr/bin/env bash
# plan.grad_accum (MTGRBoost, seed 000): both simulation engines run k micro-batches and one
# update (the forward phases k times, the gradient AlltoAll and updates once, less activation
# memory); rectwin-exec does not execute accumulation yet and must refuse it by name, before
# any rank trains, rather than train one batch per step under the key.
source "$(dirname "$0")/lib.sh"
SCEN=$SRC/tests/data/exec-tiny-hstu.yaml
[ -n "$RECTWIN" ] || fail "usage: grad_accum.sh EXEC SRC RECTWIN"
for engine in analytic simgrid; do
  for k in 1 2; do
    "$RECTWIN" sim "$SCEN" --engine $engine --quiet --out "$TMP/$engine-$k" --set plan.grad_accum=$k ||
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
if "${MPIRUN[@]}" "$EXEC" "$SCEN" --quiet --out "$TMP/x" --set plan.grad_accum=2 >"$TMP/x.log" 2>&1; then
  fail "rectwin-exec ran plan.grad_accum 2"
fi
grep -q "grad_accum 2: gradient accumulation is simulated only" "$TMP/x.log" || { cat "$TMP/x.log"; fail "no reason given"; }
[ ! -e "$TMP/x/summary.json" ] || fail "a refused run wrote results"
echo "grad_accum: passed"
