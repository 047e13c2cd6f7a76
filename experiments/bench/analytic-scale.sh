#!/usr/bin/env bash
# Wall time of `rectwin sim --engine analytic` on the flat DLRM scenario at 64, 1024 and
# 16384 H100s (8, 128, 2048 DGX nodes): sampling, graph building and the engine, end to end,
# median and minimum of 5 runs. Target: 16384 GPUs in under 2 s on a 2-core machine.
# usage: experiments/bench/analytic-scale.sh [path/to/rectwin]
set -euo pipefail
cd "$(dirname "$0")/../.."
rectwin=${1:-build/release/cli/rectwin}
[ -x "$rectwin" ] || { echo "no rectwin at $rectwin; build first (scripts/build.sh)" >&2; exit 1; }
python3 - "$rectwin" <<'PY'
import json, statistics, subprocess, sys, tempfile, time
rectwin = sys.argv[1]
print('%-7s %-6s %-12s %9s %9s %13s %9s  %s' % ('gpus', 'nodes', 'mode', 'median_s', 'min_s',
      'iteration_s', 'mfu', 'target'))
with tempfile.TemporaryDirectory() as out:
    for nodes in (8, 128, 2048):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([rectwin, 'sim', 'experiments/dlrm-criteo.yaml', '--engine', 'analytic',
                            '--quiet', '--out', out, '--set', 'topology.nodes=%d' % nodes], check=True)
            times.append(time.perf_counter() - t0)
        s = json.load(open(out + '/summary.json'))
        target = ('< 2 s: ' + ('met' if statistics.median(times) < 2 else 'MISSED')) if nodes == 2048 else ''
        print('%-7d %-6d %-12s %9.3f %9.3f %13.6g %9.5f  %s' % (s['ranks'], nodes, s['workload']['mode'],
              statistics.median(times), min(times), s['iteration_time_s'], s['mfu'], target))
PY
