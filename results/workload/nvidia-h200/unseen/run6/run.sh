#!/bin/bash
# The misaligned-leading-dimension chain through the header on an H200: run16's ab.cu (cuBLAS, A and B
# timed in one process, rotated rounds, every result checked against cuBLAS first) built by g++
# against two exports of the README's render (the H100 corpus results): A (tga) by the runner of the
# commit before the change, B (tgb) by the commit that adds this folder; on the 128 random problems
# of nvidia-h200/random (random-b.txt and run5's random-shapes.txt: the validation set the change
# was judged on offline) and on workloads/unseen.txt (74 realistic shapes).
# Usage: X=<folder with hdr.tar.xz: ea/tga.cuh, eb/tgb.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
H=results/workload/nvidia-h100-80gb-hbm3/unseen
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
{
  g++ --version | head -n 1
  /usr/bin/time -f "%e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/ea -I$T/eb -o $T/ab $H/run16/ab.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
for ft in results/workload/nvidia-h200/random/random-b.txt:300 results/workload/nvidia-h200/unseen/run5/random-shapes.txt:300 workloads/unseen.txt:300; do
  f=${ft%:*}
  o=$OUT/ab-$(basename $f)
  timeout ${ft##*:} $T/ab $f > $o 2>&1
  echo "$f rc=$?"
  tail -n 3 $o
done
