#!/bin/bash
# Family cpasync_auto (cpasync's cp.async ring with a launch-time slice count and the two-level fix-up)
# on the H100: its edge suite under both ops (runner verify --family cpasync_auto: 56 variants), then
# its 28 NN variants timed against cuBLAS in the same run, each verified first, on the corpus shapes
# of the small, skinny, deep-k and tiny classes (small.txt), and its 64x64, 64x128 and 128x64 tiles on
# the large class's (large.txt).
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
pack() {
  local n=$1
  # a run stopped by its time limit leaves its cache only: keep that instead
  [ -f $OUT/$n/results.jsonl ] || gzip -9 -c $OUT/$n/cache.jsonl > $OUT/$n/cache.jsonl.gz
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
run_tune() { # name limit shapes variants
  local n=$1
  timeout $2 $T/runner tune --shapes-file $3 --variants "$4" --rank-rounds 1 --min-time 10ms --reps 10 \
    --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker --cache $OUT/$n/cache.jsonl \
    --out $OUT/$n > $OUT/$n.log 2>&1
  echo "$n rc=$? $(date +%T)"
  tail -n 1 $OUT/$n.log
  pack $n
}
timeout ${VERIFY_S:-150} $T/runner verify --worker $T/tilegen-worker --family cpasync_auto --cache $OUT/verify/cache.jsonl \
  --out $OUT/verify --progress plain > $OUT/verify.log 2>&1
echo "verify rc=$? $(date +%T)"
tail -n 2 $OUT/verify.log
pack verify
NN='cpasynca_*_b0,cpasynca_*_b2,cpasynca_*_b3,cpasynca_*_b4'
run_tune small ${SMALL_S:-230} $P/small.txt "$NN"
run_tune large ${LARGE_S:-160} $P/large.txt 'cpasynca_64x128x*_b0,cpasynca_64x128x*_b2,cpasynca_128x64x*_b0,cpasynca_128x64x*_b2,cpasynca_64x64x16_*_b0,cpasynca_64x64x16_*_b2'
