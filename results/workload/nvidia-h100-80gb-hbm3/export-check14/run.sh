#!/bin/bash
# The export of this session's render (gemvs included) through both artifacts on the GPU host:
# scripts/export-gpu-check.sh builds examples/export-cuda against its .cuh with the host's nvcc (every
# class and edge shape against cuBLAS, refusals, timing against the tuning records) and runs the GPU
# test of examples/export-go built against the same export (cuBLAS and float64 checks, refusals,
# timing). Both were built where Go is, with the README's render flags ($R, the workload section) plus
# the ops, batch and epilogue results, as export-go-gpu/run.sh lists them:
#
#   scripts/export-gpu-build.sh OUT $R <the ops, batch and epilogue --results of export-go-gpu/run.sh> \
#     --allow-unhashed --corpus $D/corpus-measured.txt
#   tar cJf export.tar.xz -C OUT _export; xz OUT/export-go.test
#
# Usage: X=<folder with export.tar.xz, export-go.test.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with export.tar.xz and export-go.test.xz, relative to the repository root}
tar xJf $X/export.tar.xz -C $T && xz -dc $X/export-go.test.xz > $T/export-go.test && chmod +x $T/export-go.test
timeout 560 scripts/export-gpu-check.sh $T/_export $T/export-go.test $OUT/logs > $OUT/check.txt 2>&1
echo "rc=$?"
tail -n 25 $OUT/check.txt
cd $OUT/logs && gzip -9 *.log
