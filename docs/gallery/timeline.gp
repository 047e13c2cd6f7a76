# Drawn by: rectwin plot timeline results/gallery/pipeline --ranks 2 -o docs/gallery/timeline.png
# Restyle this file and redraw from its directory: gnuplot timeline.gp
# (the data files timeline.*.dat are read from there).
if (!exists("outfile")) outfile = 'timeline.png'
set terminal pngcairo size 1100,342 noenhanced font 'Sans,10'
set output outfile
set encoding utf8

set title 'Timeline (ranks 0-1 of 64): dlrm-criteo (plan flat), engine simgrid, topology dgx-h100, 8 nodes, 64 ranks' font 'Sans,11'
set xlabel 'time from the start of the iteration (ms)'
set xrange [0:3.13670305]
set yrange [7.5:-0.5]
set ytics scale 0 ('rank 0 compute' 0, 'rank 0 comm' 1, 'rank 0 sync_comm' 2, 'rank 0 copy' 3, 'rank 1 compute' 4, 'rank 1 comm' 5, 'rank 1 sync_comm' 6, 'rank 1 copy' 7)
set grid xtics lc rgb '#dddddd'
set mxtics
set arrow from graph 0, first 3.5 to graph 1, first 3.5 nohead lc rgb '#999999' dt 2
set key outside right top title 'phase'
set style fill solid 1.0 noborder
plot \
  'timeline.ops.dat' index 0 using 1:2:3:4 with boxxyerror lc rgb '#4e79a7' title 'input.h2d', \
  'timeline.ops.dat' index 1 using 1:2:3:4 with boxxyerror lc rgb '#f28e2b' title 'emb.fwd.bucketize', \
  'timeline.ops.dat' index 2 using 1:2:3:4 with boxxyerror lc rgb '#59a14f' title 'emb.fwd.ids_a2a', \
  'timeline.ops.dat' index 3 using 1:2:3:4 with boxxyerror lc rgb '#e15759' title 'dense.fwd', \
  'timeline.ops.dat' index 4 using 1:2:3:4 with boxxyerror lc rgb '#76b7b2' title 'dense.bwd', \
  'timeline.ops.dat' index 5 using 1:2:3:4 with boxxyerror lc rgb '#edc948' title 'dense.allreduce', \
  'timeline.ops.dat' index 6 using 1:2:3:4 with boxxyerror lc rgb '#b07aa1' title 'dense.update', \
  'timeline.ops.dat' index 7 using 1:2:3:4 with boxxyerror lc rgb '#ff9da7' title 'emb.bwd.grad_a2a', \
  'timeline.ops.dat' index 8 using 1:2:3:4 with boxxyerror lc rgb '#9c755f' title 'emb.bwd.update', \
  'timeline.ops.dat' index 9 using 1:2:3:4 with boxxyerror lc rgb '#bab0ac' title 'emb.fwd.lookup', \
  'timeline.ops.dat' index 10 using 1:2:3:4 with boxxyerror lc rgb '#1f4e79' title 'emb.fwd.out_a2a', \
  'timeline.ops.dat' index 11 using 1:2:3:4 with boxxyerror lc rgb '#a0522d' title 'emb.fwd.unpermute'

unset output
