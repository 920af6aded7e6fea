#!/bin/bash
# Three exports' headers on the 74 unseen shapes in one call, compiled by this host's nvcc:
#   e0  the shipped export (one hyperparameter set for the whole corpus; no tiny-output shapes),
#   e5  hyperparameters per regime class, a tiny-output class, the corpus with its tiny section,
#   e5f e5 plus the cpasync fill (portfolio/cpasync-below, portfolio/cpasync-fill).
# Each runs all 74 shapes once (e0, e5, e5f); then the 33 shapes on which they launch different
# variants (changed.txt) again in the reverse order, to see how far one pass moves from the next.
set -u
T=$(mktemp -d)
X=${X:?the folder with e0/, e5/ and e5f/wlexp.tar.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
nvidia-smi -L
for e in e0 e5 e5f; do
  mkdir -p $T/$e && tar xJf $X/$e/wlexp.tar.xz -C $T/$e
  nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgsgemm -I$T/$e/tgsgemm -o $T/excuda-$e examples/export-cuda/main.cu -lcublas -lcuda > $OUT/build-$e.txt 2>&1 &
done
wait
i=0
for e in e0 e5 e5f; do
  i=$((i+1))
  timeout 120 $T/excuda-$e --shapes workloads/unseen.txt > $OUT/unseen-$i-$e.txt 2>&1
  echo "$i $e rc=$? $(tail -n 2 $OUT/unseen-$i-$e.txt | head -1)"
done
for e in e5f e5 e0; do
  i=$((i+1))
  timeout 80 $T/excuda-$e --shapes $P/changed.txt > $OUT/changed-$i-$e.txt 2>&1
  echo "$i $e rc=$? $(tail -n 2 $OUT/changed-$i-$e.txt | head -1)"
done
