#!/bin/bash
# The export with the NT GEMV kernels and splitk_auto under NT and TN (tgb: the README's export
# command at commit splitka-op's results were added) against the export of commit 6db43b36 (tga: the
# session's start), through their headers on a GPU host:
#   1. examples/export-cuda built against tgb.cuh (this host's nvcc): every class, edge shape and
#      vector problem of every op against cuBLAS, the BLAS, strided-batched and epilogue entries,
#      refusals; the timing section that follows is cut by its limit;
#   2. ../vector-nt/ab.cu (both headers in one process, cuBLAS with the same op, rotated rounds, every
#      result checked first) on the unseen workload shapes (workloads/unseen.txt,
#      workloads/unseen-small.txt) as NT (y = x·Wᵀ) and as TN (a Gram product Xᵀ·Y).
# Usage: X=<folder with hdr.tar.xz: tga/tga.cuh, tgb/tgb.cuh> run.sh   (from the repository root; writes under $OUT)
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
  /usr/bin/time -f "ab %e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/tga -I$T/tgb -o $T/ab $P/../vector-nt/ab.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
cat $OUT/build.txt
timeout ${CHECK_S:-90} $T/excuda > $OUT/check-tgb.log 2>&1
echo "check rc=$? (124: cut in the timing section)"
sed -n '/== correctness/,/^==/p' $OUT/check-tgb.log | grep -c '^ok'
sed -n '/== correctness/,/^==/p' $OUT/check-tgb.log | grep '^FAIL' | head
gzip -9 $OUT/check-tgb.log
(grep -v '^#' workloads/unseen.txt; grep -v '^#' workloads/unseen-small.txt) | grep . > $T/nn.txt
for op in NT TN; do
  sed -E "s/^([0-9]+ +[0-9]+ +[0-9]+)/\1 op=$op/" $T/nn.txt > $OUT/shapes-$op.txt
  timeout ${AB_S:-150} $T/ab $OUT/shapes-$op.txt > $OUT/ab-$op.txt 2>&1
  echo "ab $op rc=$?"; tail -n 2 $OUT/ab-$op.txt
done
