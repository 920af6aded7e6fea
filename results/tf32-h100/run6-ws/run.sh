#!/bin/bash
# wgmma_ws (warp-specialized wgmma, NN, NT, TT) on the GPU: edge suite per op, then timed in the same
# runs as wgmma_tf32's leaders against cuBLAS with the same op (SGEMM for 3xtf32, TF32 math for
# tf32), then accuracy at 4096^3.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
R=$T/runner; WK="--worker $T/tilegen-worker"; W=$OUT
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.max.sm --format=csv > $W/machine.txt
LEAD='wgws_*,wgmma_128_wg2_k32_s4_p2_*,wgmma_256_wg2_k32_s4_p2_*,wgmma_128_wg2_k16_s6_p4_*,wgmma_64_wg1_k16_s4_p4_*,wgmma_64_wg1_k32_s4_p2_*'
(time timeout 240 $R verify --family wgmma_ws --precision 3xtf32,tf32 --ops NN,NT,TT $WK --devices 0 --out $W/verify --cache $W/cache.jsonl --progress none) > $W/verify.log 2>&1
echo "verify rc=$? $(date +%T)"; grep -c passed $W/verify.log; grep -iE "fail|error" $W/verify.log | head
(time timeout 300 $R tune --family wgmma_ws,wgmma_tf32 --precision 3xtf32,tf32 --variants "$LEAD" $WK --devices 0 \
   --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192,1041x1247x139,535x792x414 --out $W/tune --cache $W/cache.jsonl --progress none \
   --min-time 30ms --reps 10 --rank-rounds 3 --table-top 4) > $W/tune.log 2>&1
echo "tune rc=$? $(date +%T)"; grep -A5 "^shape" $W/tune.log | grep -v "^--" | cut -c1-120; tail -3 $W/tune.log
(time timeout 300 $R tune --family wgmma_ws,wgmma_tf32 --variants "$LEAD" $WK --devices 0 \
   --shapes 4096x4096x4096:NT:3xtf32,8192x8192x8192:NT:3xtf32,4096x4096x4096:TT:3xtf32,8192x8192x8192:TT:3xtf32,4096x4096x4096:NT:tf32,8192x8192x8192:NT:tf32,4096x4096x4096:TT:tf32,8192x8192x8192:TT:tf32 \
   --out $W/tune-ops --cache $W/cache.jsonl --progress none --min-time 30ms --reps 10 --rank-rounds 3 --table-top 3) > $W/tune-ops.log 2>&1
echo "tune-ops rc=$? $(date +%T)"; grep -A4 "^shape" $W/tune-ops.log | grep -v "^--" | cut -c1-120; tail -3 $W/tune-ops.log
timeout 120 $R accuracy --shape 4096x4096x4096 --variants 'wgws_128_wg2_k32_s4_l1_f2_3xtf32,wgws_128_wg2_k16_s8_l2_f4_3xtf32,wgmma_128_wg2_k32_s4_p2_3xtf32,wgws_256_wg2_k32_s4_l0_f1_tf32' $WK --out $W/accuracy.json > $W/accuracy.log 2>&1
echo "accuracy rc=$? $(date +%T)"; tail -18 $W/accuracy.log | cut -c1-120
rm -f $W/cache.jsonl
for d in verify tune tune-ops; do
  (cd $W/$d && rm -f results.csv bench.txt && gzip -9 results.jsonl)
  tar czf $W/$d.tgz -C $W $d && rm -rf $W/$d
done
