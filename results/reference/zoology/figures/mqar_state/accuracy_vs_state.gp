# Written by `seqbench report paper`. Restyle freely, then rerun in this directory:
#   gnuplot accuracy_vs_state.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 1466,500 noenhanced font 'Sans,11'
} else {
  set terminal png size 1466,500 noenhanced
}
set output 'accuracy_vs_state.png'
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
set logscale x
set format x '%.0s%cB'
set xlabel 'state carried from token to token (bytes)'
set ylabel 'accuracy (%)'
set yrange [0:105]
set xrange [100:100000]
set multiplot title 'MQAR accuracy against the state carried from token to token (Zoology Figure 2, x = state bytes)'
set origin 0.0000, 0.0000
set size 0.4093, 0.9000
unset key
set title 'T = 32, 4 pairs, vocab 64'
plot 'accuracy_vs_state.dat' index 0 using 1:2 with linespoints lt 1 ps 1.3 title 'deltanet', 'accuracy_vs_state.dat' index 1 using 1:2 with linespoints lt 2 ps 1.3 title 'full', 'accuracy_vs_state.dat' index 2 using 1:2 with linespoints lt 3 ps 1.3 title 'gla', 'accuracy_vs_state.dat' index 3 using 1:2 with linespoints lt 4 ps 1.3 title 'linear_attention', 'accuracy_vs_state.dat' index 4 using 1:2 with linespoints lt 5 ps 1.3 title 'local', 'accuracy_vs_state.dat' index 5 using 1:2 with linespoints lt 6 ps 1.3 title 'lru', 'accuracy_vs_state.dat' index 6 using 1:2 with linespoints lt 7 ps 1.3 title 'lstm', 'accuracy_vs_state.dat' index 7 using 1:2 with linespoints lt 8 ps 1.3 title 'mamba', 'accuracy_vs_state.dat' index 8 using 1:2 with linespoints lt 9 ps 1.3 title 'mem_rnn', 'accuracy_vs_state.dat' index 9 using 1:2 with linespoints lt 10 ps 1.3 title 'mlstm', 'accuracy_vs_state.dat' index 10 using 1:2 with linespoints lt 11 ps 1.3 title 'rel_lstm(nu=16,rho=16)', 'accuracy_vs_state.dat' index 11 using 1:2 with linespoints lt 12 ps 1.3 title 'rel_lstm(nu=4,rho=4)', 'accuracy_vs_state.dat' index 12 using 1:2 with linespoints lt 13 ps 1.3 title 'retention', 'accuracy_vs_state.dat' index 13 using 1:2 with linespoints lt 14 ps 1.3 title 'routing', 'accuracy_vs_state.dat' index 14 using 1:2 with linespoints lt 15 ps 1.3 title 'sab', 'accuracy_vs_state.dat' index 15 using 1:2 with linespoints lt 16 ps 1.3 title 'slstm', 'accuracy_vs_state.dat' index 16 using 1:2 with linespoints lt 17 ps 1.3 title 'smyrf'
set origin 0.4093, 0.0000
set size 0.4093, 0.9000
unset key
set title 'T = 64, 4 pairs, vocab 64'
plot 'accuracy_vs_state.dat' index 17 using 1:2 with linespoints lt 1 ps 1.3 title 'deltanet', 'accuracy_vs_state.dat' index 18 using 1:2 with linespoints lt 2 ps 1.3 title 'full', 'accuracy_vs_state.dat' index 19 using 1:2 with linespoints lt 3 ps 1.3 title 'gla', 'accuracy_vs_state.dat' index 20 using 1:2 with linespoints lt 4 ps 1.3 title 'linear_attention', 'accuracy_vs_state.dat' index 21 using 1:2 with linespoints lt 5 ps 1.3 title 'local', 'accuracy_vs_state.dat' index 22 using 1:2 with linespoints lt 6 ps 1.3 title 'lru', 'accuracy_vs_state.dat' index 23 using 1:2 with linespoints lt 7 ps 1.3 title 'lstm', 'accuracy_vs_state.dat' index 24 using 1:2 with linespoints lt 8 ps 1.3 title 'mamba', 'accuracy_vs_state.dat' index 25 using 1:2 with linespoints lt 9 ps 1.3 title 'mem_rnn', 'accuracy_vs_state.dat' index 26 using 1:2 with linespoints lt 10 ps 1.3 title 'mlstm', 'accuracy_vs_state.dat' index 27 using 1:2 with linespoints lt 11 ps 1.3 title 'rel_lstm(nu=16,rho=16)', 'accuracy_vs_state.dat' index 28 using 1:2 with linespoints lt 12 ps 1.3 title 'rel_lstm(nu=4,rho=4)', 'accuracy_vs_state.dat' index 29 using 1:2 with linespoints lt 13 ps 1.3 title 'retention', 'accuracy_vs_state.dat' index 30 using 1:2 with linespoints lt 14 ps 1.3 title 'routing', 'accuracy_vs_state.dat' index 31 using 1:2 with linespoints lt 15 ps 1.3 title 'sab', 'accuracy_vs_state.dat' index 32 using 1:2 with linespoints lt 16 ps 1.3 title 'slstm', 'accuracy_vs_state.dat' index 33 using 1:2 with linespoints lt 17 ps 1.3 title 'smyrf'
# The one key, alone in the strip at the right.
set origin 0.8186, 0
set size 0.1814, 0.9000
unset border
unset tics
unset grid
unset xlabel
unset ylabel
unset title
unset logscale
unset colorbox
set xrange [0:1]
set yrange [0:1]
set margins 0, 0, 0, 0
set key inside left top vertical Left reverse samplen 4 spacing 1.2 noenhanced
plot NaN with linespoints lt 1 ps 1.3 title 'deltanet', NaN with linespoints lt 2 ps 1.3 title 'full', NaN with linespoints lt 3 ps 1.3 title 'gla', NaN with linespoints lt 4 ps 1.3 title 'linear_attention', NaN with linespoints lt 5 ps 1.3 title 'local', NaN with linespoints lt 6 ps 1.3 title 'lru', NaN with linespoints lt 7 ps 1.3 title 'lstm', NaN with linespoints lt 8 ps 1.3 title 'mamba', NaN with linespoints lt 9 ps 1.3 title 'mem_rnn', NaN with linespoints lt 10 ps 1.3 title 'mlstm', NaN with linespoints lt 11 ps 1.3 title 'rel_lstm(nu=16,rho=16)', NaN with linespoints lt 12 ps 1.3 title 'rel_lstm(nu=4,rho=4)', NaN with linespoints lt 13 ps 1.3 title 'retention', NaN with linespoints lt 14 ps 1.3 title 'routing', NaN with linespoints lt 15 ps 1.3 title 'sab', NaN with linespoints lt 16 ps 1.3 title 'slstm', NaN with linespoints lt 17 ps 1.3 title 'smyrf'
unset multiplot
set output

