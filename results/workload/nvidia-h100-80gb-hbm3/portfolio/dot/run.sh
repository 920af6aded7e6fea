#!/bin/bash
# Family gemvn_dot (gemvn with one or two warps per block and up to 1024 K slices, for a tiny
# output over a deep K): the edge suite of its 14 variants, then each timed on the corpus's 26
# tiny-output shapes against cuBLAS in the same run.
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
timeout 200 $T/runner verify --worker $T/tilegen-worker --variants 'gemvnd_*' --cache $OUT/verify-dot/cache.jsonl \
  --out $OUT/verify-dot --progress plain > $OUT/verify-dot.log 2>&1
echo "verify-dot rc=$? $(date +%T)"
tail -3 $OUT/verify-dot.log
pack verify-dot
n=dot
timeout 300 $T/runner tune --shapes-file $P/shapes.txt --variants 'gemvnd_*' --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker --cache $OUT/$n/cache.jsonl --out $OUT/$n > $OUT/$n.log 2>&1
echo "$n rc=$? $(date +%T)"
tail -3 $OUT/$n.log
pack $n
