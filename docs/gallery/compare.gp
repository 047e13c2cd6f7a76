# Drawn by: rectwin plot compare results/gallery/exec-cpu experiments/measurements/cpu/exec-cpu -o docs/gallery/compare.png
# Restyle this file and redraw from its directory: gnuplot compare.gp
# (the data files compare.*.dat are read from there).
if (!exists("outfile")) outfile = 'compare.png'
set terminal pngcairo size 1100,600 noenhanced font 'Sans,10'
set output outfile
set encoding utf8

set title 'Predicted vs measured (MAPE over phases 63.0%): exec-cpu (plan flat), engine analytic vs exec, topology localhost-cpu, 4 nodes, 4 ranks' font 'Sans,11'
set logscale y
set yrange [0.0001:1e+03]
set ylabel 'time (ms)'
set format y '%g'
set grid ytics lc rgb '#e5e5e5'
set arrow from 0.5, graph 0 to 0.5, graph 1 nohead dt 2 lc rgb '#999999'
set key top right
set style fill solid 0.9 border lc rgb '#ffffff'
set xtics scale 0 rotate by 30 right ('iteration' 0, 'emb.fwd.bucketize' 1, 'emb.fwd.ids_a2a' 2, 'emb.fwd.lookup' 3, 'emb.fwd.out_a2a' 4, 'emb.fwd.unpermute' 5, 'dense.fwd' 6, 'dense.bwd' 7, 'dense.allreduce' 8, 'dense.update' 9, 'emb.bwd.grad_a2a' 10, 'emb.bwd.update' 11)
set xrange [-0.6:11.6]
plot \
  'compare.bars.dat' index 0 using 1:2:3:4 with boxxyerror lc rgb '#4e79a7' title 'predicted (analytic)', \
  'compare.bars.dat' index 1 using 1:2:3:4 with boxxyerror lc rgb '#f28e2b' title 'measured (exec)', \
  'compare.bars.dat' index 2 using 1:2:3 with labels font 'Sans,9' title 'error = (pred - meas) / meas'

unset output
