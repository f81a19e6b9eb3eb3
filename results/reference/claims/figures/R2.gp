# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot R2.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 460,440 enhanced font 'Sans,11'
} else {
  set terminal png size 460,440 enhanced
}
set output 'R2.png'
set key off
set grid ytics
set samples 2
set multiplot layout 1,1 title 'R2: Routing attention''s cost grows like n^1.5' noenhanced
set title 'slope of log time against log n, n = 1024..16384' noenhanced
set xtics ('routing' 1) noenhanced
set xrange [0.4:1.6]
set yrange [1.26:1.74]
set ylabel 'value per run' noenhanced
plot 'R2.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 1.3 with lines dt 2 lw 1.5 lc rgb '#555555', 1.7 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 460,440 enhanced font 'Sans,11'
set output 'R2.svg'
set multiplot layout 1,1 title 'R2: Routing attention''s cost grows like n^1.5' noenhanced
set title 'slope of log time against log n, n = 1024..16384' noenhanced
set xtics ('routing' 1) noenhanced
set xrange [0.4:1.6]
set yrange [1.26:1.74]
set ylabel 'value per run' noenhanced
plot 'R2.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 1.3 with lines dt 2 lw 1.5 lc rgb '#555555', 1.7 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output
