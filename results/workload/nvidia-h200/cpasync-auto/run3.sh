#!/bin/bash
# cpasync_auto under op NT (B stored N x K) on an H200: its NT edge suite, then timed against cuBLAS
# (same op), each verified first, on nt-shapes.txt (small outputs with a deep K under NT), next to
# every NT-capable family of the catalog (regtile_op, regtile_btring, kmajor, cpasync_bt), none of
# which splits K, in the same run.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run3.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
P=$(dirname "$0")
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
timeout 100 $T/runner verify --variants 'cpasynca_*_nt' --progress plain --worker $T/tilegen-worker --cache $OUT/verify/cache.jsonl \
  --out $OUT/verify > $OUT/verify.log 2>&1
echo "verify rc=$?"
tail -2 $OUT/verify.log
timeout ${TUNE_S:-300} $T/runner tune --shapes-file $P/nt-shapes.txt --family regtile_op,regtile_btring,kmajor,cpasync_bt,cpasync_auto \
  --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 \
  --progress plain --worker $T/tilegen-worker --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "tune rc=$?"
tail -1 $OUT/tune.log
cd $OUT && for d in verify tune; do gzip -9 $d/cache.jsonl; if [ -f $d/results.jsonl ]; then rm -f $d/cache.jsonl.gz $d/bench.txt $d/results.csv $d/ranking.json && gzip -9 $d/results.jsonl; fi; done
# one archive: the device returns a bounded number of files
tar cf out.tar verify tune verify.log tune.log && rm -rf verify tune verify.log tune.log
