#!/bin/bash
# Build the SIMT warp-specialization harness with the GPU host's nvcc and run it (from the repository root).
D=$(dirname "$0")
nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 $D/sw.cu -Xptxas -warn-spills -lcublas -o $D/sw 2>&1 | grep -v "Wno-deprecated" | head -20
timeout 300 stdbuf -oL $D/sw 2>&1
