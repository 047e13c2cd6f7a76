# Drawn by: rectwin plot scaling analytic-plot.csv --by plan.name,topology.scale_out.oversubscription -o scaling-analytic.png --size 1200x700
# Restyle this file and redraw from its directory: gnuplot scaling-analytic.gp
# (the data files scaling-analytic.*.dat are read from there).
if (!exists("outfile")) outfile = 'scaling-analytic.png'
set terminal pngcairo size 1200,700 noenhanced font 'Sans,10'
set output outfile
set encoding utf8

set multiplot layout 1, 2 title 'Scaling: dlrm-criteo, engine analytic, topology dgx-h100 (sweep analytic-plot.csv)' font 'Sans,11'
set logscale x 2
set format x '%g'
set grid lc rgb '#e5e5e5'
set offsets graph 0.05, graph 0.05, 0, 0
set title 'throughput'
set xlabel 'GPUs (ranks)'
set logscale y
set ylabel 'samples/s'
set format y '%.0s %c'
set key top left
plot \
  'scaling-analytic.lines.dat' index 0 using 1:2 with linespoints lw 2 pt 7 lc rgb '#4e79a7' title 'flat / 1:1', \
  'scaling-analytic.lines.dat' index 1 using 1:2 with linespoints lw 2 pt 7 lc rgb '#f28e2b' title 'fused / 1:1', \
  'scaling-analytic.lines.dat' index 2 using 1:2 with linespoints lw 2 pt 7 lc rgb '#59a14f' title 'hsp / 1:1', \
  'scaling-analytic.lines.dat' index 3 using 1:2 with linespoints lw 2 pt 7 lc rgb '#e15759' title 'flat / 2:1', \
  'scaling-analytic.lines.dat' index 4 using 1:2 with linespoints lw 2 pt 7 lc rgb '#76b7b2' title 'fused / 2:1', \
  'scaling-analytic.lines.dat' index 5 using 1:2 with linespoints lw 2 pt 7 lc rgb '#edc948' title 'hsp / 2:1', \
  'scaling-analytic.lines.dat' index 6 using 1:2 with linespoints lw 2 pt 7 lc rgb '#b07aa1' title 'flat / 3:1', \
  'scaling-analytic.lines.dat' index 7 using 1:2 with linespoints lw 2 pt 7 lc rgb '#ff9da7' title 'fused / 3:1', \
  'scaling-analytic.lines.dat' index 8 using 1:2 with linespoints lw 2 pt 7 lc rgb '#9c755f' title 'hsp / 3:1', \
  'scaling-analytic.lines.dat' index 9 using 1:2 with linespoints lw 2 pt 7 lc rgb '#bab0ac' title 'flat / 4:1', \
  'scaling-analytic.lines.dat' index 10 using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f4e79' title 'fused / 4:1', \
  'scaling-analytic.lines.dat' index 11 using 1:2 with linespoints lw 2 pt 7 lc rgb '#a0522d' title 'hsp / 4:1'
set title 'scaling efficiency (per-GPU throughput / the smallest run)'
set xlabel 'GPUs (ranks)'
unset logscale y
set ylabel 'scaling efficiency'
set format y '%.1f'
set yrange [0:1.15]
set key center right opaque
plot \
  1 with lines dt 2 lc rgb '#777777' title 'linear scaling', \
  'scaling-analytic.lines.dat' index 0 using 1:3 with linespoints lw 2 pt 7 lc rgb '#4e79a7' title 'flat / 1:1', \
  'scaling-analytic.lines.dat' index 1 using 1:3 with linespoints lw 2 pt 7 lc rgb '#f28e2b' title 'fused / 1:1', \
  'scaling-analytic.lines.dat' index 2 using 1:3 with linespoints lw 2 pt 7 lc rgb '#59a14f' title 'hsp / 1:1', \
  'scaling-analytic.lines.dat' index 3 using 1:3 with linespoints lw 2 pt 7 lc rgb '#e15759' title 'flat / 2:1', \
  'scaling-analytic.lines.dat' index 4 using 1:3 with linespoints lw 2 pt 7 lc rgb '#76b7b2' title 'fused / 2:1', \
  'scaling-analytic.lines.dat' index 5 using 1:3 with linespoints lw 2 pt 7 lc rgb '#edc948' title 'hsp / 2:1', \
  'scaling-analytic.lines.dat' index 6 using 1:3 with linespoints lw 2 pt 7 lc rgb '#b07aa1' title 'flat / 3:1', \
  'scaling-analytic.lines.dat' index 7 using 1:3 with linespoints lw 2 pt 7 lc rgb '#ff9da7' title 'fused / 3:1', \
  'scaling-analytic.lines.dat' index 8 using 1:3 with linespoints lw 2 pt 7 lc rgb '#9c755f' title 'hsp / 3:1', \
  'scaling-analytic.lines.dat' index 9 using 1:3 with linespoints lw 2 pt 7 lc rgb '#bab0ac' title 'flat / 4:1', \
  'scaling-analytic.lines.dat' index 10 using 1:3 with linespoints lw 2 pt 7 lc rgb '#1f4e79' title 'fused / 4:1', \
  'scaling-analytic.lines.dat' index 11 using 1:3 with linespoints lw 2 pt 7 lc rgb '#a0522d' title 'hsp / 4:1'
unset multiplot

unset output
