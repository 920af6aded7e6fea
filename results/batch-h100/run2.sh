#!/bin/bash
# batch GPU call 2 (two H100s). GPU 0: the batch suite on the 33 new batched kernels and call 1's
# per-shape winners (timing alone on its GPU). GPU 1, in turn: the edge suite of the new batched
# kernels and the 3 NN flagship kernels, then the C++ and Go examples against the export of call 1's
# results (every result checked against cuBLAS).
set -u
cd "$(dirname "$0")"
for f in runner tilegen-worker export-go.test; do xz -dkf $f.xz; chmod +x $f; done
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/w; rm -rf $W; mkdir -p $W
t0=$(date +%s); el() { echo "$1 rc=$2 at $(( $(date +%s) - t0 ))s"; }
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv > $W/device.txt 2>&1
C=/usr/local/cuda
(nvcc -O2 -arch=sm_90 -Iexp -o $W/export-cuda main.cu -L$C/lib64/stubs -lcublas -lcuda -Xlinker -rpath -Xlinker $C/lib64 > $W/nvcc.log 2>&1; echo "nvcc rc=$?" >> $W/nvcc.log) &
NEW=$(cat new-variants.txt)
NN='regtile_128x256x16_w32_t8x16_p0_f1_s4_b1,regtile_128x256x16_w64_t8x16_p0_f1_s3_b1,regtile_128x256x16_w32_t8x16_p0_f1_s3_b1'
(
  timeout 60 ./runner verify --devices 1 --variants "$NEW,$NN" --cache $W/cache-verify.jsonl --out $W/verify --progress none > $W/verify.log 2>&1; el verify $?
  tar czf $OUT/verify.tgz -C $W verify verify.log cache-verify.jsonl 2>/dev/null
  while ! grep -q "nvcc rc" $W/nvcc.log 2>/dev/null; do sleep 2; done
  [ -x $W/export-cuda ] && CUDA_VISIBLE_DEVICES=1 timeout 90 $W/export-cuda --ptx-dir exp/ptx > $OUT/export-cuda.log 2>&1; el export-cuda $?
  cp $W/nvcc.log $OUT/ 2>/dev/null
  CUDA_VISIBLE_DEVICES=1 timeout 90 ./export-go.test -test.v > $OUT/export-go-test.log 2>&1; el export-go-test $?

) > $W/gpu1.log 2>&1 &
WIN=regtile_64x64x16_w32_t8x4_p0_f1_s2_b1_sb,regtile_64x64x16_w32_t8x4_p0_f1_s1_b1_nt_sb,regtile_64x64x16_w32_t8x4_p0_f1_s2_b1_tn_sb,regtile_64x64x16_w32_t8x4_p0_f1_s1_b1_tt_sb,regtile_64x64x8_w32_t8x4_p0_f1_s1_b1_nt_sb,regtile_64x128x16_w32_t4x8_p0_f1_s2_b1_tn_sb,regtile_64x64x16_w32_t4x4_p0_f1_s1_b1_tt_sb,regtile_64x128x16_w64_t8x8_p0_f1_s2_b1_sb,regtile_128x128x16_w64_t8x8_p0_f1_s1_b1_nt_sb,regtile_128x128x16_w64_t8x8_p0_f1_s2_b1_tn_sb,regtile_64x64x8_w32_t8x4_p0_f1_s1_b1_tt_sb,regtile_128x64x16_w64_t8x8_p0_f1_s2_b1_sb,regtile_128x64x16_w32_t8x8_p0_f1_s1_b1_tt_sb
B=512x512x64:b64,512x512x64:NT:b64,512x512x64:TN:b64,512x512x64:TT:b64,128x128x128:b64,128x128x128:NT:b64,128x128x128:TN:b64,128x128x128:TT:b64,64x64x64:b1024,64x64x64:NT:b1024,64x64x64:TN:b1024,64x64x64:TT:b1024,384x384x64:b12,384x384x64:NT:b12,384x384x64:TN:b12,384x384x64:TT:b12,4096x4096x64:b8
timeout 150 ./runner tune --devices 0 --shapes $B --variants "$NEW,$WIN" --rank-rounds 2 --shared-inputs-above 1e8 \
  --cache $W/cache.jsonl --out $W/tune-batch --progress none > $W/tune-batch.log 2>&1; el tune-batch $?
tar czf $OUT/tune.tgz -C $W tune-batch tune-batch.log cache.jsonl device.txt 2>/dev/null
wait
cp $W/gpu1.log $OUT/
cat $W/gpu1.log; tail -3 $W/verify.log; tail -2 $W/tune-batch.log; grep -E "FAIL|PASS" $OUT/export-cuda.log | tail -5; tail -5 $OUT/export-go-test.log; tail -3 $W/nvcc.log
