#!/bin/bash
# The corpus export after portfolio/cpasync-fill (the README's render and export command, --name
# tgsgemm) through its header, compiled by this host's nvcc: the 74 unseen shapes and the 16 corpus
# shapes of portfolio/cpasync-below (exported below 0.9x before), against cuBLAS.
set -u
T=$(mktemp -d) # scratch: the unpacked binaries and export
X=${X:?the folder with wlexp.tar.xz and below-corpus.txt, relative to the repository root}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,uuid --format=csv > $OUT/gpu.txt
mkdir -p $T/ex && tar xJf $X/wlexp.tar.xz -C $T/ex
nvcc --version | tail -2 > $OUT/nvcc.txt
nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgsgemm -I$T/ex/tgsgemm -o $T/excuda examples/export-cuda/main.cu -lcublas -lcuda > $OUT/build.txt 2>&1
echo "build rc=$? $(date +%T)"
timeout 150 $T/excuda --shapes workloads/unseen.txt > $OUT/unseen.txt 2>&1
echo "unseen rc=$? $(date +%T)"
timeout 100 $T/excuda --shapes $X/below-corpus.txt > $OUT/below.txt 2>&1
echo "below rc=$? $(date +%T)"
tail -n 2 $OUT/unseen.txt $OUT/below.txt
