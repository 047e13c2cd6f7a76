# Drawn by: rectwin plot roofline results/gallery/flat -o docs/gallery/roofline.png
# Restyle this file and redraw from its directory: gnuplot roofline.gp
# (the data files roofline.*.dat are read from there).
if (!exists("outfile")) outfile = 'roofline.png'
set terminal pngcairo size 1100,650 noenhanced font 'Sans,10'
set output outfile
set encoding utf8

set title 'Roofline: dlrm-criteo (plan flat), engine analytic, topology dgx-h100, 8 nodes, 64 ranks' font 'Sans,11'
set label 1 'not shown: 268 predicted kernel launches without FLOPs or time (see bwroofline)' at graph 0.02, graph 0.96 font 'Sans,9'
set logscale xy
set grid xtics ytics mxtics mytics lc rgb '#e5e5e5'
set xlabel 'arithmetic intensity (FLOP per byte of HBM traffic)'
set ylabel 'attained performance (FLOP/s)'
set format x '%g'
set format y '%.0s %cFLOP/s'
set key outside right top
hbm_bw = 3.35e+12  # bytes/s
peak_max = 1.9789e+15  # FLOP/s
set samples 2000
set xrange [0.01:1e+04]
set yrange [1e+11:1e+16]
plot \
  x * hbm_bw < peak_max ? x * hbm_bw : 1/0 with lines lw 2 lc rgb '#333333' title 'HBM 3.35 TB/s', \
  x * hbm_bw >= 6.7e+13 ? 6.7e+13 : 1/0 with lines lw 2 lc rgb '#59a14f' title 'fp32 peak 67 TFLOP/s', \
  x * hbm_bw >= 4.947e+14 ? 4.947e+14 : 1/0 with lines lw 2 lc rgb '#b07aa1' title 'tf32 peak 495 TFLOP/s', \
  x * hbm_bw >= 9.894e+14 ? 9.894e+14 : 1/0 with lines lw 2 lc rgb '#f28e2b' title 'bf16/fp16 peak 989 TFLOP/s', \
  x * hbm_bw >= 1.9789e+15 ? 1.9789e+15 : 1/0 with lines lw 2 lc rgb '#9c755f' title 'fp8 peak 1.98 PFLOP/s', \
  'roofline.ops.dat' index 0 using 1:2 with points pt 7 ps 0.8 lc rgb '#4e79a7' title 'predicted embedding ops (52)', \
  'roofline.ops.dat' index 1 using 1:2 with points pt 5 ps 0.8 lc rgb '#e15759' title 'predicted dense ops (448)'

unset output
