# TurboGR (seed 002) Table 1 and Tables 4-5: rectwin's prediction (from turbogr.dat, written by
# ../plots.sh from turbogr.txt, the output of ../turbogr.sh) next to the paper's published
# values (MFU; and the relative changes computed from the paper's times). Redraw: gnuplot turbogr.gp
engine = system("sed -n 's/^# engine: //p' turbogr.dat")
set terminal pngcairo size 1000,500 font 'Sans,10'
set output 'turbogr.png'
set multiplot layout 1,2 title "TurboGR (seed 002), Table 1 and Tables 4-5: paper vs rectwin prediction (".engine." engine)\nscenario turbogr.yaml (hstu-large, hsp groups of 16); topology 4 x 8 Ascend 910B1 (topologies/ascend-910b.yaml)" font 'Sans,11'
c1='#4e79a7'; cp='#9c9c9c'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb '#333333'
set boxwidth 0.9
set grid ytics lc rgb '#dddddd'
set key left top font 'Sans,9' box opaque
set title 'Table 1: MFU, hsp + semi-async, 32 NPUs'
set ylabel 'MFU (%)'
set yrange [0:62]
set xtics rotate by -35 font 'Sans,9'
plot 'turbogr.dat' index 0 using 2:xtic(1) lc rgb cp title 'paper (Table 1)', \
     '' index 0 using 3 lc rgb c1 title 'predicted', \
     '' index 0 using ($0+0.17):(2):(strlen(stringcolumn(4)) > 0 ? 'refused: HBM' : '') with labels rotate by 90 left font 'Sans,8' tc rgb '#c00000' notitle
set title 'Tables 4 and 5: change (hstu-large, 32 NPUs)'
set ylabel 'change (%)'
set bmargin 5
set yrange [-110:85]
set xtics rotate by 0 font 'Sans,8'
set xzeroaxis lt -1
set key right top
set xtics ("AlltoAll\nflat -> hsp\n(Table 4)" 0, "total comm\nflat -> hsp\n(Table 4)" 1, "unmasked comm\nsync -> semi-async\n(Table 5)" 2)
plot 'turbogr.dat' index 1 using 2 lc rgb cp title 'paper', \
     '' index 1 using 3 lc rgb c1 title 'predicted', \
     '' index 1 using ($0-0.17):($2+($2<0?-5:4)):(sprintf('%+.1f%%', $2)) with labels font 'Sans,9' notitle, \
     '' index 1 using ($0+0.17):($3+($3<0?-5:4)):(sprintf('%+.1f%%', $3)) with labels font 'Sans,9' notitle
unset multiplot
