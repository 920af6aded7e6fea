#!/bin/bash
# Tuning throughput on two H200s (issue 18, part 3): the protocol of ../tuning-throughput-h100x2
# (the same tune on one GPU, then on two, each with a fresh result cache and driver JIT cache).
# Run from the repository root with X = a folder holding runner.xz and tilegen-worker.xz (built with
# `go build -trimpath ./runner`, `go build -trimpath -tags gpu ./runner/worker`, then `xz`) and, for
# an A/B in one call, runner-old.xz (the runner before the change; the worker is the same).
#   run.sh NAME:RUNNER:DEVICES ...   e.g. run.sh one:new:0 two-old:old:0,1 two:new:0,1
# writes NAME/{cost,run}.json, results.jsonl.gz, summary.txt into $OUT/tp.tar.gz, and $OUT/machine.txt.
set -u
X=${X:?folder with the binaries}
T=$(mktemp -d)
for f in $X/*.xz; do xz -T0 -dc "$f" > "$T/$(basename "$f" .xz)"; chmod +x "$T/$(basename "$f" .xz)"; done
nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv > $OUT/machine.txt; nproc >> $OUT/machine.txt
S=1024x1024x1024,2048x2048x2048,1041x1247x139,535x792x414,4096x4096x32
for spec in "$@"; do
  IFS=: read -r name bin devs <<< "$spec"
  r=$T/runner; [ "$bin" = old ] && r=$T/runner-old
  mkdir -p $OUT/$name
  CUDA_CACHE_PATH=$T/jit-$name $r tune --family regtile,cpasync --shapes $S --progress none --rank-rounds 3 \
    --worker $T/tilegen-worker --devices $devs --cache $T/c-$name.jsonl --out $T/$name > $OUT/$name/summary.txt 2>&1
  echo "$name rc=$?"
  cp $T/$name/cost.json $T/$name/run.json $OUT/$name/; gzip -c $T/$name/results.jsonl > $OUT/$name/results.jsonl.gz
  grep -h "measured (" $OUT/$name/summary.txt
done
tar -C $OUT -czf $OUT/tp.tar.gz $(for spec in "$@"; do echo "${spec%%:*}"; done) && rm -rf $(for spec in "$@"; do echo "$OUT/${spec%%:*}"; done)
