# Written by seqbench. Restyle freely, then rerun in this directory: gnuplot memory.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 900,560 enhanced font 'Sans,11'
} else {
  set terminal png size 900,560 enhanced
}
set output 'memory.png'
set title 'Memory held for backward against T (one training step)'
set xlabel 'T'
set ylabel 'MB held (activations, attention buffers)'
set logscale y
set grid
set key top left
plot 'memory.dat' index 0 using 1:2 with linespoints title 'lstm', 'memory.dat' index 1 using 1:2 with linespoints title 'mem_rnn', 'memory.dat' index 2 using 1:2 with linespoints title 'rel_lstm', 'memory.dat' index 3 using 1:2 with linespoints title 'rnn', 'memory.dat' index 4 using 1:2 with linespoints title 'sab'
set output
set terminal svg size 900,560 enhanced font 'Sans,11'
set output 'memory.svg'
set title 'Memory held for backward against T (one training step)'
set xlabel 'T'
set ylabel 'MB held (activations, attention buffers)'
set logscale y
set grid
set key top left
plot 'memory.dat' index 0 using 1:2 with linespoints title 'lstm', 'memory.dat' index 1 using 1:2 with linespoints title 'mem_rnn', 'memory.dat' index 2 using 1:2 with linespoints title 'rel_lstm', 'memory.dat' index 3 using 1:2 with linespoints title 'rnn', 'memory.dat' index 4 using 1:2 with linespoints title 'sab'
set output
