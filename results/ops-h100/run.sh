#!/bin/bash
# ops GPU run: worker tests per op and batch, edge suite, op tune, batch-suite tune, export + C++ check.
set -u
cd "$(dirname "$0")"
python3 - <<'PY'
import lzma, shutil
for f in ['runner', 'gpu.test']:
    with lzma.open(f + '.xz') as i, open(f, 'wb') as o:
        shutil.copyfileobj(i, o)
PY
chmod +x runner gpu.test tilegen-worker
python3 -c "import lzma,tarfile; tarfile.open(fileobj=lzma.open('generated.tar.xz')).extractall('.')"
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/w; mkdir -p $W
t0=$(date +%s); el() { echo "$1 rc=$2 at $(( $(date +%s) - t0 ))s"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $W/device.txt 2>&1
./gpu.test -test.run 'TestOpsVerify|TestBatchesVerify' -test.v > $W/gpu-test.log 2>&1; el gpu.test $?
./runner verify --family micro1d,shared --cache $W/cache.jsonl --out $W/verify --progress none > $W/verify.log 2>&1; el verify $?
./runner tune --ops NN,NT,TN,TT --shapes 4096x4096x4096,1041x1247x139 --family micro1d,shared --rank-rounds 3 \
  --cache $W/cache.jsonl --out $W/tune-ops --progress none > $W/tune-ops.log 2>&1; el tune-ops $?
./runner export --generated generated --results $W/tune-ops --results $W/verify --out $W/exp --name tgsgemm \
  --go-package tilegen/examples/export-go/tgsgemm > $W/export.log 2>&1; el export $?
(nvcc -O2 -arch=sm_90 -I$W/exp -o $W/export-cuda main.cu -L/usr/local/cuda/lib64/stubs -lcublas -lcuda > $W/nvcc.log 2>&1; echo "nvcc rc=$?" >> $W/nvcc.log) &
B=512x512x64:b64,512x512x64:NT:b64,512x512x64:TN:b64,512x512x64:TT:b64,128x128x128:b64,128x128x128:NT:b64,128x128x128:TN:b64,128x128x128:TT:b64,64x64x64:b1024,64x64x64:NT:b1024,64x64x64:TN:b1024,64x64x64:TT:b1024,384x384x64:b12,384x384x64:NT:b12,384x384x64:TN:b12,384x384x64:TT:b12,4096x4096x64:b8
./runner tune --shapes $B --family micro1d --rank-rounds 3 --cache $W/cache.jsonl --out $W/tune-batch --progress none > $W/tune-batch.log 2>&1; el tune-batch $?
wait; el nvcc-wait 0
[ -x $W/export-cuda ] && $W/export-cuda --ptx-dir $W/exp/ptx > $W/export-cuda.log 2>&1; el export-cuda $?
rm -f $W/cache.jsonl
tar czf $OUT/results.tgz -C $W .
cp $W/gpu-test.log $W/export-cuda.log $W/nvcc.log $OUT/ 2>/dev/null
tail -5 $W/verify.log; tail -3 $W/tune-ops.log; tail -3 $W/tune-batch.log; tail -3 $W/export-cuda.log; grep -E "^(--- |FAIL|ok)" $W/gpu-test.log | head
