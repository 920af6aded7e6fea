#!/bin/bash
# Stream-K (family streamk) and the balanced split rule on the GPU: the edge suite of the streamk
# kernels, their times on every corpus shape outside the GEMV regimes, and the splitk_auto(_wide)
# _b0 kernels re-timed under the balanced rule they are exported with (the built-in catalog had
# launched them by the plain rule: generated/registry.go lacked the split rule's balance field).
# Usage: run.sh all|streamk|b0-verify|streamka|streamka2   (from the repository root; writes under $OUT). The first call ran
# `all` (its streamk results, from before the rule that keeps a more than half full last wave
# data-parallel, are in superseded-first/); the second `streamk` after it; the third `b0-verify`; the fourth
# `streamka` (family streamk_async), the fifth `streamka2` (its three later tiles).
set -u
T=$(mktemp -d) # scratch: the unpacked binaries
X=${X:?the folder with runner.xz and tilegen-worker.xz, relative to the repository root}
P=${P:-$(dirname "$0")} # this folder: the shapes and variant lists
R=$P/../remeasure-par  # the shapes the _b0 kernels were timed on before
for f in runner tilegen-worker; do xz -dc $X/$f.xz > $T/$f; chmod +x $T/$f; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F="--rank-rounds 1 --min-time 15ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker"
pack() { # What comes back: at most 16 MiB a file; the cache duplicates results.jsonl.
  local n=$1
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
tune() { # name shapes-file variants [extra flags]
  local n=$1 s=$2 v=$3; shift 3
  $T/runner tune --shapes-file $s --variants "$v" $F --cache $OUT/$n/cache.jsonl --out $OUT/$n "$@" > $OUT/$n.log 2>&1
  echo "$n rc=$? $(date +%T)"
  pack $n
}
what=${1:?all, streamk, b0-verify, streamka or streamka2}
if [ "$what" = streamka2 ]; then # the three tiles added to streamk_async after the first streamka run
  V='streamka_128x128*,streamka_64x64*,streamka_32x64*'
  $T/runner verify --worker $T/tilegen-worker --variants "$V" --cache $OUT/verify-a2/cache.jsonl \
    --out $OUT/verify-a2 --progress plain > $OUT/verify-a2.log 2>&1
  echo "verify-a2 rc=$? $(date +%T)"
  pack verify-a2
  tune tune-streamka2 $P/corpus-nongemv.shapes "$V"
  exit 0
fi
if [ "$what" = streamka ]; then # family streamk_async: the edge suite, then the same shapes
  $T/runner verify --worker $T/tilegen-worker --variants 'streamka_*' --cache $OUT/verify-a/cache.jsonl \
    --out $OUT/verify-a --progress plain > $OUT/verify-a.log 2>&1
  echo "verify-a rc=$? $(date +%T)"
  pack verify-a
  tune tune-streamka $P/corpus-nongemv.shapes 'streamka_*'
  exit 0
fi
if [ "$what" = b0-verify ]; then # the _b0 kernels' edge suite under the balanced rule
  $T/runner verify --worker $T/tilegen-worker --variants 'splitka_*_b0' --cache $OUT/verify-b0/cache.jsonl \
    --out $OUT/verify-b0 --progress plain > $OUT/verify-b0.log 2>&1
  echo "verify-b0 rc=$? $(date +%T)"
  pack verify-b0
  exit 0
fi
$T/runner verify --worker $T/tilegen-worker --variants 'streamk_*' --cache $OUT/verify/cache.jsonl \
  --out $OUT/verify --progress plain > $OUT/verify.log 2>&1
echo "verify rc=$? $(date +%T)"
pack verify
tune tune-streamk $P/corpus-nongemv.shapes 'streamk_*'
[ "$what" = all ] || exit 0
tune b0-all300 $R/all300.shapes "$(cat $P/b0-all300.variants)"
tune b0-g110 $R/g110.shapes "$(cat $P/b0-g110.variants)"
