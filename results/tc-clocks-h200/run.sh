#!/bin/bash
# Sustained GEMMs on the GPU host, its clocks sampled every 50 ms (nvidia-smi): why the
# TF32 and 3xTF32 kernels lose ground from 4096^3 to 8192^3 (bench on an H100: TF32 0.81 -> 0.70 of
# cuBLAS TF32, 3xTF32 2.24 -> 1.89 of cuBLAS SGEMM). clocks.cu, built by g++ against two exports of
# the committed H100 bench (results/bench/nvidia-h100-80gb-hbm3: tune, tune-large, verify):
#   runner export ... --precision tf32 --out ea --name tgt;  runner export ... --precision 3xtf32 --out eb --name tgx
# and the committed FP32 example, examples/export-go/tgsgemm/tgsgemm.cuh.
# Usage: X=<folder with hdr.tar.xz: ea/tgt.cuh, eb/tgx.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
{
  g++ --version | head -n 1
  /usr/bin/time -f "%e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/ea -I$T/eb -Iexamples/export-go/tgsgemm -o $T/clocks $P/clocks.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
q=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$q --format=csv > /dev/null 2>&1 || q=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu
nvidia-smi --query-gpu=$q --format=csv -lms 50 > $OUT/clocks.csv 2>&1 &
S=$!
sleep 1
# The first launch of each exported kernel compiles its PTX (the driver's cache): a first pass loads them.
timeout 300 $T/clocks > $OUT/warm.txt 2>&1
timeout 300 $T/clocks > $OUT/clocks.txt 2>&1
echo "rc=$?"
kill $S
cat $OUT/clocks.txt
