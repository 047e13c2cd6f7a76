#!/usr/bin/env bash
# A prediction and a measurement of the same scenario compare op for op: the analytic engine
# and rectwin-exec write the same files, and every op of every rank is matched.
source "$(dirname "$0")/lib.sh"
[ -n "$RECTWIN" ] || fail "usage: compare.sh EXEC SRC RECTWIN"
run_exec "$TMP/meas" --iterations 3 --warmup 1 || {
  cat "$TMP/meas.log"
  fail "exec run"
}
"$RECTWIN" sim "$SCEN" --engine analytic --quiet --out "$TMP/pred" --set workload.mode=exact
"$RECTWIN" compare "$TMP/pred" "$TMP/meas" --json >"$TMP/cmp.json"
json "$TMP/cmp.json" "j['ops_matched']" >"$TMP/matched"
ops=$(($(wc -l <"$TMP/meas/ops.csv") - 1))
[ "$(cat "$TMP/matched")" = "$ops" ] || fail "matched $(cat "$TMP/matched") of $ops ops"
[ "$(json "$TMP/cmp.json" "len(j['unmatched']['pred_only']) + len(j['unmatched']['meas_only'])")" = 0 ] ||
  fail "unmatched ops"
"$RECTWIN" compare "$TMP/pred" "$TMP/meas" >"$TMP/cmp.txt"
grep -q MAPE "$TMP/cmp.txt" || fail "no MAPE line"
echo "compare: 1 passed, 0 failed ($ops ops matched)"
