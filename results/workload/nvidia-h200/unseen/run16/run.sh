#!/bin/bash
# The committed example export before and after it became the corpus-fitted one, through the header
# on an H200: A (tga) is the example as committed before (seed-family tune, NN rule fitted on 10
# shapes), B (tgb) the example as committed now (examples/export-go/results.txt, its NN rule fitted
# on the 331-shape H100 corpus, examples/export-go/shapes.txt); every other entry (ops, batches,
# epilogues) is the same in both. On the 74 unseen shapes, the 24 unseen small ones and 150 random
# problems drawn for this (random.txt). run16's ab.cu (cuBLAS, A and B timed in one process, rotated
# rounds, every result checked against cuBLAS first) built by g++ against the two headers.
# Usage: X=<folder with hdr.tar.xz: ea/tga.cuh, eb/tgb.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
H=results/workload/nvidia-h100-80gb-hbm3/unseen
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
{
  g++ --version | head -n 1
  /usr/bin/time -f "%e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/ea -I$T/eb -o $T/ab $H/run16/ab.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
for f in workloads/unseen.txt workloads/unseen-small.txt $P/random.txt; do
  o=$OUT/ab-$(basename $f)
  timeout 180 $T/ab $f > $o 2>&1
  echo "$f rc=$?"
  tail -n 3 $o
done
