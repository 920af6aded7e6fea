#!/bin/bash
# wgmma_tf32 on the GPU: edge suite, tune against cuBLAS (SGEMM for 3xtf32, TF32 math for tf32), accuracy.
D=$(cd "$(dirname "$0")" && pwd); step=$1; shift
for f in $D/*.xz; do xz -dkf "$f"; done; chmod +x $D/* 2>/dev/null
W=$OUT/w; mkdir -p $W
R="$D/runner"; WK="--worker $D/tilegen-worker"
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.max.sm --format=csv > $W/machine.txt
case $step in
wg2)
  (time $R verify --family wgmma_tf32 --precision 3xtf32,tf32 $WK --devices 0 --out $W/verify --cache $W/cache.jsonl --progress none) > $W/verify.log 2>&1
  grep -c passed $W/verify.log; grep -iE "fail|error" $W/verify.log | head
  (time $R tune --family wgmma_tf32,mma_tf32 --precision 3xtf32,tf32 $WK --devices 0 \
     --variants 'wgmma_*,mma_tf32_128x256x16_w64x64_s4_*,mma_tf32_128x128x16_w64x64_s4_*' \
     --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192,1041x1247x139,535x792x414 --out $W/tune --cache $W/cache.jsonl --progress none \
     --min-time 30ms --reps 10 --rank-rounds 3 --table-top 4) > $W/tune.log 2>&1
  grep -A7 "^shape" $W/tune.log | grep -v "^--" | cut -c1-120; tail -4 $W/tune.log
  $R accuracy --shape 4096x4096x4096 --variants 'wgmma_128_wg2_k32_s4_p2_3xtf32,wgmma_128_wg2_k32_s3_p0_3xtf32,wgmma_256_wg2_k32_s4_p2_tf32,mma_tf32_128x256x16_w64x64_s4_3xtf32' $WK --out $W/accuracy.json > $W/accuracy.log 2>&1
  tail -30 $W/accuracy.log ;;
esac
