# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot S2.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 840,440 enhanced font 'Sans,11'
} else {
  set terminal png size 840,440 enhanced
}
set output 'S2.png'
set key off
set grid ytics
set samples 2
set multiplot layout 1,2 title 'S2: The truncation gradient gap shrinks like k·λ^k' noenhanced
set title 'fitted decay rate over ln λ, λ = 0.8' noenhanced
set xtics ('λ=0.8' 1) noenhanced
set xrange [0.4:1.6]
set yrange [0.8400000000000001:1.56]
set ylabel 'value per run' noenhanced
plot 'S2.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 0.9 with lines dt 2 lw 1.5 lc rgb '#555555', 1.5 with lines dt 2 lw 1.5 lc rgb '#555555'
set title 'fitted decay rate over ln λ, λ = 0.9' noenhanced
set xtics ('λ=0.9' 1) noenhanced
set xrange [0.4:1.6]
set yrange [0.8400000000000001:1.56]
set ylabel 'value per run' noenhanced
plot 'S2.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728', 0.9 with lines dt 2 lw 1.5 lc rgb '#555555', 1.5 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 840,440 enhanced font 'Sans,11'
set output 'S2.svg'
set multiplot layout 1,2 title 'S2: The truncation gradient gap shrinks like k·λ^k' noenhanced
set title 'fitted decay rate over ln λ, λ = 0.8' noenhanced
set xtics ('λ=0.8' 1) noenhanced
set xrange [0.4:1.6]
set yrange [0.8400000000000001:1.56]
set ylabel 'value per run' noenhanced
plot 'S2.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 0.9 with lines dt 2 lw 1.5 lc rgb '#555555', 1.5 with lines dt 2 lw 1.5 lc rgb '#555555'
set title 'fitted decay rate over ln λ, λ = 0.9' noenhanced
set xtics ('λ=0.9' 1) noenhanced
set xrange [0.4:1.6]
set yrange [0.8400000000000001:1.56]
set ylabel 'value per run' noenhanced
plot 'S2.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728', 0.9 with lines dt 2 lw 1.5 lc rgb '#555555', 1.5 with lines dt 2 lw 1.5 lc rgb '#555555'
unset multiplot
set output
