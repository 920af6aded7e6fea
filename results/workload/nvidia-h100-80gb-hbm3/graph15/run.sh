#!/bin/bash
# The header's PTX build inside CUDA graph capture and from concurrent streams and threads:
# examples/export-cuda built by this host's nvcc (CUDA 13) against the README's render export
# (tgwork) and the committed example export (tgsgemm, register-tiled kernels with 64 KiB of dynamic
# shared memory), each run with --graph shapes.txt (the first calls of the header captured in global
# mode, the graph launched twice, checked against cuBLAS) and --concurrent shapes.txt (four streams,
# one and four host threads).
# Usage: X=<folder with hdr.tar.xz: tgwork/tgwork.cuh> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
P=$(dirname "$0")
tar xJf $X/hdr.tar.xz -C $T
nvidia-smi -L
for e in tgwork:$T/tgwork tgsgemm:examples/export-go/tgsgemm; do
  n=${e%%:*}; d=${e#*:}
  nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=$n -I$d -o $T/ex-$n examples/export-cuda/main.cu -lcublas -lcuda > $OUT/build-$n.txt 2>&1 || { tail $OUT/build-$n.txt; exit 1; }
  for m in graph concurrent; do
    timeout 120 $T/ex-$n --$m $P/shapes.txt > $OUT/$m-$n.txt 2>&1
    echo "$n $m rc=$? $(grep -c '^ok' $OUT/$m-$n.txt) ok, $(grep -c '^FAIL' $OUT/$m-$n.txt) FAIL"
  done
done
