#!/bin/bash
# One export (the README's render: --name tga and --name tgb, byte-identical but for the name) in its
# two header builds in one process against cuBLAS on the 74 unseen shapes and the 24 unseen small
# ones (ab.cu, as in run14): A built from source by this host's nvcc (-Dtga_FROM_SOURCE, as every
# header was before), B the PTX build (the exported PTX, loaded with cudaLibraryLoadData). The
# compile time is in build.txt (the PTX build alone: export-check15/build.txt).
# Usage: X=<folder with hdr.tar.xz: ea/tga.cuh, eb/tgb.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
{
  nvcc --version | tail -n 2
  echo "== ab: tga from source, tgb PTX build"
  /usr/bin/time -f "%e s" nvcc -O2 -arch=sm_90 -Dtga_FROM_SOURCE -I$T/ea -I$T/eb -o $T/ab $P/ab.cu -lcublas
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
cat $OUT/build.txt
for f in unseen unseen-small; do
  timeout 235 $T/ab workloads/$f.txt > $OUT/ab-$f.txt 2>&1
  echo "$f rc=$?"
  tail -n 3 $OUT/ab-$f.txt
done
