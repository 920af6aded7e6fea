#!/bin/bash
# The Go package of this session's corpus export (gemvs included) through examples/export-go's GPU
# test, on the GPU host. The test binary is built where Go is, against that export, with the
# README's render flags ($R, the workload section) plus the ops, batch and epilogue results (the
# test also calls the batched and fused-epilogue entries):
#
#   scripts/export-gpu-build.sh OUT $R --results results/batch-h100/call1/tune-batch \
#     --results results/batch-h100/call2/tune-batch --results results/batch-h100/call2/verify \
#     --results results/epilogue-h100/run3/bench/nvidia-h100-80gb-hbm3/tune \
#     --results results/epilogue-h100/run3/bench/nvidia-h100-80gb-hbm3/verify \
#     --results results/ops-h100/regtile-op/tune-ops --results results/ops-h100/regtile-op/verify \
#     --results results/ops-h100/btring/tune --results results/ops-h100/btring/verify \
#     --allow-unhashed --corpus $D/corpus-measured.txt
#   xz OUT/export-go.test
#
# Usage: X=<folder with export-go.test.xz, built as export-check14/run.sh says> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with export-go.test.xz, relative to the repository root}
xz -dc $X/export-go.test.xz > $T/export-go.test && chmod +x $T/export-go.test
cd examples/export-go && timeout 480 $T/export-go.test -test.v -test.timeout 600s > $OUT/export-go-test.log 2>&1
echo "rc=$?"
grep -E "^(--- |FAIL|PASS|ok)" $OUT/export-go-test.log | tail -5
gzip -9 $OUT/export-go-test.log
