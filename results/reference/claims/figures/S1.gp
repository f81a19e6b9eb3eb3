# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot S1.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 840,440 enhanced font 'Sans,11'
} else {
  set terminal png size 840,440 enhanced
}
set output 'S1.png'
set key off
set grid ytics
set samples 2
set multiplot layout 1,2 title 'S1: Stable models match unstable ones, except LSTM language models' noenhanced
set title 'test bits per word, stable RNN minus RNN' noenhanced
set xtics ('stable_rnn' 1, 'rnn' 2) noenhanced
set xrange [0.4:2.6]
set yrange [8.288862:9.377837999999999]
set ylabel 'bits per word' noenhanced
plot 'S1.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 'S1.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728'
set title 'test bits per word, stable LSTM minus LSTM' noenhanced
set xtics ('stable_lstm' 1, 'lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [7.592207:7.6395230000000005]
set ylabel 'bits per word' noenhanced
plot 'S1.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 5 using 1:2 with lines lw 2 lc rgb '#d62728', 'S1.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 7 using 1:2 with lines lw 2 lc rgb '#d62728'
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 840,440 enhanced font 'Sans,11'
set output 'S1.svg'
set multiplot layout 1,2 title 'S1: Stable models match unstable ones, except LSTM language models' noenhanced
set title 'test bits per word, stable RNN minus RNN' noenhanced
set xtics ('stable_rnn' 1, 'rnn' 2) noenhanced
set xrange [0.4:2.6]
set yrange [8.288862:9.377837999999999]
set ylabel 'bits per word' noenhanced
plot 'S1.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 'S1.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728'
set title 'test bits per word, stable LSTM minus LSTM' noenhanced
set xtics ('stable_lstm' 1, 'lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [7.592207:7.6395230000000005]
set ylabel 'bits per word' noenhanced
plot 'S1.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 5 using 1:2 with lines lw 2 lc rgb '#d62728', 'S1.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 7 using 1:2 with lines lw 2 lc rgb '#d62728'
unset multiplot
set output
