#!/bin/bash
# cpasync_auto through both exported artifacts on an H200: an export of this directory's parent's H200
# results (../tune, ../verify, ../wide/tune, ../wide/verify: cpasync_auto and the kernels timed next
# to it that passed their edge suite; the dispatch fitted on those 198 problems), checked by
# scripts/export-gpu-check.sh: examples/export-cuda built against its .cuh with the host's nvcc
# (every class and edge shape against cuBLAS, refusals, timing against the tuning records) and the
# GPU test of examples/export-go built against the same export (cuBLAS and float64 checks,
# refusals, timing). Both were built where Go is:
#
#   D=results/workload/nvidia-h200/cpasync-auto
#   scripts/export-gpu-build.sh OUT --results $D/tune --results $D/verify --results $D/wide/tune --results $D/wide/verify
#   tar cJf export.tar.xz -C OUT _export; xz OUT/export-go.test
#
# Usage: X=<folder with export.tar.xz, export-go.test.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with export.tar.xz and export-go.test.xz, relative to the repository root}
tar xJf $X/export.tar.xz -C $T && xz -dc $X/export-go.test.xz > $T/export-go.test && chmod +x $T/export-go.test
nvidia-smi -L
timeout 560 scripts/export-gpu-check.sh $T/_export $T/export-go.test $OUT/logs > $OUT/check.txt 2>&1
echo "rc=$?"
tail -n 25 $OUT/check.txt
cd $OUT/logs && gzip -9 *.log
