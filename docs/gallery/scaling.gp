# Drawn by: rectwin plot scaling docs/gallery/scaling.csv -o docs/gallery/scaling.png
# Restyle this file and redraw from its directory: gnuplot scaling.gp
# (the data files scaling.*.dat are read from there).
if (!exists("outfile")) outfile = 'scaling.png'
set terminal pngcairo size 1300,550 noenhanced font 'Sans,10'
set output outfile
set encoding utf8

set multiplot layout 1, 2 title 'Scaling: dlrm-criteo, engine analytic, topology dgx-h100 (sweep scaling.csv)' font 'Sans,11'
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
  'scaling.lines.dat' index 0 using 1:2 with linespoints lw 2 pt 7 lc rgb '#4e79a7' title 'flat', \
  'scaling.lines.dat' index 1 using 1:2 with linespoints lw 2 pt 7 lc rgb '#f28e2b' title 'fused', \
  'scaling.lines.dat' index 2 using 1:2 with linespoints lw 2 pt 7 lc rgb '#59a14f' title 'hsp'
set title 'scaling efficiency (per-GPU throughput / the smallest run)'
set xlabel 'GPUs (ranks)'
unset logscale y
set ylabel 'scaling efficiency'
set format y '%.1f'
set yrange [0:1.15]
set key center right opaque
plot \
  1 with lines dt 2 lc rgb '#777777' title 'linear scaling', \
  'scaling.lines.dat' index 0 using 1:3 with linespoints lw 2 pt 7 lc rgb '#4e79a7' title 'flat', \
  'scaling.lines.dat' index 1 using 1:3 with linespoints lw 2 pt 7 lc rgb '#f28e2b' title 'fused', \
  'scaling.lines.dat' index 2 using 1:3 with linespoints lw 2 pt 7 lc rgb '#59a14f' title 'hsp'
unset multiplot

unset output
