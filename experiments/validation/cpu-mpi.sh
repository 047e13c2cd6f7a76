#!/usr/bin/env bash
# Predicted (analytic engine, or --engine, on the calibrated topologies/localhost-cpu.yaml) against measured
# (rectwin-exec, CPU device + MPI comm) per phase, for DLRM, DCN and HSTU, every executable
# plan, at 1, 2 and 4 ranks on this machine; prints one table and the MAPE figures that
# experiments/validation/cpu-mpi.md quotes.
#
# usage: experiments/validation/cpu-mpi.sh [OPTIONS] [BUILD_DIR] [OUT_DIR] [REPEATS]
#   BUILD_DIR  where rectwin and rectwin-exec are (default build/release)
#   OUT_DIR    raw results: <case>/{pred,meas-N}/summary.json, ops.csv (default: a temp dir)
#   REPEATS    exec runs per case (default 3), in rounds of one run per case, so that a case's
#              runs are minutes apart: the measurement is the run of median (or, with
#              --measured fastest, least) iteration time; the spread of the repeats
#              ((max - min) / median) is the machine's noise;
#              0: run nothing, only print the table of OUT_DIR's results (for instance the
#              committed experiments/measurements/cpu/validation)
#   --engine E       engine of the predictions (default analytic)
#   --cores N        predict the machine as it is: the RANKS nodes of one device that rectwin-exec
#                    runs, all computing on one set of N host cores (--set topology.node.cores=N
#                    topology.node.cores_nodes=RANKS; N < RANKS needs --engine simgrid). Without it
#                    each rank is a node with cores of its own and its kernels are priced on the
#                    curve measured with RANKS ranks running. Until 2026-11-23 this was one node of
#                    RANKS devices, which gave SPTT one tower where rectwin-exec forms RANKS
#   --topology FILE  predict with FILE (its calibration tables) instead of the scenarios' own
#                    topologies/localhost-cpu.yaml, for instance an earlier calibration
#   --pred NAME      the predictions' directory in each case (default pred), to keep several
#   --predict-only   re-run only the predictions (deterministic) into OUT_DIR's cases, keep their
#                    meas-* (REPEATS is ignored), then print the table
#   --measured S     which repeat of a case is its measurement: median (default: the repeat of
#                    median iteration time) or fastest (the repeat of least iteration time: the
#                    machine when no other tenant slowed it, the state `rectwin calibrate`'s
#                    fastest-of-passes tables describe), or fastest-link (the fastest of the
#                    repeats whose core link stayed in the machine's fast state: both of its
#                    settings.local_rtt_us at most 1.5x the least round trip any run of that rank
#                    count had in OUT_DIR; the fastest repeat where no repeat did, or where exec
#                    recorded no link). A guest's host moves its vCPUs between cores that share a
#                    cache and cores that do not; the calibration's fastest passes describe the
#                    first, and a 2-rank 9.5 MB AllReduce takes 3x as long in the second
#                    (experiments/measurements/cpu/host-placement/). The table's "link us" column is
#                    the measured run's round trips before/after its timed iterations
#   --batches        predict every batch rectwin-exec times, not only the first: exec draws batch k
#                    with workload.seed + k and reports per-op medians over k = warmup ..
#                    warmup + iterations - 1; each is predicted (<pred>/batch-K/) and composed
#                    with exec's statistic: per (rank, op) median start and median duration, the
#                    iteration the latest end, a phase the largest per-rank sum of its ops'
#                    durations (core/result.c) (<pred>/summary.json, ops.csv)
# The separation: a case's prediction (<case>/<pred>) and its measurements (<case>/meas-N) are
# separate directories; the table pairs them, so predictions can be redone without measuring.
#
# Calibration is not fitted to any of these scenarios: `rectwin calibrate` times kernels and
# collectives alone (exec/calibrate*.c) and the model prices the graph's launches with those
# curves. The DLRM flat rows are the scenario the model was developed against ("dev"); every
# other row is held out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ENGINE=analytic CORES='' PRED=pred PREDICT_ONLY=0 BATCHES=0 MEASURED=median TOPO=''
while [ $# -gt 0 ]; do
  case $1 in
    --engine) ENGINE=$2; shift 2 ;;
    --cores) CORES=$2; shift 2 ;;
    --topology)
      [ -f "$2" ] || { echo "cpu-mpi.sh: --topology '$2': no such file; allowed: a topology file (for instance an earlier calibration of localhost-cpu.yaml)" >&2; exit 2; }
      TOPO=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --pred) PRED=$2; shift 2 ;;
    --predict-only) PREDICT_ONLY=1; shift ;;
    --batches) BATCHES=1; shift ;;
    --measured)
      case $2 in median | fastest | fastest-link) MEASURED=$2 ;; *) echo "cpu-mpi.sh: --measured '$2'; allowed: median, fastest, fastest-link" >&2; exit 2 ;; esac
      shift 2 ;;
    --*) echo "cpu-mpi.sh: unknown option $1; allowed: --engine E, --cores N, --topology FILE, --pred NAME, --predict-only, --batches, --measured median|fastest|fastest-link" >&2; exit 2 ;;
    *) break ;;
  esac
