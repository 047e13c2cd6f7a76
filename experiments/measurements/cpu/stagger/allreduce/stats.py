import sys, statistics as st
for f in sys.argv[1:]:
    v={}
    for l in open(f):
        k,b,t=l.split(); v.setdefault(k,[]).append(float(t))
    print(f, '; '.join('%s median %.2f min %.2f p25 %.2f p75 %.2f (n=%d)'%(k,st.median(x),min(x),st.quantiles(x,n=4)[0],st.quantiles(x,n=4)[2],len(x)) for k,x in v.items()))
