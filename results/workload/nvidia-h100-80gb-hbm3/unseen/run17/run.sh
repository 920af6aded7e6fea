#!/bin/bash
# The wave guard on the GPU: run16's ab.cu (cuBLAS, A and B timed in one process, rotated rounds,
# every result checked against cuBLAS first) built by g++ against two exports of the README's render
# (the corpus results): A (tga) the rule before the guard (exported by the parent commit's runner),
# B (tgb) the rule with it, on the 74 unseen shapes and the 24 unseen small ones.
# Usage: X=<folder with hdr.tar.xz: ea/tga.cuh, eb/tgb.cuh> [SHAPES=file] run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")/../run16
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
{
  g++ --version | head -n 1
  /usr/bin/time -f "%e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/ea -I$T/eb -o $T/ab $P/ab.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
cat $OUT/build.txt
# SHAPES=file: that file alone (ab-guard.txt), else the two unseen files.
if [ -n "${SHAPES:-}" ]; then
  timeout 250 $T/ab $SHAPES > $OUT/ab-guard.txt 2>&1
  echo "guard rc=$?"
  tail -n 3 $OUT/ab-guard.txt
  exit 0
fi
for f in unseen-small unseen; do
  timeout 250 $T/ab workloads/$f.txt > $OUT/ab-$f.txt 2>&1
  echo "$f rc=$?"
  tail -n 3 $OUT/ab-$f.txt
done