done
B=${1:-$root/build/release}
OUT=${2:-$(mktemp -d)}
REPEATS=${3:-3}
R=$B/cli/rectwin
X=$B/exec/rectwin-exec
mkdir -p "$OUT"
# One core per rank for the GEMM library (rectwin-exec's CPU model), and Open MPI kept off the
# network: the same environment `rectwin calibrate` ran in. On a shared machine, run this
# script (and the calibration) under `nice -n -15` so other users' jobs do not time-slice the
# ranks (the validation in cpu-mpi.md did).
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
MPI=(mpirun --oversubscribe)
if [ "$(id -u)" -eq 0 ]; then MPI+=(--allow-run-as-root); fi

# name | scenario | ranks | --set arguments
cases() {
  local scen ranks
  for model in dlrm dcn hstu; do
    case $model in
      dlrm) scen=$root/experiments/exec-cpu.yaml ;;
      dcn) scen=$root/experiments/exec-cpu-dcn.yaml ;;
      hstu) scen=$root/experiments/exec-cpu-hstu.yaml ;;
    esac
    for ranks in 1 2 4; do
      echo "$model-flat-$ranks|$scen|$ranks|plan.name=flat"
      echo "$model-fused-$ranks|$scen|$ranks|plan.name=fused"
      [ "$ranks" -gt 1 ] && echo "$model-hsp-$ranks|$scen|$ranks|plan.name=hsp plan.group_size=$((ranks / 2))"
      # SPTT needs a tower per feature group: HSTU's single sequence table has none to split
      # (and rectwin-exec does not run SPTT over sequence features)
      [ "$model" != hstu ] && echo "$model-sptt-$ranks|$scen|$ranks|plan.name=sptt"
      true
    done
  done
}

