#!/bin/bash
# cpasync with clusters of 6 and 8 K slices (variants.yaml here, generated apart into G=<dir> by
# `bin/tilegen --config results/workload/nvidia-h200/cluster8/variants.yaml --out <dir>`) on an H200:
# their edge suite (runner verify), then timed against cuBLAS on the 40 small-output, deep-K problems
# of ../regimes/shapes.txt, each verified first; ../regimes/small holds the catalog's kernels there.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> G=<generated dir> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
G=${G:?the generated dir}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
timeout 200 $T/runner verify --generated $G --progress plain --worker $T/tilegen-worker --cache $OUT/verify/cache.jsonl \
  --out $OUT/verify > $OUT/verify.log 2>&1
echo "verify rc=$?"
tail -2 $OUT/verify.log
grep 'random small' $P/../regimes/shapes.txt > $T/small.txt
timeout 300 $T/runner tune --generated $G --shapes-file $T/small.txt --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 \
  --progress plain --worker $T/tilegen-worker --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "tune rc=$?"
tail -1 $OUT/tune.log
cd $OUT && for d in verify tune; do gzip -9 $d/cache.jsonl; if [ -f $d/results.jsonl ]; then rm -f $d/cache.jsonl.gz $d/bench.txt $d/results.csv $d/ranking.json && gzip -9 $d/results.jsonl; fi; done
tar cf out.tar verify tune verify.log tune.log && rm -rf verify tune verify.log tune.log
