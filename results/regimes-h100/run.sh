#!/bin/bash
# The regime families (issue 17) on the GPU host, from the repository root: the DRAM bandwidth probe,
# the edge suite of the new families, then one tune run of the new and the existing small-tile
# families on the regime shapes (cuBLAS timed in the same run). MODE=new: only the new families.
# Usage: run.sh DIR OUTDIR, where DIR (relative to the repository root) holds runner and
# tilegen-worker (or .xz), mygen.tar.xz (the branch's generated/ manifest, support and the new
# families' PTX), merge.py and bw.py; OUTDIR receives the logs and results.tgz.
set -u
D=$1; OUTD=$(realpath -m "$2"); mkdir -p "$OUTD"
cd "$D" && for f in runner tilegen-worker; do [ -x $f ] || { xz -d $f.xz && chmod +x $f; }; done
[ -d generated ] || tar -xJf mygen.tar.xz
rm -rf merged && python3 merge.py "$(git -C "$OLDPWD" rev-parse --show-toplevel 2>/dev/null || echo "$OLDPWD")/generated" generated merged "${FAMS_OLD:-cpasync,splitk,slicedk}" | tee "$OUTD/catalog.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.mem,driver_version --format=csv > "$OUTD/gpu.txt"
python3 bw.py > "$OUTD/bw.txt" 2>&1
SHAPES=32x32x100000,1x4096x4096,4x4096x4096,16x4096x4096,4096x1x4096,4096x8x4096,1x11008x4096,64x196x4608,128x49x4608,256x64x18432,128x128x65536,100x100x50000,32x1024x32,1000x16x1000,48x48x48,200x256x100
NEW=deepk,gemvm,gemvn
FAMS=$NEW; [ "${MODE:-all}" = new ] || FAMS=$NEW,${FAMS_OLD:-cpasync,splitk,slicedk}
./runner verify --generated merged --family $NEW --out "$OUTD/verify" --cache "$OUTD/cache.jsonl" --progress plain > "$OUTD/verify.log" 2>&1
echo "verify rc=$?"
./runner tune --generated merged --family $FAMS --shapes $SHAPES --out "$OUTD/tune" --cache "$OUTD/cache.jsonl" \
  --min-time 15ms --reps 10 --warmup 2 --rank-rounds 4 --progress plain > "$OUTD/tune.log" 2>&1
echo "tune rc=$?"
tar -czf "$OUTD/results.tgz" -C "$OUTD" verify tune && rm -rf "$OUTD/verify" "$OUTD/tune"
cat "$OUTD/bw.txt"; tail -3 "$OUTD/verify.log"; tail -2 "$OUTD/tune.log"
