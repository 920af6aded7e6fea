#!/bin/bash
# probe.sh OUT: registers and spills of kernels compiled from source by this nvcc and from the
# committed PTX by this ptxas, and their SASS sizes.
OUT=$1; mkdir -p $OUT; cd "$(dirname "$0")"
NV=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc); PX=$(dirname $NV)/ptxas
$NV --version | tail -2 > $OUT/versions.txt
for cu in *.cu; do v=${cu%.cu}
  $NV -arch=sm_90 -cubin -O3 -Xptxas -v $cu -o $OUT/$v.src.cubin > $OUT/$v.src.txt 2>&1
  $PX -arch=sm_90 -v $v.ptx -o $OUT/$v.ptx.cubin > $OUT/$v.ptx.txt 2>&1
  $(dirname $NV)/cuobjdump -sass $OUT/$v.src.cubin > $OUT/$v.src.sass 2>&1
  $(dirname $NV)/cuobjdump -sass $OUT/$v.ptx.cubin > $OUT/$v.ptx.sass 2>&1
  rm -f $OUT/*.cubin
done
cd $OUT && tar czf ../probe.tgz . && ls -la
