#!/bin/bash
# streamk_async under NT, TN and TT on the H100: the edge suite of its op variants (runner verify),
# then each verified and timed against cublasSgemm with the same op on the op corpora's products of
# at least 2^30 multiply-adds (shapes-{nt,tn,tt}.txt), where the export's wave guard (a stream-K
# kernel launched instead of a fixed grid whose last wave a large problem would leave mostly empty)
# may act; the guard is fitted on those timings. Every op variant is timed on every shape
# (exhaustive: 4 kernels per op).
# Usage: X=<folder with runner.xz, tilegen-worker.xz> [STEPS="verify nt tn tt"] run.sh
#   (from the repository root; writes under $OUT; a step's cache in $OUT/<step>/ is resumed)
set -u
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
. $P/../carry.sh
carry_unpack $X
nvidia-smi -L
for s in ${STEPS:-verify nt tn tt}; do
  case $s in
  verify)
    timeout ${VERIFY_S:-150} $T/runner verify --worker $T/tilegen-worker --family streamk_async --ops NT,TN,TT --cache $OUT/verify/cache.jsonl \
      --out $OUT/verify --progress plain > $OUT/verify.log 2>&1
    echo "verify rc=$? $(date +%T)"
    tail -n 2 $OUT/verify.log
    carry_pack verify ;;
  nt) carry_tune nt $P/shapes-nt.txt 'streamka_*_nt' ${NT_S:-210} ;;
  tn) carry_tune tn $P/shapes-tn.txt 'streamka_*_tn' ${TN_S:-60} ;;
  tt) carry_tune tt $P/shapes-tt.txt 'streamka_*_tt' ${TT_S:-210} ;;
  esac
done
