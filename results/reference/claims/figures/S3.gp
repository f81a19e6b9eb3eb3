# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot S3.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 840,440 enhanced font 'Sans,11'
} else {
  set terminal png size 840,440 enhanced
}
set output 'S3.png'
set key off
set grid ytics
set samples 2
set multiplot layout 1,2 title 'S3: Trained recurrent language models are effectively stable' noenhanced
set title 'log10 input-gradient ratio, far over near, LSTM' noenhanced
set xtics ('lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [-1.7109611642654041:-0.9353671668849632]
set ylabel 'orders of magnitude' noenhanced
plot 'S3.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', -1 with lines dt 2 lw 1.5 lc rgb '#555555'
set title 'log10 input-gradient ratio, far over near, RNN' noenhanced
set xtics ('rnn' 1) noenhanced
set xrange [0.4:1.6]
set yrange [-1.325892831302829:2.5848211443311206]
set ylabel 'orders of magnitude' noenhanced
plot 'S3.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728', -1 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 840,440 enhanced font 'Sans,11'
set output 'S3.svg'
set multiplot layout 1,2 title 'S3: Trained recurrent language models are effectively stable' noenhanced
set title 'log10 input-gradient ratio, far over near, LSTM' noenhanced
set xtics ('lstm' 1) noenhanced
set xrange [0.4:1.6]
set yrange [-1.7109611642654041:-0.9353671668849632]
set ylabel 'orders of magnitude' noenhanced
plot 'S3.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', -1 with lines dt 2 lw 1.5 lc rgb '#555555'
set title 'log10 input-gradient ratio, far over near, RNN' noenhanced
set xtics ('rnn' 1) noenhanced
set xrange [0.4:1.6]
set yrange [-1.325892831302829:2.5848211443311206]
set ylabel 'orders of magnitude' noenhanced
plot 'S3.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728', -1 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output
