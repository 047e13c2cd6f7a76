# Drawn by: rectwin plot breakdown 4096.csv --by plan.name,topology.scale_out.rail_optimized -o breakdown-4096.png --size 1200x650
# Restyle this file and redraw from its directory: gnuplot breakdown-4096.gp
# (the data files breakdown-4096.*.dat are read from there).
if (!exists("outfile")) outfile = 'breakdown-4096.png'
set terminal pngcairo size 1200,650 noenhanced font 'Sans,10'
set output outfile
set encoding utf8

set title 'Breakdown: dlrm-criteo, engine analytic, topology dgx-h100 (sweep 4096.csv)' font 'Sans,11'
set ylabel 'time per iteration (ms): phases summed over ops, slowest rank'
set yrange [0:*]
set grid ytics lc rgb '#e5e5e5'
set key outside right top
set xtics scale 0 rotate by 30 right ('flat / true' 0, 'fused / true' 1, 'sptt / true' 2, 'hsp / true' 3, 'flat / false' 4, 'fused / false' 5, 'sptt / false' 6, 'hsp / false' 7)
set xrange [-0.7:7.7]
plot \
  'breakdown-4096.bars.dat' index 0 using 1:2:3:4 with boxxyerror lc rgb '#4e79a7' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.bucketize', \
  'breakdown-4096.bars.dat' index 1 using 1:2:3:4 with boxxyerror lc rgb '#f28e2b' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 1 using 1:2:3:4 with boxxyerror lc rgb '#f28e2b' fs transparent pattern 4 border title 'emb.fwd.ids_a2a (comm)', \
  'breakdown-4096.bars.dat' index 2 using 1:2:3:4 with boxxyerror lc rgb '#59a14f' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.lookup', \
  'breakdown-4096.bars.dat' index 3 using 1:2:3:4 with boxxyerror lc rgb '#e15759' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 3 using 1:2:3:4 with boxxyerror lc rgb '#e15759' fs transparent pattern 4 border title 'emb.fwd.out_a2a (comm)', \
  'breakdown-4096.bars.dat' index 4 using 1:2:3:4 with boxxyerror lc rgb '#76b7b2' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.unpermute', \
  'breakdown-4096.bars.dat' index 5 using 1:2:3:4 with boxxyerror lc rgb '#edc948' fs solid 0.9 border lc rgb '#ffffff' title 'dense.fwd', \
  'breakdown-4096.bars.dat' index 6 using 1:2:3:4 with boxxyerror lc rgb '#b07aa1' fs solid 0.9 border lc rgb '#ffffff' title 'dense.bwd', \
  'breakdown-4096.bars.dat' index 7 using 1:2:3:4 with boxxyerror lc rgb '#ff9da7' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 7 using 1:2:3:4 with boxxyerror lc rgb '#ff9da7' fs transparent pattern 4 border title 'dense.allreduce (comm)', \
  'breakdown-4096.bars.dat' index 8 using 1:2:3:4 with boxxyerror lc rgb '#9c755f' fs solid 0.9 border lc rgb '#ffffff' title 'dense.update', \
  'breakdown-4096.bars.dat' index 9 using 1:2:3:4 with boxxyerror lc rgb '#bab0ac' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 9 using 1:2:3:4 with boxxyerror lc rgb '#bab0ac' fs transparent pattern 4 border title 'emb.bwd.grad_a2a (comm)', \
  'breakdown-4096.bars.dat' index 10 using 1:2:3:4 with boxxyerror lc rgb '#1f4e79' fs solid 0.9 border lc rgb '#ffffff' title 'emb.bwd.update', \
  'breakdown-4096.bars.dat' index 11 using 1:2:3:4 with boxxyerror lc rgb '#a0522d' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.unique', \
  'breakdown-4096.bars.dat' index 12 using 1:2:3:4 with boxxyerror lc rgb '#2e7d32' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.sort', \
  'breakdown-4096.bars.dat' index 13 using 1:2:3:4 with boxxyerror lc rgb '#7f7f00' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.hash', \
  'breakdown-4096.bars.dat' index 14 using 1:2:3:4 with boxxyerror lc rgb '#00838f' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.global_unique', \
  'breakdown-4096.bars.dat' index 15 using 1:2:3:4 with boxxyerror lc rgb '#b8860b' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 15 using 1:2:3:4 with boxxyerror lc rgb '#b8860b' fs transparent pattern 4 border title 'emb.fwd.global_ids_a2a (comm)', \
  'breakdown-4096.bars.dat' index 16 using 1:2:3:4 with boxxyerror lc rgb '#6a1b9a' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.peer_permute', \
  'breakdown-4096.bars.dat' index 17 using 1:2:3:4 with boxxyerror lc rgb '#c2185b' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 17 using 1:2:3:4 with boxxyerror lc rgb '#c2185b' fs transparent pattern 4 border title 'emb.fwd.intra_a2a (comm)', \
  'breakdown-4096.bars.dat' index 18 using 1:2:3:4 with boxxyerror lc rgb '#5d4037' fs solid 0.9 border lc rgb '#ffffff' title 'emb.fwd.shuffle', \
  'breakdown-4096.bars.dat' index 19 using 1:2:3:4 with boxxyerror lc rgb '#616161' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 19 using 1:2:3:4 with boxxyerror lc rgb '#616161' fs transparent pattern 4 border title 'emb.fwd.peer_a2a (comm)', \
  'breakdown-4096.bars.dat' index 20 using 1:2:3:4 with boxxyerror lc rgb '#4e79a7' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 20 using 1:2:3:4 with boxxyerror lc rgb '#4e79a7' fs transparent pattern 4 border title 'emb.bwd.peer_a2a (comm)', \
  'breakdown-4096.bars.dat' index 21 using 1:2:3:4 with boxxyerror lc rgb '#f28e2b' fs solid 0.9 border lc rgb '#ffffff' title 'emb.bwd.shuffle', \
  'breakdown-4096.bars.dat' index 22 using 1:2:3:4 with boxxyerror lc rgb '#59a14f' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 22 using 1:2:3:4 with boxxyerror lc rgb '#59a14f' fs transparent pattern 4 border title 'emb.bwd.intra_a2a (comm)', \
  'breakdown-4096.bars.dat' index 23 using 1:2:3:4 with boxxyerror lc rgb '#e15759' fs solid 0.9 border lc rgb '#ffffff' title 'emb.bwd.peer_permute', \
  'breakdown-4096.bars.dat' index 24 using 1:2:3:4 with boxxyerror lc rgb '#76b7b2' fs transparent solid 0.3 noborder notitle, \
  'breakdown-4096.bars.dat' index 24 using 1:2:3:4 with boxxyerror lc rgb '#76b7b2' fs transparent pattern 4 border title 'emb.bwd.cross_group_sync (comm)', \
  'breakdown-4096.bars.dat' index 25 using 1:2:3:4 with boxxyerror fs solid 1.0 noborder lc rgb '#c00000' title 'exposed comm', \
  'breakdown-4096.bars.dat' index 26 using 1:2:3:(0) with vectors nohead lw 3 lc rgb '#000000' title 'iteration time'

unset output
