#!/bin/bash
# GEMV-like products under op NT on the H100: the NT variants of gemvn and gemvn_g (B stored N x K, its
# short rows read as float4s along K) and gemvn_t (the roles swapped for a short M: y = x·Wᵀ at a
# batch of a few rows, W's rows streamed), their edge suite (runner verify), then each verified and
# timed with the NT kernels the export ran these shapes on before (../nt/run.sh's nt-gemv
# portfolio) against cublasSgemm NT in the same run, on ../nt/shapes-gemv.txt.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
pack() {
  local n=$1
  [ -f $OUT/$n/results.jsonl ] || gzip -9 -c $OUT/$n/cache.jsonl > $OUT/$n/cache.jsonl.gz
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
timeout ${VERIFY_S:-120} $T/runner verify --worker $T/tilegen-worker --family gemvn,gemvn_g,gemvn_t --ops NT --cache $OUT/verify/cache.jsonl \
  --out $OUT/verify --progress plain > $OUT/verify.log 2>&1
echo "verify rc=$? $(date +%T)"
pack verify
timeout ${TUNE_S:-200} $T/runner tune --shapes-file $P/../nt/shapes-gemv.txt \
  --variants 'gemvn_*_nt,gemvng_*_nt,gemvt_*,regtile_64x64x8_w32_t8x4_p0_f1_s1_b1_nt_sb,cpasynca_32x64x16_w16_t4x4_s3_b0_nt,cpasynca_32x64x16_w16_t4x4_s3_b4_nt,cpasynca_64x32x16_w16_t4x4_s3_b0_nt,cpasynca_64x32x16_w16_t4x4_s3_b3_nt,cpasynca_64x64x16_w32_t8x4_s3_b0_nt' \
  --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker \
  --cache $OUT/tune/cache.jsonl --out $OUT/tune > $OUT/tune.log 2>&1
echo "tune rc=$? $(date +%T)"
tail -n 1 $OUT/tune.log
pack tune
