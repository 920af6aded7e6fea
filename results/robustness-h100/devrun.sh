#!/usr/bin/env bash
# One batch of GPU checks for issue 14's changes. Logs under $OUT.
set -u
X=bin/x; mkdir -p $X
for f in bin/carry/*.xz; do xz -T0 -dc "$f" > "$X/$(basename "$f" .xz)"; chmod +x "$X/$(basename "$f" .xz)"; done
exec > >(tee "$OUT/devrun.log") 2>&1
W=/tmp/devw; rm -rf $W; mkdir -p $W
step() { echo; echo "=== $* ($(date +%T))"; }
nvidia-smi -L
step versions; $X/tilegen-worker --version; $X/runner --version
step devices; $X/runner devices --worker $X/tilegen-worker
step "two runners, one cache"
C=$W/c.jsonl
$X/runner tune --worker $X/tilegen-worker --family micro1d --shapes 1024x1024x1024 --rank-rounds 0 --progress none --cache $C --out $W/a > $W/a.log 2>&1 &
AP=$!
$X/runner tune --worker $X/tilegen-worker --family regtile --shapes 1024x1024x1024 --rank-rounds 0 --progress none --cache $C --out $W/b > $W/b.log 2>&1
wait $AP
tail -2 $W/a.log $W/b.log
wc -l $C $W/a/results.jsonl $W/b/results.jsonl
python3 - "$C" "$W/a/results.jsonl" "$W/b/results.jsonl" <<'PY'
import json,sys
cache={json.loads(l)["key"] for l in open(sys.argv[1]) if l.strip()}
for f in sys.argv[2:]:
    recs=[json.loads(l) for l in open(f) if l.strip()]
    measured=[r for r in recs if r["status"]!="skipped"]
    missing=[r["variant"] for r in measured if r["key"] not in cache]
    hashed=sum(1 for r in recs if r.get("kind")!="cublas" and r.get("source_hash") and r.get("ptx_hash"))
    print(f, "records", len(recs), "measured", len(measured), "missing from cache", len(missing), missing[:5], "hashed", hashed)
PY
step "rerun both: nothing to measure"
$X/runner tune --worker $X/tilegen-worker --family micro1d --shapes 1024x1024x1024 --rank-rounds 0 --progress none --cache $C --out $W/a2 2>&1 | grep -i "to run\|measure\|cached" | head -3
step "benchstat-ready bench.txt"; grep -c '^Benchmark' $W/a/bench.txt; head -12 $W/a/bench.txt
step "verify micro1d edge suite, export from hashed results without --allow-unhashed"
$X/runner verify --worker $X/tilegen-worker --family micro1d --progress none --cache $C --out $W/v > $W/v.log 2>&1; tail -3 $W/v.log
$X/runner export --results $W/a --results $W/v --out $W/exp --name tgx --go-package example.com/tgx 2>&1 | tail -8
step "kill -9 the runner mid-sweep: no orphan worker"
$X/runner tune --worker $X/tilegen-worker --family regtile --shapes 2048x2048x2048 --progress none --cache $W/k.jsonl --out $W/k > $W/k.log 2>&1 &
RP=$!; sleep 12; pgrep -f tilegen-worker | tr '\n' ' '; echo "<- workers before kill"; kill -9 $RP; sleep 3
echo "workers after kill: [$(pgrep -f 'x/tilegen-worker' | tr '\n' ' ')]"; wc -l $W/k.jsonl
step "worker GPU test"; timeout 120 $X/worker.test -test.v 2>&1 | tail -15
step "export GPU test (cu-free package)"; timeout 200 $X/export.test -test.v 2>&1 | tail -40
step "internal/gpu tests"; (cd internal/gpu && timeout 150 ../../$X/gpu.test -test.v 2>&1 | grep -E '^(=== RUN|--- |PASS|FAIL|ok)' | tail -30)
step "runner GPU tests"; (cd runner && TILEGEN_WORKER=../$X/tilegen-worker timeout 200 ../$X/runner.test -test.v -test.run 'TestBrokenKernels|TestDryRunPredicts' 2>&1 | tail -30)
cp $W/a/bench.txt $OUT/bench-micro1d.txt; cp $W/exp/tgx.json $OUT/ 2>/dev/null; cp $W/c.jsonl $OUT/shared-cache.jsonl
step done
