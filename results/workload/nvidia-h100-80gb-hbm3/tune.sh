#!/usr/bin/env bash
# Corpus tune for issue 17: model-guided search over the whole catalog on every corpus shape.
set -u
mkdir -p bin; for f in ${CARRY:-carry}/*.xz; do xz -T0 -dc "$f" > "bin/$(basename "$f" .xz)"; chmod +x "bin/$(basename "$f" .xz)"; done
W=${TMPDIR:-/tmp}/tilegen-workload; mkdir -p $W
nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
STEP=${1:-tune}
if [ "$STEP" = tune ]; then
  timeout 560 bin/runner tune --shapes-file workloads/corpus.txt --strategy model --budget ${BUDGET:-8} --rank-rounds 2 \
    --out $W/workload-tune --cache $W/cache.jsonl --progress plain > $OUT/tune-stdout.txt 2>&1; echo "rc=$?"
  tail -5 $OUT/tune-stdout.txt
  cp $W/cache.jsonl $OUT/cache-tune.jsonl
  tar -C $W -cJf $OUT/workload-tune.tar.xz workload-tune
else
  timeout 560 bin/runner verify --out $W/workload-verify --cache $W/cache.jsonl --progress plain > $OUT/verify-stdout.txt 2>&1; echo "rc=$?"
  tail -5 $OUT/verify-stdout.txt
  tar -C $W -cJf $OUT/workload-verify.tar.xz workload-verify
fi
ls -la $OUT
