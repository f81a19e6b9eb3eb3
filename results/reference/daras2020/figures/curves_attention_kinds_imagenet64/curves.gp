# Written by `seqbench report curves`. Restyle freely, then rerun in this directory:
#   gnuplot curves.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 1200,1690 noenhanced font 'Sans,11'
} else {
  set terminal png size 1200,1690 noenhanced
}
set output 'curves.png'
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
set xlabel 'updates'
set xtics 50
set multiplot title 'Learning curves of the attention_kinds_imagenet64 runs (small)'
set origin 0.0000, 0.7716
set size 0.4300, 0.1929
unset key
set title 'full-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 0 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 0 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 1 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 1 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.7716
set size 0.4300, 0.1929
unset key
set title 'full-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 2 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 2 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 3 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 3 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.5787
set size 0.4300, 0.1929
unset key
set title 'local-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 4 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 4 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 5 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 5 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.5787
set size 0.4300, 0.1929
unset key
set title 'local-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 6 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 6 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 7 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 7 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.3858
set size 0.4300, 0.1929
unset key
set title 'lsh-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 8 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 8 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 9 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 9 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.3858
set size 0.4300, 0.1929
unset key
set title 'lsh-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 10 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 10 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 11 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 11 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.1929
set size 0.4300, 0.1929
unset key
set title 'routing-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 12 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 12 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 13 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 13 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.1929
set size 0.4300, 0.1929
unset key
set title 'routing-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 14 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 14 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 15 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 15 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.0000
set size 0.4300, 0.1929
unset key
set title 'smyrf-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 16 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 16 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 17 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 17 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.0000
set size 0.4300, 0.1929
unset key
set title 'smyrf-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 18 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 18 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 19 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 19 using 1:2 with linespoints lt 2 pi 1 notitle
# The one key, alone in the strip at the right.
set origin 0.8600, 0
set size 0.1400, 0.9645
unset border
unset tics
unset grid
unset xlabel
unset ylabel
unset title
unset logscale
unset colorbox
set xrange [0:1]
set yrange [0:1]
set margins 0, 0, 0, 0
set key inside left top vertical Left reverse samplen 4 spacing 1.2 noenhanced
plot NaN with linespoints lt 1 title 'train', NaN with linespoints lt 2 title 'validation'
unset multiplot
set output

# The same figure as SVG, from the same settings: what the PNG's panels and key
# strip changed (ranges, tics, border) must not carry over.
reset
set terminal svg size 1200,1690 noenhanced font 'Sans,11'
set output 'curves.svg'
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
set xlabel 'updates'
set xtics 50
set multiplot title 'Learning curves of the attention_kinds_imagenet64 runs (small)'
set origin 0.0000, 0.7716
set size 0.4300, 0.1929
unset key
set title 'full-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 0 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 0 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 1 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 1 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.7716
set size 0.4300, 0.1929
unset key
set title 'full-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 2 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 2 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 3 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 3 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.5787
set size 0.4300, 0.1929
unset key
set title 'local-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 4 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 4 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 5 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 5 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.5787
set size 0.4300, 0.1929
unset key
set title 'local-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 6 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 6 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 7 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 7 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.3858
set size 0.4300, 0.1929
unset key
set title 'lsh-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 8 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 8 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 9 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 9 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.3858
set size 0.4300, 0.1929
unset key
set title 'lsh-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 10 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 10 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 11 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 11 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.1929
set size 0.4300, 0.1929
unset key
set title 'routing-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 12 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 12 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 13 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 13 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.1929
set size 0.4300, 0.1929
unset key
set title 'routing-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 14 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 14 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 15 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 15 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.0000, 0.0000
set size 0.4300, 0.1929
unset key
set title 'smyrf-small: loss (mean ± sd over 3 seeds)' font ''
set ylabel 'loss'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 16 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 16 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 17 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 17 using 1:2 with linespoints lt 2 pi 1 notitle
set origin 0.4300, 0.0000
set size 0.4300, 0.1929
unset key
set title 'smyrf-small: bits per dimension (mean ± sd over 3 seeds)' font ''
set ylabel 'bits per dimension'
unset logscale y
set format y '%g'
set yrange [*:*]
plot 'curves.dat' index 18 using 1:3:4 with filledcurves fc rgb '#0072B2' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 18 using 1:2 with linespoints lt 1 pi 2 notitle, 'curves.dat' index 19 using 1:3:4 with filledcurves fc rgb '#D55E00' fs transparent solid 0.2 noborder notitle, 'curves.dat' index 19 using 1:2 with linespoints lt 2 pi 1 notitle
# The one key, alone in the strip at the right.
set origin 0.8600, 0
set size 0.1400, 0.9645
unset border
unset tics
unset grid
unset xlabel
unset ylabel
unset title
unset logscale
unset colorbox
set xrange [0:1]
set yrange [0:1]
set margins 0, 0, 0, 0
set key inside left top vertical Left reverse samplen 4 spacing 1.2 noenhanced
plot NaN with linespoints lt 1 title 'train', NaN with linespoints lt 2 title 'validation'
unset multiplot
set output
