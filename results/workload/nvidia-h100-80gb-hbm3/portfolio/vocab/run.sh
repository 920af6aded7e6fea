#!/bin/bash
# The corpus's long-vocabulary heads (batch 1-16 through a 65k-256k vocabulary: an N beyond every
# other corpus shape) on the export's 64 variants and every variant of gemvm, gemvm_cl, splitk_auto
# and splitk_auto_rows (variants.txt), each verified on each shape first, against cuBLAS in the same run.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
n=vocab
timeout 560 $T/runner tune --shapes-file $P/shapes.txt --variants "$(paste -sd, $P/variants.txt)" --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker --cache $OUT/$n/cache.jsonl --out $OUT/$n > $OUT/$n.log 2>&1
echo "$n rc=$? $(date +%T)"
tail -3 $OUT/$n.log
(cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
