#!/bin/bash
# Builds tb.cu against an export's header (tg.cuh, the README's export command with --name tg) with
# the GPU host's nvcc and runs it on shapes.txt: cuBLAS, the export's entry for each op, and the
# composites (operands transposed into workspaces, then another op's entry), every result checked first.
# Usage: X=<folder with tg.cuh.xz> [TB_DIR=<build folder>] [TB_STEP=build|run|both] run.sh
#   (from the repository root; writes under $OUT; TB_STEP=build in the background while the GPU does
#   other work, then TB_STEP=run with the same TB_DIR, saves the build's minutes of GPU-host time)
set -u
X=${X:?the carry folder}
P=$(dirname "$0")
T=${TB_DIR:-$(mktemp -d)}
step=${TB_STEP:-both}
if [ $step != run ]; then
  mkdir -p $T/tg && xz -dc $X/tg.cuh.xz > $T/tg/tg.cuh
  cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
  /usr/bin/time -f "build %e s" $cuda/bin/nvcc -O2 -arch=sm_90 -I$T/tg -o $T/tb $P/tb.cu -lcublas > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
  cat $OUT/build.txt
fi
[ $step = build ] && exit 0
nvidia-smi -L
timeout ${TB_S:-240} $T/tb $P/shapes.txt > $OUT/tb.txt 2>&1
echo "tb rc=$?"; tail -n 2 $OUT/tb.txt
