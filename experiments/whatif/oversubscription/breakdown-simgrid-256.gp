# Drawn by: rectwin plot breakdown simgrid-256.csv --by plan.name,topology.scale_out.oversubscription -o breakdown-simgrid-256.png --size 1100x600
# Restyle this file and redraw from its directory: gnuplot breakdown-simgrid-256.gp
# (the data files breakdown-simgrid-256.*.dat are read from there).
if (!exists("outfile")) outfile = 'breakdown-simgrid-256.png'
set terminal pngcairo size 1100,600 noenhanced font 'Sans,10'
set output outfile
set encoding utf8

set title 'Breakdown: dlrm-criteo, engine simgrid, topology dgx-h100 (sweep simgrid-256.csv)' font 'Sans,11'
set ylabel 'time per iteration (ms): phases summed over ops, slowest rank'
set yrange [0:*]
set grid ytics lc rgb '#e5e5e5'
set key outside right top
set xtics scale 0 ('flat / 1:1' 0, 'hsp / 1:1' 1, 'flat / 2:1' 2, 'hsp / 2:1' 3, 'flat / 3:1' 4, 'hsp / 3:1' 5, 'flat / 4:1' 6, 'hsp / 4:1' 7)
set xrange [-0.7:7.7]
plot \
  'breakdown-simgrid-256.bars.dat' index 0 using 1:2:3:4 with boxxyerror lc rgb '#4e79a7' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.bucketize', \
  'breakdown-simgrid-256.bars.dat' index 1 using 1:2:3:4 with boxxyerror lc rgb '#f28e2b' fs transparent solid 0.3 noborder notitle, \
  'breakdown-simgrid-256.bars.dat' index 1 using 1:2:3:4 with boxxyerror lc rgb '#f28e2b' fs transparent pattern 4 border title 'emb.fwd.ids_a2a (comm)', \
  'breakdown-simgrid-256.bars.dat' index 2 using 1:2:3:4 with boxxyerror lc rgb '#59a14f' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.lookup', \
  'breakdown-simgrid-256.bars.dat' index 3 using 1:2:3:4 with boxxyerror lc rgb '#e15759' fs transparent solid 0.3 noborder notitle, \
  'breakdown-simgrid-256.bars.dat' index 3 using 1:2:3:4 with boxxyerror lc rgb '#e15759' fs transparent pattern 4 border title 'emb.fwd.out_a2a (comm)', \
  'breakdown-simgrid-256.bars.dat' index 4 using 1:2:3:4 with boxxyerror lc rgb '#76b7b2' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.unpermute', \
  'breakdown-simgrid-256.bars.dat' index 5 using 1:2:3:4 with boxxyerror lc rgb '#edc948' fs solid 0.9 border lc rgb '#ffffff' title 'dense.fwd', \
  'breakdown-simgrid-256.bars.dat' index 6 using 1:2:3:4 with boxxyerror lc rgb '#b07aa1' fs solid 0.9 border lc rgb '#ffffff' title 'dense.bwd', \
  'breakdown-simgrid-256.bars.dat' index 7 using 1:2:3:4 with boxxyerror lc rgb '#ff9da7' fs transparent solid 0.3 noborder notitle, \
  'breakdown-simgrid-256.bars.dat' index 7 using 1:2:3:4 with boxxyerror lc rgb '#ff9da7' fs transparent pattern 4 border title 'dense.allreduce (comm)', \
  'breakdown-simgrid-256.bars.dat' index 8 using 1:2:3:4 with boxxyerror lc rgb '#9c755f' fs solid 0.9 border lc rgb '#ffffff' title 'dense.update', \
  'breakdown-simgrid-256.bars.dat' index 9 using 1:2:3:4 with boxxyerror lc rgb '#bab0ac' fs transparent solid 0.3 noborder notitle, \
  'breakdown-simgrid-256.bars.dat' index 9 using 1:2:3:4 with boxxyerror lc rgb '#bab0ac' fs transparent pattern 4 border title 'emb.bwd.grad_a2a (comm)', \
  'breakdown-simgrid-256.bars.dat' index 10 using 1:2:3:4 with boxxyerror lc rgb '#1f4e79' fs solid 0.9 border lc rgb '#ffffff' title 'emb.bwd.update', \
  'breakdown-simgrid-256.bars.dat' index 11 using 1:2:3:4 with boxxyerror lc rgb '#a0522d' fs transparent solid 0.3 noborder notitle, \
  'breakdown-simgrid-256.bars.dat' index 11 using 1:2:3:4 with boxxyerror lc rgb '#a0522d' fs transparent pattern 4 border title 'emb.bwd.cross_group_sync (comm)', \
  'breakdown-simgrid-256.bars.dat' index 12 using 1:2:3:4 with boxxyerror fs solid 1.0 noborder lc rgb '#c00000' title 'exposed comm', \
  'breakdown-simgrid-256.bars.dat' index 13 using 1:2:3:(0) with vectors nohead lw 3 lc rgb '#000000' title 'iteration time'

unset output
