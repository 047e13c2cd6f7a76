"""A topology with one calibration's tables except the embedding kernels' curves (gather_pool and
sparse_*), which come from another calibration: what the cache-cold embedding kernels alone
change in the CPU validation (README.md).
usage: python3 swap_embedding_kernels.py BASE.yaml EMBEDDING.yaml OUT.yaml
Every run (rank count) of BASE takes the embedding curves of EMBEDDING's run of the same rank
count; a rank count EMBEDDING lacks keeps its own."""
import os
import sys

import yaml


def embedding(k):
    return k["kernel"] == "gather_pool" or k["kernel"].startswith("sparse_")


if len(sys.argv) != 4:
    sys.exit(__doc__)
base = yaml.safe_load(open(sys.argv[1]))
emb = {r["ranks"]: [k for k in r.get("kernels", []) if embedding(k)]
       for r in yaml.safe_load(open(sys.argv[2]))["calibration"]["runs"]}
for run in base["calibration"]["runs"]:
    if emb.get(run["ranks"]):
        run["kernels"] = [k for k in run["kernels"] if not embedding(k)] + emb[run["ranks"]]
base["calibration"]["command"] += " (embedding kernel curves from %s)" % sys.argv[2]
with open(sys.argv[3] + ".tmp", "w") as f:
    yaml.safe_dump(base, f, sort_keys=False)
os.replace(sys.argv[3] + ".tmp", sys.argv[3])
