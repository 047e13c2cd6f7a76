# Drawn by: rectwin plot scaling plot-simgrid.csv --by plan.name,topology.faults -o scaling-simgrid.png --size 1200x650
# Restyle this file and redraw from its directory: gnuplot scaling-simgrid.gp
# (the data files scaling-simgrid.*.dat are read from there).
if (!exists("outfile")) outfile = 'scaling-simgrid.png'
set terminal pngcairo size 1200,650 noenhanced font 'Sans,10'
set output outfile
set encoding utf8

set multiplot layout 1, 2 title 'Scaling: dlrm-criteo, engine simgrid, topology dgx-h100 (sweep plot-simgrid.csv)' font 'Sans,11'
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
  'scaling-simgrid.lines.dat' index 0 using 1:2 with linespoints lw 2 pt 7 lc rgb '#4e79a7' title 'flat / healthy', \
  'scaling-simgrid.lines.dat' index 1 using 1:2 with linespoints lw 2 pt 7 lc rgb '#f28e2b' title 'fused / healthy', \
  'scaling-simgrid.lines.dat' index 2 using 1:2 with linespoints lw 2 pt 7 lc rgb '#59a14f' title 'sptt / healthy', \
  'scaling-simgrid.lines.dat' index 3 using 1:2 with linespoints lw 2 pt 7 lc rgb '#e15759' title 'hsp / healthy', \
  'scaling-simgrid.lines.dat' index 4 using 1:2 with linespoints lw 2 pt 7 lc rgb '#76b7b2' title 'flat / nic-0-3 half', \
  'scaling-simgrid.lines.dat' index 5 using 1:2 with linespoints lw 2 pt 7 lc rgb '#edc948' title 'fused / nic-0-3 half', \
  'scaling-simgrid.lines.dat' index 6 using 1:2 with linespoints lw 2 pt 7 lc rgb '#b07aa1' title 'sptt / nic-0-3 half', \
  'scaling-simgrid.lines.dat' index 7 using 1:2 with linespoints lw 2 pt 7 lc rgb '#ff9da7' title 'hsp / nic-0-3 half'
set title 'scaling efficiency (per-GPU throughput / the smallest run)'
set xlabel 'GPUs (ranks)'
unset logscale y
set ylabel 'scaling efficiency'
set format y '%.1f'
set yrange [0:1.15]
set key center right opaque
plot \
  1 with lines dt 2 lc rgb '#777777' title 'linear scaling', \
  'scaling-simgrid.lines.dat' index 0 using 1:3 with linespoints lw 2 pt 7 lc rgb '#4e79a7' title 'flat / healthy', \
  'scaling-simgrid.lines.dat' index 1 using 1:3 with linespoints lw 2 pt 7 lc rgb '#f28e2b' title 'fused / healthy', \
  'scaling-simgrid.lines.dat' index 2 using 1:3 with linespoints lw 2 pt 7 lc rgb '#59a14f' title 'sptt / healthy', \
  'scaling-simgrid.lines.dat' index 3 using 1:3 with linespoints lw 2 pt 7 lc rgb '#e15759' title 'hsp / healthy', \
  'scaling-simgrid.lines.dat' index 4 using 1:3 with linespoints lw 2 pt 7 lc rgb '#76b7b2' title 'flat / nic-0-3 half', \
  'scaling-simgrid.lines.dat' index 5 using 1:3 with linespoints lw 2 pt 7 lc rgb '#edc948' title 'fused / nic-0-3 half', \
  'scaling-simgrid.lines.dat' index 6 using 1:3 with linespoints lw 2 pt 7 lc rgb '#b07aa1' title 'sptt / nic-0-3 half', \
  'scaling-simgrid.lines.dat' index 7 using 1:3 with linespoints lw 2 pt 7 lc rgb '#ff9da7' title 'hsp / nic-0-3 half'
unset multiplot

unset output
