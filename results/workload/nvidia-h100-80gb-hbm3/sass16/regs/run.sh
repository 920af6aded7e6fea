#!/bin/bash
# Do the cubins of the GPU host's ptxas have the registers of the driver's compile at tuning?
# `runner export --sass auto` of the committed example's results (as ../runner/run.sh) on the GPU
# host; its summary compares each sm_90 cubin's registers with the records' (the driver's compile
# of the same PTX when it was timed).
# Usage: X=<folder with runner.xz, gen/, res.tgz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the carry folder}
nvidia-smi -L
tar xzf $X/res.tgz -C $T
xz -dc $X/runner.xz > $T/runner && chmod +x $T/runner || exit 1
R=""
for d in h100-seeds/tune h100-seeds/verify ops-h100/regtile-op/tune-ops ops-h100/regtile-op/verify ops-h100/btring/tune \
  ops-h100/btring/verify batch-h100/call1/tune-batch batch-h100/call2/tune-batch batch-h100/call2/verify \
  epilogue-h100/run3/bench/nvidia-h100-80gb-hbm3/tune epilogue-h100/run3/bench/nvidia-h100-80gb-hbm3/verify; do
  R="$R --results $T/results/$d"
done
$T/runner export $R --allow-unhashed --generated $X/gen --out $T/tgx --name tgx --sass auto > $OUT/export.txt 2>&1
echo "rc=$?"
sed -i "s|$T|\$T|g" $OUT/export.txt
grep -E "SASS|registers|warning: --sass" $OUT/export.txt
