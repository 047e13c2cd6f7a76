#!/usr/bin/env python3
"""One line per probe run: placement, the timed windows in which every rank's dense update ran
alone (wall within 15 % of its CPU time: no other rank computed on its core meanwhile), and per
phase the largest per-rank median (as the validation's phases are taken) of wall time, with the
CPU time and run-queue wait of that rank."""
import csv, glob, json, os, statistics as st, sys
from collections import defaultdict
for d in sorted(glob.glob(sys.argv[1] + '/*-4-*')):
    rows = []
    for f in sorted(glob.glob(d + '/rank-*.csv')):
        rows += list(csv.DictReader(open(f)))
    if not rows: continue
    wins = sorted({int(r['window']) for r in rows})
    timed = [w for w in wins if w >= wins[0] + 2]
    per = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0, 0.0]))
    for r in rows:
        w = int(r['window'])
        if w not in timed: continue
        s = per[(r['phase'], int(r['rank']))][w]
        s[0] += float(r['t1']) - float(r['t0']); s[1] += float(r['cpu']); s[2] += float(r['wait'])
    alone = 0
    for w in timed:
        ok = True
        for rk in range(4):
            wall, cpu, _ = per[('dense.update', rk)][w]
            ok &= wall < 1.15 * cpu
        alone += ok
    name = os.path.basename(d)
    place = 'block' if '-block-' in name else 'cyclic' if '-cyclic-' in name else 'unpinned'
    case = name.split('-4-')[0]
    out = []
    for ph in ('dense.allreduce', 'dense.update', 'emb.bwd.grad_a2a', 'emb.fwd.out_a2a'):
        best = None
        for rk in range(4):
            v = per[(ph, rk)]
            m = [st.median(v[w][i] for w in v) for i in range(3)]
            if best is None or m[0] > best[0]: best = m
        out.append('%s %5.1f (cpu %4.1f, wait %4.1f)' % (ph.split('.')[-1], 1e3 * best[0], 1e3 * best[1], 1e3 * best[2]))
    it = json.load(open(d + '/summary.json'))['iteration_time_s'] * 1e3
    print('%-10s %-8s %-4s alone in %2d/%d windows; iteration %5.1f ms; %s' % (case, place, name[-2:], alone, len(timed), it, '; '.join(out)))
