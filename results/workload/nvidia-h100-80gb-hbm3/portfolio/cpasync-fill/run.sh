#!/bin/bash
# The cpasync kernels that were fastest on one of cpasync-below's 16 shapes, timed on every corpus
# shape outside the GEMV regimes (the fit takes a kernel timed on a few shapes only as untimed
# elsewhere, and extrapolated them onto neighbours they were never timed on).
# Usage: X=<folder with runner.xz, tilegen-worker.xz> run.sh   (from the repository root; writes under $OUT)
set -u
T=$(mktemp -d)
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")}
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
n=cpasync-fill
$T/runner tune --shapes-file $P/shapes.txt --variants "$(paste -sd, $P/variants.txt)" --rank-rounds 1 --min-time 15ms --reps 10 \
  --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker --cache $OUT/$n/cache.jsonl --out $OUT/$n > $OUT/$n.log 2>&1
echo "$n rc=$? $(date +%T)"
(cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
