#!/bin/bash
# wgmma_tf32 (NN, NT, TT) on the GPU: edge suite per op, tune against cuBLAS with the same op
# (SGEMM for 3xtf32, TF32 math for tf32), accuracy.
D=$(cd "$(dirname "$0")" && pwd); step=$1; shift
for f in $D/*.xz; do xz -dkf "$f"; done; chmod +x $D/* 2>/dev/null
W=$OUT/w; mkdir -p $W
R="$D/runner"; WK="--worker $D/tilegen-worker"
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.max.sm --format=csv > $W/machine.txt
case $step in
wg3)
  (time $R verify --family wgmma_tf32 --precision 3xtf32,tf32 --ops NN,NT,TT $WK --devices 0 --out $W/verify --cache $W/cache.jsonl --progress none) > $W/verify.log 2>&1
  grep -c passed $W/verify.log; grep -iE "fail|error" $W/verify.log | head
  (time $R tune --family wgmma_tf32 --precision 3xtf32,tf32 --ops NN,NT,TT $WK --devices 0 \
     --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192,1041x1247x139,535x792x414 --out $W/tune --cache $W/cache.jsonl --progress none \
     --min-time 30ms --reps 10 --rank-rounds 3 --table-top 3) > $W/tune.log 2>&1
  grep -A5 "^shape" $W/tune.log | grep -v "^--" | cut -c1-110; tail -3 $W/tune.log
  $R accuracy --shape 4096x4096x4096 --variants 'wgmma_128_wg2_k32_s4_p2_3xtf32,wgmma_128_wg2_k32_s3_p0_3xtf32,wgmma_256_wg2_k32_s4_p2_tf32' $WK --out $W/accuracy.json > $W/accuracy.log 2>&1
  tail -16 $W/accuracy.log | cut -c1-110 ;;
esac
case $step in
wg3b)
  (time $R tune --family wgmma_tf32 $WK --devices 0 \
     --shapes 4096x4096x4096:NT:3xtf32,8192x8192x8192:NT:3xtf32,4096x4096x4096:TT:3xtf32,8192x8192x8192:TT:3xtf32,4096x4096x4096:NT:tf32,8192x8192x8192:NT:tf32,4096x4096x4096:TT:tf32,8192x8192x8192:TT:tf32 --out $W/tune-ops --cache $W/cache.jsonl --progress none \
     --min-time 30ms --reps 10 --rank-rounds 3 --table-top 2) > $W/tune-ops.log 2>&1
  grep -A4 "^shape" $W/tune-ops.log | grep -v "^--" | cut -c1-110; tail -3 $W/tune-ops.log ;;
esac
