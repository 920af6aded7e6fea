#!/bin/bash
# splitk_auto_rows' 16x128 tiles (4x4 thread tiles): the edge suite of its 3 variants, then
# each timed on the corpus shapes with M of 2-32, N >= 512 and K >= 256 against cuBLAS in the same run.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")/../rows}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
pack() {
  local n=$1
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
timeout 200 $T/runner verify --worker $T/tilegen-worker --variants 'splitka_16x128*' --cache $OUT/verify-rows128/cache.jsonl \
  --out $OUT/verify-rows128 --progress plain > $OUT/verify-rows128.log 2>&1
echo "verify-rows128 rc=$? $(date +%T)"
tail -n 4 $OUT/verify-rows128.log
pack verify-rows128
n=rows128
timeout 300 $T/runner tune --shapes-file $P/shapes.txt --variants 'splitka_16x128*' --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker --cache $OUT/$n/cache.jsonl --out $OUT/$n > $OUT/$n.log 2>&1
echo "$n rc=$? $(date +%T)"
tail -n 2 $OUT/$n.log
pack $n
