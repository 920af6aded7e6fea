#!/bin/bash
# The session's last call: gemvm_cl verified and timed on the corpus's gemv-m shapes; the two held-out
# picks never timed on their shape timed there; the corpus export (render with remeasure-par)
# through its header: its own check and the unseen shapes against cuBLAS.
set -u
T=$(mktemp -d) # scratch: the unpacked binaries and export
X=${X:?the folder with runner.xz, tilegen-worker.xz and the plans, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,uuid --format=csv > $OUT/gpu.txt
F="--rank-rounds 1 --min-time 15ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker"
pack() { # dir: keep what the committed runs keep, each file under 16 MiB
  local n=$1
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
  [ -f $OUT/$n.log ] && mv $OUT/$n.log $OUT/$n/stdout.txt
}
$T/runner verify --worker $T/tilegen-worker --family gemvm_cl --cache $OUT/verify-gemvm-cl/cache.jsonl \
  --out $OUT/verify-gemvm-cl --progress plain > $OUT/verify-gemvm-cl.log 2>&1
echo "verify rc=$? $(date +%T)"; pack verify-gemvm-cl
$T/runner tune --shapes-file $P/gemvm-cl.shapes --family gemvm_cl $F --cache $OUT/gemvm-cl/cache.jsonl --out $OUT/gemvm-cl > $OUT/gemvm-cl.log 2>&1
echo "gemvm-cl rc=$? $(date +%T)"; pack gemvm-cl
$T/runner tune --shapes 196x1024x256 --variants cpasync_64x64x16_w32_t4x8_s3_k4_x1 $F --cache $OUT/fill-untimed-3/cache.jsonl --out $OUT/fill-untimed-3 > $OUT/fill-untimed-3.log 2>&1
$T/runner tune --shapes 6304x2304x768 --variants cpasync_64x128x16_w64_t8x8_s3_k1_x1 $F --cache $OUT/fill-untimed-3/cache.jsonl --out $OUT/fill-untimed-3b > $OUT/fill-untimed-3b.log 2>&1
echo "untimed rc=$? $(date +%T)"; pack fill-untimed-3; pack fill-untimed-3b
# The export through its header, compiled by this host's nvcc.
mkdir -p $T/ex && tar xJf $X/wlexp.tar.xz -C $T/ex
mkdir -p $OUT/export-check
nvcc --version | tail -2 > $OUT/export-check/nvcc.txt
nvcc -O2 -arch=sm_90 -DTG_EXPORT_NAME=tgsgemm -I$T/ex/wlexp -o $T/excuda examples/export-cuda/main.cu -lcublas -lcuda > $OUT/export-check/build.txt 2>&1
echo "build rc=$? $(date +%T)"
timeout 200 $T/excuda --strict-time 1000 --ptx-dir $T/ex/wlexp/ptx > $OUT/export-check/export-cuda.log 2>&1
echo "excuda rc=$? $(date +%T)"
timeout 150 $T/excuda --shapes workloads/unseen.txt > $OUT/export-check/unseen.txt 2>&1
echo "unseen rc=$? $(date +%T)"
tail -2 $OUT/export-check/export-cuda.log; tail -2 $OUT/export-check/unseen.txt
cd $OUT && tar czf w.tgz */ && rm -rf */ && ls -la
