# Sourced by the portfolio's run scripts on the GPU host: the carried runner and worker unpacked into
# $T (carry_unpack), and a results directory packed into $OUT/<name>.tgz with its log (carry_pack:
# results.jsonl gzipped; an interrupted run keeps its cache instead, to resume from); carry_tune: an
# exhaustive tune of variants on a shapes file, packed the same way.
carry_unpack() { # carry folder
  T=$(mktemp -d)
  for f in runner tilegen-worker; do xz -T0 -dc $1/$f.xz > $T/$f; chmod +x $T/$f; done
}
carry_pack() { # name
  local n=$1
  [ -f $OUT/$n/results.jsonl ] || gzip -9 -c $OUT/$n/cache.jsonl > $OUT/$n/cache.jsonl.gz
  (cd $OUT/$n && rm -f cache.jsonl bench.txt results.csv ranking.json && gzip -9 -f results.jsonl)
  tar czf $OUT/$n.tgz -C $OUT $n $n.log && rm -rf $OUT/$n $OUT/$n.log
}
carry_tune() { # name shapes-file variants seconds: an exhaustive tune of the variants on the shapes,
  # timed against cuBLAS with the shapes' op, its cache resumed, then packed; with RESUME=<carry
  # folder>, the cache a cut-short run packed there (<name>/cache.jsonl.gz) is where it starts
  if [ -n "${RESUME:-}" ] && [ -f $RESUME/$1/cache.jsonl.gz ] && [ ! -f $OUT/$1/cache.jsonl ]; then
    mkdir -p $OUT/$1 && gzip -dc $RESUME/$1/cache.jsonl.gz > $OUT/$1/cache.jsonl
  fi
  timeout $4 $T/runner tune --shapes-file $2 --variants "$3" \
    --rank-rounds 1 --min-time 10ms --reps 10 --warmup 2 --shared-inputs-above 1e9 --progress plain --worker $T/tilegen-worker \
    --cache $OUT/$1/cache.jsonl --out $OUT/$1 > $OUT/$1.log 2>&1
  echo "$1 rc=$? $(date +%T)"
  tail -n 1 $OUT/$1.log
  carry_pack $1
}
