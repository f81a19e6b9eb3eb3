# Written by `seqbench report gradnorm`. Restyle freely, then rerun in this directory:
#   gnuplot gradnorm_heatmap_rmsprop_lstm-small.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 960,600 noenhanced font 'Sans,11'
} else {
  set terminal png size 960,600 noenhanced
}
set output 'gradnorm_heatmap_rmsprop_lstm-small.png'
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
set cbrange [-45:0]
set title 'rmsprop_lstm-small: gradient norm over training' noenhanced
set xlabel 'time step t'
set ylabel 'training step (updates)'
set cblabel 'log10 ‖∂L/∂h_t‖'
set xrange [-0.5:783.5]
set yrange [-50:550]
set tics out nomirror
# viridis: dark = small gradient norm, yellow = large
set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', 4 '#21908d', 5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')
set style fill solid 1.0 border
set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind fillcolor rgb '#d0d0d0' fillstyle solid noborder
set label 'grey cells: 303 zero norms (truncated or underflowed)' at screen 0.01, screen 0.02 font ',9' noenhanced
plot 'gradnorm_heatmap_rmsprop_lstm-small.dat' using 1:2:3 with image notitle
set output

# The same figure as SVG, from the same settings: what the PNG's panels and key
# strip changed (ranges, tics, border) must not carry over.
reset
set terminal svg size 900,560 noenhanced font 'Sans,11'
set output 'gradnorm_heatmap_rmsprop_lstm-small.svg'
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
set cbrange [-45:0]
set title 'rmsprop_lstm-small: gradient norm over training' noenhanced
set xlabel 'time step t'
set ylabel 'training step (updates)'
set cblabel 'log10 ‖∂L/∂h_t‖'
set xrange [-0.5:783.5]
set yrange [-50:550]
set tics out nomirror
# viridis: dark = small gradient norm, yellow = large
set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', 4 '#21908d', 5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')
set style fill solid 1.0 border
set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind fillcolor rgb '#d0d0d0' fillstyle solid noborder
set label 'grey cells: 303 zero norms (truncated or underflowed)' at screen 0.01, screen 0.02 font ',9' noenhanced
plot 'gradnorm_heatmap_rmsprop_lstm-small.dat' using 1:2:3 with image notitle
set output
