#!/bin/bash
nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I templates/include $(dirname "$0")/h2.cu -Xptxas -warn-spills -lcublas -o $(dirname "$0")/h2 2>&1 | grep -v "Wno-deprecated" | head -20
$(dirname "$0")/h2 2>&1
