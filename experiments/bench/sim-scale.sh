#!/usr/bin/env bash
# Wall time and peak RSS of `rectwin sim` with the SimGrid engine (the default) on the flat
# DLRM scenario at 64, 256, 1024 and 4096 H100s (8 to 512 DGX nodes), end to end: sampling,
# graph building, platform generation and the simulation (which runs in a child process, so
# /usr/bin/time -v reports the larger of the two). Targets on a 2-core machine: 1024 GPUs in
# under 10 s and 2 GiB, 4096 GPUs in under 120 s.
# usage: experiments/bench/sim-scale.sh [path/to/rectwin]
set -euo pipefail
cd "$(dirname "$0")/../.."
rectwin=${1:-build/release/cli/rectwin}
[ -x "$rectwin" ] || { echo "no rectwin at $rectwin; build first (scripts/build.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "no /usr/bin/time: run scripts/install-deps.sh" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-6s %-6s %-12s %-6s %8s %10s %13s  %s\n' gpus nodes mode flows wall_s rss_MiB iteration_s target
for nodes in 8 32 128 512; do
  /usr/bin/time -v -o "$out/time" "$rectwin" sim experiments/dlrm-criteo.yaml --engine simgrid \
    --quiet --out "$out/r" --set topology.nodes="$nodes"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0;
                     for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$out/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$out/time")
  python3 - "$out/r/summary.json" "$nodes" "$wall" "$rss" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
nodes, wall, rss = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
target = ''
if nodes == 128:
    target = '< 10 s, < 2 GiB: ' + ('met' if wall < 10 and rss < 2048 else 'MISSED')
elif nodes == 512:
    target = '< 120 s: ' + ('met' if wall < 120 else 'MISSED')
print('%-6d %-6d %-12s %-6s %8.2f %10.0f %13.6g  %s' % (s['ranks'], nodes, s['workload']['mode'],
      s['settings']['flows'], wall, rss, s['iteration_time_s'], target))
PY
done
