#!/usr/bin/env bash
# Predicted (analytic engine on the calibrated topologies/localhost-cpu.yaml) against measured
# (rectwin-exec, CPU device + MPI comm) per phase, for DLRM, DCN and HSTU, every executable
# plan, at 1, 2 and 4 ranks on this machine; prints one table and the MAPE figures that
# experiments/validation/cpu-mpi.md quotes.
#
# usage: experiments/validation/cpu-mpi.sh [BUILD_DIR] [OUT_DIR] [REPEATS]
#   BUILD_DIR  where rectwin and rectwin-exec are (default build/release)
#   OUT_DIR    raw results: <case>/{pred,meas-N}/summary.json, ops.csv (default: a temp dir)
#   REPEATS    exec runs per case (default 3): the measurement is the run of median iteration
#              time; the spread of the repeats ((max - min) / median) is the machine's noise;
#              0: run nothing, only print the table of OUT_DIR's results (for instance the
#              committed experiments/measurements/cpu/validation)
#
# Calibration is not fitted to any of these scenarios: `rectwin calibrate` times kernels and
# collectives alone (exec/calibrate*.c) and the model prices the graph's launches with those
# curves. The DLRM flat rows are the scenario the model was developed against ("dev"); every
# other row is held out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
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

run_case() { # name scenario ranks sets
  local name=$1 scen=$2 ranks=$3 sets=() s
  for s in $4; do sets+=(--set "$s"); done
  sets+=(--set "topology.nodes=$ranks")
  local dir=$OUT/$name
  mkdir -p "$dir"
  if ! "$R" sim "$scen" --engine analytic --quiet --out "$dir/pred" "${sets[@]}" \
    --set workload.mode=exact >"$dir/pred.log" 2>&1; then
    echo "$name: not predicted ($(tail -1 "$dir/pred.log"))" >&2
    return 0
  fi
  for i in $(seq 1 "$REPEATS"); do
    if ! "${MPI[@]}" -np "$ranks" "$X" "$scen" --quiet --out "$dir/meas-$i" "${sets[@]}" </dev/null \
      >"$dir/meas-$i.log" 2>&1; then
      echo "$name: not executed ($(grep -m1 -i 'allowed\|refuse\|not' "$dir/meas-$i.log" || tail -1 "$dir/meas-$i.log"))" >&2
      rm -rf "$dir/meas-$i"
      return 0
    fi
  done
}

if [ "$REPEATS" -gt 0 ]; then
  while IFS='|' read -r name scen ranks sets; do
    echo "running $name" >&2
    run_case "$name" "$scen" "$ranks" "$sets"
  done < <(cases)
fi

python3 - "$OUT" <<'EOF'
import json, os, sys

out = sys.argv[1]
def load(d):
    p = os.path.join(d, "summary.json")
    return json.load(open(p)) if os.path.exists(p) else None

def median_run(d):
    """The repeat of median iteration time, the repeats' spread (max - min) / median, and the
    fastest repeat's iteration time."""
    runs = sorted((r for r in (load(os.path.join(d, x)) for x in sorted(os.listdir(d))
                               if x.startswith("meas-")) if r),
                  key=lambda r: r["iteration_time_s"])
    if not runs:
        return None, None, None
    mid = runs[(len(runs) - 1) // 2]
    t = [r["iteration_time_s"] for r in runs]
    return mid, (t[-1] - t[0]) / mid["iteration_time_s"] if len(runs) > 1 else None, t[0]

rows, it_err, ph_err, ph_err_big, noise = [], {"dev": [], "held-out": []}, [], [], []
it_fast = []
print("%-16s %5s %11s %11s %8s %8s  %s" % ("case", "set", "pred ms", "meas ms", "err", "spread",
                                         "phases (pred/meas ms, error) carrying >= 5% of the iteration"))
for name in sorted(os.listdir(out)):
    d = os.path.join(out, name)
    if not os.path.isdir(os.path.join(d, "pred")):
        continue
    pred = load(os.path.join(d, "pred"))
    meas, spread, fastest = median_run(d)
    if not pred or not meas:
        continue
    group = "dev" if name.startswith("dlrm-flat") else "held-out"
    tp, tm = pred["iteration_time_s"], meas["iteration_time_s"]
    e = (tp - tm) / tm
    it_err[group].append(abs(e))
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
            cells.append("%s %.2f/%.2f %+.0f%%" % (ph, 1e3 * p, 1e3 * m, 100 * pe))
    print("%-16s %5s %11.3f %11.3f %+7.1f%% %8s  %s" % (name, "dev" if group == "dev" else "held",
                                                     1e3 * tp, 1e3 * tm, 100 * e, rep,
                                                     "; ".join(cells)))

def mape(v):
    return "%.1f%% (%d)" % (100 * sum(v) / len(v), len(v)) if v else "n/a"
print()
print("iteration-time MAPE, dev (DLRM flat):   ", mape(it_err["dev"]))
print("iteration-time MAPE, held out:          ", mape(it_err["held-out"]))
print("iteration-time MAPE, all:               ", mape(it_err["dev"] + it_err["held-out"]))
print("per-phase MAPE, phases >= 5% of the iteration:", mape(ph_err_big))
print("per-phase MAPE, every phase:            ", mape(ph_err))
print("iteration-time MAPE, fastest repeat:    ", mape(it_fast))
print("noise: mean spread of the repeats:      ", mape(noise))
EOF
