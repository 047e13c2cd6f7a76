# Predicted busbw against size (lines, from collectives-busbw.dat, written by
# collectives-plot.sh) and the published nccl-tests figures of collectives.md (points, the
# same colour as their line; sources [1]-[6] there). Redraw: gnuplot collectives-busbw.gp
set terminal pngcairo size 1200,720 font 'Sans,10'
set output 'collectives-busbw.png'
set title "Collective busbw: predicted (rectwin collective, analytic; topologies as committed) vs published nccl-tests figures" font 'Sans,11'
set logscale xy
set xlabel 'nccl-tests size (bytes)'
set ylabel 'bus bandwidth (GB/s)'
set format x '%.0b%BB'
set xtics (1024, 16384, 262144, 4194304, 67108864, 1073741824, 8589934592) \
  format '%.0b %BB'
set xrange [700:1.4e10]
set yrange [0.05:1000]
set grid xtics ytics mytics lc rgb '#dddddd'
set key left top Left reverse font 'Sans,9' box opaque spacing 1.1
c1='#4e79a7'; c2='#f28e2b'; c3='#59a14f'; c4='#e15759'; c5='#b07aa1'; c6='#76b7b2'; c7='#9c755f'
G=1024.0**3
# published: [1][2] H100 NVLS 480 peak, 476 measured; [1] ring and AllGather ~370; [3] AlltoAll
# 48-49 (drawn at 48.5); [4] A100 232.5; [4][5] 2 nodes 86 and 91; [6] 3 nodes ~96 peak
$published << EOD
8 480 1
8 476 1
8 370 2
8 370 3
8 48.5 4
4 232.5 5
8 86 6
8 91 6
0.125 96 7
EOD
plot for [i=0:6] 'collectives-busbw.dat' index i using 1:2 with linespoints pt 7 ps 0.6 lw 2 \
       lc rgb word(c1.' '.c2.' '.c3.' '.c4.' '.c5.' '.c6.' '.c7, i+1) title columnheader(1), \
     for [i=1:7] $published using ($1*G):($3==i ? $2 : 1/0) with points pt 9 ps 2.2 \
       lc rgb word(c1.' '.c2.' '.c3.' '.c4.' '.c5.' '.c6.' '.c7, i) notitle, \
     NaN with points pt 9 ps 2.2 lc rgb '#555555' title 'published (nccl-tests issues, collectives.md)'
