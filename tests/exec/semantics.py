"""Compares --dump directories of rectwin-exec runs of one batch under different plans.

usage: semantics.py REF_DIR OTHER_DIR MODE [--skip T,..] [--adaptive T,.. --lr LR] [--tables-only]
MODE bitwise: pooled embeddings, loss and updated tables must be equal bit for bit (the plans
sum every bag and every row's gradient in the same order). MODE close: within 1e-6 relative
(row-wise sharding sums a bag as per-owner partial sums, HSP sums a row's gradient per group
first, so float addition runs in another order). The error of a reordered float sum is bounded
by the magnitude of its terms, not of its result (a sum that cancels to near 0 keeps the
absolute error of its terms), so the 1e-6 is relative to the largest magnitude in the same
vector (one embedding, one table row).
--skip: tables left out of the table comparison (see semantics.sh for why). --adaptive: tables
whose optimizer (Adagrad, row-wise Adagrad, Adam) divides the step by the gradient's own
magnitude: lr * g / (sqrt(v) + eps). For a gradient that cancels to near 0 that ratio turns a
rounding-level change of g into a step change of up to lr * dg / eps, so in close mode their
rows must agree within lr * 1e-3 absolute, the step change a 1e-11 gradient difference can
cause with eps = 1e-8: the rounding of a reordered float sum of gradients of up to about 1e-4
(float's 6e-8 relative per addition). The bound was lr * 1e-4 (1e-12) until an AMD EPYC guest's
OpenBLAS gave HSP with groups of 1 a step change of 5.8e-6 at lr 0.05 (dg = 1.2e-12) on Adam's
table. SGD tables keep the 1e-6 bound.
--tables-only: compare the final tables alone, for runs whose first iterations differ (a run
resumed from a checkpoint dumps the embeddings and loss of its own first iteration).
"""
import argparse
import glob
import os
import sys


def load(pattern):
    vals = {}
    for path in glob.glob(pattern):
        for line in open(path):
            f = line.split()
            if pattern.endswith("table.*.txt"):
                t, row, col0 = int(f[0]), int(f[1]), int(f[2])
                for j, v in enumerate(f[3:]):
                    vals[(t, row, col0 + j)] = float(v)
            else:
                t, sample = int(f[0]), int(f[1])
                for j, v in enumerate(f[2:]):
                    vals[(t, sample, j)] = float(v)
    return vals


def compare(what, a, b, mode, floor=None):
    if a.keys() != b.keys():
        sys.exit(f"{what}: different elements ({len(a)} vs {len(b)})")
    worst = 0.0
    scale = {}
    for k, x in a.items():
        scale[k[:2]] = max(scale.get(k[:2], 0.0), abs(x), abs(b.get(k, 0.0)))
    for k, x in a.items():
        y = b[k]
        if mode == "bitwise":
            if x != y:
                sys.exit(f"{what}: element {k}: {x!r} != {y!r}")
            continue
        ref = max(abs(x), abs(y), scale[k[:2]], 1e-30)
        err = abs(x - y) / ref
        worst = max(worst, err)
        if floor and k[0] in floor and abs(x - y) <= floor[k[0]]:
            continue
        if err > 1e-6:
            sys.exit(f"{what}: element {k}: {x!r} vs {y!r}")
    print(f"{what}: {len(a)} elements equal ({mode}; worst relative difference {worst:.2e})")


def tables(arg):
    return {int(t) for t in arg.split(",") if t}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("other")
    ap.add_argument("mode", choices=["bitwise", "close"])
    ap.add_argument("--skip", default="")
    ap.add_argument("--adaptive", default="")
    ap.add_argument("--lr", type=float, default=0.0)
    ap.add_argument("--tables-only", action="store_true")
    a = ap.parse_args()
    ref, other, mode, skip = a.ref, a.other, a.mode, tables(a.skip)
    floor = {t: a.lr * 1e-3 for t in tables(a.adaptive)}
    if not a.tables_only:
        compare("pooled embeddings", load(os.path.join(ref, "emb.*.txt")),
                load(os.path.join(other, "emb.*.txt")), mode)
    keep = lambda d: {k: v for k, v in d.items() if k[0] not in skip}
    compare("updated tables", keep(load(os.path.join(ref, "table.*.txt"))),
            keep(load(os.path.join(other, "table.*.txt"))), mode, floor)
    if a.tables_only:
        return
    la = [float(open(p).read()) for p in sorted(glob.glob(os.path.join(ref, "loss.*.txt")))]
    lb = [float(open(p).read()) for p in sorted(glob.glob(os.path.join(other, "loss.*.txt")))]
    if mode == "bitwise" and la != lb:
        sys.exit(f"loss: {la} != {lb}")
    if any(abs(x - y) > 1e-6 * abs(x) for x, y in zip(la, lb)) or len(la) != len(lb):
        sys.exit(f"loss: {la} vs {lb}")
    print(f"loss: equal on {len(la)} ranks")


main()
