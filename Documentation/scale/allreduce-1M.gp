set terminal pngcairo size 1200,380 font ',9'
set output 'allreduce-1M.png'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set yrange [0:*]
set ylabel 'busbw (GB/s)'
set key top right font ',8'
set multiplot layout 1,3 title 'all-reduce 1 MiB fp32, 8 ranks a node, 12.5 GB/s NICs: bars the module''s choice, points the fastest algorithm' font ',10'
set title '64 ranks'
plot 'allreduce-1M.dat' index 0 using (valid(2) ? $2 : 0):xtic(1) title '1 rail' lc 1, 'allreduce-1M.dat' index 0 using (valid(4) ? $4 : 0):xtic(1) title '4 rails' lc 2, 'allreduce-1M.dat' index 0 using (valid(6) ? $6 : 0):xtic(1) title '8 rails' lc 3, 'allreduce-1M.dat' index 0 using ($0 + -0.25):3 with points pt 7 ps 0.8 lc rgb 'black' title 'fastest', 'allreduce-1M.dat' index 0 using ($0 + 0.00):5 with points pt 7 ps 0.8 lc rgb 'black' notitle, 'allreduce-1M.dat' index 0 using ($0 + 0.25):7 with points pt 7 ps 0.8 lc rgb 'black' notitle
set title '1024 ranks'
plot 'allreduce-1M.dat' index 1 using (valid(2) ? $2 : 0):xtic(1) title '1 rail' lc 1, 'allreduce-1M.dat' index 1 using (valid(4) ? $4 : 0):xtic(1) title '4 rails' lc 2, 'allreduce-1M.dat' index 1 using (valid(6) ? $6 : 0):xtic(1) title '8 rails' lc 3, 'allreduce-1M.dat' index 1 using ($0 + -0.25):3 with points pt 7 ps 0.8 lc rgb 'black' title 'fastest', 'allreduce-1M.dat' index 1 using ($0 + 0.00):5 with points pt 7 ps 0.8 lc rgb 'black' notitle, 'allreduce-1M.dat' index 1 using ($0 + 0.25):7 with points pt 7 ps 0.8 lc rgb 'black' notitle
set title '16384 ranks'
plot 'allreduce-1M.dat' index 2 using (valid(2) ? $2 : 0):xtic(1) title '1 rail' lc 1, 'allreduce-1M.dat' index 2 using (valid(4) ? $4 : 0):xtic(1) title '4 rails' lc 2, 'allreduce-1M.dat' index 2 using (valid(6) ? $6 : 0):xtic(1) title '8 rails' lc 3, 'allreduce-1M.dat' index 2 using ($0 + -0.25):3 with points pt 7 ps 0.8 lc rgb 'black' title 'fastest', 'allreduce-1M.dat' index 2 using ($0 + 0.00):5 with points pt 7 ps 0.8 lc rgb 'black' notitle, 'allreduce-1M.dat' index 2 using ($0 + 0.25):7 with points pt 7 ps 0.8 lc rgb 'black' notitle
unset multiplot
