#!/usr/bin/env bash
# Second corpus step: the edge suite of every variant, then the corpus tune resumed from the cache.
set -u
mkdir -p bin; for f in ${CARRY:-carry}/*.xz; do xz -T0 -dc "$f" > "bin/$(basename "$f" .xz)"; chmod +x "bin/$(basename "$f" .xz)"; done
W=${TMPDIR:-/tmp}/tilegen-workload; mkdir -p $W; cp ${CARRY:-carry}/cache0.jsonl $W/cache.jsonl; chmod u+w $W/cache.jsonl
nvidia-smi -L
timeout 230 bin/runner verify --out $W/workload-verify --cache $W/cache.jsonl --progress plain > $OUT/verify-stdout.txt 2>&1; echo "verify rc=$?"
tail -3 $OUT/verify-stdout.txt
timeout 215 bin/runner tune --shapes-file workloads/corpus.txt --strategy model --budget 8 --rank-rounds 2 \
    --out $W/workload-tune --cache $W/cache.jsonl --progress plain > $OUT/tune-stdout.txt 2>&1; echo "tune rc=$?"
tail -3 $OUT/tune-stdout.txt
xz -T0 -c $W/cache.jsonl > $OUT/cache.jsonl.xz
tar -C $W -cJf $OUT/dirs.tar.xz $(cd $W && ls -d workload-* 2>/dev/null)
ls -la $OUT
