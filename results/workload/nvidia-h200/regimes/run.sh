#!/bin/bash
# The committed export's NN GEMM kernels (variants.txt) timed against cuBLAS on an H200 on random
# problems in three regimes (shapes.txt, drawn by gen.py): large (two or more waves of 128x256
# tiles), small outputs with a deep K (under one wave of 128x128 tiles) and mid (one half to two
# waves), each verified first. Every kernel's time on every problem: what the export's dispatch
# picks there can be compared with the best kernel it holds (the oracle), and the bulk guard's
# conditions fitted on problems the corpus does not hold.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
V=$(grep -v '^#' $P/variants.txt | paste -sd,)
timeout ${TUNE_S:-540} $T/runner tune --shapes-file $P/shapes.txt --variants "$V" --rank-rounds 1 --min-time 10ms --reps 10 \
  --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "tune rc=$?"
tail -3 $OUT/tune.log
cd $OUT && gzip -9 tune/cache.jsonl && if [ -f tune/results.jsonl ]; then rm -f tune/cache.jsonl.gz tune/bench.txt tune/results.csv tune/ranking.json && gzip -9 tune/results.jsonl; fi
# one archive: the device returns a bounded number of files
tar cf out.tar tune tune.log && rm -rf tune tune.log
