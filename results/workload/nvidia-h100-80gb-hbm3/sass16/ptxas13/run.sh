#!/bin/bash
# As ../run.sh, but tgb's fatbins are built on the GPU host by its own toolkit (CUDA 13's ptxas and
# fatbinary, ../mkfat.py), from the same PTX: does that ptxas's SASS run as fast as the driver's
# compile of the PTX (tga)?
# Usage: X=<folder with hdr.tar.xz (tga/tga.cuh, tgb/tgb.cuh with PTX) and ptx.tar.xz> run.sh
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
tar xJf $X/ptx.tar.xz -C $T
nvidia-smi -L
ptxas --version | tail -n 1
mkdir -p $T/fat
python3 $P/../mkfat.py $T/tgb/tgb.cuh $T/tgb/tgb2.cuh $T/ptx $T/fat && mv $T/tgb/tgb2.cuh $T/tgb/tgb.cuh || exit 1
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/tga -I$T/tgb -o $T/ab $P/../../unseen/run16/ab.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64 || exit 1
for f in $P/shapes.txt workloads/unseen.txt; do
  b=$(basename $f .txt)
  timeout 250 $T/ab $f > $OUT/ab-$b.txt 2>&1
  echo "$b rc=$?"
  tail -n 3 $OUT/ab-$b.txt
done
