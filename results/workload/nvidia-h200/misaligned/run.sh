#!/bin/bash
# What a misaligned leading dimension costs each family: the kernels of variants.txt timed against
# cuBLAS on shapes.txt (problems that differ by one in K, N or M) on an H200, each verified first.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
V=$(grep -v '^#' $P/variants.txt | paste -sd,)
timeout 500 $T/runner tune --shapes-file $P/shapes.txt --variants "$V" --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "rc=$?"
tail -3 $OUT/tune.log
cd $OUT && rm -f tune/cache.jsonl tune/bench.txt tune/results.csv tune/ranking.json && gzip -9 tune/results.jsonl
