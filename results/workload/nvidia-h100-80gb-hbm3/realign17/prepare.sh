#!/bin/bash
# Builds the kernels bench.cu includes from the committed generated sources: three cpasync kernels
# as generated, and prototypes of each whose unaligned-C store (vc false) goes through
# tg::store_tile_realign (rows.cuh), "b"/"f" variants with __launch_bounds__(256, 2) and with the
# realigned store forced for every ldc, "cs" variants with streaming stores (__stcs).
# Usage: prepare.sh DIR   (from the repository root; DIR gets the .cu files, then copy rows.cuh and bench.cu there)
set -eu
D=${1:?output folder}
G=generated/cuda
mkdir -p "$D"
k128=cpasync_128x128x16_w64_t8x8_s3_k1_x0 k64=cpasync_64x64x16_w32_t8x4_s4_k1_x0 k64x=cpasync_64x64x16_w32_t8x4_s3_k1_x1
for k in $k128 $k64 $k64x; do cp $G/$k.cu "$D/"; done
store='tg::store_tile<Tile>(acc, C, ldc, M, N, row0, col0, alpha, beta, vc);'
realign='tg::store_tile_realign<Tile, Cfg::NA * Cfg::A_TILE + Cfg::NB * Cfg::B_TILE>(acc, As, tid, C, ldc, M, N, m0, n0, wm, wn, alpha, beta);'
mk() { # source kernel, new name, launch bounds min blocks, store statement
  sed -e "s/__launch_bounds__(\([0-9]*\), 1) $1(/__launch_bounds__(\1, $3) $2(/" -e "s|$store|$4|" $G/$1.cu > "$D/$2.cu"
  grep -q " $2(" "$D/$2.cu"
}
mk $k128 proto128 1 "if (vc) $store else $realign"
mk $k128 proto128b 2 "if (vc) $store else $realign"
mk $k64 proto64 1 "if (vc) $store else $realign"
mk $k64x proto64x 1 "if (vc) $store else $realign"
mk $k128 proto128f 2 "$realign"
mk $k64x proto64xf 1 "$realign"
mk $k128 proto128fcs 2 "${realign/Cfg::B_TILE>/Cfg::B_TILE, true>}"
mk $k128 proto128cs 1 "tg::store_tile_cs<Tile>(acc, C, ldc, M, N, row0, col0, alpha, beta, vc);"
