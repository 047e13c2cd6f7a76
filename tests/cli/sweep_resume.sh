#!/usr/bin/env bash
# rectwin sweep survives interruptions (issue 11): SIGKILL of the sweep mid-way, then SIGINT
# mid-way, then a run to the end; a finished point is never computed again (its file keeps its
# inode), every point ends up in the CSV once, no temporary is left. A worker killed on a point
# leaves that point as an error the sweep goes on past, and --retry-failed computes it again.
# Ranks of a launcher (OMPI_COMM_WORLD_RANK/SIZE, as mpirun sets them) split the points and,
# on one directory, assemble one CSV.
set -euo pipefail
rectwin=$1
src=$2
tmp=$(mktemp -d)
bg=()
cleanup() {
  for p in "${bg[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# Exact-mode points at 64 GPUs: a tenth of a second each, slow enough to stop mid-way.
cat >"$tmp/s.yaml" <<EOF
scenario: $src/experiments/dlrm-criteo.yaml
engine: analytic
set: {workload.mode: exact, workload.batch_per_rank: 1024}
grid:
  workload.seed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  topology.scale_out.nic_bw: [400Gbps, 800Gbps]
EOF
out=$tmp/out
n_done() { find "$out/points" -name '[0-9]*' ! -name '*.tmp.*' 2>/dev/null | wc -l; }
snapshot() { (cd "$out/points" && find . -name '[0-9]*' ! -name '*.tmp.*' -printf '%f %i\n' | sort); }
# start_until FILE N ARGS...: starts the sweep of FILE in the background into $out, returns
# when N points are done.
start_until() {
  local file=$1 want=$2
  shift 2
  "$rectwin" sweep "$file" --out "$out" "$@" >"$tmp/run.out" 2>"$tmp/run.err" &
  pid=$!
  bg+=("$pid")
  for _ in $(seq 1 600); do
    [ "$(n_done)" -ge "$want" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/run.err"; fail "the sweep ended early"; }
    sleep 0.05
  done
  [ "$(n_done)" -ge "$want" ] || fail "no progress"
  workers=$(pgrep -P "$pid" || true)
}
# stop SIGNAL: sends SIGNAL to the sweep (its parent only) and checks its workers end too.
stop() {
  kill -"$1" "$pid"
  rc=0
  wait "$pid" || rc=$?
  for w in $workers; do
    for _ in $(seq 1 100); do kill -0 "$w" 2>/dev/null || break; sleep 0.05; done
    if kill -0 "$w" 2>/dev/null; then fail "worker $w outlived the sweep ($1)"; fi
  done
  [ ! -e "$out/sweep.csv" ] || fail "an interrupted sweep wrote the CSV"
  if find "$out" -name '*.tmp.*' | grep -q .; then fail "temporaries left after $1"; fi
}

start_until "$tmp/s.yaml" 3 -j 2
stop KILL
[ "$rc" -eq 137 ] || fail "exit $rc after SIGKILL"
snapshot >"$tmp/s1"
k1=$(wc -l <"$tmp/s1")
[ "$k1" -lt 20 ] || fail "the sweep finished before it was killed"
echo "ok: SIGKILL after $k1 points: workers gone, no temporaries, no CSV"

start_until "$tmp/s.yaml" $((k1 + 3)) -j 2
stop INT
[ "$rc" -eq 130 ] || fail "exit $rc after SIGINT"
grep -q "resuming, $k1 of 20 points already done" "$tmp/run.err" || { cat "$tmp/run.err"; fail "resume message"; }
snapshot >"$tmp/s2"
k2=$(wc -l <"$tmp/s2")
[ -z "$(comm -23 "$tmp/s1" "$tmp/s2")" ] || fail "points finished before the SIGINT run were written again"
echo "ok: SIGINT after $k2 points: the $k1 earlier points untouched"

"$rectwin" sweep "$tmp/s.yaml" --out "$out" -j 2 >"$tmp/run.out" 2>"$tmp/run.err" || {
  cat "$tmp/run.err"
  fail "the resumed sweep failed"
}
grep -q "resuming, $k2 of 20 points already done" "$tmp/run.err" || { cat "$tmp/run.err"; fail "resume message"; }
snapshot >"$tmp/s3"
[ -z "$(comm -23 "$tmp/s2" "$tmp/s3")" ] || fail "points finished before the last run were written again"
[ "$(wc -l <"$tmp/s3")" -eq 20 ] || fail "not every point has its file"
python3 - "$out/sweep.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert sorted(int(r['point']) for r in rows) == list(range(20)), [r['point'] for r in rows]
assert all(r['status'] == 'ok' and float(r['iteration_time_s']) > 0 for r in rows)
assert len({(r['workload.seed'], r['topology.scale_out.nic_bw']) for r in rows}) == 20
PY
if find "$out" -name '*.tmp.*' | grep -q .; then fail "temporaries left"; fi
echo "ok: resumed to the end: 20 points, each computed once, one CSV row each"

# A worker killed on a point: recorded as an error, the sweep goes on; --retry-failed redoes it.
# (Smaller points from here on.)
sed 's/batch_per_rank: 1024/batch_per_rank: 64/' "$tmp/s.yaml" >"$tmp/r.yaml"
out=$tmp/crash
start_until "$tmp/r.yaml" 1 -j 2
w=$(pgrep -P "$pid" | head -1)
[ -n "$w" ] || fail "no worker"
kill -KILL "$w"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/run.err"; fail "exit $rc after a worker died"; }
[ "$(n_done)" -eq 20 ] || fail "the sweep did not go on after its worker died"
died=$(grep -c "died of signal 9" "$out/sweep.csv" || true)
[ "$died" -le 1 ] || fail "$died points blamed on one death"
"$rectwin" sweep "$tmp/r.yaml" --out "$out" --retry-failed --quiet >/dev/null
python3 -c "import csv,sys; assert all(r['status'] == 'ok' for r in csv.DictReader(open(sys.argv[1])))" "$out/sweep.csv"
echo "ok: a killed worker's point recorded ($died) and the sweep went on; --retry-failed redid it"

# Ranks: rank 1 of 2 alone takes the odd points and leaves the CSV to the last rank.
out=$tmp/ranks
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$rectwin" sweep "$tmp/r.yaml" --out "$out" -j 2 \
  >"$tmp/r1.out" 2>/dev/null
grep -q "rank 1/2 finished its 10 points; 10 of 20 points are not done yet" "$tmp/r1.out" || {
  cat "$tmp/r1.out"
  fail "rank 1 message"
}
[ "$(cd "$out/points" && ls | tr '\n' ' ')" = "$(seq -f '%07g' 1 2 19 | tr '\n' ' ')" ] ||
  fail "rank 1 did not take exactly the odd points"
[ ! -e "$out/sweep.csv" ] || fail "a CSV of half the points"
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$rectwin" sweep "$tmp/r.yaml" --out "$out" \
  >"$tmp/r0.out" 2>/dev/null
grep -q "20 points, 20 ok" "$tmp/r0.out" || { cat "$tmp/r0.out"; fail "rank 0 did not assemble the CSV"; }
# Two ranks at once on a fresh directory: they create sweep.id together and one CSV results.
out=$tmp/ranks2
for r in 0 1; do
  PMI_RANK=$r PMI_SIZE=2 "$rectwin" sweep "$tmp/r.yaml" --out "$out" --quiet >"$tmp/p$r.out" 2>"$tmp/p$r.err" &
  bg+=($!)
done
wait "${bg[-1]}" && wait "${bg[-2]}" || { cat "$tmp"/p*.err; fail "a rank failed"; }
python3 -c "import csv,sys; assert sorted(int(r['point']) for r in csv.DictReader(open(sys.argv[1]))) == list(range(20))" "$out/sweep.csv"
echo "ok: ranks split the points and one CSV holds them all"
# The same under mpirun itself, when there is one.
if command -v mpirun >/dev/null; then
  mpi=(mpirun --oversubscribe -np 2)
  if [ "$(id -u)" -eq 0 ]; then mpi+=(--allow-run-as-root); fi
  "${mpi[@]}" "$rectwin" sweep "$tmp/r.yaml" --out "$tmp/mpi" --quiet >"$tmp/mpi.out" 2>&1 || {
    cat "$tmp/mpi.out"
    fail "the sweep under mpirun failed"
  }
  python3 -c "import csv,sys; assert sorted(int(r['point']) for r in csv.DictReader(open(sys.argv[1]))) == list(range(20))" "$tmp/mpi/sweep.csv"
  echo "ok: under mpirun -np 2"
fi
echo "sweep resume: all passed"
