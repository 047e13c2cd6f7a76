#!/usr/bin/env bash
# The model really trains: on fresh batches whose labels carry a planted signal, the loss of
# 60 steps later is well below the first (the run is seeded, so the figures are reproducible).
source "$(dirname "$0")/lib.sh"
run_exec "$TMP/t" --iterations 60 --warmup 0 || {
  cat "$TMP/t.log"
  fail "training run"
}
first=$(json "$TMP/t/summary.json" "j['settings']['loss_first']")
last=$(json "$TMP/t/summary.json" "j['settings']['loss_last']")
echo "loss $first -> $last"
python3 -c "import sys; f,l=map(float,sys.argv[1:]); sys.exit(0 if 0.3 < f < 1.2 and l < 0.8*f else 1)" \
  "$first" "$last" || fail "loss did not fall: $first -> $last"
# TurboGR's semi-async training (staleness 1) trains too.
run_exec "$TMP/s" --iterations 60 --warmup 0 --set plan.overlap=semi_async || {
  cat "$TMP/s.log"
  fail "semi-async training run"
}
first=$(json "$TMP/s/summary.json" "j['settings']['loss_first']")
last=$(json "$TMP/s/summary.json" "j['settings']['loss_last']")
echo "semi_async loss $first -> $last"
python3 -c "import sys; f,l=map(float,sys.argv[1:]); sys.exit(0 if l < 0.8*f else 1)" \
  "$first" "$last" || fail "semi-async loss did not fall: $first -> $last"
# DMT's SPTT with a linear tower module (compressing each tower's features by 2) trains too.
run_exec "$TMP/m" --iterations 60 --warmup 0 --set plan.name=sptt --set topology.nodes=2 \
  --set topology.node.devices=2 --set "plan.tower_module={kind: linear, compression: 2}" || {
  cat "$TMP/m.log"
  fail "tower-module training run"
}
first=$(json "$TMP/m/summary.json" "j['settings']['loss_first']")
last=$(json "$TMP/m/summary.json" "j['settings']['loss_last']")
echo "tower module loss $first -> $last"
python3 -c "import sys; f,l=map(float,sys.argv[1:]); sys.exit(0 if 0.3 < f < 1.2 and l < 0.8*f else 1)" \
  "$first" "$last" || fail "tower-module loss did not fall: $first -> $last"
echo "training: 3 passed, 0 failed"
