#!/bin/bash
# Family gemvs (small GEMV-like products in one pass: no K split, no fix-up, no cluster): the edge
# suite of its 30 variants, then each timed on the corpus's tiny-output shapes and its smaller gemv-m
# and gemv-n shapes (shapes.txt) against cuBLAS in the same run, together with every variant the
# dispatch exports, picks held out or measured fastest on those shapes (variants.txt), so that the
# contenders of each shape are timed in one run.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
pack() {
  local n=$1
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
timeout 150 $T/runner verify --worker $T/tilegen-worker --variants 'gemvs_*' --cache $OUT/verify-gemvs/cache.jsonl \
  --out $OUT/verify-gemvs --progress plain > $OUT/verify-gemvs.log 2>&1
echo "verify-gemvs rc=$? $(date +%T)"
tail -3 $OUT/verify-gemvs.log
pack verify-gemvs
n=gemvs
timeout 400 $T/runner tune --shapes-file $P/shapes.txt --variants "$(grep -v '^#' $P/variants.txt | paste -sd,)" --rank-rounds 1 \
  --min-time 15ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker \
  --cache $OUT/$n/cache.jsonl --out $OUT/$n > $OUT/$n.log 2>&1
echo "$n rc=$? $(date +%T)"
tail -3 $OUT/$n.log
pack $n
