# Per-rank GEMM rate of the calibration runs of topologies/localhost-cpu.yaml: how much slower a
# rank computes when 2 or 4 ranks run at once than alone, over the grid's large shapes
# (m, n, k >= 256). Pure time-slicing of 4 ranks on 2 cores is 2.00x; of 2 ranks on 2 cores, 1.00x.
import math, sys, yaml
t = yaml.safe_load(open(sys.argv[1]))
runs = {r["ranks"]: r for r in t["calibration"]["runs"]}
def grid(run):
    g = run["gemm"][0]
    m, n, k, f = g["m"], g["n"], g["k"], g["flops"]
    return {(a, b, c): f[(i * len(n) + j) * len(k) + l]
            for i, a in enumerate(m) for j, b in enumerate(n) for l, c in enumerate(k)}
g1 = grid(runs[1])
for rk in (2, 4):
    g = grid(runs[rk])
    big = [s for s in g1 if min(s) >= 256]
    ratios = [g1[s] / g[s] for s in big]
    gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print("ranks %d: alone rate / rate with %d ranks running, GEMM m,n,k >= 256 (%d shapes): "
          "geometric mean %.2fx, min %.2fx, max %.2fx" % (rk, rk, len(big), gm, min(ratios), max(ratios)))
