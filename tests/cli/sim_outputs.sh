#!/usr/bin/env bash
# `rectwin sim --engine analytic` on the DLRM scenario (64 H100s) prints the summary and
# writes summary.json, ops.csv and a trace.json that Perfetto can open.
set -euo pipefail
rectwin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$rectwin" sim "$src/experiments/dlrm-criteo.yaml" --engine analytic --out "$out/r" >"$out/stdout"
for word in "iteration time" MFU MBU comm exposed emb.fwd.out_a2a dense.allreduce; do
  grep -q "$word" "$out/stdout" || { echo "summary lacks '$word'"; cat "$out/stdout"; exit 1; }
done
python3 - "$out/r" <<'PY'
import csv, json, sys
d = sys.argv[1]
s = json.load(open(d + '/summary.json'))
for k in ('iteration_time_s', 'samples_per_s', 'mfu', 'mbu', 'comm_time_s', 'exposed_comm_s',
          'peak_hbm_bytes', 'phases', 'engine', 'settings'):
    assert k in s, k
assert s['ranks'] == 64 and s['engine'] == 'analytic'
assert 0 < s['mfu'] < 1 and 0 < s['mbu'] <= 1
assert 0 < s['exposed_comm_s'] <= s['comm_time_s'] + 1e-12
assert s['iteration_time_s'] > 0
assert abs(s['samples_per_s'] * s['iteration_time_s'] - 64 * 2048) < 1e-6 * 64 * 2048
rows = list(csv.DictReader(open(d + '/ops.csv')))
assert set(rows[0]) >= {'rank', 'phase', 'stream', 'start_s', 'end_s', 'flops', 'bytes'}, rows[0].keys()
assert len({r['rank'] for r in rows}) == 64
assert all(float(r['end_s']) >= float(r['start_s']) >= 0 for r in rows)
t = json.load(open(d + '/trace.json'))
ev = t['traceEvents']
x = [e for e in ev if e['ph'] == 'X']
assert len(x) == len(rows)
assert all(e['dur'] >= 0 and e['ts'] >= 0 and 'pid' in e and 'tid' in e for e in x)
names = {(e['pid'], e['name']) for e in ev if e['ph'] == 'M'}
assert (0, 'process_name') in names and (0, 'thread_name') in names
print('sim outputs ok: iteration', s['iteration_time_s'], 's')
PY
