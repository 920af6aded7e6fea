#!/bin/bash
# Per-class misaligned twins through the header on an H200 (internal/export misalignedTwins: for each
# misalignment class of a problem, by lda and ldb modulo 4, the MIS = 1 or MIS = 3 twin the results
# measured fastest on tuned shapes of that class; twins no candidates of the rule's cells), on every
# problem among 3000 random ones drawn after the change was final (changed.txt) whose kernel it moves
# (run14 measured a first version on other problems). Both
# exports are of the same results (the H200 random/, misaligned-b/ and misaligned-a/ tunes, fitted on
# every tuned shape, with the H100 corpus's edge suites): A (tga) by the runner before this change,
# B (tgb) with it. run16's ab.cu (cuBLAS, A and B timed in one process, rotated rounds, every result
# checked against cuBLAS first) built by g++ against the two headers.
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
timeout 560 $T/ab $P/changed.txt > $o 2>&1
echo "rc=$?"
tail -n 3 $o
