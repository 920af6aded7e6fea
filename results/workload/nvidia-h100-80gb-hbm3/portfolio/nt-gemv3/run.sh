#!/bin/bash
# The NT kernels for GEMV-like products and tiny outputs on the H100, in one run: the edge suite of
# gemvn_tr (gemvn_t with RR rows of W per warp) and gemvn_dot under NT, then every NT GEMV kernel
# (gemvn, gemvn_g, gemvn_t, gemvn_tr, gemvn_dot) and the cpasync_auto tiles the export runs these
# shapes on, each verified first, against cublasSgemm NT in the same run, on shapes.txt.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
#   VERIFY_S=0 skips the edge suite; VARIANTS= narrows the tune.
set -u
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
. $P/../carry.sh
carry_unpack $X
nvidia-smi -L
[ "${VERIFY_S:-120}" = 0 ] || {
  timeout ${VERIFY_S:-120} $T/runner verify --worker $T/tilegen-worker --family gemvn_tr,gemvn_dot --ops NT --cache $OUT/verify/cache.jsonl \
    --out $OUT/verify --progress plain > $OUT/verify.log 2>&1
  echo "verify rc=$? $(date +%T)"
  tail -n 2 $OUT/verify.log
  carry_pack verify
}
timeout ${TUNE_S:-300} $T/runner tune --shapes-file $P/shapes.txt \
  --variants "${VARIANTS:-gemvtr_*,gemvt_*,gemvnd_*_nt,gemvn_*_nt,gemvng_*_nt,cpasynca_32x64x16_w16_t4x4_s3_b0_nt,cpasynca_32x64x16_w16_t4x4_s3_b4_nt,cpasynca_32x64x8_w16_t4x4_s3_b0_nt,cpasynca_64x32x16_w16_t4x4_s3_b3_nt,cpasynca_64x32x16_w16_t4x4_s3_b0_nt}" \
  --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker \
  --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "tune rc=$? $(date +%T)"
tail -n 1 $OUT/tune.log
carry_pack tune
