# MTGRBoost (seed 000) Fig. 16: rectwin's predicted throughput ratios over no dedup (from
# mtgrboost-dedup.dat, written by ../plots.sh from mtgrboost-dedup.txt, the output of
# ../mtgrboost-dedup.sh) against the paper's published range for two-stage (1.1x-3.7x over
# 16-128 GPUs: only the range is given, drawn as its two ends). Redraw: gnuplot mtgrboost-dedup.gp
engine = system("sed -n 's/^# engine: //p' mtgrboost-dedup.dat")
set terminal pngcairo size 1000,500 font 'Sans,10'
set output 'mtgrboost-dedup.png'
set title "MTGRBoost (seed 000), Fig. 16: ID dedup throughput over none, paper vs rectwin prediction (".engine." engine)\nscenario mtgrboost-dedup.yaml (GRM 4G, mtgr-small); topology DGX A100 (topologies/dgx-a100.yaml), 8 GPUs per node" font 'Sans,11'
c1='#4e79a7'; c2='#f28e2b'; c3='#59a14f'
set xlabel 'GPUs (A100)'
set ylabel 'throughput over no dedup (x)'
set xrange [-0.3:3.3]
set yrange [0.8:4.2]
set grid ytics lc rgb '#dddddd'
set key left center font 'Sans,9' box opaque
plot 'mtgrboost-dedup.dat' index 0 using 0:4:xtic(1) with linespoints pt 7 ps 1.2 lw 2 lc rgb c1 title 'predicted two-stage', \
     '' index 0 using 0:2 with linespoints pt 5 ps 1 lw 1.5 lc rgb c2 title 'predicted comm unique (stage 1)', \
     '' index 0 using 0:3 with linespoints pt 9 ps 1.2 lw 1.5 lc rgb c3 title 'predicted lookup unique (stage 2)', \
     '' index 1 using (-0.3):1:(3.6):(0) with vectors nohead dt 2 lw 2 lc rgb '#555555' notitle, \
     '' index 1 using (3.25):($1+0.09):2 with labels right font 'Sans,9' tc rgb '#555555' notitle, \
     NaN with lines dt 2 lw 2 lc rgb '#555555' title 'paper: two-stage range over 16-128 GPUs (ends only)'
