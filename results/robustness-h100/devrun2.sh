#!/usr/bin/env bash
# Tune and verify micro1d on the H100, then export from those (hashed) results without
# --allow-unhashed, and compile the exported header with the host's nvcc.
set -u
X=bin/x; mkdir -p $X
for f in runner tilegen-worker; do xz -T0 -dc bin/carry/$f.xz > $X/$f; chmod +x $X/$f; done
exec > >(tee "$OUT/devrun2.log") 2>&1
W=/tmp/devw2; rm -rf $W; mkdir -p $W
set -x
$X/runner tune --worker $X/tilegen-worker --family micro1d --shapes 1024x1024x1024,535x792x414,4096x4096x32 --progress none --cache $W/c.jsonl --out $W/t | tail -3
$X/runner verify --worker $X/tilegen-worker --family micro1d --progress none --cache $W/c.jsonl --out $W/v | tail -3
$X/runner export --results $W/t --results $W/v --out $W/exp --name tgx --go-package example.com/tgx
cp $W/exp/tgx.json $OUT/
ls $W/exp
printf '#include "tgx.cuh"\nint main(){return 0;}\n' > $W/m.cu && nvcc -arch=sm_90 -I$W/exp -o $W/m $W/m.cu -lcuda && echo HEADER_COMPILES
