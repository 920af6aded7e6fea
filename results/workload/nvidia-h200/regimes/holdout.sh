#!/bin/bash
# The committed example export's NN dispatch (fitted, as `runner export` fits it, on the H100 corpus
# with examples/export-go/results.txt) judged on three holdouts measured on an H200 that its fit never
# saw, each with every kernel of the export timed next to cuBLAS: the unseen workload shapes (run2.sh),
# the random problems in three regimes (run.sh) and the random problems of ../random (its run.sh).
# Writes holdout-unseen/, holdout-random/, holdout-random2/ (summary.json, summary.md; the corpus part
# is the same in all three). No GPU needed. Usage: holdout.sh   (from the repository root, after
# `go build -o bin/runner ./runner`)
set -eu
D=results/workload/nvidia-h100-80gb-hbm3
H=results/workload/nvidia-h200/regimes
R=$(sed -n 's/^[^#]/--results &/p' examples/export-go/results.txt)
T=$(mktemp -d)
run() {
  o=$1
  shift
  bin/runner workload $R --corpus $D/corpus-measured.txt --out $T/$o "$@"
  mkdir -p $H/$o
  cp $T/$o/summary.json $T/$o/summary.md $H/$o/
}
run holdout-unseen --holdout $H/unseen --holdout $H/unseen-thin --holdout-shapes workloads/unseen.txt \
  --holdout-shapes workloads/unseen-small.txt
run holdout-random --holdout $H/tune --holdout-shapes $H/shapes.txt
run holdout-random2 --holdout results/workload/nvidia-h200/random/tune --holdout-shapes results/workload/nvidia-h200/random/random-b.txt \
  --holdout-shapes results/workload/nvidia-h200/unseen/run5/random-shapes.txt
