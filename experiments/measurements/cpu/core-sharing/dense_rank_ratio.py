# Measured dense phases at 2 and 4 ranks over the same case at 1 rank (fastest runs), from a
# validation set's table: does a second rank on the second core slow a rank's own compute?
# usage: python3 dense_rank_ratio.py TABLE...   (validation*/table-pred-batches-simgrid-cores2-fastest.txt)
import re, sys
for f in sys.argv[1:]:
    meas = {}
    for line in open(f):
        r = re.match(r"(\w+-\w+)-(\d)\s", line)
        for ph in ("dense.fwd", "dense.bwd") if r else ():
            x = re.search(re.escape(ph) + r" [\d.]+/([\d.]+)", line)
            if x: meas[(r.group(1), int(r.group(2)), ph)] = float(x.group(1))
    print(f)
    for (case, ranks, ph), ms in sorted(meas.items()):
        if ranks > 1 and (case, 1, ph) in meas:
            print("  %-12s %-9s %d ranks / 1 rank: %.2f" % (case, ph, ranks, ms / meas[(case, 1, ph)]))
