# DMT (seed 004) Fig. 10 and Fig. 11: rectwin's predicted speedups (points, from dmt.dat,
# written by ../plots.sh from dmt.txt, the output of ../dmt.sh) against the paper's published
# bounds (dashed lines: the paper gives only "up to"). Redraw: gnuplot dmt.gp
engine = system("sed -n 's/^# engine: //p' dmt.dat")
set terminal pngcairo size 1000,500 font 'Sans,10'
set output 'dmt.png'
set multiplot layout 1,2 title "DMT (seed 004), Fig. 10 and Fig. 11: paper vs rectwin prediction (".engine." engine)\nscenarios dmt-dlrm.yaml, dmt-dcn.yaml; topology DGX H100 (topologies/dgx-h100.yaml), 16 towers" font 'Sans,11'
set xlabel 'hosts (x 8 H100 GPUs)'
set xrange [-0.4:2.4]
set grid ytics lc rgb '#dddddd'
set key left bottom font 'Sans,9' box opaque
c1='#4e79a7'; c2='#e15759'
set title 'Fig. 10: DMT (SPTT + tower module) over flat'
set ylabel 'speedup over flat (x)'
set yrange [0:2.2]
plot 'dmt.dat' index 0 using 0:4:xtic(1) with linespoints pt 7 ps 1.2 lw 2 lc rgb c1 title 'predicted DMT, DLRM', \
     '' index 0 using 0:5 with linespoints pt 5 ps 1.2 lw 2 lc rgb c2 title 'predicted DMT, DCN', \
     '' index 0 using 0:2 with linespoints pt 6 dt 3 lw 1 lc rgb c1 title 'predicted SPTT alone, DLRM', \
     '' index 0 using 0:3 with linespoints pt 4 dt 3 lw 1 lc rgb c2 title 'predicted SPTT alone, DCN', \
     NaN with lines dt 2 lw 2 lc rgb '#555555' title 'paper: up to (bound only)', \
     '' index 1 every ::0::0 using (-0.4):2:(2.8):(0) with vectors nohead dt 2 lw 2 lc rgb c1 notitle, \
     '' index 1 every ::1::1 using (-0.4):2:(2.8):(0) with vectors nohead dt 2 lw 2 lc rgb c2 notitle, \
     '' index 1 every ::0::0 using (2.35):($2+0.06):3 with labels right font 'Sans,9' tc rgb c1 notitle, \
     '' index 1 every ::1::1 using (2.35):($2-0.07):3 with labels right font 'Sans,9' tc rgb c2 notitle
set title 'Fig. 11: tower module over SPTT alone'
set ylabel 'speedup over SPTT alone (x)'
set yrange [0:2.2]
plot 'dmt.dat' index 0 using 0:6:xtic(1) with linespoints pt 7 ps 1.2 lw 2 lc rgb c1 title 'predicted, DLRM (linear TM)', \
     '' index 0 using 0:7 with linespoints pt 5 ps 1.2 lw 2 lc rgb c2 title 'predicted, DCN (crossnet TM)', \
     NaN with lines dt 2 lw 2 lc rgb '#555555' title 'paper: up to (bound only)', \
     '' index 1 every ::2::2 using (-0.4):2:(2.8):(0) with vectors nohead dt 2 lw 2 lc rgb '#555555' notitle, \
     '' index 1 every ::2::2 using (2.35):($2+0.07):3 with labels right font 'Sans,9' tc rgb '#555555' notitle
unset multiplot
