#!/bin/bash
# SASS in the header: the README's render export twice in one process, tga as exported (each
# kernel's PTX, compiled by the driver at its first launch) and tgb the same export with each PTX
# literal replaced by a compressed fatbin holding that PTX and the sm_90 (sm_90a) cubin ptxas built
# from it on the export host (nvcc 11.8's ptxas; mkfat.py). unseen/run16's ab.cu built by g++ times
# cuBLAS, A and B on the unseen shapes and a quarter of the corpus (corpus-sample.txt): every result
# checked first. Then examples/export-cuda --preload with each header: the driver's cache empty,
# filled, and disabled.
# Usage: X=<folder with hdr.tar.xz: tga/tga.cuh, tgb/tgb.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
{
  g++ --version | head -n 1
  /usr/bin/time -f "%e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/tga -I$T/tgb -o $T/ab $P/../unseen/run16/ab.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64
  for n in tga tgb; do
    /usr/bin/time -f "$n export-cuda %e s" nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=$n -I$T/$n -o $T/ex_$n examples/export-cuda/main.cu -lcublas -lcuda
  done
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
cat $OUT/build.txt
{
  for n in tga tgb; do
    echo "== $n: empty driver cache"; CUDA_CACHE_PATH=$T/cache_$n $T/ex_$n --preload
    echo "== $n: the same cache, filled"; CUDA_CACHE_PATH=$T/cache_$n $T/ex_$n --preload
    echo "== $n: cache disabled"; CUDA_CACHE_DISABLE=1 $T/ex_$n --preload
  done
} > $OUT/preload.txt 2>&1
cat $OUT/preload.txt
for f in workloads/unseen-small.txt workloads/unseen.txt $P/corpus-sample.txt; do
  b=$(basename $f .txt)
  timeout 200 $T/ab $f > $OUT/ab-$b.txt 2>&1
  echo "$b rc=$?"
  tail -n 3 $OUT/ab-$b.txt
done
