#!/bin/bash
# The catalog's split-K, deep-K, stream-K and cpasync families (not only the export's kernels) on the
# 40 small-output, deep-K problems of shapes.txt, on an H200, against cuBLAS, each verified first: how
# far the best kernel the catalog holds is from cuBLAS there, where the export's best reaches 0.895.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run3.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
grep 'random small' $P/shapes.txt > $T/small.txt
timeout 540 $T/runner tune --shapes-file $T/small.txt --ops NN --family cpasync,splitk,splitk_auto,splitk_auto_rows,splitk_auto_wide,deepk,slicedk,streamk,streamk_async \
  --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/small/cache.jsonl \
  --out $OUT/small > $OUT/small.log 2>&1
echo "tune rc=$?"
tail -1 $OUT/small.log
cd $OUT && gzip -9 small/cache.jsonl && if [ -f small/results.jsonl ]; then rm -f small/cache.jsonl.gz small/bench.txt small/results.csv small/ranking.json && gzip -9 small/results.jsonl; fi
tar cf out.tar small small.log && rm -rf small small.log
