#!/bin/bash
# The export with streamk_async under every op (tgb: the README's export command once
# ../{verify,nt,tn,tt} were added) against the export before (tga), through their headers on a GPU
# host: ../../../vector-nt/ab.cu (both headers in one process, cuBLAS with the same op, rotated
# rounds, every result checked first) on the unseen workload shapes (workloads/unseen.txt,
# workloads/unseen-small.txt) and probes.txt, as NT, TN and TT.
# Usage: X=<folder with hdr.tar.xz: tga/tga.cuh, tgb/tgb.cuh> [OPS="NT TN TT"] run.sh
#   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
/usr/bin/time -f "ab %e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/tga -I$T/tgb -o $T/ab $P/../../../vector-nt/ab.cu \
  -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64 > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
cat $OUT/build.txt
(grep -v '^#' workloads/unseen.txt; grep -v '^#' workloads/unseen-small.txt; grep -v '^#' $P/probes.txt) | grep . > $T/nn.txt
for op in ${OPS:-NT TN TT}; do
  sed -E "s/^([0-9]+ +[0-9]+ +[0-9]+)/\1 op=$op/" $T/nn.txt > $OUT/shapes-$op.txt
  timeout ${AB_S:-150} $T/ab $OUT/shapes-$op.txt > $OUT/ab-$op.txt 2>&1
  echo "ab $op rc=$?"; tail -n 2 $OUT/ab-$op.txt
done
