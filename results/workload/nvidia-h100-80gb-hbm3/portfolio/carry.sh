# Sourced by the portfolio's run scripts on the GPU host: the carried runner and worker unpacked into
# $T (carry_unpack), and a results directory packed into $OUT/<name>.tgz with its log (carry_pack:
# results.jsonl gzipped; an interrupted run keeps its cache instead, to resume from).
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
