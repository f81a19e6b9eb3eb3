# Written by `seqbench report gradnorm`. Restyle freely, then rerun in this directory:
#   gnuplot gradnorm_distance.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 960,600 enhanced font 'Sans,11'
} else {
  set terminal png size 960,600 enhanced
}
set output 'gradnorm_distance.png'
set title 'Gradient norm against distance (each run''s last probe)' noenhanced
set xlabel 'distance from h_t to the last scored output, (L-1) − t'
set ylabel '‖∂L/∂h_t‖  (log scale)'
set logscale y
set format y '10^{%L}'
set grid xtics ytics
set key outside right top noenhanced
set xrange [0:219]
set label 'zero norms not drawn on the log axis (sab T=100: 50, sab T=200: 84)' at screen 0.01, screen 0.02 font ',9' noenhanced
plot 'gradnorm_distance.dat' index 0 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'lstm T=100 (step 10000)', \
     'gradnorm_distance.dat' index 1 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'lstm T=200 (step 10000)', \
     'gradnorm_distance.dat' index 2 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'mem_rnn T=100 (step 4000)', \
     'gradnorm_distance.dat' index 3 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'mem_rnn T=200 (step 10000)', \
     'gradnorm_distance.dat' index 4 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'rel_lstm T=100 (step 10000)', \
     'gradnorm_distance.dat' index 5 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'rel_lstm T=200 (step 8000)', \
     'gradnorm_distance.dat' index 6 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'rel_rnn T=100 (step 8000)', \
     'gradnorm_distance.dat' index 7 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'rel_rnn T=200 (step 10000)', \
     'gradnorm_distance.dat' index 8 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'rnn T=100 (step 10000)', \
     'gradnorm_distance.dat' index 9 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'rnn T=200 (step 10000)', \
     'gradnorm_distance.dat' index 10 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'sab T=100 (step 10000)', \
     'gradnorm_distance.dat' index 11 using 1:2 with linespoints lw 2 pt 7 ps 0.5 title 'sab T=200 (step 10000)'

# The same figure as SVG.
set terminal svg size 900,560 enhanced font 'Sans,11'
set output 'gradnorm_distance.svg'
replot
set output
