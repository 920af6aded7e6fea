#!/bin/bash
# Every kernel of variants.txt timed on 128 random problems on one host's GPUs, against cuBLAS in the
# same run (each verified first): random-b.txt (drawn by gen.py) and unseen/run5's random-shapes.txt.
# A validation set for the dispatch rule: the rule is fitted on the H100 corpus only, and judged here
# on what each kernel it would launch measured. Resumable: the cache in $OUT/tune keeps every
# measurement; run again with the returned cache in C=<file> to finish an interrupted sweep.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> [C=cache.jsonl] run.sh   (from the repository root)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
mkdir -p $OUT/tune
[ -n "${C:-}" ] && cp "$C" $OUT/tune/cache.jsonl
cat $P/random-b.txt results/workload/nvidia-h200/unseen/run5/random-shapes.txt > $T/shapes.txt
V=$(grep -v '^#' $P/variants.txt | paste -sd,)
timeout ${LIMIT:-530} $T/runner tune --shapes-file $T/shapes.txt --variants "$V" --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "rc=$?"
tail -3 $OUT/tune.log
cd $OUT && tar cJf tune.tar.xz tune && rm -rf tune
