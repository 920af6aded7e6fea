#!/bin/bash
# cpasync_auto's 64x128 and 128x64 tiles (8x8 threads) on an H200: their edge suite, then timed
# against cuBLAS, each verified first, on the same 198 problems as run.sh, next to the kernels that
# won the mid-size random problems before (stream-K on cpasync's loop, cpasync's unsplit 64x128 tile)
# and cpasync_auto's 64x64 8x4 tile, in the same run.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run2.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
W='cpasynca_64x128x*,cpasynca_128x64x*'
timeout 120 $T/runner verify --variants "$W" --progress plain --worker $T/tilegen-worker --cache $OUT/verify/cache.jsonl \
  --out $OUT/verify > $OUT/verify.log 2>&1
echo "verify rc=$?"
tail -2 $OUT/verify.log
V="$W,streamka_64x128x16_w64_t8x8_s3_b3_x1,streamka_64x128x16_w64_t8x8_s3_b3_x0,cpasync_64x128x16_w64_t8x8_s3_k1_x0,cpasynca_64x64x16_w32_t8x4_s3_b0"
(grep -v '^#' $P/../regimes/shapes.txt; cat workloads/unseen.txt workloads/unseen-small.txt | grep -v '^#') | grep . > $T/all.txt
timeout ${TUNE_S:-420} $T/runner tune --shapes-file $T/all.txt --variants "$V" --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 \
  --progress plain --worker $T/tilegen-worker --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "tune rc=$?"
tail -1 $OUT/tune.log
cd $OUT && for d in verify tune; do gzip -9 $d/cache.jsonl; if [ -f $d/results.jsonl ]; then rm -f $d/cache.jsonl.gz $d/bench.txt $d/results.csv $d/ranking.json && gzip -9 $d/results.jsonl; fi; done
# one archive: the device returns a bounded number of files
tar cf out.tar verify tune verify.log tune.log && rm -rf verify tune verify.log tune.log
