# Written by `seqbench report curves`. Restyle freely, then rerun in this directory:
#   gnuplot curves.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 1500,3690 noenhanced font 'Sans,11'
} else {
  set terminal png size 1500,3690 noenhanced
}
set output 'curves.png'
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
set xlabel 'updates'
set xtics 1000
set multiplot title 'Learning curves of the recall runs (small): one line per task.seq_len'
set origin 0.0000, 0.9018
set size 0.2867, 0.0820
unset key
set title 'deltanet [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 0 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 1 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.9018
set size 0.2867, 0.0820
unset key
set title 'deltanet [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 2 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 3 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.9018
set size 0.2867, 0.0820
unset key
set title 'full [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 4 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 5 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.8198
set size 0.2867, 0.0820
unset key
set title 'full [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 6 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 7 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.8198
set size 0.2867, 0.0820
unset key
set title 'gla [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 8 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 9 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.8198
set size 0.2867, 0.0820
unset key
set title 'gla [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 10 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 11 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.7378
set size 0.2867, 0.0820
unset key
set title 'linear_attention [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 12 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 13 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.7378
set size 0.2867, 0.0820
unset key
set title 'linear_attention [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 14 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 15 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.7378
set size 0.2867, 0.0820
unset key
set title 'local [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 16 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 17 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.6558
set size 0.2867, 0.0820
unset key
set title 'local [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 18 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 19 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.6558
set size 0.2867, 0.0820
unset key
set title 'lru [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 20 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 21 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.6558
set size 0.2867, 0.0820
unset key
set title 'lru [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 22 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 23 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.5738
set size 0.2867, 0.0820
unset key
set title 'lstm [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 24 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 25 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.5738
set size 0.2867, 0.0820
unset key
set title 'lstm [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 26 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 27 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.5738
set size 0.2867, 0.0820
unset key
set title 'mamba [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 28 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 29 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.4919
set size 0.2867, 0.0820
unset key
set title 'mamba [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 30 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 31 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.4919
set size 0.2867, 0.0820
unset key
set title 'mem_rnn [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 32 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 33 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.4919
set size 0.2867, 0.0820
unset key
set title 'mem_rnn [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 34 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 35 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.4099
set size 0.2867, 0.0820
unset key
set title 'mlstm [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 36 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 37 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.4099
set size 0.2867, 0.0820
unset key
set title 'mlstm [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 38 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 39 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.4099
set size 0.2867, 0.0820
unset key
set title 'rel_lstm(nu=4,rho=4) [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 40 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 41 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.3279
set size 0.2867, 0.0820
unset key
set title 'rel_lstm(nu=4,rho=4) [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 42 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 43 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.3279
set size 0.2867, 0.0820
unset key
set title 'rel_lstm(nu=16,rho=16) [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 44 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 45 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.3279
set size 0.2867, 0.0820
unset key
set title 'rel_lstm(nu=16,rho=16) [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 46 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 47 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.2459
set size 0.2867, 0.0820
unset key
set title 'retention [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 48 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 49 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.2459
set size 0.2867, 0.0820
unset key
set title 'retention [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 50 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 51 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.2459
set size 0.2867, 0.0820
unset key
set title 'routing [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 52 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 53 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.1640
set size 0.2867, 0.0820
unset key
set title 'routing [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 54 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 55 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.1640
set size 0.2867, 0.0820
unset key
set title 'sab [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 56 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 57 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.1640
set size 0.2867, 0.0820
unset key
set title 'sab [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 58 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 59 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.0820
set size 0.2867, 0.0820
unset key
set title 'slstm [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 60 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 61 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.0820
set size 0.2867, 0.0820
unset key
set title 'slstm [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 62 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 63 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.0820
set size 0.2867, 0.0820
unset key
set title 'smyrf [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 64 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 65 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.0000
set size 0.2867, 0.0820
unset key
set title 'smyrf [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 66 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 67 using 1:2 with linespoints lt 2 pi 1 notitle
# The one key, alone in the strip at the right.
set origin 0.8600, 0
set size 0.1400, 0.9837
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
plot NaN with linespoints lt 1 title 'seq_len = 32', NaN with linespoints lt 2 title 'seq_len = 64'
unset multiplot
set output

