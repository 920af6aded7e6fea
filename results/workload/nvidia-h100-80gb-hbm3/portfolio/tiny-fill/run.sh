#!/bin/bash
# The tiny-output portfolio (portfolio/tiny: every variant of the GEMV, shared, deep-K, split-K and
# stream-K families, the regime portfolios' variants and the dispatch's candidates) on the five other
# corpus shapes whose M and N are both at most 16, so that every kernel timed on one tiny-output shape
# is timed on all (cuBLAS in the same run; each verified there first).
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
n=tiny-fill
timeout 540 $T/runner tune --shapes-file $P/shapes.txt --variants "$(paste -sd, $P/variants.txt)" --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker --cache $OUT/$n/cache.jsonl --out $OUT/$n > $OUT/$n.log 2>&1
echo "$n rc=$? $(date +%T)"
tail -3 $OUT/$n.log
(cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
