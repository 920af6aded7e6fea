#!/bin/bash
# The final corpus export (render with remeasure-par and gemvm_cl) through its header, compiled by
# this host's nvcc: the 74 unseen shapes and the corpus's 60 gemv-m shapes against cuBLAS.
set -u
T=$(mktemp -d) # scratch: the unpacked binaries and export
X=${X:?the folder with wlexp.tar.xz and gemvm-corpus.txt, relative to the repository root}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,uuid --format=csv > $OUT/gpu.txt
mkdir -p $T/ex && tar xJf $X/wlexp.tar.xz -C $T/ex
nvcc --version | tail -2 > $OUT/nvcc.txt
nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgsgemm -I$T/ex/wlexp -o $T/excuda examples/export-cuda/main.cu -lcublas -lcuda > $OUT/build.txt 2>&1
echo "build rc=$? $(date +%T)"
timeout 150 $T/excuda --shapes workloads/unseen.txt > $OUT/unseen.txt 2>&1
echo "unseen rc=$? $(date +%T)"
timeout 100 $T/excuda --shapes $X/gemvm-corpus.txt > $OUT/gemv-m.txt 2>&1
echo "gemv-m rc=$? $(date +%T)"
tail -2 $OUT/unseen.txt $OUT/gemv-m.txt
