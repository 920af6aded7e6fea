#!/bin/bash
# The committed export's NN kernels timed against cuBLAS on an H200 on the unseen workload shapes
# (workloads/unseen.txt, workloads/unseen-small.txt: shapes no corpus holds, none tuned on): the
# GEMM kernels of variants.txt on every shape, the GEMV and small-problem kernels of
# variants-all.txt on the shapes with M or N of at most 16. Every kernel's time on every shape, to
# judge a dispatch rule on realistic shapes it was not fitted on. Each result verified first.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run2.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
cat workloads/unseen.txt workloads/unseen-small.txt | grep -v '^#' | grep . > $T/all.txt
awk '$1 <= 16 || $2 <= 16' $T/all.txt > $T/thin.txt
V=$(grep -v '^#' $P/variants.txt | paste -sd,)
G=$(grep -v '^#' $P/variants-all.txt | grep -vxFf <(grep -v '^#' $P/variants.txt) | paste -sd,)
timeout 300 $T/runner tune --shapes-file $T/all.txt --variants "$V" --rank-rounds 1 --min-time 10ms --reps 10 \
  --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/unseen/cache.jsonl --out $OUT/unseen > $OUT/unseen.log 2>&1
echo "tune rc=$?"
tail -1 $OUT/unseen.log
timeout 200 $T/runner tune --shapes-file $T/thin.txt --variants "$G" --rank-rounds 1 --min-time 10ms --reps 10 \
  --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/unseen-thin/cache.jsonl --out $OUT/unseen-thin > $OUT/unseen-thin.log 2>&1
echo "tune rc=$?"
tail -1 $OUT/unseen-thin.log
cd $OUT && for d in unseen unseen-thin; do gzip -9 $d/cache.jsonl; if [ -f $d/results.jsonl ]; then rm -f $d/cache.jsonl.gz $d/bench.txt $d/results.csv $d/ranking.json && gzip -9 $d/results.jsonl; fi; done
tar cf out.tar unseen unseen-thin unseen.log unseen-thin.log && rm -rf unseen unseen-thin unseen.log unseen-thin.log
