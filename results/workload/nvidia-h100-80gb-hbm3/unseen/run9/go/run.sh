#!/bin/bash
# The Go package of the corpus export through examples/export-go's TestConcurrentStreams on the GPU
# host. The test binary is built where Go is, against that export, with the flags of
# ../../export-go-gpu/run.sh (the README's render flags $R plus the ops, batch and epilogue results):
#
#   scripts/export-gpu-build.sh OUT $R --results results/batch-h100/call1/tune-batch ... --corpus $D/corpus-measured.txt
#   xz OUT/export-go.test
#
# Usage: X=<folder with export-go.test.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with export-go.test.xz, relative to the repository root}
xz -dc $X/export-go.test.xz > $T/export-go.test && chmod +x $T/export-go.test
nvidia-smi -L
cd examples/export-go && timeout 400 $T/export-go.test -test.v -test.run 'TestConcurrentStreams' -test.timeout 420s > $OUT/export-go-concurrent.log 2>&1
echo "rc=$?"
grep -E "^(--- |FAIL|PASS|ok)" $OUT/export-go-concurrent.log | tail -5
grep -c 'results wrong' $OUT/export-go-concurrent.log
grep 'results wrong' $OUT/export-go-concurrent.log | grep -vc ' 0 of 4 results wrong'
