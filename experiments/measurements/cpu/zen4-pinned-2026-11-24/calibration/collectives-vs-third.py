#!/usr/bin/env python3
"""The 4-rank collective curves of the fourth calibration (ranks pinned) against the third's
(unpinned), point by point from 64 KiB: python3 collectives-vs-third.py NEW.yaml THIRD.yaml"""
import sys, yaml
new = yaml.safe_load(open(sys.argv[1]))['calibration']
old = yaml.safe_load(open(sys.argv[2]))['calibration']
def curves(c):
    return [x for r in c['runs'] if r['ranks'] == 4 for x in r['collectives'] if x['ranks'] == 4]
for cn in curves(new):
    co = [x for x in curves(old) if x['op'] == cn['op']][0]
    print(cn['op'], 'over 4 ranks')
    for b, sn, so in zip(cn['bytes'], cn['seconds'], co['seconds']):
        if b >= 1 << 16:
            print('  %10d B  pinned %9.3f ms  unpinned %9.3f ms  ratio %.2f' % (b, sn * 1e3, so * 1e3, sn / so))
