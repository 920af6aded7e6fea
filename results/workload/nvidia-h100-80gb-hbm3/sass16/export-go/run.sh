#!/bin/bash
# The Go package of a --sass export on the GPU: the committed example's results exported with
# `--sass sm_90` (this repository's ptxas, nvcc 11.8: the cubins' speed is not the point here) by
# `scripts/export-gpu-build.sh OUT <the example's --results ...> --allow-unhashed --sass sm_90`, then
# scripts/export-gpu-check.sh with the driver's JIT cache disabled: the header (examples/export-cuda)
# and the Go package's GPU test (examples/export-go, loading ptx/NAME.fatbin) against cuBLAS and the
# tuning record.
# Usage: X=<OUT of export-gpu-build.sh> run.sh   (from the repository root; writes under $OUT)
set -u
X=${X:?the carry folder}
nvidia-smi -L
CUDA_CACHE_DISABLE=1 scripts/export-gpu-check.sh $X/_export $X/export-go.test $OUT/logs > $OUT/check.txt 2>&1
echo "rc=$?"
tail -n 25 $OUT/check.txt
gzip -9 $OUT/logs/*.log
