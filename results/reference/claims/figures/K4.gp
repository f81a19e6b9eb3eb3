# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot K4.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 840,440 enhanced font 'Sans,11'
} else {
  set terminal png size 840,440 enhanced
}
set output 'K4.png'
set key off
set grid ytics
set samples 2
set multiplot layout 1,2 title 'K4: RelLSTM''s gradient does not vanish with distance' noenhanced
set title 'log10 gradient-norm ratio, symbols over outputs, RelLSTM minus LSTM' noenhanced
set xtics ('rel_lstm' 1, 'lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [-15.545232679894287:1.9525651232331533]
set ylabel 'orders of magnitude' noenhanced
plot 'K4.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 'K4.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728'
set title 'log10 gradient-norm ratio of RelLSTM, symbols over outputs' noenhanced
set xtics ('rel_lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [-1.1494415306305867:0.6438568369364536]
set ylabel 'orders of magnitude' noenhanced
plot 'K4.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 5 using 1:2 with lines lw 2 lc rgb '#d62728', -1 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 840,440 enhanced font 'Sans,11'
set output 'K4.svg'
set multiplot layout 1,2 title 'K4: RelLSTM''s gradient does not vanish with distance' noenhanced
set title 'log10 gradient-norm ratio, symbols over outputs, RelLSTM minus LSTM' noenhanced
set xtics ('rel_lstm' 1, 'lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [-15.545232679894287:1.9525651232331533]
set ylabel 'orders of magnitude' noenhanced
plot 'K4.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 'K4.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728'
set title 'log10 gradient-norm ratio of RelLSTM, symbols over outputs' noenhanced
set xtics ('rel_lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [-1.1494415306305867:0.6438568369364536]
set ylabel 'orders of magnitude' noenhanced
plot 'K4.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 5 using 1:2 with lines lw 2 lc rgb '#d62728', -1 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output
