#!/bin/bash
# What the catalog can do on large shapes it never tuned (the wave guard's probe shapes, on which the
# exported rule ran 0.81-0.95 of cuBLAS through the header, and the two worst unseen shapes): a
# model-guided tune of the whole catalog, 16 measurements a shape, each verified first, against
# cuBLAS in the same run.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
timeout 500 $T/runner tune --shapes-file $P/shapes.txt --strategy model --budget 16 --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/probe/cache.jsonl --out $OUT/probe > $OUT/probe.log 2>&1
echo "rc=$?"
tail -3 $OUT/probe.log
(cd $OUT/probe && rm -f cache.jsonl && gzip -9 results.jsonl)
