#!/bin/bash
# The corpus under op TT on the H100 (shapes.txt: every class, 267 products): a portfolio of the TT
# kernels, every one of which passed its TT edge suite on this GPU (cpasync_auto: ../tn/verify;
# splitk_auto: ../splitka-op/verify; regtile_btring: results/ops-h100/btring; the strided-batch
# kernels, which also run one product: results/batch-h100), verified again on each shape before it
# is timed, against cublasSgemm with the same op in the same run. 65 kernels on 267 shapes is 17000
# measurements; the model-guided search (--strategy model --budget 12) measures the 12 its
# performance model ranks first per shape, learning from each measurement.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
. $P/../carry.sh
carry_unpack $X
nvidia-smi -L
R='regtile_256x128x16_w64_t8x16_p4_f1_s2_b1_tt,regtile_128x256x16_w64_t8x16_p4_f1_s4_b1_tt,regtile_128x128x32_w32_t8x8_p4_f1_s2_b1_tt,regtile_128x128x16_w64_t8x8_p4_f1_s2_b1_tt'
R="$R,regtile_64x64x16_w32_t8x4_p0_f1_s1_b1_tt_sb,regtile_128x64x16_w32_t8x8_p0_f1_s1_b1_tt_sb,regtile_64x64x8_w32_t8x4_p0_f1_s1_b1_tt_sb"
timeout ${TT_S:-330} $T/runner tune --shapes-file $P/shapes.txt --variants "cpasynca_*_tt,splitka_*_tt,$R" \
  --strategy model --budget ${BUDGET:-12} --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 --shared-inputs-above 1e9 \
  --progress plain --worker $T/tilegen-worker --cache $OUT/tt/cache.jsonl --out $OUT/tt > $OUT/tt.log 2>&1
echo "tt rc=$? $(date +%T)"
tail -n 1 $OUT/tt.log
carry_pack tt
