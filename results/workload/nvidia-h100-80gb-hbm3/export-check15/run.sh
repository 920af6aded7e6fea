#!/bin/bash
# The README's render export (--name tgwork) through its header's PTX build: examples/export-cuda
# compiled by this host's nvcc (CUDA 13: the header launches the exported PTX), every class and edge
# shape against cuBLAS, refusals, then each class timed against its tuning record (--strict-time 5
# marks SLOW; the timing section is cut by the call's limit). build.txt has the compile time.
# Usage: X=<folder with hdr.tar.xz: tgwork/tgwork.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
{
  nvcc --version | tail -n 2
  /usr/bin/time -f "%e s" nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgwork -I$T/tgwork -o $T/excuda examples/export-cuda/main.cu -lcublas -lcuda
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
cat $OUT/build.txt
timeout 530 $T/excuda --strict-time 5 > $OUT/export-cuda.log 2>&1
echo "rc=$?"
grep -c SLOW $OUT/export-cuda.log
tail -n 5 $OUT/export-cuda.log
gzip -9 $OUT/export-cuda.log
