#!/bin/bash
# The corpus under op NT on the H100: a portfolio of the NT kernels (cpasync_auto's NT twins, the
# register-tiled NT kernels of the export, the strided-batch kernels that also run one product),
# each verified first (every one passed its NT edge suite on this GPU: ../cpasync-auto/verify,
# results/ops-h100, results/batch-h100), timed against cublasSgemm with the same op in the same run,
# on the corpus's products as NT (shapes.txt; shapes-gemv.txt, the GEMV-like classes, with the five
# kernels that suit thin outputs).
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
run_tune() { # name limit shapes variants
  local n=$1
  timeout $2 $T/runner tune --shapes-file $3 --variants "$4" --rank-rounds 1 --min-time 10ms --reps 10 \
    --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker --cache $OUT/$n/cache.jsonl \
    --out $OUT/$n > $OUT/$n.log 2>&1
  echo "$n rc=$? $(date +%T)"
  tail -n 1 $OUT/$n.log
  pack $n
}
R='regtile_256x128x16_w64_t8x16_p4_f1_s3_b1_nt,regtile_128x256x16_w64_t8x16_p4_f1_s3_b1_nt,regtile_128x128x32_w32_t8x8_p4_f1_s2_b1_nt,regtile_128x128x16_w64_t8x8_p4_f1_s2_b1_nt'
R="$R,regtile_64x128x16_w64_t8x8_p0_f1_s1_b1_nt_sb,regtile_128x64x16_w64_t8x8_p0_f1_s1_b1_nt_sb,regtile_64x64x16_w32_t8x4_p0_f1_s1_b1_nt_sb,regtile_64x64x8_w32_t8x4_p0_f1_s1_b1_nt_sb"
C='cpasynca_64x64x16_w32_t8x4_s3_b0_nt,cpasynca_64x64x16_w32_t8x4_s3_b2_nt,cpasynca_64x64x16_w32_t8x4_s3_b3_nt,cpasynca_64x64x16_w32_t4x8_s3_b0_nt'
C="$C,cpasynca_32x64x16_w16_t4x4_s3_b0_nt,cpasynca_32x64x16_w16_t4x4_s3_b3_nt,cpasynca_32x64x16_w16_t4x4_s3_b4_nt,cpasynca_64x32x16_w16_t4x4_s3_b0_nt"
C="$C,cpasynca_64x32x16_w16_t4x4_s3_b3_nt,cpasynca_64x128x16_w64_t8x8_s3_b0_nt,cpasynca_128x64x16_w64_t8x8_s3_b0_nt,cpasynca_128x64x8_w64_t8x8_s3_b0_nt,cpasynca_32x64x8_w16_t4x4_s3_b0_nt"
run_tune nt ${NT_S:-240} $P/shapes.txt "$R,$C"
run_tune nt-gemv ${GEMV_S:-45} $P/shapes-gemv.txt 'regtile_64x64x8_w32_t8x4_p0_f1_s1_b1_nt_sb,cpasynca_32x64x16_w16_t4x4_s3_b0_nt,cpasynca_32x64x16_w16_t4x4_s3_b4_nt,cpasynca_64x32x16_w16_t4x4_s3_b0_nt,cpasynca_64x32x16_w16_t4x4_s3_b3_nt,cpasynca_64x64x16_w32_t8x4_s3_b0_nt'