predict() { # name scenario ranks sets...
  local name=$1 scen=$2 ranks=$3 dir=$OUT/$1
  shift 3
  local machine=(--set "topology.nodes=$ranks")
  [ -n "$TOPO" ] && machine+=(--set "topology.file=$TOPO")
  if [ -n "$CORES" ]; then
    # the nodes rectwin-exec runs (one device each), all on one set of CORES cores
    machine+=(--set "topology.node.cores=$CORES" --set "topology.node.cores_nodes=$ranks")
  fi
  mkdir -p "$dir"
  rm -rf "${dir:?}/$PRED"
  if [ "$BATCHES" = 0 ]; then
    if ! "$R" sim "$scen" --engine "$ENGINE" --quiet --out "$dir/$PRED" "$@" "${machine[@]}" \
      --set workload.mode=exact >"$dir/$PRED.log" 2>&1; then
      echo "$name: not predicted ($(tail -1 "$dir/$PRED.log"))" >&2
      return 1
    fi
    rm -f "$dir/$PRED.log"
    return 0
  fi
  local seed warmup iters k
  read -r seed warmup iters < <(python3 -c 'import sys, yaml; w = yaml.safe_load(open(sys.argv[1]))["workload"]
print(w.get("seed", 1), w.get("warmup", 2), w.get("iterations", 1))' "$scen")
  for k in $(seq "$warmup" $((warmup + iters - 1))); do
    if ! "$R" sim "$scen" --engine "$ENGINE" --quiet --out "$dir/$PRED/batch-$k" "$@" "${machine[@]}" \
      --set workload.mode=exact --set "workload.seed=$((seed + k))" >"$dir/$PRED.log" 2>&1; then
      echo "$name: batch $k not predicted ($(tail -1 "$dir/$PRED.log"))" >&2
      return 1
    fi
  done
  rm -f "$dir/$PRED.log" "$dir/$PRED"/batch-*/{trace.json,links.csv,manifest.json}
  python3 - "$dir/$PRED" <<'PY'
import csv, glob, json, os, statistics, sys
d = sys.argv[1]
batches = sorted(glob.glob(os.path.join(d, "batch-*")))
runs = [list(csv.DictReader(open(os.path.join(b, "ops.csv")))) for b in batches]
keys = [(r["rank"], r["op"]) for r in runs[0]]
for run in runs[1:]:
    if [(r["rank"], r["op"]) for r in run] != keys:
        sys.exit("the batches' graphs differ in their ops: cannot take per-op medians")
rows, phases, ends = [], {}, []
per_rank_phase = {}
for i, key in enumerate(keys):
    start = statistics.median(float(run[i]["start_s"]) for run in runs)
    dur = statistics.median(float(run[i]["end_s"]) - float(run[i]["start_s"]) for run in runs)
    row = dict(runs[0][i], start_s="%.9e" % start, end_s="%.9e" % (start + dur))
    rows.append(row)
    ends.append(start + dur)
    pr = (row["rank"], row["phase"])
    per_rank_phase[pr] = per_rank_phase.get(pr, 0.0) + dur
for (rank, ph), v in per_rank_phase.items():
    phases[ph] = max(phases.get(ph, 0.0), v)
with open(os.path.join(d, "ops.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(runs[0][0].keys()))
    w.writeheader()
    w.writerows(rows)
json.dump({"iteration_time_s": max(ends), "phases": phases,
           "composed_from": [os.path.basename(b) for b in batches],
           "statistic": "per (rank, op) median start and median duration over the batches, as "
                        "rectwin-exec reports its timed iterations; iteration = latest end; "
                        "phase = largest per-rank sum of its ops' durations"},
          open(os.path.join(d, "summary.json"), "w"), indent=1)
PY
}

# The --set arguments of a case (its sets field) as words.
case_sets() { local s; for s in $1; do echo "--set"; echo "$s"; done; }

predict_case() { # name scenario ranks sets
  local sets=()
  mapfile -t sets < <(case_sets "$4")
  predict "$1" "$2" "$3" "${sets[@]}"
}

# Run I of a case: rectwin-exec on RANKS ranks into <case>/meas-I.
measure_case() { # name scenario ranks sets I
  local name=$1 scen=$2 ranks=$3 i=$5 dir=$OUT/$1 sets=()
  mapfile -t sets < <(case_sets "$4")
  sets+=(--set "topology.nodes=$ranks")
  if ! "${MPI[@]}" -np "$ranks" "$X" "$scen" --quiet --out "$dir/meas-$i" "${sets[@]}" </dev/null \
    >"$dir/meas-$i.log" 2>&1; then
    echo "$name: not executed ($(grep -m1 -i 'allowed\|refuse\|not' "$dir/meas-$i.log" || tail -1 "$dir/meas-$i.log"))" >&2
    rm -rf "$dir/meas-$i"
    return 1
  fi
}

# Every case is predicted, then measured in REPEATS rounds of one run per case, so the runs of a
# case lie minutes apart: the host's slow stretches last seconds (measurements/cpu/noise-probe/),
# and back to back one of them could cover every run of a case, as a calibration pass can not
# (rectwin-calibrate's passes are minutes apart too). A case that fails is not run again.
declare -A predicted=() failed=()
if [ "$REPEATS" -gt 0 ] || [ "$PREDICT_ONLY" = 1 ]; then
  while IFS='|' read -r name scen ranks sets; do
    echo "predicting $name" >&2
    predict_case "$name" "$scen" "$ranks" "$sets" && predicted[$name]=1
  done < <(cases)
fi
if [ "$PREDICT_ONLY" = 0 ]; then
  for i in $(seq 1 "$REPEATS"); do
    while IFS='|' read -r name scen ranks sets; do
      if [ -z "${predicted[$name]:-}" ] || [ -n "${failed[$name]:-}" ]; then continue; fi
      echo "round $i of $REPEATS: running $name" >&2
      measure_case "$name" "$scen" "$ranks" "$sets" "$i" || failed[$name]=1
    done < <(cases)
  done
fi

[ "$BATCHES" = 1 ] && PRED_NOTE=", every timed batch" || PRED_NOTE=
echo "predictions: engine $ENGINE${CORES:+, node.cores $CORES shared by the RANKS nodes (node.cores_nodes)}${TOPO:+, topology $TOPO}, directory $PRED$PRED_NOTE; measurement: the $MEASURED repeat"
python3 - "$OUT" "$PRED" "$MEASURED" <<'EOF'
import json, os, sys

out, pred_dir, measured = sys.argv[1], sys.argv[2], sys.argv[3]
def load(d):
    p = os.path.join(d, "summary.json")
    return json.load(open(p)) if os.path.exists(p) else None

def repeats(d):
    return sorted((r for r in (load(os.path.join(d, x)) for x in sorted(os.listdir(d))
                               if x.startswith("meas-")) if r),
                  key=lambda r: r["iteration_time_s"])

def link(r):
    """The run's core-link round trips (us) before and after its timed iterations, or None."""
    v = r.get("settings", {}).get("local_rtt_us")
    return v if v and all(x is not None for x in v) else None

# The machine's fast link state, per rank count: the least round trip of any run in OUT_DIR.
best_link = {}
for name in os.listdir(out):
    if os.path.isdir(os.path.join(out, name)):
        for r in repeats(os.path.join(out, name)):
            if link(r):
                best_link[r["ranks"]] = min(best_link.get(r["ranks"], 1e9), min(link(r)))

def fast_link(r):
    return link(r) is not None and max(link(r)) <= 1.5 * best_link[r["ranks"]]

def measured_run(d):
    """The repeat that is the measurement (median, fastest, or fastest with a fast link), the
    repeats' spread (max - min) / median, and the fastest repeat's iteration time."""
    runs = repeats(d)
    if not runs:
        return None, None, None
    mid = runs[(len(runs) - 1) // 2]
    t = [r["iteration_time_s"] for r in runs]
    spread = (t[-1] - t[0]) / mid["iteration_time_s"] if len(runs) > 1 else None
    if measured == "fastest-link":
        return next((r for r in runs if fast_link(r)), runs[0]), spread, t[0]
    return runs[0] if measured == "fastest" else mid, spread, t[0]

rows, it_err, ph_err, ph_err_big, noise = [], {"dev": [], "held-out": []}, [], [], []
it_fast, by_ranks, by_model = [], {}, {}
# the >= 5 % phases' errors by rank count, by phase, by phase and rank count
ph_by_ranks, ph_by_name, ph_by_name_ranks = {}, {}, {}
print("%-16s %5s %11s %11s %8s %8s %10s  %s" % ("case", "set", "pred ms", "meas ms", "err", "spread",
                                              "link us", "phases (pred/meas ms, error) carrying >= 5% of the iteration"))
slow_links = []
for name in sorted(os.listdir(out)):
    d = os.path.join(out, name)
    if not os.path.isdir(os.path.join(d, pred_dir)):
        continue
    pred = load(os.path.join(d, pred_dir))
    meas, spread, fastest = measured_run(d)
    if not pred or not meas:
        continue
    group = "dev" if name.startswith("dlrm-flat") else "held-out"
    tp, tm = pred["iteration_time_s"], meas["iteration_time_s"]
    e = (tp - tm) / tm
    it_err[group].append(abs(e))
    by_ranks.setdefault(name.rsplit("-", 1)[1], []).append(abs(e))
    by_model.setdefault(name.split("-", 1)[0], []).append(abs(e))
    it_fast.append(abs((tp - fastest) / fastest))
    rep = ""
    if spread is not None:
        noise.append(spread)
        rep = "%.0f%%" % (100 * spread)
    cells = []
    for ph, m in sorted(meas["phases"].items(), key=lambda kv: -kv[1]):
        p = pred["phases"].get(ph, 0.0)
        if m <= 0:
            continue
        pe = (p - m) / m
        ph_err.append(abs(pe))
        if m >= 0.05 * tm:
            ph_err_big.append(abs(pe))
            ph_by_ranks.setdefault(name.rsplit("-", 1)[1], []).append(abs(pe))
            ph_by_name.setdefault(ph, []).append(abs(pe))
            ph_by_name_ranks.setdefault((ph, int(name.rsplit("-", 1)[1])), []).append(abs(pe))
            cells.append("%s %.2f/%.2f %+.0f%%" % (ph, 1e3 * p, 1e3 * m, 100 * pe))
    lk = "%.2f/%.2f" % tuple(link(meas)) if link(meas) else "-"
    if link(meas) and not fast_link(meas):
        slow_links.append(name)
    print("%-16s %5s %11.3f %11.3f %+7.1f%% %8s %10s  %s" % (name, "dev" if group == "dev" else "held",
                                                          1e3 * tp, 1e3 * tm, 100 * e, rep, lk,
                                                          "; ".join(cells)))

def mape(v):
    return "%.1f%% (%d)" % (100 * sum(v) / len(v), len(v)) if v else "n/a"
print()
print("iteration-time MAPE, dev (DLRM flat):   ", mape(it_err["dev"]))
print("iteration-time MAPE, held out:          ", mape(it_err["held-out"]))
print("iteration-time MAPE, all:               ", mape(it_err["dev"] + it_err["held-out"]))
for k in sorted(by_ranks, key=int):
    print("%-40s" % ("iteration-time MAPE, %s rank(s):" % k), mape(by_ranks[k]))
for k in sorted(by_model):
    print("%-40s" % ("iteration-time MAPE, %s:" % k), mape(by_model[k]))
print("per-phase MAPE, phases >= 5% of the iteration:", mape(ph_err_big))
for k in sorted(ph_by_ranks, key=int):
    print("%-40s" % ("per-phase MAPE (>= 5%%), %s rank(s):" % k), mape(ph_by_ranks[k]))
for k in sorted(ph_by_name):
    print("%-40s" % ("per-phase MAPE (>= 5%%), %s:" % k), mape(ph_by_name[k]))
for ph, r in sorted(ph_by_name_ranks):
    print("%-40s" % ("per-phase MAPE (>= 5%%), %s, %d rank(s):" % (ph, r)),
          mape(ph_by_name_ranks[(ph, r)]))
print("per-phase MAPE, every phase:            ", mape(ph_err))
print("iteration-time MAPE, fastest repeat:    ", mape(it_fast))
print("noise: mean spread of the repeats:      ", mape(noise))
if best_link:
    print("core link: fast state up to 1.5x %s; measured runs outside it: %d%s" % (
        ", ".join("%.2f us at %d ranks" % (v, k) for k, v in sorted(best_link.items())),
        len(slow_links), " (" + ", ".join(slow_links) + ")" if slow_links else ""))
EOF
