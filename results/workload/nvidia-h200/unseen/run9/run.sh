#!/bin/bash
# The class fallback's form, on an H200 through the header: a cell beyond the reach of every
# training shape takes its regime class's best mean log ratio, either plain (ea/tga.cuh, the form of
# run8), or with each training ratio normalized by the kernel's tile waste at the edges there and the
# cell's own waste applied (e1/tgb.cuh: edge weight 1), or by tile waste and wave quantization both
# (we1/tgb.cuh). changed.txt: every problem of 4000 random ones (seed 20261202) that the fallback
# changes. run16's ab.cu (cuBLAS, A and B timed in one process, rotated rounds, every result checked
# against cuBLAS first) built by g++ twice: A = plain, B = e1; A = plain, B = we1.
# Usage: X=<folder with hdr.tar.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
H=results/workload/nvidia-h100-80gb-hbm3/unseen
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
g++ --version | head -n 1 > $OUT/build.txt
for b in e1 we1; do
  /usr/bin/time -f "%e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/ea -I$T/$b -o $T/ab-$b $H/run16/ab.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64 >> $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
done
for b in e1 we1; do
  o=$OUT/ab-$b.txt
  timeout 250 $T/ab-$b $P/changed.txt > $o 2>&1
  echo "$b rc=$?"
  tail -n 3 $o
done
