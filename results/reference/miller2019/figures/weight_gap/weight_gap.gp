# Written by `seqbench report paper`. Restyle freely, then rerun in this directory:
#   gnuplot weight_gap.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 960,560 noenhanced font 'Sans,11'
} else {
  set terminal png size 960,560 noenhanced
}
set output 'weight_gap.png'
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
set title 'Weight gap after projected gradient descent, recurrent vs k-truncated'
set xlabel 'truncation length k'
set ylabel '‖w_recurrent − w_truncated‖ (last step)'
set logscale y
set format y '1e%L'
plot 'weight_gap.dat' index 0 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'weight_gap.dat' index 0 using 1:2 with linespoints lt 1 pi 1 title 'λ = 0.5', 'weight_gap.dat' index 1 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'weight_gap.dat' index 1 using 1:2 with linespoints lt 2 pi 1 title 'λ = 0.8', 'weight_gap.dat' index 2 using 1:3:4 with filledcurves fc rgb '#009E73' fs transparent solid 0.2 noborder notitle, 'weight_gap.dat' index 2 using 1:2 with linespoints lt 3 pi 1 title 'λ = 0.9', 'weight_gap.dat' index 3 using 1:3:4 with filledcurves fc rgb '#CC79A7' fs transparent solid 0.2 noborder notitle, 'weight_gap.dat' index 3 using 1:2 with linespoints lt 4 pi 1 title 'λ = 0.95'
set output

# The same figure as SVG, from the same settings: what the PNG's panels and key
# strip changed (ranges, tics, border) must not carry over.
reset
set terminal svg size 960,560 noenhanced font 'Sans,11'
set output 'weight_gap.svg'
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
set title 'Weight gap after projected gradient descent, recurrent vs k-truncated'
set xlabel 'truncation length k'
set ylabel '‖w_recurrent − w_truncated‖ (last step)'
set logscale y
set format y '1e%L'
plot 'weight_gap.dat' index 0 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'weight_gap.dat' index 0 using 1:2 with linespoints lt 1 pi 1 title 'λ = 0.5', 'weight_gap.dat' index 1 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'weight_gap.dat' index 1 using 1:2 with linespoints lt 2 pi 1 title 'λ = 0.8', 'weight_gap.dat' index 2 using 1:3:4 with filledcurves fc rgb '#009E73' fs transparent solid 0.2 noborder notitle, 'weight_gap.dat' index 2 using 1:2 with linespoints lt 3 pi 1 title 'λ = 0.9', 'weight_gap.dat' index 3 using 1:3:4 with filledcurves fc rgb '#CC79A7' fs transparent solid 0.2 noborder notitle, 'weight_gap.dat' index 3 using 1:2 with linespoints lt 4 pi 1 title 'λ = 0.95'
set output
