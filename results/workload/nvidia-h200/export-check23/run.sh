#!/bin/bash
# The committed example export (examples/export-go/tgsgemm, corpus-fitted since the twenty-third
# session) through its header's PTX build on an H200: examples/export-cuda compiled by this host's
# nvcc (CUDA 13: the header launches the exported PTX), every tuned class of every op, the edge
# shapes, the column-major BLAS entry, the strided batches and the fused epilogues against cuBLAS,
# the refusals, then each class timed (now/tuned compares with H100 tuning records: not a ratio;
# the timing section is cut by the call's limit). build.txt has the compile time.
# Usage: X=<folder with hdr.tar.xz: tgsgemm/tgsgemm.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
{
  nvcc --version | tail -n 2
  /usr/bin/time -f "%e s" nvcc -O2 -arch=sm_90 -I$T/tgsgemm -o $T/excuda examples/export-cuda/main.cu -lcublas -lcuda
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
cat $OUT/build.txt
timeout 420 $T/excuda > $OUT/export-cuda.log 2>&1
echo "rc=$?"
grep -c -i "wrong\|mismatch\|FAIL" $OUT/export-cuda.log
tail -n 5 $OUT/export-cuda.log
gzip -9 $OUT/export-cuda.log
