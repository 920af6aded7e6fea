#!/bin/bash
# Exports A (the README's render before gemvs: --name tga) and B (with gemvs, verify-gemvs/ and
# portfolio/gemvs/, the tiny outputs over a deep K classed deep-k, the rule's candidates chosen by a
# cover and fitted with untimed candidates imputed among the candidates: --name tgb) in one process
# against cuBLAS on the 74 unseen shapes and the 24 unseen small ones (ab.cu, as in run10), compiled
# by this host's nvcc.
# Usage: X=<folder with hdr.tar.xz: ea/tga.cuh, eb/tgb.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
nvcc -O2 -arch=sm_90 -I$T/ea -I$T/eb -o $T/ab $P/ab.cu -lcublas > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
for f in unseen unseen-small; do
  timeout 280 $T/ab workloads/$f.txt > $OUT/ab-$f.txt 2>&1
  echo "$f rc=$?"
  tail -n 3 $OUT/ab-$f.txt
done