# The same figure as SVG, from the same settings: what the PNG's panels and key
# strip changed (ranges, tics, border) must not carry over.
reset
set terminal svg size 1500,3690 noenhanced font 'Sans,11'
set output 'curves.svg'
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
set xlabel 'updates'
set xtics 1000
set multiplot title 'Learning curves of the recall runs (small): one line per task.seq_len'
set origin 0.0000, 0.9018
set size 0.2867, 0.0820
unset key
set title 'deltanet [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 0 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 1 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.9018
set size 0.2867, 0.0820
unset key
set title 'deltanet [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 2 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 3 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.9018
set size 0.2867, 0.0820
unset key
set title 'full [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 4 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 5 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.8198
set size 0.2867, 0.0820
unset key
set title 'full [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 6 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 7 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.8198
set size 0.2867, 0.0820
unset key
set title 'gla [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 8 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 9 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.8198
set size 0.2867, 0.0820
unset key
set title 'gla [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 10 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 11 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.7378
set size 0.2867, 0.0820
unset key
set title 'linear_attention [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 12 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 13 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.7378
set size 0.2867, 0.0820
unset key
set title 'linear_attention [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 14 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 15 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.7378
set size 0.2867, 0.0820
unset key
set title 'local [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 16 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 17 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.6558
set size 0.2867, 0.0820
unset key
set title 'local [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 18 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 19 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.6558
set size 0.2867, 0.0820
unset key
set title 'lru [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 20 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 21 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.6558
set size 0.2867, 0.0820
unset key
set title 'lru [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 22 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 23 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.5738
set size 0.2867, 0.0820
unset key
set title 'lstm [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 24 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 25 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.5738
set size 0.2867, 0.0820
unset key
set title 'lstm [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 26 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 27 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.5738
set size 0.2867, 0.0820
unset key
set title 'mamba [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 28 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 29 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.4919
set size 0.2867, 0.0820
unset key
set title 'mamba [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 30 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 31 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.4919
set size 0.2867, 0.0820
unset key
set title 'mem_rnn [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 32 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 33 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.4919
set size 0.2867, 0.0820
unset key
set title 'mem_rnn [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 34 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 35 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.4099
set size 0.2867, 0.0820
unset key
set title 'mlstm [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 36 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 37 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.4099
set size 0.2867, 0.0820
unset key
set title 'mlstm [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 38 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 39 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.4099
set size 0.2867, 0.0820
unset key
set title 'rel_lstm(nu=4,rho=4) [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 40 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 41 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.3279
set size 0.2867, 0.0820
unset key
set title 'rel_lstm(nu=4,rho=4) [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 42 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 43 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.3279
set size 0.2867, 0.0820
unset key
set title 'rel_lstm(nu=16,rho=16) [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 44 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 45 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.3279
set size 0.2867, 0.0820
unset key
set title 'rel_lstm(nu=16,rho=16) [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 46 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 47 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.2459
set size 0.2867, 0.0820
unset key
set title 'retention [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 48 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 49 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.2459
set size 0.2867, 0.0820
unset key
set title 'retention [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 50 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 51 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.2459
set size 0.2867, 0.0820
unset key
set title 'routing [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 52 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 53 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.1640
set size 0.2867, 0.0820
unset key
set title 'routing [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 54 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 55 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.1640
set size 0.2867, 0.0820
unset key
set title 'sab [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 56 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 57 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.1640
set size 0.2867, 0.0820
unset key
set title 'sab [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 58 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 59 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.0820
set size 0.2867, 0.0820
unset key
set title 'slstm [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 60 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 61 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.2867, 0.0820
set size 0.2867, 0.0820
unset key
set title 'slstm [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 62 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 63 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.5733, 0.0820
set size 0.2867, 0.0820
unset key
set title 'smyrf [width=32]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 64 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 65 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.0000
set size 0.2867, 0.0820
unset key
set title 'smyrf [width=64]' font ''
set ylabel 'accuracy'
unset logscale y
set format y '%g'
set yrange [0:1]
plot 'curves.dat' index 66 using 1:2 with linespoints lt 1 pi 1 notitle, 'curves.dat' index 67 using 1:2 with linespoints lt 2 pi 1 notitle
# The one key, alone in the strip at the right.
set origin 0.8600, 0
set size 0.1400, 0.9837
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
plot NaN with linespoints lt 1 title 'seq_len = 32', NaN with linespoints lt 2 title 'seq_len = 64'
unset multiplot
set output
