#!/usr/bin/env bash
# The model really trains: on fresh batches whose labels carry a planted signal, the loss of
# 60 steps later is well below the first (the run is seeded, so the figures are reproducible).
source "$(dirname "$0")/lib.sh"
# loss_falls NAME [args...]: 60 steps; the first loss is a BCE near ln 2 and the last is below
# 0.8 of it.
loss_falls() {
  local name=$1 first last
  shift
  run_exec "$TMP/$name" --iterations 60 --warmup 0 "$@" || {
    cat "$TMP/$name.log"
    fail "$name training run"
  }
  first=$(json "$TMP/$name/summary.json" "j['settings']['loss_first']")
  last=$(json "$TMP/$name/summary.json" "j['settings']['loss_last']")
  echo "$name loss $first -> $last"
  python3 -c "import sys; f,l=map(float,sys.argv[1:]); sys.exit(0 if 0.3 < f < 1.2 and l < 0.8*f else 1)" \
    "$first" "$last" || fail "$name loss did not fall: $first -> $last"
}
loss_falls sync
# TurboGR's semi-async training (staleness 1) trains too.
loss_falls semi_async --set plan.overlap=semi_async
# DMT's SPTT with a linear tower module (compressing each tower's features by 2) trains too.
loss_falls tower_module --set plan.name=sptt --set topology.nodes=2 --set topology.node.devices=2 \
  --set "plan.tower_module={kind: linear, compression: 2}"
echo "training: 3 passed, 0 failed"
