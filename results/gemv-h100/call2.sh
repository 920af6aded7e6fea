#!/bin/bash
# Call 2 (issue 17, branch wl): the old worker's panic trace, the fix's GPU test, the edge suite of the
# new gemvn/gemvm, the GEMV shapes exhaustively, then the corpus subset (regimes gemv-m, gemv-n,
# deep-k, skinny) with the model-guided search on the split-rule families until the time runs out.
set -u
START=$SECONDS
C=devcarry/wl; B=$(mktemp -d); W=$(mktemp -d)
for f in runner old-worker tilegen-worker gpu.test; do xz -T0 -dc $C/$f.xz > $B/$f; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $OUT/gpu.txt
echo '{"id":1,"op":"cublas","shape":{"m":1605632,"n":64,"k":27},"verify":{"seed":1,"sub_matrix":true,"cpu_check_max_flops":0,"tol_factor":2}}' \
  | timeout 60 $B/old-worker --reference-ptx $C/ref.ptx > $OUT/panic.txt 2>&1; echo "old worker rc=$?" >> $OUT/panic.txt
timeout 90 $B/gpu.test -test.run 'TestTallShapes' -test.v > $OUT/tall-test.txt 2>&1; echo "rc=$?" >> $OUT/tall-test.txt
timeout 60 $B/runner verify --family gemvm,gemvn --out $W/verify --cache $W/cache.jsonl --progress plain > $OUT/verify.txt 2>&1; echo "rc=$?" >> $OUT/verify.txt
timeout 70 $B/runner tune --family gemvm,gemvn --shapes 1x4096x4096,4096x1x4096,1x8192x8192,8192x1x8192 \
  --min-time 15ms --reps 10 --warmup 2 --rank-rounds 2 --table-top 6 --out $W/gemv --cache $W/cache.jsonl --progress plain > $OUT/gemv-tune.txt 2>&1; echo "rc=$?" >> $OUT/gemv-tune.txt
LEFT=$((285 - (SECONDS - START)))
echo "corpus tune: $LEFT s" > $OUT/corpus-tune.txt
timeout $LEFT $B/runner tune --shapes-file $C/corpus-regimes.txt --family deepk,gemvm,gemvn --strategy model --budget ${BUDGET:-5} \
  --rank-rounds 1 --min-time 15ms --reps 10 --warmup 2 --out $W/corpus --cache $W/cache.jsonl --progress plain >> $OUT/corpus-tune.txt 2>&1; echo "rc=$?" >> $OUT/corpus-tune.txt
cp $W/cache.jsonl $W/cache-all.jsonl; tar -C $W -czf $OUT/results.tgz cache-all.jsonl verify gemv $(cd $W && ls -d corpus 2>/dev/null)
tail -4 $OUT/panic.txt; tail -6 $OUT/tall-test.txt; tail -3 $OUT/verify.txt; grep -A8 "^shape" $OUT/gemv-tune.txt | head -44; tail -4 $OUT/corpus-tune.txt
