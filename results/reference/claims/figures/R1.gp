# Written by `seqbench report claims`. Restyle freely, then rerun in this directory:
#   gnuplot R1.gp
set encoding utf8
if (strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0) {
  set terminal pngcairo size 840,440 enhanced font 'Sans,11'
} else {
  set terminal png size 840,440 enhanced
}
set output 'R1.png'
set key off
set grid ytics
set samples 2
set multiplot layout 1,2 title 'R1: Routing attention beats local and random attention at equal budget' noenhanced
set title 'test perplexity, local + routing relative to local' noenhanced
set xtics ('local+routing' 1, 'local' 2) noenhanced
set xrange [0.4:2.6]
set yrange [239.53400000000002:245.78599999999997]
set ylabel 'test perplexity' noenhanced
plot 'R1.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 'R1.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728'
set title 'test perplexity, routing-only relative to random-only' noenhanced
set xtics ('routing only' 1, 'random only' 2) noenhanced
set xrange [0.4:2.6]
set yrange [219.4924:228.7876]
set ylabel 'test perplexity' noenhanced
plot 'R1.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 5 using 1:2 with lines lw 2 lc rgb '#d62728', 'R1.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 7 using 1:2 with lines lw 2 lc rgb '#d62728'
unset multiplot
set output

# The same figure as SVG.
set terminal svg size 840,440 enhanced font 'Sans,11'
set output 'R1.svg'
set multiplot layout 1,2 title 'R1: Routing attention beats local and random attention at equal budget' noenhanced
set title 'test perplexity, local + routing relative to local' noenhanced
set xtics ('local+routing' 1, 'local' 2) noenhanced
set xrange [0.4:2.6]
set yrange [239.53400000000002:245.78599999999997]
set ylabel 'test perplexity' noenhanced
plot 'R1.dat' index 0 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 1 using 1:2 with lines lw 2 lc rgb '#d62728', 'R1.dat' index 2 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 3 using 1:2 with lines lw 2 lc rgb '#d62728'
set title 'test perplexity, routing-only relative to random-only' noenhanced
set xtics ('routing only' 1, 'random only' 2) noenhanced
set xrange [0.4:2.6]
set yrange [219.4924:228.7876]
set ylabel 'test perplexity' noenhanced
plot 'R1.dat' index 4 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 5 using 1:2 with lines lw 2 lc rgb '#d62728', 'R1.dat' index 6 using 1:2 with points pt 7 ps 1.3 lc rgb '#1f77b4', '' index 7 using 1:2 with lines lw 2 lc rgb '#d62728'
unset multiplot
set output
