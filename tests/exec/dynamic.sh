#!/usr/bin/env bash
# Dynamic tables under rectwin-exec (cpu): 4 ranks train three hash tables on a stream of new
# IDs (tests/data/exec-dynamic.yaml: keys and values in HBM; values in host memory with LRU
# eviction to 700 keys; keys in host memory). Every key inserted is still there at the end
# unless evicted, the key structures doubled, the embedding exchange's bytes match the graph,
# the loss falls; both simulation engines predict the same scenario with the hash ops.
source "$(dirname "$0")/lib.sh"
SCEN=$SRC/tests/data/exec-dynamic.yaml
hash() { json "$1/summary.json" "j['settings']['hash_tables']['$2']"; }
for v in "" "--set plan.sharding=column_wise --set plan.column_shards=2" \
  "--set plan.dedup=two_stage"; do
  name=run$((${i:-0} + 1))
  i=$((${i:-0} + 1))
  # shellcheck disable=SC2086
  run_exec "$TMP/$name" --iterations 30 --warmup 2 --check-bytes $v || {
    cat "$TMP/$name.log"
    fail "exec '$v'"
  }
  keys=$(hash "$TMP/$name" keys)
  ins=$(hash "$TMP/$name" inserted)
  ev=$(hash "$TMP/$name" evicted)
  grows=$(hash "$TMP/$name" doublings)
  # Initial keys: 2000 + 500 + 300 per shard; column-wise holds each table in 2 shards.
  shards=1
  case "$v" in *column_wise*) shards=2 ;; esac
  [ "$keys" -eq $((shards * 2800 + ins - ev)) ] ||
    fail "'$v': $keys keys at the end, $shards x 2800 + $ins inserted - $ev evicted"
  [ "$ins" -gt 0 ] && [ "$ev" -gt 0 ] && [ "$grows" -gt 0 ] ||
    fail "'$v': inserted $ins, evicted $ev, doublings $grows"
  [ "$(json "$TMP/$name/summary.json" "j['settings']['bytes_mismatched_ops']")" = 0 ] ||
    fail "'$v': bytes differ from the graph"
  first=$(json "$TMP/$name/summary.json" "j['settings']['loss_first']")
  last=$(json "$TMP/$name/summary.json" "j['settings']['loss_last']")
  python3 -c "import sys; f,l=map(float,sys.argv[1:]); sys.exit(0 if l < f else 1)" "$first" "$last" ||
    fail "'$v': loss did not fall: $first -> $last"
  echo "ok: ${v:-flat table_wise}: $keys keys ($ins inserted, $ev evicted), $grows doublings, loss $first -> $last"
done
# Both engines price the same graph: probe, host-memory probe, fetch, write-back, eviction.
if [ -n "$RECTWIN" ]; then
  for e in analytic simgrid; do
    "$RECTWIN" sim "$SCEN" --engine "$e" --out "$TMP/sim-$e" >"$TMP/sim-$e.log" 2>&1 || {
      cat "$TMP/sim-$e.log"
      fail "rectwin sim --engine $e"
    }
    for ph in emb.fwd.probe emb.fwd.fetch emb.bwd.writeback emb.bwd.evict; do
      python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j['phases'].get(sys.argv[2], 0) > 0 else 1)" \
        "$TMP/sim-$e/summary.json" "$ph" || fail "$e: no time in phase $ph"
    done
    echo "ok: $e predicts $(json "$TMP/sim-$e/summary.json" "j['iteration_time_s']") s per iteration"
  done
fi
# Refused where exec does not run them, with the reason.
if run_exec "$TMP/refused" --set plan.overlap=pipeline; then fail "overlap with dynamic tables ran"; fi
grep -q "dynamic tables with overlap other than sync" "$TMP/refused.log" || {
  cat "$TMP/refused.log"
  fail "no reason given for the refusal"
}
echo "dynamic: passed"
