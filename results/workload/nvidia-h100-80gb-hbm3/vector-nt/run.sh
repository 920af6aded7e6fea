#!/bin/bash
# The export of commit f02c1b04 (cpasync_auto on the corpus, vector problems of every op restated
# under NN, each rule's tables numbering its own kernels: tgb) against the committed export of commit
# 40aab9c9 (tga), through their headers on a GPU host:
#   1. examples/export-cuda built against tgb.cuh (this host's nvcc; the header launches its PTX):
#      every class, edge shape and vector problem of every op (M or N of 1, packed and padded: the
#      restated GEMVs) against cuBLAS, the BLAS, strided-batched and epilogue entries, refusals; the
#      timing section that follows is cut by its limit;
#   2. ab.cu (both headers in one process, cuBLAS with the same op, rotated rounds, every result
#      checked first) on the unseen workload shapes (workloads/unseen.txt, workloads/unseen-small.txt)
#      as NN, then as NT (a linear layer y = x·Wᵀ with W stored out x in; nt-shapes.txt).
# Both exports were made where Go is, each with its commit's runner and examples/export-go/results.txt
# (the README's export command, --name tga / tgb), and carried as hdr.tar.xz.
# Usage: X=<folder with hdr.tar.xz: tga/tga.cuh, tgb/tgb.cuh> run.sh   (from the repository root; writes under $OUT;
# ONLY_CHECK=1 stops after step 1)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
{
  $cuda/bin/nvcc --version | tail -n 1
  /usr/bin/time -f "export-cuda %e s" $cuda/bin/nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgb -I$T/tgb -o $T/excuda examples/export-cuda/main.cu -lcublas -lcuda
  /usr/bin/time -f "ab %e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/tga -I$T/tgb -o $T/ab $P/ab.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
cat $OUT/build.txt
timeout ${CHECK_S:-150} $T/excuda > $OUT/check-tgb.log 2>&1
echo "check rc=$? (124: cut in the timing section)"
sed -n '/== correctness/,/^==/p' $OUT/check-tgb.log | grep -c '^ok'
sed -n '/== correctness/,/^==/p' $OUT/check-tgb.log | grep '^FAIL' | head
[ -n "${ONLY_CHECK:-}" ] && { gzip -9 $OUT/check-tgb.log; exit 0; }
(grep -v '^#' workloads/unseen.txt; grep -v '^#' workloads/unseen-small.txt) | grep . > $T/nn.txt
sed -E 's/^([0-9]+ +[0-9]+ +[0-9]+)/\1 op=NT/' $T/nn.txt > $OUT/nt-shapes.txt
for f in nn nt; do
  timeout ${AB_S:-150} $T/ab $( [ $f = nn ] && echo $T/nn.txt || echo $OUT/nt-shapes.txt ) > $OUT/ab-$f.txt 2>&1
  echo "ab $f rc=$?"; tail -n 2 $OUT/ab-$f.txt
done
gzip -9 $OUT/check-tgb.log
