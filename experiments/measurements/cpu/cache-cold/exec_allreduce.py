"""rectwin-exec's dense AllReduce of DLRM at 2 ranks (9475588 bytes), from the committed
validation runs: per run, the call of the rank that arrived last (its wait for the other
rank is the least), in ms, over the 4 plans x 5 runs of each directory.
usage: python3 exec_allreduce.py [VALIDATION_DIR ...]  (default: the three runs of 2026-11-23
       in five rounds: 08:23 and 08:04, cache-cold collective calibration; 06:02, hot)"""
import csv
import glob
import os
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
dirs = sys.argv[1:] or [os.path.join(here, "..", d) for d in
                        ("validation-2026-11-23-0823", "validation-2026-11-23-0804", "validation-2026-11-23-hot-collectives")]
for d in dirs:
    v = []
    for case in ("dlrm-flat-2", "dlrm-fused-2", "dlrm-hsp-2", "dlrm-sptt-2"):
        for ops in sorted(glob.glob(os.path.join(d, case, "meas-*", "ops.csv"))):
            calls = [r for r in csv.DictReader(open(ops)) if r["name"] == "dense_grad_allreduce"]
            if calls:
                v.append(min(1e3 * (float(r["end_s"]) - float(r["start_s"])) for r in calls))
    if not v:
        sys.exit("exec_allreduce.py: no DLRM 2-rank runs under %s" % d)
    v.sort()
    print("%s: %d runs, fastest %.2f ms, first quartile %.2f ms, median %.2f ms"
          % (os.path.normpath(os.path.relpath(d, here)), len(v), v[0], v[len(v) // 4],
             statistics.median(v)))
