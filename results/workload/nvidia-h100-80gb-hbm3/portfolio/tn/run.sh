#!/bin/bash
# cpasync_auto under op(A) = A^T (TN and TT: A stored K x M, copied straight into its k-major tile;
# the launch-time slice count and the two-level fix-up as under NN) on the H100: its edge suite under
# both ops (runner verify --family cpasync_auto --ops TN,TT), then its TN variants with the
# register-tiled TN kernels of the export, each verified first, against cublasSgemm with the same op
# in the same run, on the corpus's deep-k, small and tiny products as TN (shapes.txt: Gram and
# covariance products XᵀX among them).
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
pack() {
  local n=$1
  # a run stopped by its time limit leaves its cache only: keep that instead
  [ -f $OUT/$n/results.jsonl ] || gzip -9 -c $OUT/$n/cache.jsonl > $OUT/$n/cache.jsonl.gz
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
timeout ${VERIFY_S:-120} $T/runner verify --worker $T/tilegen-worker --family cpasync_auto --ops TN,TT --cache $OUT/verify/cache.jsonl \
  --out $OUT/verify --progress plain > $OUT/verify.log 2>&1
echo "verify rc=$? $(date +%T)"
grep -c ' passed' $OUT/verify.log; grep -E ' (failed|FAIL)' $OUT/verify.log | head -5
pack verify
timeout ${TN_S:-150} $T/runner tune --shapes-file $P/shapes.txt \
  --variants 'cpasynca_*_tn,regtile_128x256x16_w64_t8x16_p0_f1_s4_b1_tn,regtile_128x64x16_w64_t8x8_p0_f1_s2_b1_tn_sb,regtile_64x64x16_w32_t8x4_p0_f1_s2_b1_tn_sb,regtile_64x64x32_w32_t8x4_p0_f1_s2_b1_tn_sb' \
  --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker \
  --cache $OUT/tn/cache.jsonl --out $OUT/tn > $OUT/tn.log 2>&1
echo "tn rc=$? $(date +%T)"
tail -n 1 $OUT/tn.log
pack tn
