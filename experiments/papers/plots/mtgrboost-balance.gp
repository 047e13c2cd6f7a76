# MTGRBoost (seed 000) Fig. 14: rectwin's predicted throughput gain from sequence balancing
# (from mtgrboost-balance.dat, written by ../plots.sh from mtgrboost-balance.txt, the output of
# ../mtgrboost-balance.sh) against the paper's published average (4.4%, GRM 4G: an average
# only, drawn as a dashed line). Redraw: gnuplot mtgrboost-balance.gp
engine = system("sed -n 's/^# engine: //p' mtgrboost-balance.dat")
set terminal pngcairo size 1000,500 font 'Sans,10'
set output 'mtgrboost-balance.png'
set title "MTGRBoost (seed 000), Fig. 14: sequence balancing gain, paper vs rectwin prediction (".engine." engine)\nscenario mtgrboost-balance.yaml (GRM 4G, mtgr-small, exact mode); topology DGX A100 (topologies/dgx-a100.yaml)" font 'Sans,11'
c1='#4e79a7'; c2='#f28e2b'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb '#333333'
set boxwidth 0.9
set grid ytics lc rgb '#dddddd'
set xlabel 'GPUs (A100)'
set ylabel 'samples/s gain over no balancing (%)'
set yrange [-5:22]
set xzeroaxis lt -1
set key left top font 'Sans,9' box opaque
stats 'mtgrboost-balance.dat' index 1 using 1 nooutput; pa = STATS_max
plot 'mtgrboost-balance.dat' index 0 using 2:xtic(1) lc rgb c1 title 'predicted, dynamic batching', \
     '' index 0 using 3 lc rgb c2 title 'predicted, token reallocation', \
     '' index 0 using ($0-0.17):($2+($2<0?-1:0.8)):(sprintf('%+.1f%%', $2)) with labels font 'Sans,9' notitle, \
     '' index 0 using ($0+0.17):($3+0.8):(sprintf('%+.1f%%', $3)) with labels font 'Sans,9' notitle, \
     '' index 1 using (-0.5):1:(4):(0) with vectors nohead dt 2 lw 2 lc rgb '#555555' notitle, \
     NaN with lines dt 2 lw 2 lc rgb '#555555' title sprintf('paper Fig. 14: +%g%% on average (GRM 4G, 8-64 GPUs; average only)', pa)
