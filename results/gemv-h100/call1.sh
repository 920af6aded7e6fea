#!/bin/bash
# Call 1 (issue 17, branch wl): reproduce the large-M worker crash with the old worker, confirm the fix
# with the new one, time the GEMV families against cuBLAS, and time prototype GEMV designs.
set -u
C=devcarry/wl; B=$(mktemp -d); W=$(mktemp -d)
for f in runner old-worker tilegen-worker gpu.test; do xz -T0 -dc $C/$f.xz > $B/$f; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $OUT/gpu.txt
python3 $C/bw.py >> $OUT/gpu.txt 2>&1
echo "== old worker, 1605632x64x27" > $OUT/crash.txt
timeout 90 $B/runner tune --worker $B/old-worker --shapes 1605632x64x27 --variants 'gemvn_n4_k8_u2_w2' --rank-rounds 0 \
  --out $W/old --cache $W/old.jsonl --progress plain >> $OUT/crash.txt 2>&1; echo "rc=$?" >> $OUT/crash.txt
python3 -c "
import json,sys
for l in open('$W/old.jsonl'):
    r=json.loads(l); print(r.get('variant'), r.get('status'), (r.get('reason') or '')[:6000])
" >> $OUT/crash.txt 2>&1
echo "== new worker: gpu test" >> $OUT/crash.txt
(cd internal/gpu 2>/dev/null || true; timeout 150 $B/gpu.test -test.run 'TestTallShapes|TestCublas' -test.v) >> $OUT/crash.txt 2>&1; echo "rc=$?" >> $OUT/crash.txt
echo "== new worker via runner" >> $OUT/crash.txt
timeout 120 $B/runner tune --shapes 1605632x64x27,1605632x64x576 --strategy model --budget 2 --rank-rounds 1 \
  --out $W/new --cache $W/new.jsonl --progress plain --min-time 15ms --reps 10 --warmup 2 >> $OUT/crash.txt 2>&1; echo "rc=$?" >> $OUT/crash.txt
timeout 200 $B/runner tune --family gemvm,gemvn,deepk --shapes 1x4096x4096,4096x1x4096,1x8192x8192,8192x1x8192 \
  --min-time 15ms --reps 10 --warmup 2 --rank-rounds 2 --table-top 8 --out $W/gemv --cache $W/gemv.jsonl --progress plain > $OUT/gemv-tune.txt 2>&1; echo "rc=$?" >> $OUT/gemv-tune.txt
tar -C $W -czf $OUT/gemv-tune.tgz gemv new
nvcc -O3 -arch=sm_90 $C/gemv_proto.cu -lcublas -o $B/gemv_proto > $OUT/proto.txt 2>&1 && timeout 60 $B/gemv_proto >> $OUT/proto.txt 2>&1
tail -30 $OUT/crash.txt; grep -A10 "^shape\|ranking" $OUT/gemv-tune.txt | head -60; cat $OUT/proto.txt | head -80
