#!/usr/bin/env python3
"""Stagger probe: per phase and rank, median over timed windows of wall, thread CPU, run-queue
wait and the rest (blocked: neither running nor runnable); and per window the update's start
order across ranks."""
import csv, glob, sys, statistics as st
from collections import defaultdict
d = sys.argv[1]
rows = []
for f in sorted(glob.glob(d + '/rank-*.csv')):
    rows += list(csv.DictReader(open(f)))
wins = sorted({int(r['window']) for r in rows})
timed = [w for w in wins if w >= wins[0] + 2]
ph = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0, 0]))  # (phase,rank)->window->sums
first = {}
for r in rows:
    w = int(r['window'])
    if w not in timed: continue
    k = (r['phase'], int(r['rank']))
    t0, t1 = float(r['t0']), float(r['t1'])
    s = ph[k][w]
    s[0] += t1 - t0; s[1] += float(r['cpu']); s[2] += float(r['wait']); s[3] += int(r['vcs']); s[4] += int(r['ivcs'])
    first.setdefault((w, int(r['rank'])), t0)
ranks = sorted({int(r['rank']) for r in rows})
phases = []
for r in rows:
    if r['phase'] not in phases: phases.append(r['phase'])
print(f"{'phase':28s} rank   wall    cpu   wait  other(ms)  vcs ivcs  (medians over {len(timed)} windows)")
for p in phases:
    for rk in ranks:
        v = ph[(p, rk)]
        if not v: continue
        med = [st.median([v[w][i] for w in v]) for i in range(5)]
        print(f"{p:28s} {rk:4d} {1e3*med[0]:6.2f} {1e3*med[1]:6.2f} {1e3*med[2]:6.2f} {1e3*(med[0]-med[1]-med[2]):6.2f}  {med[3]:5.0f} {med[4]:4.0f}")
# per window: start of dense.update relative to the window's earliest op start, per rank
print("\nper window: dense.update start / wall / cpu / wait (ms from the window's first op), ranks", ranks)
for w in timed:
    t00 = min(first[(w, rk)] for rk in ranks)
    line = []
    for rk in ranks:
        us = [r for r in rows if int(r['window']) == w and int(r['rank']) == rk and r['phase'] == 'dense.update']
        if not us: continue
        s0 = min(float(r['t0']) for r in us); s1 = max(float(r['t1']) for r in us)
        cpu = sum(float(r['cpu']) for r in us); wt = sum(float(r['wait']) for r in us)
        line.append(f"r{rk} {1e3*(s0-t00):6.1f}/{1e3*(s1-s0):5.1f}/{1e3*cpu:5.1f}/{1e3*wt:5.1f}")
    print(f"w{w:3d}  " + "  ".join(line))
