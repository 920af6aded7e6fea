#!/bin/bash
# splitk_auto under NT, TN and TT on the H100: the edge suite of its op variants (runner verify), then
# each verified and timed against cublasSgemm with the same op, on the TN corpus (../tn/shapes.txt)
# and on the NT corpus's large, deep-k and skinny products (shapes-nt.txt), next to the kernels the
# export ran those shapes on most (cpasync_auto's split-K tiles and the register-tiled op kernels).
# Usage: X=<folder with runner.xz, tilegen-worker.xz> [STEPS="verify tn nt"] run.sh
#   (from the repository root; writes under $OUT; a step's cache in $OUT/<step>/ is resumed)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi -L
pack() {
  local n=$1
  [ -f $OUT/$n/results.jsonl ] || gzip -9 -c $OUT/$n/cache.jsonl > $OUT/$n/cache.jsonl.gz
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 -f results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
tune() { # step shapes-file variants seconds
  timeout $4 $T/runner tune --shapes-file $2 --variants "$3" \
    --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker \
    --cache $OUT/$1/cache.jsonl --out $OUT/$1 > $OUT/$1.log 2>&1
  echo "$1 rc=$? $(date +%T)"
  tail -n 1 $OUT/$1.log
  pack $1
}
for s in ${STEPS:-verify tn nt}; do
  case $s in
  verify)
    timeout ${VERIFY_S:-150} $T/runner verify --worker $T/tilegen-worker --family splitk_auto --ops NT,TN,TT --cache $OUT/verify/cache.jsonl \
      --out $OUT/verify --progress plain > $OUT/verify.log 2>&1
    echo "verify rc=$? $(date +%T)"
    tail -n 2 $OUT/verify.log
    pack verify ;;
  tn) tune tn $P/../tn/shapes.txt 'splitka_*_tn,cpasynca_32x64x16_w16_t4x4_s3_b0_tn,cpasynca_64x32x16_w16_t4x4_s3_b3_tn,cpasynca_64x64x16_w32_t4x8_s3_b0_tn,cpasynca_64x128x16_w64_t8x8_s3_b0_tn,regtile_128x256x16_w64_t8x16_p0_f1_s4_b1_tn' ${TN_S:-150} ;;
  nt) tune nt $P/shapes-nt.txt 'splitka_*_nt,cpasynca_64x128x16_w64_t8x8_s3_b0_nt,cpasynca_128x64x16_w64_t8x8_s3_b0_nt,regtile_128x128x32_w32_t8x8_p4_f1_s2_b1_nt,regtile_256x128x16_w64_t8x16_p4_f1_s3_b1_nt' ${NT_S:-400} ;;
  esac
done
