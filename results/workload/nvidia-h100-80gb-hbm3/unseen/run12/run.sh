#!/bin/bash
# Exports A (the README's render before splitk_auto_rows' 16x128 tiles: --name tga) and B (the same plus
# verify-rows128 and portfolio/rows128: --name tgb) in one process against cuBLAS on the 74 unseen shapes
# (ab.cu, as in run10), compiled by this host's nvcc.
# Usage: X=<folder with hdr.tar.xz: ea/tga.cuh, eb/tgb.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
nvcc -O2 -arch=sm_90 -I$T/ea -I$T/eb -o $T/ab $P/ab.cu -lcublas > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
timeout 400 $T/ab workloads/unseen.txt > $OUT/ab-unseen.txt 2>&1
echo "rc=$?"
tail -n 3 $OUT/ab-unseen.txt
