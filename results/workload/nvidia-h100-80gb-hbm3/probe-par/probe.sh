#!/bin/bash
# Probe: the same variants and shapes timed by the runner before (runner-old, fbeb4ae) and after the
# parallel fix-up (runner), each against cuBLAS in its own run.
set -u
T=$(mktemp -d) # scratch: the unpacked binaries and export
X=${X:?the folder with runner.xz (this commit), runner-old.xz (fbeb4ae) and tilegen-worker.xz}
for f in runner runner-old tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=784x512x4608,512x1024x4096,128x4096x4096,768x768x10000,1568x512x4608,128x768x3072,1x1000x2048,1x128x2048,1x4096x1024,1x4096x4096,1x256x512,8x1600x6400,16x4096x1024,8x768x3072
V='splitka_64x128x16_w64_t8x8_s2_b2,splitka_32x128x16_w32_t4x8_s2_b2,splitka_128x64x16_w64_t8x8_s2_b4,splitka_128x256x16_w32_t8x16_s3_b1,gemvm_m1_x32_y8_u2_o1,gemvm_m1_x64_y4_u2_o1,gemvm_m1_x256_y1_u2_o1,deepk_32x64x32_t4x4_s3_b4,deepk_64x64x32_t4x4_s3_b2'
F="--rank-rounds 1 --min-time 15ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker"
for r in old new a-old a-new; do
  b=$T/runner; case $r in *old) b=$T/runner-old;; esac
  $b tune --shapes $S --variants "$V" $F --cache $OUT/$r/cache.jsonl --out $OUT/$r > $OUT/$r.log 2>&1
  echo "$r rc=$?"
done
