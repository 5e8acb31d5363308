set terminal pngcairo size 720,420 font ',9'
set output 'spines.png'
set logscale xy 2
set grid
set xlabel 'spines (each leaf up-link at 12.5 GB/s)'
set ylabel 'busbw (GB/s, log scale)'
set key bottom right font ',8'
set yrange [0.25:16]
set title 'leaf-spine, 1,024 ranks, 32 nodes a leaf, 64 MiB'
plot 'spines.dat' index 0 using 1:2 with linespoints lw 2 title 'allreduce, leaf-spine', 'spines.dat' index 0 using 1:3 with lines dt 2 title 'allreduce, star', 'spines.dat' index 1 using 1:2 with linespoints lw 2 title 'alltoall, leaf-spine', 'spines.dat' index 1 using 1:3 with lines dt 2 title 'alltoall, star', 'spines.dat' index 1 using 1:(0.393257 * $1) with lines dt 3 lc rgb 'gray' title 'alltoall, linear in spines'
