#!/bin/bash
# The fused-epilogue measurements (issue 16) on one GPU host: run from a folder holding runner,
# tilegen-worker and gpu.test (go test -c -tags gpu ./internal/gpu), each possibly as .xz;
# everything lands in OUT (argument 1), packed into OUT/epilogue.tgz after every step.
set -u
OUT=${1:?usage: run.sh OUT}
cd "$(dirname "$0")"
for f in runner tilegen-worker gpu.test; do
  [ -f "$f" ] || xz -dk "$f.xz"
  chmod +x "$f"
done
W=$OUT/w
mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1
pack() { tar czf "$OUT/epilogue.tgz" -C "$OUT" w; }
EPI=""
for s in 4096x4096x1024 8192x1024x4096; do
  for e in bias_relu_col bias_gelu_col bias_col bias_relu_row bias_gelu_row bias_row; do EPI="$EPI,$s:$e"; done
done
EPI=${EPI#,}
BASE=regtile_128x256x16_w32_t8x16_p0_f1_s4_b1,regtile_128x256x16_w64_t8x16_p0_f1_s3_b1,regtile_128x128x16_w64_t8x8_p0_f1_s3_b2,regtile_128x128x16_w32_t8x16_p0_f1_s3_b1
# 1. the worker's epilogue tests: fused kernels, cuBLAS + separate epilogue and cublasLt against the
#    float64 reference + epilogue on odd shapes, and kernels claiming the wrong epilogue failing.
timeout 40 ./gpu.test -test.run 'TestEpilogueVerify|TestHelloAndProtocol' -test.v > "$W/gpu-test.txt" 2>&1
echo "gpu.test rc=$?" >> "$W/rc.txt"; pack
# 2. the bench flow on the epilogue family: the edge suite of every epilogue variant, then each
#    variant at the issue's shapes against cuBLAS + the separate epilogue (interleaved
#    re-measurement) and cublasLt's fused epilogue; summary.json with both baselines per shape.
timeout 150 ./runner bench --worker ./tilegen-worker --family regtile_epi --shapes "$EPI" \
  --cache "$W/cache.jsonl" --root "$W/bench" --markdown "$W/bench/BENCHMARKS.md" --progress plain > "$W/bench.txt" 2>&1
echo "bench rc=$?" >> "$W/rc.txt"; pack
# 3. the same four configurations without an epilogue, against plain cuBLAS (what the epilogue costs).
timeout 20 ./runner tune --worker ./tilegen-worker --variants "$BASE" --shapes 4096x4096x1024,8192x1024x4096 \
  --cache "$W/cache.jsonl" --out "$W/tune-plain" --progress plain > "$W/tune-plain.txt" 2>&1
echo "tune-plain rc=$?" >> "$W/rc.txt"; pack
cat "$W/rc.txt"
grep -E "^(--- |FAIL|ok|PASS)" "$W/gpu-test.txt" | head
grep "^|" "$W/bench.txt" | head -40
