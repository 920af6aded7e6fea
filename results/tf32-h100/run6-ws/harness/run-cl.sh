#!/bin/bash
# Build the cluster harness with the GPU host's nvcc (sm_90a) and run it (from the repository root).
D=$(dirname "$0")
nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I templates/include $D/cl.cu -Xptxas -warn-spills -lcublas -o $D/cl 2>&1 | grep -v "Wno-deprecated" | head -30
timeout 240 stdbuf -oL $D/cl 2>&1
