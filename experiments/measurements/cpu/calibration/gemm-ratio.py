# GEMM rates of a calibration's 2- and 4-rank runs against its 1-rank run (the median ratio over the grid
# shapes the 1-rank run measured above 20 GFLOP/s, and over all of them), per topology file given:
#   python3 gemm-ratio.py topologies/localhost-cpu.yaml [OTHER.yaml ...]
import sys, re, statistics
def runs(path):
    txt=open(path).read()
    out={}
    for blk in re.split(r'\n    - ranks: ', txt)[1:]:
        r=int(blk.split('\n',1)[0])
        g=blk.split('gemm:',1)[1]
        fl=g.split('flops: [',1)[1].split(']',1)[0]
        out[r]=[float(x) for x in fl.replace('\n',' ').split(',')]
    return out
for p in sys.argv[1:]:
    R=runs(p); one=R[1]
    big=[i for i,v in enumerate(one) if v>20e9]
    s=f"{p}: shapes {len(one)}, >20GF {len(big)};"
    for r in sorted(R):
        if r==1: continue
        rat=[R[r][i]/one[i] for i in big]
        s+=f" {r}r/1r median {statistics.median(rat):.3f} (all {statistics.median([R[r][i]/one[i] for i in range(len(one))]):.3f});"
    s+=f" 1r max {max(one)/1e9:.1f} GF"
    print(s)
