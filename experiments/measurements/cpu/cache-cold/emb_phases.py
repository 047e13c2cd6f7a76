"""The embedding exchange's phases (emb.*) of every case of a validation directory: predicted
and measured time summed over the emb.* phases, and the MAPE of every emb.* phase over the
cases, by rank count, and the range of predicted / measured of each emb.* phase over the cases
of each rank count, fused and unfused plans apart. The validation's per-phase MAPE counts phases of 5% of the iteration or
more, which the embedding phases seldom are; this is their own account.
usage: python3 emb_phases.py DIR [PRED]   (PRED: the predictions' directory in each case,
default pred-batches-simgrid-cores2; the measurement: each case's fastest run)"""
import glob
import json
import os
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
d = sys.argv[1]
pred = sys.argv[2] if len(sys.argv) > 2 else "pred-batches-simgrid-cores2"
errs = {}
ratios = {}
print("%-14s %10s %10s %7s" % ("case", "emb pred", "emb meas", "err"))
for case in sorted(os.listdir(d)):
    ps = os.path.join(d, case, pred, "summary.json")
    ms = sorted(glob.glob(os.path.join(d, case, "meas-*", "summary.json")))
    if not os.path.exists(ps) or not ms:
        continue
    p = json.load(open(ps))["phases"]
    m = min((json.load(open(f)) for f in ms), key=lambda s: s["iteration_time_s"])["phases"]
    ranks = case.rsplit("-", 1)[1]
    pe = sum(v for k, v in p.items() if k.startswith("emb."))
    me = sum(v for k, v in m.items() if k.startswith("emb."))
    print("%-14s %8.3f ms %8.3f ms %+6.1f%%" % (case, pe * 1e3, me * 1e3, (pe / me - 1) * 100))
    for k, v in m.items():
        if k.startswith("emb.") and v > 0:
            errs.setdefault(ranks, []).append(abs(p.get(k, 0) / v - 1))
            plans = "fused" if "-fused-" in case else "unfused"
            ratios.setdefault((k, plans, ranks), []).append(p.get(k, 0) / v)
for r in sorted(errs):
    e = errs[r]
    print("emb.* phase MAPE, %s rank(s): %.1f%% (%d)" % (r, 100 * sum(e) / len(e), len(e)))
for k, plans, r in sorted(ratios):
    v = ratios[(k, plans, r)]
    print("%-28s %-7s %s rank(s): predicted / measured %.2f-%.2f (%d)" % (k, plans, r, min(v), max(v), len(v)))
