#!/bin/bash
# The benchmark suite on the GPU host, one call: the edge suite of every selected family (runner
# verify, its records the bench's cache), then `runner bench` with that cache (the suite's shapes
# under fp32, 3xtf32 and tf32; the model's 16 most promising variants per shape, every variant of the
# families a candidate: the prior counts a warp-specialized block's math threads), writing
# <gpu>/ and BENCHMARKS.md under $OUT (bench.tgz).
# Usage: X=<folder with runner.xz, tilegen-worker.xz> results/bench/run.sh   (from the repository root)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
FAM=regtile,regtile_op,regtile_btring,regtile_epi,splitk,cpasync,slicedk,micro1d,wgmma_ws,wgmma_tf32
cd $T
(time timeout 290 ./runner verify --worker ./tilegen-worker --family $FAM --precision fp32,3xtf32,tf32 --shared-inputs-above 1 \
  --cache cache.jsonl --out verify --progress none) > $OUT/verify.log 2>&1
echo "verify rc=$? $(date +%T)"; tail -4 $OUT/verify.log
(time timeout 280 ./runner bench --worker ./tilegen-worker --cache cache.jsonl --root $OUT/bench --markdown $OUT/BENCHMARKS.md \
  --reps 10 --min-time 30ms --progress plain --shared-inputs-above 1 --family $FAM --precision fp32,3xtf32,tf32 \
  --strategy model --budget 16) > $OUT/bench-stdout.txt 2>&1
echo "bench rc=$? $(date +%T)"; grep -v "^\[" $OUT/bench-stdout.txt | tail -8
G=$(ls $OUT/bench 2>/dev/null); for d in verify tune tune-large; do
  [ -d "$OUT/bench/$G/$d" ] && (cd $OUT/bench/$G/$d && rm -f results.csv && gzip -9 results.jsonl 2>/dev/null)
done
gzip -9 $OUT/bench-stdout.txt $OUT/verify.log; tar czf $OUT/bench.tgz -C $OUT bench && rm -rf $OUT/bench
