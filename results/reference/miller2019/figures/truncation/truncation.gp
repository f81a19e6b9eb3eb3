# Written by `seqbench report paper`. Restyle freely, then rerun in this directory:
#   gnuplot truncation.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 900,560 enhanced font 'Sans,11'
} else {
  set terminal png size 900,560 enhanced
}
set output 'truncation.png'
set title 'Gradient gap between the recurrent and the k-truncated model'
set xlabel 'k'
set ylabel '‖∇_w p_T − ∇_w p_T^k‖'
set logscale y
set grid
plot 'truncation.dat' index 0 using 1:2 with linespoints title 'λ = 0.5', 'truncation.dat' index 1 using 1:2 with linespoints title 'λ = 0.8', 'truncation.dat' index 2 using 1:2 with linespoints title 'λ = 0.9', 'truncation.dat' index 3 using 1:2 with linespoints title 'λ = 0.95'
set output

# The same figure as SVG.
set terminal svg size 900,560 enhanced font 'Sans,11'
set output 'truncation.svg'
plot 'truncation.dat' index 0 using 1:2 with linespoints title 'λ = 0.5', 'truncation.dat' index 1 using 1:2 with linespoints title 'λ = 0.8', 'truncation.dat' index 2 using 1:2 with linespoints title 'λ = 0.9', 'truncation.dat' index 3 using 1:2 with linespoints title 'λ = 0.95'
set output
