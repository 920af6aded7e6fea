#!/bin/bash
# Every NN cpasync kernel on the corpus shapes of the large, skinny, deep-k and small regimes that
# the stream-K render exported below 0.9x: cuBLAS's kernel on 3001x2999x97 is a 64x64x8 3-stage tile
# on 128 threads (Nsight Compute, ../../ncu/), and the cpasync 64x64 tiles had never been timed there.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
n=cpasync-below
$T/runner tune --shapes-file $P/shapes.txt --family cpasync --rank-rounds 1 --min-time 15ms --reps 10 --warmup 2 \
  --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker --cache $OUT/$n/cache.jsonl --out $OUT/$n > $OUT/$n.log 2>&1
echo "$n rc=$? $(date +%T)"
(cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
