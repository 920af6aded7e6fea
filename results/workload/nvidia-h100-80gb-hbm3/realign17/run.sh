#!/bin/bash
# On the GPU host: prepare.sh, build bench.cu with the host's nvcc, run it (writes $OUT/bench.txt).
# Usage: run.sh   (from the repository root)
set -eu
E=$(dirname "$0")
T=$(mktemp -d)
bash $E/prepare.sh $T
cp $E/rows.cuh $E/bench.cu $T/
nvidia-smi -L
nvcc -O3 -arch=sm_90 -o $T/bench $T/bench.cu -lcublas
$T/bench | tee $OUT/bench.txt
