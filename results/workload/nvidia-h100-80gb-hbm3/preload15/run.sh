#!/bin/bash
# What readying the README's render export (tgwork, 64 kernels) costs in the header's PTX build:
# examples/export-cuda --preload (NAME_preload timed on the host, after the context exists) with an
# empty driver cache, again with that cache filled, and with the cache disabled; then the graph
# check of graph15 with this header (first calls captured).
# Usage: X=<folder with hdr.tar.xz: tgwork/tgwork.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgwork -I$T/tgwork -o $T/ex examples/export-cuda/main.cu -lcublas -lcuda > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
{
  echo "== empty driver cache"; CUDA_CACHE_PATH=$T/cache $T/ex --preload
  echo "== the same cache, filled"; CUDA_CACHE_PATH=$T/cache $T/ex --preload
  echo "== again"; CUDA_CACHE_PATH=$T/cache $T/ex --preload
  echo "== cache disabled"; CUDA_CACHE_DISABLE=1 $T/ex --preload
  echo "== graph (graph15/shapes.txt)"; $T/ex --graph results/workload/nvidia-h100-80gb-hbm3/graph15/shapes.txt | tail -n 3
} > $OUT/preload.txt 2>&1
cat $OUT/preload.txt
