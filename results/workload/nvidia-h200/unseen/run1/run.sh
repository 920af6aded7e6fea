#!/bin/bash
# The H100-fitted export on an H200 (2026-11-28, eighteenth session): the first calls lent an H200
# instead of an H100. run16's ab.cu (cuBLAS, A and B timed in one process, rotated rounds, every result
# checked against cuBLAS first) built by g++ against two exports of the README's render (the H100
# corpus results) by this commit's runner, A (tga) and B (tgb) the same rule under two names (their
# spread is the run's noise), on the 74 unseen shapes, the 24 unseen small ones and run17's
# guard-shapes (the corpus shapes the wave guard touched and twelve large probe shapes); then
# run17/probe's model-guided catalog tune of those probes on this GPU.
# Usage: X=<folder with hdr.tar.xz (ea/tga.cuh, eb/tgb.cuh), runner.xz, tilegen-worker.xz> run.sh
# (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
H=results/workload/nvidia-h100-80gb-hbm3/unseen
tar xJf $X/hdr.tar.xz -C $T
for f in runner tilegen-worker; do xz -T0 -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv; } > $OUT/smi.txt 2>&1
cat $OUT/smi.txt
cuda=$(cd "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/.." && pwd)
{
  g++ --version | head -n 1
  /usr/bin/time -f "%e s" g++ -std=c++17 -O2 -x c++ -I$cuda/include -I$T/ea -I$T/eb -o $T/ab $H/run16/ab.cu -L$cuda/lib64 -lcublas -lcudart -Wl,-rpath,$cuda/lib64
} > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
for f in workloads/unseen-small.txt workloads/unseen.txt $H/run17/guard-shapes.txt; do
  o=$OUT/ab-$(basename $f)
  timeout 250 $T/ab $f > $o 2>&1
  echo "$f rc=$?"
  tail -n 3 $o
done
mkdir -p $OUT/probe
timeout 200 $T/runner tune --shapes-file $H/run17/probe/shapes.txt --strategy model --budget 16 --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --progress plain --worker $T/tilegen-worker --cache $OUT/probe/cache.jsonl --out $OUT/probe > $OUT/probe.log 2>&1
echo "probe rc=$?"
tail -3 $OUT/probe.log
(cd $OUT/probe && rm -f cache.jsonl && gzip -9 results.jsonl; cd $OUT && tar czf probe.tar.gz probe && rm -rf probe)
