#!/bin/bash
# The unseen workload shapes (workloads/unseen.txt, workloads/unseen-small.txt: 98 products never
# tuned) as TT through two exports' headers in one process (../../vector-nt/ab.cu: cublasSgemm with
# the same op, rotated rounds, every result checked first): tga, the export before TT had a corpus
# (its TT rule borrowed NN's classes through the TT twins), against tgb, the export fitted on
# shapes.txt's TT measurements (`tt/`).
# Usage: X=<folder with hdr.tar.xz: tga/tga.cuh, tgb/tgb.cuh> ab.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/tga -I$T/tgb -o $T/ab $P/../../vector-nt/ab.cu -L$cuda/lib64 -lcublas -lcudart \
  -Wl,-rpath,$cuda/lib64 > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
(grep -v '^#' workloads/unseen.txt; grep -v '^#' workloads/unseen-small.txt) | grep . |
  sed -E "s/^([0-9]+ +[0-9]+ +[0-9]+)/\1 op=TT/" > $OUT/shapes-TT.txt
timeout ${AB_S:-150} $T/ab $OUT/shapes-TT.txt > $OUT/ab-TT.txt 2>&1
echo "ab TT rc=$?"; tail -n 3 $OUT/ab-TT.txt
