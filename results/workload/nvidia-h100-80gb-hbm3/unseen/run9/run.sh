#!/bin/bash
# 1. gemvn_dot with its 2^18-float workspace: the edge suite, then timed on the tiny-output shapes.
# 2. Two headers exported from the same records, before (eold) and after (enew) the state pools and
#    the ordering of state-keeping launches across streams, compiled by this host's nvcc:
#    --concurrent (module memory; four streams, one thread and four threads), then the 74 unseen
#    shapes twice each in the order enew, eold, eold, enew.
# Usage (from the repository root): X=<folder with runner.xz and tilegen-worker.xz built from this commit,
# eold.tar.xz and enew.tar.xz holding tgsgemm/tgsgemm.cuh of each export, concurrent.txt and the
# tiny-output shapes as dotshapes.txt> run.sh; writes under $OUT
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
for e in eold enew; do
  mkdir -p $T/$e && tar xJf $X/$e.tar.xz -C $T/$e
  nvcc -O2 -arch=sm_90 -Xcompiler -pthread -DTG_EXPORT_NAME=tgsgemm -I$T/$e/tgsgemm -o $T/excuda-$e examples/export-cuda/main.cu -lcublas -lcuda > $T/build-$e.txt 2>&1 &
done
pack() {
  local n=$1
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
timeout 200 $T/runner verify --worker $T/tilegen-worker --variants 'gemvnd_*' --cache $OUT/verify-dot/cache.jsonl \
  --out $OUT/verify-dot --progress plain > $OUT/verify-dot.log 2>&1
echo "verify-dot rc=$? $(date +%T)"; tail -n 2 $OUT/verify-dot.log; pack verify-dot
timeout 200 $T/runner tune --shapes-file $X/dotshapes.txt --variants 'gemvnd_*' --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker --cache $OUT/dot/cache.jsonl --out $OUT/dot > $OUT/dot.log 2>&1
echo "dot rc=$? $(date +%T)"; tail -n 1 $OUT/dot.log; pack dot
wait
for e in eold enew; do echo "build $e: $(wc -l < $T/build-$e.txt) lines"; head -5 $T/build-$e.txt; done
for e in eold enew; do
  timeout 120 $T/excuda-$e --concurrent $X/concurrent.txt > $OUT/concurrent-$e.txt 2>&1
  echo "concurrent $e rc=$? $(date +%T)"; grep -c '^ok' $OUT/concurrent-$e.txt; grep -c '^FAIL' $OUT/concurrent-$e.txt
done
i=0
for e in enew eold eold enew; do
  i=$((i+1))
  timeout 110 $T/excuda-$e --shapes workloads/unseen.txt > $OUT/unseen-$i-$e.txt 2>&1
  echo "$i $e rc=$? $(date +%T) $(tail -n 2 $OUT/unseen-$i-$e.txt | head -1)"
done
