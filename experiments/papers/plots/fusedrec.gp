# FusedRec (seed 003) Fig. 6 and Fig. 7a: rectwin's prediction (from fusedrec.dat, written by
# ../plots.sh from fusedrec.txt, the output of ../fusedrec.sh) against the paper's published
# figures (Fig. 6: averages only, dashed lines; Fig. 7a: values). Redraw: gnuplot fusedrec.gp
engine = system("sed -n 's/^# engine: //p' fusedrec.dat")
set terminal pngcairo size 1000,500 font 'Sans,10'
set output 'fusedrec.png'
set multiplot layout 1,2 title "FusedRec (seed 003), Fig. 6 and Fig. 7a: paper vs rectwin prediction (".engine." engine)\nscenario fusedrec.yaml (fusedrec-prod, W_0 synthetic); topology H20 (topologies/h20.yaml), 8 GPUs per node" font 'Sans,11' noenhanced
c1='#4e79a7'; c2='#f28e2b'; cp='#9c9c9c'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb '#333333'
set boxwidth 0.9
set grid ytics lc rgb '#dddddd'
set key right top font 'Sans,9' box opaque
stats 'fusedrec.dat' index 2 every ::0::0 using 1 nooutput; pa = STATS_max
stats 'fusedrec.dat' index 2 every ::1::1 using 1 nooutput; pb = STATS_max
set title 'Fig. 6: throughput gain of FusedRec'
set xlabel 'GPUs (H20)'
set ylabel 'throughput gain (%)'
# room above the tallest bar for the key
stats 'fusedrec.dat' index 0 using 2 nooutput; gmax = STATS_max
set yrange [0:1.4*gmax]
plot 'fusedrec.dat' index 0 using 2:xtic(1) lc rgb c1 title 'predicted, over TFRA', \
     '' index 0 using 3 lc rgb c2 title 'predicted, over TFRA-fused', \
     '' index 2 every ::0::0 using (-0.5):1:(5):(0) with vectors nohead dt 2 lw 2 lc rgb c1 notitle, \
     '' index 2 every ::1::1 using (-0.5):1:(5):(0) with vectors nohead dt 2 lw 2 lc rgb c2 notitle, \
     '' index 0 using ($0+0.17):($3+3):(sprintf('%+.1f%%', $3)) with labels font 'Sans,8' notitle, \
     NaN with lines dt 2 lw 2 lc rgb c1 title sprintf('paper: +%g%% over TFRA (average only)', pa), \
     NaN with lines dt 2 lw 2 lc rgb c2 title sprintf('paper: +%g%% over TFRA-fused (average only)', pb)
set title 'Fig. 7a: AlltoAll rounds and sizes, 32 GPUs'
set xlabel ''
set ylabel 'ratio, fused vs per-feature TFRA (x)'
set yrange [0:40]
set key left top
plot 'fusedrec.dat' index 1 using 2:xtic(1) lc rgb cp title 'paper (Fig. 7a)', \
     '' index 1 using 3 lc rgb c1 title 'predicted', \
     '' index 1 using ($0-0.17):($2+1.2):(sprintf('%.1fx', $2)) with labels font 'Sans,9' notitle, \
     '' index 1 using ($0+0.17):($3+1.2):(sprintf('%.1fx', $3)) with labels font 'Sans,9' notitle
unset multiplot
