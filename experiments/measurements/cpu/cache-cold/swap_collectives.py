"""A topology with one calibration's kernel tables and another's collective tables, to tell
what the collective tables alone change in the CPU validation (README.md).
usage: python3 swap_collectives.py KERNELS.yaml COLLECTIVES.yaml OUT.yaml
Every run (rank count) of KERNELS takes the collectives of COLLECTIVES' run of the same rank
count; a rank count COLLECTIVES lacks keeps its own."""
import os
import sys

import yaml

if len(sys.argv) != 4:
    sys.exit(__doc__)
kernels = yaml.safe_load(open(sys.argv[1]))
colls = {r["ranks"]: r.get("collectives")
         for r in yaml.safe_load(open(sys.argv[2]))["calibration"]["runs"]}
for run in kernels["calibration"]["runs"]:
    if colls.get(run["ranks"]) is not None:
        run["collectives"] = colls[run["ranks"]]
kernels["calibration"]["command"] += " (collective tables from %s)" % sys.argv[2]
with open(sys.argv[3] + ".tmp", "w") as f:
    yaml.safe_dump(kernels, f, sort_keys=False)
os.replace(sys.argv[3] + ".tmp", sys.argv[3])
