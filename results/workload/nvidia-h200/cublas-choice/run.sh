#!/bin/bash
# Which kernels cuBLAS (cublasSgemm, FP32) runs, with what grid and block, on the problems of
# shapes.txt on this GPU: probe.cu under Nsight Compute (each kernel's name, grid, block, registers and
# time; the third of three identical calls), and cuBLASLt's log of the algorithm its heuristic chose.
# Usage: run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
P=$(dirname "$0")
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
g++ -std=c++17 -O2 -x c++ -I$cuda/include -o $T/probe $P/probe.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64 || exit 1
ncu=$(command -v ncu || ls $cuda/bin/ncu $cuda/nsight-compute*/ncu 2>/dev/null | head -n 1)
echo "ncu: ${ncu:-none}"
grep -v '^#' $P/shapes.txt | while read -r m n k; do
  [ -n "$m" ] || continue
  echo "== $m $n $k"
  CUBLASLT_LOG_LEVEL=5 CUBLASLT_LOG_FILE=$T/lt.log $T/probe $m $n $k > /dev/null 2>&1
  grep -m 4 -iE "algo|tile|splitk" $T/lt.log | cut -c1-400
  rm -f $T/lt.log
  if [ -n "$ncu" ]; then
    timeout 60 $ncu --launch-skip 0 --csv --metrics launch__grid_size,launch__block_size,launch__registers_per_thread,gpu__time_duration.sum \
      $T/probe $m $n $k 2>&1 | grep -v '^==PROF==' | cut -c1-700 | tail -n 16
  fi
done > $OUT/cublas-choice.txt 2>&1
echo done
tail -5 $OUT/cublas-choice.txt
