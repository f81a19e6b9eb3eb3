# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot K2.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 460,440 enhanced font 'Sans,11'
} else {
  set terminal png size 460,440 enhanced
}
set output 'K2.png'
set key off
set grid ytics
set samples 2
set multiplot layout 1,1 title 'K2: RelLSTM trained on copy at T = 100 still copies at T = 5000' noenhanced
set title 'accuracy at T'' = 5000' noenhanced
set xtics ('rel_lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [55.19999999999999:103.80000000000005]
set ylabel 'accuracy (%)' noenhanced
plot 'K2.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 90 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 460,440 enhanced font 'Sans,11'
set output 'K2.svg'
set multiplot layout 1,1 title 'K2: RelLSTM trained on copy at T = 100 still copies at T = 5000' noenhanced
set title 'accuracy at T'' = 5000' noenhanced
set xtics ('rel_lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [55.19999999999999:103.80000000000005]
set ylabel 'accuracy (%)' noenhanced
plot 'K2.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 90 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output
