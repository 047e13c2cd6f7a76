# Drawn by: rectwin plot bwroofline results/gallery/exec-cpu --measured experiments/measurements/cpu/exec-cpu -o docs/gallery/bwroofline.png
# Restyle this file and redraw from its directory: gnuplot bwroofline.gp
# (the data files bwroofline.*.dat are read from there).
if (!exists("outfile")) outfile = 'bwroofline.png'
set terminal pngcairo size 1400,600 noenhanced font 'Sans,10'
set output outfile
set encoding utf8

min(a, b) = a < b ? a : b
roof(x, peak, overhead) = min(peak, x / (x / peak + overhead))
set samples 1000
set multiplot layout 1, 2 title 'Bandwidth roofline: exec-cpu (plan flat), engine analytic vs exec, topology localhost-cpu, 4 nodes, 4 ranks' font 'Sans,11'
set title 'kernels: HBM bandwidth per launch'
set xlabel 'bytes per launch (HBM traffic)'
set ylabel 'attained bandwidth (B/s)'
set logscale xy
set grid xtics ytics mxtics mytics lc rgb '#e5e5e5'
set format x '%.0s %cB'
set format y '%.0s %cB/s'
set key top left box opaque
hbm_bw = 1e+10  # bytes/s
launch = 1e-06  # s
set xrange [100:1e+09]
set yrange [1e+07:1e+12]
plot \
  roof(x, hbm_bw, launch) with lines lw 2 lc rgb '#333333' title 'HBM 10 GB/s', \
  'bwroofline.ops.dat' index 0 using 1:2 with points pt 7 ps 0.8 lc rgb '#4e79a7' title 'predicted embedding kernels (16)', \
  'bwroofline.ops.dat' index 1 using 1:2 with points pt 5 ps 0.8 lc rgb '#e15759' title 'predicted dense kernels (32)', \
  'bwroofline.ops.dat' index 4 using 1:2 with points pt 6 ps 0.8 lc rgb '#4e79a7' title 'measured embedding kernels (16)', \
  'bwroofline.ops.dat' index 5 using 1:2 with points pt 4 ps 0.8 lc rgb '#e15759' title 'measured dense kernels (32)'
set title 'collectives: bus bandwidth per call'
set xlabel 'message size (nccl-tests bytes)'
set ylabel 'bus bandwidth (B/s)'
set logscale xy
set grid xtics ytics mxtics mytics lc rgb '#e5e5e5'
set format x '%.0s %cB'
set format y '%.0s %cB/s'
set key top left box opaque
scale_up_bw = 1e+10  # bytes/s per device
nic_bw = 1.25e+09  # bytes/s per device
coll_lat = 2e-05  # s
set xrange [100:1e+08]
set yrange [1e+07:1e+11]
plot \
  roof(x, scale_up_bw, coll_lat) with lines lw 2 lc rgb '#2e7d32' title 'scale-up 10 GB/s', \
  roof(x, nic_bw, coll_lat) with lines lw 2 lc rgb '#6a1b9a' title 'scale-out NIC 1.25 GB/s', \
  'bwroofline.ops.dat' index 3 using 1:2 with points pt 5 ps 0.8 lc rgb '#b07aa1' title 'predicted across nodes (16)', \
  'bwroofline.ops.dat' index 7 using 1:2 with points pt 4 ps 0.8 lc rgb '#b07aa1' title 'measured across nodes (16)'
unset multiplot

unset output
