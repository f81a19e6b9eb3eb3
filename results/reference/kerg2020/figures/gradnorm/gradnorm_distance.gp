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
set title 'Gradient norm against distance (each run''s last probe)' noenhanced
set xlabel 'distance from h_t to the last scored output, (L-1) − t'
set ylabel '‖∂L/∂h_t‖  (log scale)'
set logscale y
set format y '1e%L'
set xrange [0:219]
set bmargin 7
set label 'bands: runs sharing a label, mean ± sd over 3 seeds' at screen 0.01, screen 0.05 font ',9' noenhanced
set label 'zero norms not drawn on the log axis: 532 points of 7 runs (all in the .csv)' at screen 0.01, screen 0.02 font ',9' noenhanced
plot 'gradnorm_distance.dat' index 0 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 0 using 1:2 with linespoints lt 1 pi 10 title 'lstm T=100 (step 10000)', \
     'gradnorm_distance.dat' index 1 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 1 using 1:2 with linespoints lt 2 pi 19 title 'lstm T=200 (step 10000)', \
     'gradnorm_distance.dat' index 2 using 1:3:4 with filledcurves fc rgb '#009E73' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 2 using 1:2 with linespoints lt 3 pi 10 title 'mem_rnn T=100 (steps 4000-10000)', \
     'gradnorm_distance.dat' index 3 using 1:3:4 with filledcurves fc rgb '#CC79A7' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 3 using 1:2 with linespoints lt 4 pi 19 title 'mem_rnn T=200 (steps 4000-10000)', \
     'gradnorm_distance.dat' index 4 using 1:3:4 with filledcurves fc rgb '#E69F00' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 4 using 1:2 with linespoints lt 5 pi 10 title 'rel_lstm T=100 (step 10000)', \
     'gradnorm_distance.dat' index 5 using 1:3:4 with filledcurves fc rgb '#56B4E9' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 5 using 1:2 with linespoints lt 6 pi 19 title 'rel_lstm T=200 (steps 8000-10000)', \
     'gradnorm_distance.dat' index 6 using 1:3:4 with filledcurves fc rgb '#000000' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 6 using 1:2 with linespoints lt 7 pi 10 title 'rel_rnn T=100 (steps 8000-10000)', \
     'gradnorm_distance.dat' index 7 using 1:3:4 with filledcurves fc rgb '#882255' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 7 using 1:2 with linespoints lt 8 pi 19 title 'rel_rnn T=200 (steps 4000-10000)', \
     'gradnorm_distance.dat' index 8 using 1:3:4 with filledcurves fc rgb '#999933' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 8 using 1:2 with linespoints lt 9 pi 10 title 'rnn T=100 (step 10000)', \
     'gradnorm_distance.dat' index 9 using 1:3:4 with filledcurves fc rgb '#332288' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 9 using 1:2 with linespoints lt 10 pi 19 title 'rnn T=200 (step 10000)', \
     'gradnorm_distance.dat' index 10 using 1:3:4 with filledcurves fc rgb '#661100' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 10 using 1:2 with linespoints lt 11 pi 7 title 'sab T=100 (step 10000)', \
     'gradnorm_distance.dat' index 11 using 1:3:4 with filledcurves fc rgb '#888888' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 11 using 1:2 with linespoints lt 12 pi 12 title 'sab T=200 (step 10000)'
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
set title 'Gradient norm against distance (each run''s last probe)' noenhanced
set xlabel 'distance from h_t to the last scored output, (L-1) − t'
set ylabel '‖∂L/∂h_t‖  (log scale)'
set logscale y
set format y '1e%L'
set xrange [0:219]
set bmargin 7
set label 'bands: runs sharing a label, mean ± sd over 3 seeds' at screen 0.01, screen 0.05 font ',9' noenhanced
set label 'zero norms not drawn on the log axis: 532 points of 7 runs (all in the .csv)' at screen 0.01, screen 0.02 font ',9' noenhanced
plot 'gradnorm_distance.dat' index 0 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 0 using 1:2 with linespoints lt 1 pi 10 title 'lstm T=100 (step 10000)', \
     'gradnorm_distance.dat' index 1 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 1 using 1:2 with linespoints lt 2 pi 19 title 'lstm T=200 (step 10000)', \
     'gradnorm_distance.dat' index 2 using 1:3:4 with filledcurves fc rgb '#009E73' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 2 using 1:2 with linespoints lt 3 pi 10 title 'mem_rnn T=100 (steps 4000-10000)', \
     'gradnorm_distance.dat' index 3 using 1:3:4 with filledcurves fc rgb '#CC79A7' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 3 using 1:2 with linespoints lt 4 pi 19 title 'mem_rnn T=200 (steps 4000-10000)', \
     'gradnorm_distance.dat' index 4 using 1:3:4 with filledcurves fc rgb '#E69F00' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 4 using 1:2 with linespoints lt 5 pi 10 title 'rel_lstm T=100 (step 10000)', \
     'gradnorm_distance.dat' index 5 using 1:3:4 with filledcurves fc rgb '#56B4E9' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 5 using 1:2 with linespoints lt 6 pi 19 title 'rel_lstm T=200 (steps 8000-10000)', \
     'gradnorm_distance.dat' index 6 using 1:3:4 with filledcurves fc rgb '#000000' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 6 using 1:2 with linespoints lt 7 pi 10 title 'rel_rnn T=100 (steps 8000-10000)', \
     'gradnorm_distance.dat' index 7 using 1:3:4 with filledcurves fc rgb '#882255' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 7 using 1:2 with linespoints lt 8 pi 19 title 'rel_rnn T=200 (steps 4000-10000)', \
     'gradnorm_distance.dat' index 8 using 1:3:4 with filledcurves fc rgb '#999933' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 8 using 1:2 with linespoints lt 9 pi 10 title 'rnn T=100 (step 10000)', \
     'gradnorm_distance.dat' index 9 using 1:3:4 with filledcurves fc rgb '#332288' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 9 using 1:2 with linespoints lt 10 pi 19 title 'rnn T=200 (step 10000)', \
     'gradnorm_distance.dat' index 10 using 1:3:4 with filledcurves fc rgb '#661100' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 10 using 1:2 with linespoints lt 11 pi 7 title 'sab T=100 (step 10000)', \
     'gradnorm_distance.dat' index 11 using 1:3:4 with filledcurves fc rgb '#888888' fs transparent solid 0.2 noborder notitle, 'gradnorm_distance.dat' index 11 using 1:2 with linespoints lt 12 pi 12 title 'sab T=200 (step 10000)'
set output
