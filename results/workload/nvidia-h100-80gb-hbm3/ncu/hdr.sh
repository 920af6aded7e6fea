#!/bin/bash
# Nsight Compute on 3001x2999x97 through the corpus export's header (examples/export-cuda): the
# exported kernel and cuBLAS's, the first launches of each.
set -u
T=$(mktemp -d)
X=${X:?the folder with wlexp.tar.xz (the export of unseen/run6), relative to the repository root}
mkdir -p $T/ex && tar xJf $X/wlexp.tar.xz -C $T/ex
nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgsgemm -I$T/ex/tgsgemm -o $T/excuda examples/export-cuda/main.cu -lcublas -lcuda > $OUT/build.txt 2>&1
echo "build rc=$?"
printf '3001 2999 97  # odd sizes: primes, shallow K\n4093 4091 127  # odd sizes: primes\n' > $T/shapes.txt
timeout 300 /usr/local/cuda/bin/ncu -k regex:"cpasync|splitka|gemm|streamk" -c 8 --section SpeedOfLight --section Occupancy \
  --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section SchedulerStats \
  $T/excuda --shapes $T/shapes.txt > $OUT/ncu-header.txt 2>&1
echo "ncu rc=$?"
grep -E "^\s+[a-z_0-9]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issued Warp|No Eligible" $OUT/ncu-header.txt | head -80
