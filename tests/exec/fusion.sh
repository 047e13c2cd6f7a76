#!/usr/bin/env bash
# plan.fusion (RecIS, seed 001 table 1; plans/fusion.h): both simulation engines build six
# per-table bucketize and lookup ops (none) or one fused one each (sparse) and charge the per-table launches and
# the fp32 staging round trip; rectwin-exec runs both launch patterns on the CPU backend with
# the byte check passing (pooled, sequence-free exec-tiny; row-wise, column-wise, fused plan,
# hsp, fp16 comm, MTGR's sequence features row-wise), and one step gives bitwise the same embeddings and updated rows as unset.
source "$(dirname "$0")/lib.sh"
[ -n "$RECTWIN" ] || fail "usage: fusion.sh EXEC SRC RECTWIN"
for engine in analytic simgrid; do
  for f in none sparse; do
    "$RECTWIN" sim "$SCEN" --engine $engine --quiet --out "$TMP/$engine-$f" --set plan.fusion=$f ||
      fail "$engine $f"
  done
  python3 - "$TMP/$engine-none" "$TMP/$engine-sparse" $engine <<'PY' || fail "$engine: fusion is not charged"
import csv, json, sys
def lookups(d):
    rows = [r for r in csv.DictReader(open(d + "/ops.csv")) if r["phase"] == "emb.fwd.lookup"]
    return {r["name"] for r in rows}, sum(float(r["bytes"]) for r in rows)
(nn, nb), (sn, sb) = lookups(sys.argv[1]), lookups(sys.argv[2])
assert len(nn) == 6 and len(sn) == 1, (nn, sn)
assert nb - sb == 49152, nb - sb  # 6 tables x 4 ranks x 32 samples x 8 floats x 4 B x 2
def buckets(d):
    rows = [r for r in csv.DictReader(open(d + "/ops.csv")) if r["phase"] == "emb.fwd.bucketize"]
    return {r["name"] for r in rows}, sum(float(r["bytes"]) for r in rows)
(bn, bb), (sbn, sbb) = buckets(sys.argv[1]), buckets(sys.argv[2])
assert len(bn) == 6 and len(sbn) == 1 and bb == sbb > 0, (bn, sbn, bb, sbb)  # same IDs, 6 launches
a, b = (json.load(open(d + "/summary.json")) for d in sys.argv[1:3])
assert a["phases"]["emb.fwd.lookup"] > b["phases"]["emb.fwd.lookup"]
print("%s: lookup ops 6 -> 1, bytes %d -> %d, lookup time %.3g -> %.3g s" % (sys.argv[3], nb, sb,
      a["phases"]["emb.fwd.lookup"], b["phases"]["emb.fwd.lookup"]))
PY
done
for f in none sparse; do
  check_variants "--set plan.fusion=$f" "--set plan.fusion=$f --set plan.sharding=row_wise" \
    "--set plan.fusion=$f --set plan.sharding=column_wise --set plan.column_shards=2" \
    "--set plan.fusion=$f --set plan.name=fused --set plan.dedup=comm" \
    "--set plan.fusion=$f --set plan.name=hsp --set plan.group_size=2" \
    "--set plan.fusion=$f --set plan.precision.comm=fp16" \
    "--set plan.fusion=$f --set model.file=exec-tiny-mtgr-model.yaml --set plan.sharding=row_wise"
done
one_step unset
one_step none --set plan.fusion=none
one_step sparse --set plan.fusion=sparse
py=$(dirname "$0")/semantics.py
python3 "$py" "$TMP/unset" "$TMP/none" bitwise || fail "per-feature lookups differ from unset"
python3 "$py" "$TMP/unset" "$TMP/sparse" bitwise || fail "the fused gather differs from unset"
echo "fusion: passed"
