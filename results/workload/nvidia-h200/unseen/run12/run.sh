#!/bin/bash
# Misaligned-B twins (internal/export misalignedTwins: a variant whose MIS = 1 twin the results
# measured faster on odd-N shapes hands a problem whose ldb is not a multiple of 4 to the twin)
# through the header on an H200, on the second third of the problems they change among 3000 random ones drawn
# for this (changed.txt), none seen before. Both exports are of the same results (the H200 random/
# and misaligned-b/ tunes, fitted on every tuned shape, with the H100 corpus's edge suites): A (tga)
# by the runner before twins, B (tgb) with them. run16's ab.cu (cuBLAS, A and B timed in one
# process, rotated rounds, every result checked against cuBLAS first) built by g++ against the two
# headers.
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
o=$OUT/ab-changed.txt
timeout 400 $T/ab $P/changed.txt > $o 2>&1
echo "rc=$?"
tail -n 3 $o
