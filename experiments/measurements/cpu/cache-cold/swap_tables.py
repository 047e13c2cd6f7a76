"""A topology with one calibration's tables except one part, taken from another calibration: what
that part alone changes in the CPU validation (README.md).
usage: python3 swap_tables.py PART BASE.yaml OTHER.yaml OUT.yaml
  PART  collectives: every collective table (ab.sh)
        embedding:   the embedding kernels' curves, gather_pool and sparse_* (ab-embedding.sh)
Every run (rank count) of BASE takes PART from OTHER's run of the same rank count; a rank count
OTHER lacks keeps its own."""
import os
import sys

import yaml


def embedding(k):
    return k["kernel"] == "gather_pool" or k["kernel"].startswith("sparse_")


if len(sys.argv) != 5 or sys.argv[1] not in ("collectives", "embedding"):
    sys.exit(__doc__)
part, base_file, other_file, out = sys.argv[1:]
base = yaml.safe_load(open(base_file))
other = {r["ranks"]: r for r in yaml.safe_load(open(other_file))["calibration"]["runs"]}
for run in base["calibration"]["runs"]:
    o = other.get(run["ranks"])
    if o is None:
        continue
    if part == "collectives" and o.get("collectives") is not None:
        run["collectives"] = o["collectives"]
    if part == "embedding":
        emb = [k for k in o.get("kernels", []) if embedding(k)]
        if emb:
            run["kernels"] = [k for k in run["kernels"] if not embedding(k)] + emb
what = "collective tables" if part == "collectives" else "embedding kernel curves"
base["calibration"]["command"] += " (%s from %s)" % (what, other_file)
with open(out + ".tmp", "w") as f:
    yaml.safe_dump(base, f, sort_keys=False)
os.replace(out + ".tmp", out)
