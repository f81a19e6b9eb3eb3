# Written by `seqbench report gradnorm`. Restyle freely, then rerun in this directory:
#   gnuplot gradnorm_distance.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 960,600 enhanced font 'Sans,11'
} else {
  set terminal png size 960,600 enhanced
}
set output 'gradnorm_distance.png'
set title 'Gradient norm against distance (probe at training step 500)' noenhanced
set xlabel 'distance from h_t to the last scored output, (L-1) − t'
set ylabel '‖∂L/∂h_t‖  (log scale)'
set logscale y
set format y '10^{%L}'
set grid xtics ytics
set key outside right top noenhanced
set xrange [0:783]
plot 'gradnorm_distance.dat' index 0 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'adam_lstm-small', \
     'gradnorm_distance.dat' index 1 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'lstm-small', \
     'gradnorm_distance.dat' index 2 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'momentum_lstm-small', \
     'gradnorm_distance.dat' index 3 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'rmsprop_lstm-small', \
     'gradnorm_distance.dat' index 4 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'sr_lstm-small'

# The same figure as SVG.
set terminal svg size 900,560 enhanced font 'Sans,11'
set output 'gradnorm_distance.svg'
replot
set output
