#!/bin/bash
# Two exports' headers on the 74 unseen shapes in one call, compiled by this host's nvcc: the export
# of the render with portfolio/cpasync-fill (fill/) and without it (nofill/), one after the other
# (cuBLAS moves between calls; within one, both face the same).
set -u
T=$(mktemp -d)
X=${X:?the folder with fill/wlexp.tar.xz and nofill/wlexp.tar.xz, relative to the repository root}
for e in fill nofill; do
  mkdir -p $T/$e && tar xJf $X/$e/wlexp.tar.xz -C $T/$e
  nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgsgemm -I$T/$e/tgsgemm -o $T/excuda-$e examples/export-cuda/main.cu -lcublas -lcuda > $OUT/build-$e.txt 2>&1
  echo "build $e rc=$?"
done
i=0
for e in nofill fill; do
  i=$((i+1))
  timeout 100 $T/excuda-$e --shapes workloads/unseen.txt > $OUT/unseen-$i-$e.txt 2>&1
  echo "$i $e rc=$? $(tail -n 2 $OUT/unseen-$i-$e.txt | head -1)"
done
