#!/usr/bin/env bash
# rectwin sweep (issue 11): the points a grid and zipped lists expand to; one CSV row per point
# with the figures `rectwin sim` gives for that point (analytic, and simgrid from a worker);
# a failing point recorded with its error while the others succeed; hostile sweep files and
# arguments refused with located messages.
set -euo pipefail
rectwin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
scen=$src/experiments/dlrm-criteo.yaml

# --- expansion: 3 x 2 grid times a zip of 2 (two keys varying together) = 12 points --------
cat >"$tmp/expand.yaml" <<EOF
scenario: $scen
engine: analytic
grid:
  topology.nodes: [1, 2, 4]
  topology.scale_out.nic_bw: [400Gbps, "800Gbps"]
zip:
  - {plan.name: [flat, fused], plan.dedup: [none, two_stage]}
EOF
"$rectwin" sweep "$tmp/expand.yaml" --list >"$tmp/list.csv"
python3 - "$tmp/list.csv" <<'PY'
import csv, itertools, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = ['topology.nodes', 'topology.scale_out.nic_bw', 'plan.name', 'plan.dedup']
assert list(rows[0]) == ['point'] + keys, list(rows[0])
want = [(n, bw, p, d) for n, bw, (p, d) in itertools.product(
    ['1', '2', '4'], ['400Gbps', '800Gbps'], [('flat', 'none'), ('fused', 'two_stage')])]
got = [tuple(r[k] for k in keys) for r in rows]
assert got == want, got
assert [int(r['point']) for r in rows] == list(range(12))
PY
[ ! -e results/sweeps/expand ] || fail "--list created the output directory"
echo "ok: expansion (12 points, first key slowest, zipped keys together)"

# ~ in a list leaves the key unset at that point: hosts_per_tower exists only under sptt.
cat >"$tmp/unset.yaml" <<EOF
scenario: $scen
engine: analytic
set: {workload.mode: statistical, workload.batch_per_rank: 256, topology.nodes: 2}
zip:
  - {plan.name: [flat, sptt], plan.hosts_per_tower: [~, 2]}
EOF
"$rectwin" sweep "$tmp/unset.yaml" --out "$tmp/unset" --quiet >/dev/null
python3 - "$tmp/unset/sweep.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r['plan.name'], r['plan.hosts_per_tower'], r['status']) for r in rows] == \
    [('flat', '', 'ok'), ('sptt', '2', 'ok')], rows
