#!/usr/bin/env bash
# Wall time, CPU time and peak RSS (`/usr/bin/time -v`) of `rectwin sim` with the SimGrid
# engine (the default) on the flat DLRM scenario on DGX H100 nodes, end to end: sampling, graph
# building, platform generation and the simulation (which runs in a child process, so the
# figures cover both). Against the GPU count it prints the log-log slope of wall time and of
# peak RSS between consecutive sizes (1 = linear growth) and marks the targets of issue 10 on a
# 2-core machine: 1024 GPUs in at most 3 s and 1 GiB, 16384 GPUs in at most 120 s and 8 GiB.
# The load average before and after goes with the figures: on a shared machine wall time
# grows with the load, CPU time much less.
#
# usage: experiments/bench/sim-scale.sh [--gpus "64 256 ..."] [--plans "flat ..."]
#                                       [--big-plans "fused ..."] [path/to/rectwin]
#   --gpus       GPU counts, multiples of 8 (default 64 256 1024 2048 4096 8192 16384)
#   --plans      plans run at every GPU count (default flat)
#   --big-plans  plans run at the largest GPU count only (default fused sptt hsp; "" for none;
#                sptt with 16 towers of nodes / 16 hosts and plan.memory: warn)
set -euo pipefail
cd "$(dirname "$0")/../.."
gpus_list="64 256 1024 2048 4096 8192 16384"
plans="flat"
big_plans="fused sptt hsp"
rectwin=build/release/cli/rectwin
while [ $# -gt 0 ]; do
  case "$1" in
    --gpus) gpus_list=$2; shift 2 ;;
    --plans) plans=$2; shift 2 ;;
    --big-plans) big_plans=$2; shift 2 ;;
    -*) echo "sim-scale.sh: unknown option $1 (allowed: --gpus, --plans, --big-plans)" >&2; exit 2 ;;
    *) rectwin=$1; shift ;;
  esac
done
[ -x "$rectwin" ] || { echo "no rectwin at $rectwin; build first (scripts/build.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "no /usr/bin/time: run scripts/install-deps.sh" >&2; exit 1; }
largest=0
for g in $gpus_list; do
  [ $((g % 8)) -eq 0 ] && [ "$g" -gt 0 ] || { echo "sim-scale.sh: $g GPUs is not a multiple of 8 (DGX H100 nodes)" >&2; exit 2; }
  [ "$g" -gt "$largest" ] && largest=$g
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nproc) cores; load before:$(uptime | sed 's/.*load average://')"
printf '%-6s %-6s %-6s %-12s %-6s %8s %8s %8s %11s %10s %13s  %s\n' plan gpus nodes mode flows \
  wall_s cpu_s rss_MiB slope_wall slope_rss iteration_s target
run() { # plan gpus
  local plan=$1 g=$2 nodes=$(($2 / 8)) extra=()
  # sptt needs a tower per feature at most (26 in DLRM Criteo): 16 towers of nodes / 16 hosts.
  # At 16384 GPUs no tower size fits 80 GB (16 towers: 84.4 GB on one rank, 8: 92.9 GB), so the
  # plan's memory check only warns: this measures the engine, not the plan's feasibility.
  [ "$plan" = sptt ] && extra=(--set plan.hosts_per_tower=$((nodes >= 16 ? nodes / 16 : 1))
                               --set plan.memory=warn)
  /usr/bin/time -v -o "$out/time" "$rectwin" sim experiments/dlrm-criteo.yaml --engine simgrid \
    --quiet --out "$out/r" --set topology.nodes="$nodes" --set plan.name="$plan" "${extra[@]}"
  python3 - "$out/r/summary.json" "$out/time" "$plan" "$nodes" "$out/prev-$plan" <<'PY'
import json, math, os, sys
s = json.load(open(sys.argv[1]))
t = {}
for line in open(sys.argv[2]):
    k, _, v = line.strip().rpartition(': ')
    t[k] = v
clock = [float(x) for x in t['Elapsed (wall clock) time (h:mm:ss or m:ss)'].split(':')]
wall = 0.0
for x in clock:
    wall = wall * 60 + x
cpu = float(t['User time (seconds)']) + float(t['System time (seconds)'])
rss = float(t['Maximum resident set size (kbytes)']) / 1024
plan, nodes, prev = sys.argv[3], int(sys.argv[4]), sys.argv[5]
gpus = s['ranks']
sw = sr = '-'
if os.path.exists(prev):
    g0, w0, r0 = (float(x) for x in open(prev).read().split())
    sw = '%.2f' % (math.log(wall / w0) / math.log(gpus / g0))
    sr = '%.2f' % (math.log(rss / r0) / math.log(gpus / g0))
open(prev, 'w').write('%d %.6f %.6f\n' % (gpus, wall, rss))
target = ''
if gpus == 1024:
    target = '<= 3 s, <= 1 GiB: ' + ('met' if wall <= 3 and rss <= 1024 else 'MISSED')
elif gpus == 16384:
    target = '<= 120 s, <= 8 GiB: ' + ('met' if wall <= 120 and rss <= 8192 else 'MISSED')
print('%-6s %-6d %-6d %-12s %-6s %8.2f %8.2f %8.0f %11s %10s %13.9g  %s' % (
    plan, gpus, nodes, s['workload']['mode'], s['settings']['flows'], wall, cpu, rss, sw, sr,
    s['iteration_time_s'], target))
PY
}
for plan in $plans; do
  for g in $gpus_list; do run "$plan" "$g"; done
done
for plan in $big_plans; do
  case " $plans " in *" $plan "*) continue ;; esac
  run "$plan" "$largest"
done
echo "# load after:$(uptime | sed 's/.*load average://')"
