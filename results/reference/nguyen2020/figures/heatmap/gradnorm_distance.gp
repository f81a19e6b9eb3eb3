# Written by `seqbench report gradnorm`. Restyle freely, then rerun in this directory:
#   gnuplot gradnorm_distance.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 960,600 noenhanced font 'Sans,11'
} else {
  set terminal png size 960,600 noenhanced
}
set output 'gradnorm_distance.png'
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
set title 'Gradient norm against distance (probe at training step 500)' noenhanced
set xlabel 'distance from h_t to the last scored output, (L-1) − t'
set ylabel '‖∂L/∂h_t‖  (log scale)'
set logscale y
set format y '1e%L'
set xrange [0:783]
plot 'gradnorm_distance.dat' index 0 using 1:2 with linespoints lt 1 pi 66 title 'adam_lstm-small', \
     'gradnorm_distance.dat' index 1 using 1:2 with linespoints lt 2 pi 66 title 'lstm-small', \
     'gradnorm_distance.dat' index 2 using 1:2 with linespoints lt 3 pi 66 title 'momentum_lstm-small', \
     'gradnorm_distance.dat' index 3 using 1:2 with linespoints lt 4 pi 66 title 'rmsprop_lstm-small', \
     'gradnorm_distance.dat' index 4 using 1:2 with linespoints lt 5 pi 66 title 'sr_lstm-small'
set output

# The same figure as SVG, from the same settings: what the PNG's panels and key
# strip changed (ranges, tics, border) must not carry over.
reset
set terminal svg size 900,560 noenhanced font 'Sans,11'
set output 'gradnorm_distance.svg'
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
set title 'Gradient norm against distance (probe at training step 500)' noenhanced
set xlabel 'distance from h_t to the last scored output, (L-1) − t'
set ylabel '‖∂L/∂h_t‖  (log scale)'
set logscale y
set format y '1e%L'
set xrange [0:783]
plot 'gradnorm_distance.dat' index 0 using 1:2 with linespoints lt 1 pi 66 title 'adam_lstm-small', \
     'gradnorm_distance.dat' index 1 using 1:2 with linespoints lt 2 pi 66 title 'lstm-small', \
     'gradnorm_distance.dat' index 2 using 1:2 with linespoints lt 3 pi 66 title 'momentum_lstm-small', \
     'gradnorm_distance.dat' index 3 using 1:2 with linespoints lt 4 pi 66 title 'rmsprop_lstm-small', \
     'gradnorm_distance.dat' index 4 using 1:2 with linespoints lt 5 pi 66 title 'sr_lstm-small'
set output
