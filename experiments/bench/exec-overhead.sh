#!/usr/bin/env bash
# Framework overhead of rectwin-exec: host time per iteration spent outside every op (kernel or
# collective), against the iteration, from the measured summary.json. Target on a GPU: at most
# 2 % of the iteration. Prints one line per run.
#   experiments/bench/exec-overhead.sh [RANKS] [rectwin-exec args...]
#   e.g. experiments/bench/exec-overhead.sh 4 experiments/exec-cpu.yaml
#        experiments/bench/exec-overhead.sh 1 experiments/exec-cpu.yaml --device cuda --comm nccl \
#          --set topology.nodes=1
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks=${1:-4}
shift || true
[ $# -gt 0 ] || set -- experiments/exec-cpu.yaml
exec_bin=${RECTWIN_EXEC:-build/release/exec/rectwin-exec}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpi=(mpirun -np "$ranks" --oversubscribe)
if [ "$(id -u)" -eq 0 ]; then mpi+=(--allow-run-as-root); fi
"${mpi[@]}" "$exec_bin" "$@" --quiet --out "$out/r"
python3 - "$out/r/summary.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["settings"]
wall, over = s["iteration_wall_median_s"], s["framework_overhead_s"]
pct = 100 * over / wall if wall > 0 else float("nan")
print(f"device {s['device']} comm {s['comm']} ranks {s['ranks']} plan {j['plan']}: iteration "
      f"{wall * 1e3:.3f} ms (median of {s['iterations']}), framework overhead "
      f"{over * 1e3:.4f} ms = {pct:.3f} % (target on GPU: <= 2 %)")
PY
