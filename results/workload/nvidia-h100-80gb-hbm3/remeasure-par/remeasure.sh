#!/bin/bash
# Re-measure deepk and splitk_auto(_wide) after the parallel fix-up (their PTX changed): the edge
# suite, then every corpus shape each was timed on before (plan/: the shapes and variants per group).
# Usage: remeasure.sh a|b   (run from the repository root; writes under $OUT)
set -u
T=$(mktemp -d) # scratch: the unpacked binaries and export
X=${X:?the folder with runner.xz, tilegen-worker.xz and the plans, relative to the repository root}
P=${P:-$(dirname "$0")} # the groups' shapes and variants (this folder)
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F="--rank-rounds 1 --min-time 15ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker"
tune() { # name shapes-file variants-file [extra flags]
  local n=$1 s=$2 v=$3; shift 3
  $T/runner tune --shapes-file $s --variants "$(cat $v)" $F --cache $OUT/$n/cache.jsonl --out $OUT/$n "$@" > $OUT/$n.log 2>&1
  echo "$n rc=$? $(date +%T)"
  # What comes back: at most 16 MiB a file. The cache duplicates results.jsonl.
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
case $1 in
a)
  $T/runner verify --worker $T/tilegen-worker --variants 'deepk_*,splitka_*' --cache $OUT/verify/cache.jsonl \
    --out $OUT/verify --progress plain > $OUT/verify.log 2>&1
  echo "verify rc=$? $(date +%T)"
  tune all300-0 $P/all300.shapes $P/all300.variants --shard 0/2
  ;;
b)
  tune all300-1 $P/all300.shapes $P/all300.variants --shard 1/2
  tune g110 $P/g110.shapes $P/g110.variants
  tune gsmall $P/gsmall.shapes $P/gsmall.variants
  ;;
esac
