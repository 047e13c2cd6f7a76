#!/usr/bin/env python3
"""GEMM rates of calibrations, as cpu-mpi.md quotes them: for each topology file, its 2- and
4-rank runs against its 1-rank run; for each file after the first, each of its runs against the
first file's run of the same rank count. A ratio is the median over the grid shapes the
reference run measured above 20 GFLOP/s (and over all shapes, in parentheses).

usage: python3 gemm-ratio.py REFERENCE.yaml [OTHER.yaml ...]"""
import statistics
import sys

import yaml

BIG = 20e9


def gemm_rates(path):
    """{ranks: [flop/s per grid shape]} of the file's fp32 GEMM tables."""
    runs = yaml.safe_load(open(path))["calibration"]["runs"]
    return {r["ranks"]: next(t["flops"] for t in r["gemm"] if t["dtype"] == "fp32") for r in runs}


def ratio(num, den):
    big = [i for i, v in enumerate(den) if v > BIG]
    med = lambda idx: statistics.median(num[i] / den[i] for i in idx)
    return "%.3fx (%.3fx), %d shapes above 20 GFLOP/s" % (med(big), med(range(len(den))), len(big))


files = sys.argv[1:]
if not files:
    sys.exit(__doc__)
rates = [gemm_rates(p) for p in files]
for path, rate in zip(files, rates):
    for ranks in sorted(rate):
        if ranks != 1 and 1 in rate:
            print("%s: %d-rank / 1-rank GEMM rate %s" % (path, ranks, ratio(rate[ranks], rate[1])))
for path, rate in zip(files[1:], rates[1:]):
    for ranks in sorted(set(rate) & set(rates[0])):
        print("%s / %s, %d rank(s): %s" % (path, files[0], ranks, ratio(rate[ranks], rates[0][ranks])))
