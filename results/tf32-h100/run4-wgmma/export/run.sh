#!/bin/bash
# the 3xtf32 export (wgmma kernels, sm_90a) through examples/export-cuda on the GPU host
E=${E:?the export directory}
nvcc -O2 -gencode arch=compute_90a,code=sm_90a -DTG_EXPORT_NAME=tg_3xtf32 -I$E -o $E/export-cuda examples/export-cuda/main.cu -lcublas -lcuda 2>&1 | grep -v Wno-deprecated | head -20
echo "--- sm_90 (no a): expect the #error"
nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tg_3xtf32 -I$E -o $E/export-cuda-90 examples/export-cuda/main.cu -lcublas -lcuda 2>&1 | grep -m2 "error"
echo "--- run"
$E/export-cuda --ptx-dir $E/ptx 2>&1 | tail -40; echo "rc ${PIPESTATUS[0]}"
echo "--- unseen shapes"
timeout 200 $E/export-cuda --shapes workloads/unseen.txt 2>&1 | tail -8
