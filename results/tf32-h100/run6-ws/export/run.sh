#!/bin/bash
# The 3xtf32 export of run6-ws's records (wgmma_ws and wgmma_tf32 kernels, sm_90a) through
# examples/export-cuda on the GPU host: the edge suite of the exported families' leaders (the
# records the export needs), the export, the example built by the host's nvcc and run (every tuned
# class and the edge shapes against cuBLAS, the launcher against the tuned times), four streams at
# once, and the unseen shapes.
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
R=$T/runner; P=results/tf32-h100/run6-ws; E=$T/e
LEAD='wgws_*,wgmma_128_wg2_k32_s4_p2_*,wgmma_256_wg2_k32_s4_p2_*,wgmma_128_wg2_k16_s6_p4_*,wgmma_64_wg1_k16_s4_p4_*,wgmma_64_wg1_k32_s4_p2_*'
timeout 200 $R verify --family wgmma_ws,wgmma_tf32 --precision 3xtf32,tf32 --ops NN,NT,TT --variants "$LEAD" --worker $T/tilegen-worker \
  --devices 0 --out $OUT/verify --cache $T/cache.jsonl --progress none > $OUT/verify.log 2>&1
echo "verify rc=$? $(grep -c passed $OUT/verify.log) passed"
$R export --results $P/tune --results $P/tune-ops --results $OUT/verify --precision 3xtf32 --out $E --name tg_3xtf32 > $OUT/export.log 2>&1
echo "export rc=$?"; tail -3 $OUT/export.log; cp $E/tg_3xtf32.json $OUT/ 2>/dev/null
nvcc --version | tail -2
nvcc -O2 -gencode arch=compute_90a,code=sm_90a -DTG_EXPORT_NAME=tg_3xtf32 -I$E -o $T/export-cuda examples/export-cuda/main.cu -lcublas -lcuda 2>&1 | grep -v Wno-deprecated | head -20
echo "--- run"
timeout 200 $T/export-cuda --ptx-dir $E/ptx > $OUT/export-cuda.txt 2>&1; echo "rc $?"; tail -30 $OUT/export-cuda.txt
printf '4096 4096 4096\n1000 1000 1000\n2048 2048 2048\n' > $T/c.txt
echo "--- four streams"
timeout 120 $T/export-cuda --concurrent $T/c.txt > $OUT/concurrent.txt 2>&1; echo "rc $?"; tail -8 $OUT/concurrent.txt
echo "--- unseen shapes"
timeout 200 $T/export-cuda --shapes workloads/unseen.txt > $OUT/unseen.txt 2>&1; echo "rc $?"; tail -6 $OUT/unseen.txt
(cd $OUT/verify && rm -f results.csv bench.txt && gzip -9 results.jsonl); tar czf $OUT/verify.tgz -C $OUT verify && rm -rf $OUT/verify
