#!/bin/bash
# cpasync_auto (cpasync's cp.async ring with a launch-time slice count and the two-level fix-up) on an
# H200: its edge suite (runner verify), then timed against cuBLAS, each verified first, on the 100
# random problems of ../regimes/shapes.txt (40 of them small outputs with a deep K) and the unseen
# workload shapes (workloads/unseen.txt, workloads/unseen-small.txt), next to the cluster-8 cpasync
# kernels and splitka's 64x64 tiles in the same run. ../regimes holds the export's kernels there,
# ../regimes/small the catalog's split-K families on the 40 small problems.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
timeout 120 $T/runner verify --family cpasync_auto --progress plain --worker $T/tilegen-worker --cache $OUT/verify/cache.jsonl \
  --out $OUT/verify > $OUT/verify.log 2>&1
echo "verify rc=$?"
tail -2 $OUT/verify.log
V='cpasynca_*,cpasync_64x64x*_s3_k8_x1,cpasync_64x64x8_w32_t*_s3_k6_x1,splitka_64x64x16_w32_t4x8_s2_b0,splitka_64x64x16_w32_t4x8_s2_b2,splitka_64x64x16_w32_t4x8_s2_b4'
(grep -v '^#' $P/../regimes/shapes.txt; cat workloads/unseen.txt workloads/unseen-small.txt | grep -v '^#') | grep . > $T/all.txt
timeout ${TUNE_S:-420} $T/runner tune --shapes-file $T/all.txt --variants "$V" --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 \
  --progress plain --worker $T/tilegen-worker --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "tune rc=$?"
tail -1 $OUT/tune.log
cd $OUT && for d in verify tune; do gzip -9 $d/cache.jsonl; if [ -f $d/results.jsonl ]; then rm -f $d/cache.jsonl.gz $d/bench.txt $d/results.csv $d/ranking.json && gzip -9 $d/results.jsonl; fi; done
# one archive: the device returns a bounded number of files
tar cf out.tar verify tune verify.log tune.log && rm -rf verify tune verify.log tune.log
