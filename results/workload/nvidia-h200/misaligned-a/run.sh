#!/bin/bash
# The MIS = 3 twins (variants.yaml regtile_mis, splitk_auto_mis: a misaligned A and B loaded coalesced)
# against the kernels they twin, the MIS = 1 twins and two cpasync kernels, on an H200: first the twins' edge suite (runner
# verify: degenerate, prime, tile +-1 shapes, alpha/beta != 0, padded leading dimensions with
# NaN-poisoned padding), then all of variants.txt timed against cuBLAS on shapes.txt, each verified
# first. Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root;
# writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
timeout 200 $T/runner verify --variants '*_m3' --progress plain --worker $T/tilegen-worker \
  --cache $OUT/verify/cache.jsonl --out $OUT/verify > $OUT/verify.log 2>&1
echo "verify rc=$?"
tail -3 $OUT/verify.log
V=$(grep -v '^#' $P/variants.txt | paste -sd,)
timeout 420 $T/runner tune --shapes-file $P/shapes.txt --variants "$V" --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "tune rc=$?"
tail -3 $OUT/tune.log
cd $OUT && rm -f tune/cache.jsonl verify/cache.jsonl tune/bench.txt tune/results.csv tune/ranking.json verify/results.csv && gzip -9 tune/results.jsonl verify/results.jsonl
# one archive: the device returns a bounded number of files
tar cf out.tar tune verify tune.log verify.log && rm -rf tune verify tune.log verify.log
