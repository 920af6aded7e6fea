#!/bin/bash
# The same ten cluster kernels (G=<generated dir>, as for run.sh) timed against cuBLAS on the unseen
# workload shapes (workloads/unseen.txt, workloads/unseen-small.txt) on an H200, each verified first;
# ../regimes/unseen and ../regimes/unseen-thin hold the export's kernels there.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> G=<generated dir> run2.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz}
G=${G:?the generated dir}
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
cat workloads/unseen.txt workloads/unseen-small.txt | grep -v '^#' | grep . > $T/all.txt
timeout 300 $T/runner tune --generated $G --shapes-file $T/all.txt --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 \
  --progress plain --worker $T/tilegen-worker --cache $OUT/unseen/cache.jsonl --out $OUT/unseen > $OUT/unseen.log 2>&1
echo "tune rc=$?"
tail -1 $OUT/unseen.log
cd $OUT && gzip -9 unseen/cache.jsonl && if [ -f unseen/results.jsonl ]; then rm -f unseen/cache.jsonl.gz unseen/bench.txt unseen/results.csv unseen/ranking.json && gzip -9 unseen/results.jsonl; fi
tar cf out.tar unseen unseen.log && rm -rf unseen unseen.log
