#!/bin/bash
# runner export --sass sm_90 on the GPU host (its CUDA 13 ptxas and fatbinary) of the committed
# example's results (examples/export-go: seeds, ops, batches, epilogues; its 29 kernels' generated
# files and the manifest carried), then examples/export-cuda with that header: --preload with the
# driver's cache empty (no PTX compiled), every class and edge shape checked against cuBLAS and
# timed against its tuning record (--strict-time 5), the BLAS/op/batch/epilogue checks it runs.
# Usage: X=<folder with runner.xz, gen/, res.tgz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
nvidia-smi -L
ptxas --version | tail -n 2 | head -n 1
tar xzf $X/res.tgz -C $T
xz -dc $X/runner.xz > $T/runner && chmod +x $T/runner || exit 1
R=""
for d in h100-seeds/tune h100-seeds/verify ops-h100/regtile-op/tune-ops ops-h100/regtile-op/verify ops-h100/btring/tune \
  ops-h100/btring/verify batch-h100/call1/tune-batch batch-h100/call2/tune-batch batch-h100/call2/verify \
  epilogue-h100/run3/bench/nvidia-h100-80gb-hbm3/tune epilogue-h100/run3/bench/nvidia-h100-80gb-hbm3/verify; do
  R="$R --results $T/results/$d"
done
/usr/bin/time -f "export %e s" $T/runner export $R --allow-unhashed --generated $X/gen --out $T/tgx --name tgx --sass sm_90 > $OUT/export.txt 2>&1 || { tail $OUT/export.txt; exit 1; }
tail -n 2 $OUT/export.txt
ls $T/tgx/ptx | grep -c fatbin
grep -m 1 "sass_ptxas" $T/tgx/tgx.json
nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgx -I$T/tgx -o $T/ex examples/export-cuda/main.cu -lcublas -lcuda > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
{
  echo "== empty driver cache"; CUDA_CACHE_PATH=$T/cache $T/ex --preload
  echo "== cache disabled"; CUDA_CACHE_DISABLE=1 $T/ex --preload
} > $OUT/preload.txt 2>&1
cat $OUT/preload.txt
CUDA_CACHE_DISABLE=1 timeout 400 $T/ex --strict-time 5 > $OUT/export-cuda.log 2>&1
echo "rc=$?"
grep -c SLOW $OUT/export-cuda.log
tail -n 5 $OUT/export-cuda.log
gzip -9 $OUT/export-cuda.log