PY
# The shipped sweep files expand.
for f in "$src"/experiments/sweeps/*.yaml; do
  "$rectwin" sweep "$f" --list >/dev/null || fail "$f does not expand"
done
echo "ok: ~ leaves a key unset; the shipped sweep files expand"

# --- a run: 2 x 2 points, row-wise sharding is refused by this model (table cat_5 has 3 rows)
cat >"$tmp/run.yaml" <<EOF
name: small
scenario: $scen
engine: analytic
set: {workload.mode: statistical, workload.batch_per_rank: 512}
grid:
  topology.nodes: [1, 2]
  plan.sharding: [table_wise, row_wise]
EOF
"$rectwin" sweep "$tmp/run.yaml" --out "$tmp/small" -j 2 --set workload.seed=3 \
  >"$tmp/run.out" 2>"$tmp/run.err" || { cat "$tmp/run.err"; fail "the sweep failed"; }
grep -q "4 points, 2 ok, 2 failed" "$tmp/run.out" || { cat "$tmp/run.out"; fail "summary line"; }
grep -q "point 1 failed: .*more shards than rows" "$tmp/run.err" || {
  cat "$tmp/run.err"
  fail "the failing point was not reported"
}
"$rectwin" sim "$scen" --engine analytic --quiet --out "$tmp/sim" --set workload.seed=3 \
  --set workload.mode=statistical --set workload.batch_per_rank=512 --set topology.nodes=2 \
  --set plan.sharding=table_wise
python3 - "$tmp/small/sweep.csv" "$tmp/sim/summary.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r['point'] for r in rows] == ['0', '1', '2', '3'], rows
head = list(rows[0])
assert head[:4] == ['point', 'status', 'topology.nodes', 'plan.sharding'] and head[-1] == 'error'
for r in rows:
    bad = r['plan.sharding'] == 'row_wise'
    assert r['status'] == ('error' if bad else 'ok'), r
    assert ('more shards than rows' in r['error']) == bad, r['error']
    assert (r['iteration_time_s'] == '') == bad
s = json.load(open(sys.argv[2]))
r = rows[2]  # nodes 2, table_wise: the point `rectwin sim` ran
assert (r['topology.nodes'], r['plan.sharding']) == ('2', 'table_wise')
for k in ('iteration_time_s', 'samples_per_s', 'mfu', 'mbu', 'mbu_sparse', 'comm_time_s',
          'exposed_comm_s', 'peak_hbm_bytes', 'hbm_capacity_bytes'):
    assert float(r[k]) == s[k], (k, r[k], s[k])
for k in ('ranks', 'nodes', 'reps'):
    assert int(r[k]) == (s['workload'][k] if k == 'reps' else s[k]), k
assert r['plan'] == s['plan'] and r['scenario'] == s['scenario'] and r['mode'] == s['workload']['mode']
assert r['hbm_fits'] == str(s['hbm_fits']).lower()
assert s['phases'] and all(float(r['phase.%s_s' % p]) == v for p, v in s['phases'].items())
assert float(r['wall_s']) > 0
PY
echo "ok: CSV row = rectwin sim of the same point; the failing point recorded with its error"

# A rerun finds every point done: nothing is computed, the CSV is the same.
cp "$tmp/small/sweep.csv" "$tmp/first.csv"
"$rectwin" sweep "$tmp/run.yaml" --out "$tmp/small" --set workload.seed=3 >"$tmp/rerun.out" 2>"$tmp/rerun.err"
grep -q "resuming, 4 of 4 points already done" "$tmp/rerun.err" || { cat "$tmp/rerun.err"; fail "rerun"; }
cmp -s "$tmp/first.csv" "$tmp/small/sweep.csv" || fail "the rerun changed the CSV"
# A changed sweep is refused in the same directory.
if "$rectwin" sweep "$tmp/run.yaml" --out "$tmp/small" --set workload.seed=4 2>"$tmp/err"; then
  fail "resumed a sweep whose points changed"
fi
grep -q "holds another sweep" "$tmp/err" || { cat "$tmp/err"; fail "changed sweep message"; }
echo "ok: rerun computes nothing; a changed sweep is refused"

# --- simgrid from a worker: the engine forks its simulation child inside the worker ----------
cat >"$tmp/sg.yaml" <<EOF
scenario: $scen
engine: simgrid
set: {workload.batch_per_rank: 256}
grid:
  topology.nodes: [1, 2]
EOF
"$rectwin" sweep "$tmp/sg.yaml" --out "$tmp/sg" -j 2 --quiet >/dev/null
"$rectwin" sim "$scen" --quiet --out "$tmp/sgsim" --set workload.batch_per_rank=256 \
  --set topology.nodes=2
python3 - "$tmp/sg/sweep.csv" "$tmp/sgsim/summary.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
s = json.load(open(sys.argv[2]))
assert [r['status'] for r in rows] == ['ok', 'ok'], rows
assert [r['ranks'] for r in rows] == ['8', '16']
assert float(rows[1]['iteration_time_s']) == s['iteration_time_s'], (rows[1], s['iteration_time_s'])
assert float(rows[1]['comm_time_s']) == s['comm_time_s']
PY
ls "$tmp"/sg/points/*.tmp.* >/dev/null 2>&1 && fail "temporaries left"
echo "ok: simgrid points from -j 2 workers = rectwin sim"

# --- hostile sweep files: each refused with file:line:col and what is allowed ----------------
hostile() { # hostile NAME EXPECTED-REGEX: the YAML on stdin
  cat >"$tmp/$1.yaml"
  if "$rectwin" sweep "$tmp/$1.yaml" --out "$tmp/h-$1" 2>"$tmp/err" >/dev/null; then
    fail "$1: accepted"
  fi
  grep -Eq "$2" "$tmp/err" || { cat "$tmp/err"; fail "$1: message"; }
  [ ! -e "$tmp/h-$1" ] || fail "$1: left an output directory"
}
hostile unknown "unknown.yaml:3:1: unknown key 'gird'; allowed here: name, description, scenario" <<EOF
scenario: $scen
engine: analytic
gird: {topology.nodes: [1, 2]}
EOF
hostile empty "empty.yaml:2:1: key 'grid': the grid is empty; allowed: a mapping" <<EOF
scenario: $scen
grid: {}
EOF
hostile none "none.yaml:1:1: nothing is swept; allowed: a 'grid' and/or a 'zip'" <<EOF
scenario: $scen
EOF
hostile gridlist "gridlist.yaml:2:8: key 'grid': expected a mapping" <<EOF
scenario: $scen
grid: [topology.nodes, 1]
EOF
hostile scalar "scalar.yaml:3:19: key 'grid.\"topology.nodes\"': expected a list of values; allowed: a list" <<EOF
scenario: $scen
grid:
  topology.nodes: 8
EOF
hostile emptylist "emptylist.yaml:3:3: key 'grid.\"topology.nodes\"': the list of values is empty" <<EOF
scenario: $scen
grid:
  topology.nodes: []
EOF
hostile engine "engine.yaml:2:9: key 'engine': unknown value 'simgird'; allowed: simgrid, analytic" <<EOF
scenario: $scen
engine: simgird
grid: {topology.nodes: [1]}
EOF
hostile scen "scen.yaml:1:12: key 'scenario': expected a string, got a sequence" <<EOF
scenario: [a, b]
grid: {topology.nodes: [1]}
EOF
hostile missing "missing.yaml:1:11: key 'scenario': cannot read '.*nope.yaml'" <<EOF
scenario: nope.yaml
grid: {topology.nodes: [1]}
EOF
hostile zipmix "zipmix.yaml:4:45: key 'zip.0.\"plan.dedup\"': 1 values where the group's first list has 2" <<EOF
scenario: $scen
grid: {topology.nodes: [1]}
zip:
  - {plan.name: [flat, fused], plan.dedup: [none]}
EOF
hostile twice "twice.yaml:4:5: .*'topology.nodes' is set twice" <<EOF
scenario: $scen
grid: {topology.nodes: [1, 2]}
zip:
  - topology.nodes: [4]
EOF
hostile badkey "badkey.yaml:2:8: .*'a=b' is not a key path" <<EOF
scenario: $scen
grid: {a=b: [1]}
EOF
hostile name "name.yaml:1:7: key 'name': '../x' is not a plain file name" <<EOF
name: ../x
scenario: $scen
grid: {topology.nodes: [1]}
EOF
hostile base "does not load" <<EOF
scenario: $scen
set: {workload.batch_per_rank: many}
grid: {topology.nodes: [1]}
EOF
hostile typo "typo.yaml:3:3: key 'topology.nodse': no value loads on the base scenario" <<EOF
scenario: $scen
grid:
  topology.nodse: [1, 2]
EOF
echo "ok: hostile sweep files"

# --- hostile arguments ------------------------------------------------------------------------
args_refused() { # args_refused EXPECTED-REGEX ARGS...
  local want=$1
  shift
  if "$rectwin" sweep "$@" 2>"$tmp/err" >/dev/null; then fail "accepted: $*"; fi
  grep -Eq -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "message for: $*"; }
}
args_refused "unknown option '--job'; did you mean '--jobs'" "$tmp/run.yaml" --job 2
args_refused "-j '0'; allowed: an integer in" "$tmp/run.yaml" -j 0
args_refused "^--set:1:1: 'topology.nodes=4': the sweep file sets this key" "$tmp/run.yaml" \
  --set topology.nodes=4
args_refused "unknown engine 'analytc'; did you mean 'analytic'" "$tmp/run.yaml" --engine analytc
OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=2 args_refused "OMPI_COMM_WORLD_RANK=2 and OMPI_COMM_WORLD_SIZE=2 are not a rank and a size" \
  "$tmp/run.yaml" --list
grep -q -- "--jobs" <<<"$("$rectwin" sweep --help)" || fail "--help"
grep -q "example" <<<"$("$rectwin" sweep --help)" || fail "--help has no example"
echo "ok: hostile arguments"
echo "sweep: all passed"
