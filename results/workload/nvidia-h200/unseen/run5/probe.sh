#!/bin/bash
# What the catalog can do on the worst random problems (probe-shapes.txt) on an H200: a model-guided tune of the whole
# catalog (24 measurements a shape, each verified first) against cuBLAS in the same run, as
# run17/probe did on the H100. Diagnostic: these shapes are not added to the corpus.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
timeout 500 $T/runner tune --shapes-file $P/probe-shapes.txt --strategy model --budget 24 --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/probe/cache.jsonl --out $OUT/probe > $OUT/probe.log 2>&1
echo "rc=$?"
tail -3 $OUT/probe.log
(cd $OUT/probe && rm -f cache.jsonl && gzip -9 results.jsonl)
