# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot K3.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 1220,440 enhanced font 'Sans,11'
} else {
  set terminal png size 1220,440 enhanced
}
set output 'K3.png'
set key off
set grid ytics
set samples 2
set multiplot layout 1,3 title 'K3: RelLSTM''s memory grows linearly in T, MemRNN''s quadratically' noenhanced
set title 'RelLSTM''s growth exponent, T = 1600 to 6400' noenhanced
set xtics ('rel_lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [0.76:1.24]
set ylabel 'd log(held MB) / d log T' noenhanced
plot 'K3.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 0.8 with lines dt 2 lw 1.5 lc rgb '#555555', 1.2 with lines dt 2 lw 1.5 lc rgb '#555555'
set title 'MemRNN''s growth exponent, T = 1600 to 6400' noenhanced
set xtics ('mem_rnn' 1) noenhanced
set xrange [0.4:1.6]
set yrange [1.54:2.2600000000000002]
set ylabel 'd log(held MB) / d log T' noenhanced
plot 'K3.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728', 1.6 with lines dt 2 lw 1.5 lc rgb '#555555', 2.2 with lines dt 2 lw 1.5 lc rgb '#555555'
set title 'memory at T = 6400, MemRNN over RelLSTM' noenhanced
set xtics ('mem_rnn' 1, 'rel_lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [417.7524642944336:1950.9563522338867]
set ylabel 'held MB' noenhanced
plot 'K3.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 5 using 1:2 with lines lw 2 lc rgb '#d62728', 'K3.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 7 using 1:2 with lines lw 2 lc rgb '#d62728'
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 1220,440 enhanced font 'Sans,11'
set output 'K3.svg'
set multiplot layout 1,3 title 'K3: RelLSTM''s memory grows linearly in T, MemRNN''s quadratically' noenhanced
set title 'RelLSTM''s growth exponent, T = 1600 to 6400' noenhanced
set xtics ('rel_lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [0.76:1.24]
set ylabel 'd log(held MB) / d log T' noenhanced
plot 'K3.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 0.8 with lines dt 2 lw 1.5 lc rgb '#555555', 1.2 with lines dt 2 lw 1.5 lc rgb '#555555'
set title 'MemRNN''s growth exponent, T = 1600 to 6400' noenhanced
set xtics ('mem_rnn' 1) noenhanced
set xrange [0.4:1.6]
set yrange [1.54:2.2600000000000002]
set ylabel 'd log(held MB) / d log T' noenhanced
plot 'K3.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728', 1.6 with lines dt 2 lw 1.5 lc rgb '#555555', 2.2 with lines dt 2 lw 1.5 lc rgb '#555555'
set title 'memory at T = 6400, MemRNN over RelLSTM' noenhanced
set xtics ('mem_rnn' 1, 'rel_lstm' 2) noenhanced
set xrange [0.4:2.6]
set yrange [417.7524642944336:1950.9563522338867]
set ylabel 'held MB' noenhanced
plot 'K3.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 5 using 1:2 with lines lw 2 lc rgb '#d62728', 'K3.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 7 using 1:2 with lines lw 2 lc rgb '#d62728'
unset multiplot
set output
