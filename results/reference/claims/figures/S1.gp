# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot S1.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 910,440 noenhanced font 'Sans,11'
} else {
  set terminal png size 910,440 noenhanced
}
set output 'S1.png'
# The house style ("Figure style" in the report docs): literal text, one number
# format, the key outside, linetypes 1..60 = 12 colour-blind-safe colours x 5 dashes.
set grid xtics ytics lc rgb '#d0d0d0' lw 1 dt 1
set border lw 1 lc rgb '#404040'
set tics out nomirror
set format x '%g'
set format y '%g'
set format cb '%g'
set key outside right top vertical Left reverse samplen 4 spacing 1.2 noenhanced
set style fill transparent solid 0.2 noborder
house_colours = '#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #882255 #999933 #332288 #661100 #888888'
house_points = '7 5 9 13 11 15 4'
do for [i = 1:60] {
  set linetype i lc rgb word(house_colours, (i - 1) % 12 + 1) dt 1 + (i - 1) % 5 \
      pt 0 + word(house_points, 1 + (i - 1) % 7) lw 2 ps 1
}
set linetype cycle 60
set key off
set grid ytics
set samples 2
set multiplot layout 1,2 title 'S1: Stable models match unstable ones, except LSTM language models' noenhanced
set title 'test bits per word, stable RNN minus RNN' noenhanced
set xtics ('stable_rnn' 1, 'rnn' 2) noenhanced
set xrange [0.4:2.6]
set yrange [8.288862:9.377837999999999]
set ylabel 'bits per word' noenhanced
plot 'S1.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 1 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 'S1.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 3 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle
set title 'test bits per word, stable LSTM minus LSTM' noenhanced
set xtics ('stable_lstm' 1, 'lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [7.592207:7.6395230000000005]
set ylabel 'bits per word' noenhanced
plot 'S1.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 5 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 'S1.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 7 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 910,440 noenhanced font 'Sans,11'
set output 'S1.svg'
set multiplot layout 1,2 title 'S1: Stable models match unstable ones, except LSTM language models' noenhanced
set title 'test bits per word, stable RNN minus RNN' noenhanced
set xtics ('stable_rnn' 1, 'rnn' 2) noenhanced
set xrange [0.4:2.6]
set yrange [8.288862:9.377837999999999]
set ylabel 'bits per word' noenhanced
plot 'S1.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 1 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 'S1.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 3 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle
set title 'test bits per word, stable LSTM minus LSTM' noenhanced
set xtics ('stable_lstm' 1, 'lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [7.592207:7.6395230000000005]
set ylabel 'bits per word' noenhanced
plot 'S1.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 5 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 'S1.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 7 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle
unset multiplot
set output