# The same figure as SVG, from the same settings: what the PNG's panels and key
# strip changed (ranges, tics, border) must not carry over.
reset
set terminal svg size 1466,500 noenhanced font 'Sans,11'
set output 'accuracy_vs_state.svg'
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
set logscale x
set format x '%.0s%cB'
set xlabel 'state carried from token to token (bytes)'
set ylabel 'accuracy (%)'
set yrange [0:105]
set xrange [100:100000]
set multiplot title 'MQAR accuracy against the state carried from token to token (Zoology Figure 2, x = state bytes)'
set origin 0.0000, 0.0000
set size 0.4093, 0.9000
unset key
set title 'T = 32, 4 pairs, vocab 64'
plot 'accuracy_vs_state.dat' index 0 using 1:2 with linespoints lt 1 ps 1.3 title 'deltanet', 'accuracy_vs_state.dat' index 1 using 1:2 with linespoints lt 2 ps 1.3 title 'full', 'accuracy_vs_state.dat' index 2 using 1:2 with linespoints lt 3 ps 1.3 title 'gla', 'accuracy_vs_state.dat' index 3 using 1:2 with linespoints lt 4 ps 1.3 title 'linear_attention', 'accuracy_vs_state.dat' index 4 using 1:2 with linespoints lt 5 ps 1.3 title 'local', 'accuracy_vs_state.dat' index 5 using 1:2 with linespoints lt 6 ps 1.3 title 'lru', 'accuracy_vs_state.dat' index 6 using 1:2 with linespoints lt 7 ps 1.3 title 'lstm', 'accuracy_vs_state.dat' index 7 using 1:2 with linespoints lt 8 ps 1.3 title 'mamba', 'accuracy_vs_state.dat' index 8 using 1:2 with linespoints lt 9 ps 1.3 title 'mem_rnn', 'accuracy_vs_state.dat' index 9 using 1:2 with linespoints lt 10 ps 1.3 title 'mlstm', 'accuracy_vs_state.dat' index 10 using 1:2 with linespoints lt 11 ps 1.3 title 'rel_lstm(nu=16,rho=16)', 'accuracy_vs_state.dat' index 11 using 1:2 with linespoints lt 12 ps 1.3 title 'rel_lstm(nu=4,rho=4)', 'accuracy_vs_state.dat' index 12 using 1:2 with linespoints lt 13 ps 1.3 title 'retention', 'accuracy_vs_state.dat' index 13 using 1:2 with linespoints lt 14 ps 1.3 title 'routing', 'accuracy_vs_state.dat' index 14 using 1:2 with linespoints lt 15 ps 1.3 title 'sab', 'accuracy_vs_state.dat' index 15 using 1:2 with linespoints lt 16 ps 1.3 title 'slstm', 'accuracy_vs_state.dat' index 16 using 1:2 with linespoints lt 17 ps 1.3 title 'smyrf'
set origin 0.4093, 0.0000
set size 0.4093, 0.9000
unset key
set title 'T = 64, 4 pairs, vocab 64'
plot 'accuracy_vs_state.dat' index 17 using 1:2 with linespoints lt 1 ps 1.3 title 'deltanet', 'accuracy_vs_state.dat' index 18 using 1:2 with linespoints lt 2 ps 1.3 title 'full', 'accuracy_vs_state.dat' index 19 using 1:2 with linespoints lt 3 ps 1.3 title 'gla', 'accuracy_vs_state.dat' index 20 using 1:2 with linespoints lt 4 ps 1.3 title 'linear_attention', 'accuracy_vs_state.dat' index 21 using 1:2 with linespoints lt 5 ps 1.3 title 'local', 'accuracy_vs_state.dat' index 22 using 1:2 with linespoints lt 6 ps 1.3 title 'lru', 'accuracy_vs_state.dat' index 23 using 1:2 with linespoints lt 7 ps 1.3 title 'lstm', 'accuracy_vs_state.dat' index 24 using 1:2 with linespoints lt 8 ps 1.3 title 'mamba', 'accuracy_vs_state.dat' index 25 using 1:2 with linespoints lt 9 ps 1.3 title 'mem_rnn', 'accuracy_vs_state.dat' index 26 using 1:2 with linespoints lt 10 ps 1.3 title 'mlstm', 'accuracy_vs_state.dat' index 27 using 1:2 with linespoints lt 11 ps 1.3 title 'rel_lstm(nu=16,rho=16)', 'accuracy_vs_state.dat' index 28 using 1:2 with linespoints lt 12 ps 1.3 title 'rel_lstm(nu=4,rho=4)', 'accuracy_vs_state.dat' index 29 using 1:2 with linespoints lt 13 ps 1.3 title 'retention', 'accuracy_vs_state.dat' index 30 using 1:2 with linespoints lt 14 ps 1.3 title 'routing', 'accuracy_vs_state.dat' index 31 using 1:2 with linespoints lt 15 ps 1.3 title 'sab', 'accuracy_vs_state.dat' index 32 using 1:2 with linespoints lt 16 ps 1.3 title 'slstm', 'accuracy_vs_state.dat' index 33 using 1:2 with linespoints lt 17 ps 1.3 title 'smyrf'
# The one key, alone in the strip at the right.
set origin 0.8186, 0
set size 0.1814, 0.9000
unset border
unset tics
unset grid
unset xlabel
unset ylabel
unset title
unset logscale
unset colorbox
set xrange [0:1]
set yrange [0:1]
set margins 0, 0, 0, 0
set key inside left top vertical Left reverse samplen 4 spacing 1.2 noenhanced
plot NaN with linespoints lt 1 ps 1.3 title 'deltanet', NaN with linespoints lt 2 ps 1.3 title 'full', NaN with linespoints lt 3 ps 1.3 title 'gla', NaN with linespoints lt 4 ps 1.3 title 'linear_attention', NaN with linespoints lt 5 ps 1.3 title 'local', NaN with linespoints lt 6 ps 1.3 title 'lru', NaN with linespoints lt 7 ps 1.3 title 'lstm', NaN with linespoints lt 8 ps 1.3 title 'mamba', NaN with linespoints lt 9 ps 1.3 title 'mem_rnn', NaN with linespoints lt 10 ps 1.3 title 'mlstm', NaN with linespoints lt 11 ps 1.3 title 'rel_lstm(nu=16,rho=16)', NaN with linespoints lt 12 ps 1.3 title 'rel_lstm(nu=4,rho=4)', NaN with linespoints lt 13 ps 1.3 title 'retention', NaN with linespoints lt 14 ps 1.3 title 'routing', NaN with linespoints lt 15 ps 1.3 title 'sab', NaN with linespoints lt 16 ps 1.3 title 'slstm', NaN with linespoints lt 17 ps 1.3 title 'smyrf'
unset multiplot
set output
