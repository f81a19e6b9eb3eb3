# Written by `seqbench report gradnorm`. Restyle freely, then rerun in this directory:
#   gnuplot gradnorm_heatmap_lstm-small.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 960,600 enhanced font 'Sans,11'
} else {
  set terminal png size 960,600 enhanced
}
set output 'gradnorm_heatmap_lstm-small.png'
set title 'lstm-small: gradient norm over training' noenhanced
set xlabel 'time step t'
set ylabel 'training step (updates)'
set cblabel 'log_{10} ‖∂L/∂h_t‖'
set xrange [-0.5:783.5]
set yrange [-50:550]
set tics out nomirror
# viridis: dark = small gradient norm, yellow = large
set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', 4 '#21908d', 5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')
set style fill solid 1.0 border
set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind fillcolor rgb '#d0d0d0' fillstyle solid noborder
set label 'grey cells: 41 zero norms (truncated or underflowed)' at screen 0.01, screen 0.02 font ',9' noenhanced
# Boxes rather than `with image`, which cannot draw a single probe or uneven spacing.
# A NaN colour alone would still paint the box, so NaN cells get no y ($3 == $3 is
# false for NaN) and are skipped.
plot 'gradnorm_heatmap_lstm-small.dat' using 1:($3 == $3 ? $2 : NaN):($1-0.5):($1+0.5):4:5:3 with boxxyerror \
     lc palette notitle

# The same figure as SVG.
set terminal svg size 900,560 enhanced font 'Sans,11'
set output 'gradnorm_heatmap_lstm-small.svg'
replot
set output
