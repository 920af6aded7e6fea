#!/bin/bash
# The commands of run-d and run-d0, run on the 2-GPU host from a folder holding the runner and
# worker binaries (built with `go build -trimpath ./runner` and `go build -tags gpu -trimpath
# ./runner/worker`) and the GPU tests (`go test -c -tags gpu -trimpath ./internal/gpu`); OUT is
# where the files go.
#   run.sh tests REGEX        the GPU tests of internal/gpu matching REGEX (gpu-test.txt)
#   run.sh tp NAME SUFFIX     the tuning-throughput protocol with runnerSUFFIX/tilegen-workerSUFFIX:
#                             one GPU, then two, each with a fresh result cache and driver JIT cache
cd "$(dirname "$0")"
step=$1; shift
W=$(mktemp -d)
case $step in
tests)
  nvidia-smi --query-gpu=index,name,uuid --format=csv > $OUT/machine.txt; nproc >> $OUT/machine.txt
  timeout 280 ./gpu.test -test.v -test.timeout 270s -test.run "$1" > $OUT/gpu-test.txt 2>&1; echo "gpu tests rc $?" ;;
tp)
  name=$1; sfx=$2
  S=1024x1024x1024,2048x2048x2048,1041x1247x139,535x792x414,4096x4096x32
  F="--family regtile,cpasync --shapes $S --progress none --rank-rounds 3 --worker ./tilegen-worker$sfx"
  mkdir -p $OUT/$name
  for d in one two; do
    devs=0; [ $d = two ] && devs=0,1
    CUDA_CACHE_PATH=$W/jit-$name-$d ./runner$sfx tune $F --devices $devs --cache $W/c-$name-$d.jsonl --out $W/$name-$d > $OUT/$name/summary-$d.txt 2>&1
    cp $W/$name-$d/cost.json $OUT/$name/cost-$d.json; cp $W/$name-$d/run.json $OUT/$name/run-$d.json
    gzip -c $W/$name-$d/results.jsonl > $OUT/$name/results-$d.jsonl.gz
    grep -h "tune:" $OUT/$name/summary-$d.txt
  done ;;
esac
