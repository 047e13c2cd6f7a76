"""Each repeat of each 2- and 4-rank case of a validation directory: the core link's round trip
before/after the timed iterations (settings.local_rtt_us, exec/core_link.c), the iteration and
the dense AllReduce phase, and the prediction's AllReduce. usage: python3 link-state.py DIR [PRED]"""
import json, os, sys

d = sys.argv[1]
pred_dir = sys.argv[2] if len(sys.argv) > 2 else "pred-batches-simgrid-cores2"
for name in sorted(os.listdir(d)):
    case = os.path.join(d, name)
    if not os.path.isdir(case) or name.endswith("-1"):
        continue
    p = os.path.join(case, pred_dir, "summary.json")
    pred = json.load(open(p))["phases"].get("dense.allreduce", 0) if os.path.exists(p) else None
    cells = []
    for m in sorted(x for x in os.listdir(case) if x.startswith("meas-") and not x.endswith(".log")):
        s = json.load(open(os.path.join(case, m, "summary.json")))
        rtt = s["settings"].get("local_rtt_us")
        r = "/".join("-" if v is None else "%.2f" % v for v in rtt) if rtt else "n/a"
        cells.append("%s it %.1f ar %.2f" % (r, 1e3 * s["iteration_time_s"],
                                             1e3 * s["phases"].get("dense.allreduce", 0)))
    print("%-14s pred ar %s | %s" % (name, "%.2f" % (1e3 * pred) if pred is not None else "-",
                                     " | ".join(cells)))
