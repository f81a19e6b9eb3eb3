# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot K3.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 1386,440 noenhanced font 'Sans,11'
} else {
  set terminal png size 1386,440 noenhanced
}
set output 'K3.png'
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
set multiplot layout 1,3 title 'K3: RelLSTM''s memory grows linearly in T, MemRNN''s quadratically' noenhanced
set title 'RelLSTM''s growth exponent, T = 1600 to 6400' noenhanced
set xtics ('rel_lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [0.76:1.24]
set ylabel 'd log(held MB) / d log T' noenhanced
plot 'K3.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 1 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 0.8 with lines dt 2 lw 1.5 lc rgb '#555555' notitle, 1.2 with lines dt 2 lw 1.5 lc rgb '#555555' notitle
set title 'MemRNN''s growth exponent, T = 1600 to 6400' noenhanced
set xtics ('mem_rnn' 1) noenhanced
set xrange [0.4:1.6]
set yrange [1.54:2.2600000000000002]
set ylabel 'd log(held MB) / d log T' noenhanced
plot 'K3.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 3 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 1.6 with lines dt 2 lw 1.5 lc rgb '#555555' notitle, 2.2 with lines dt 2 lw 1.5 lc rgb '#555555' notitle
set title 'memory at T = 6400, MemRNN over RelLSTM' noenhanced
set xtics ('mem_rnn' 1, 'rel_lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [417.7524642944336:1950.9563522338867]
set ylabel 'held MB' noenhanced
plot 'K3.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 5 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 'K3.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 7 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 1386,440 noenhanced font 'Sans,11'
set output 'K3.svg'
set multiplot layout 1,3 title 'K3: RelLSTM''s memory grows linearly in T, MemRNN''s quadratically' noenhanced
set title 'RelLSTM''s growth exponent, T = 1600 to 6400' noenhanced
set xtics ('rel_lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [0.76:1.24]
set ylabel 'd log(held MB) / d log T' noenhanced
plot 'K3.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 1 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 0.8 with lines dt 2 lw 1.5 lc rgb '#555555' notitle, 1.2 with lines dt 2 lw 1.5 lc rgb '#555555' notitle
set title 'MemRNN''s growth exponent, T = 1600 to 6400' noenhanced
set xtics ('mem_rnn' 1) noenhanced
set xrange [0.4:1.6]
set yrange [1.54:2.2600000000000002]
set ylabel 'd log(held MB) / d log T' noenhanced
plot 'K3.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 3 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 1.6 with lines dt 2 lw 1.5 lc rgb '#555555' notitle, 2.2 with lines dt 2 lw 1.5 lc rgb '#555555' notitle
set title 'memory at T = 6400, MemRNN over RelLSTM' noenhanced
set xtics ('mem_rnn' 1, 'rel_lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [417.7524642944336:1950.9563522338867]
set ylabel 'held MB' noenhanced
plot 'K3.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 5 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle, 'K3.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#0072B2' notitle, '' index 7 using 1:2 with lines lw 2 dt 1 lc rgb '#D55E00' notitle
unset multiplot
set output
