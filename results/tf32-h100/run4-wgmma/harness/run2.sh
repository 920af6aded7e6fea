#!/bin/bash
# The wgmma exploration harness (tilegen/wg_pipeline.cuh outside the generator), from the
# repository root on the GPU host (CUDA 12 or later: nvcc compiles sm_90a itself there).
# jitk.ptx is built on the development host the way the generator builds wgmma kernels
# (nvcc 11.8, sm_90, then .version 8.0 / .target sm_90a):
#   nvcc -ccbin g++-11 -ptx -arch=sm_90 -std=c++17 -DTILEGEN_PTX_TARGET_SM_90A -I templates/include $H/jitk.cu -o $H/jitk.ptx
#   sed -i 's/^\.version 7\.8$/.version 8.0/; s/^\.target sm_90$/.target sm_90a/' $H/jitk.ptx
H=$(dirname "$0")
nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I templates/include $H/harness.cu -Xptxas -warn-spills -lcublas -lcuda -o $H/harness
JITK=$H/jitk.ptx $H/harness | grep -v "^jit\|^check "
# Profile one kernel (its index in the list) at 4096^3:
#   ncu --launch-skip 1 --launch-count 1 --section SpeedOfLight --section SchedulerStats $H/harness prof 0
