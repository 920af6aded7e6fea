#!/usr/bin/env bash
# Tune every variant on a Slurm cluster: one array task per GPU, each running a deterministic 1/n
# of the (variant x shape) plan, then one dependent job merges the parts.
#
#   sbatch examples/slurm/tune-array.sh            # submits the array; the merge follows on its own
#
# Each task writes results/shards/<i>/ and its own cache (appends from several nodes to one file on
# a shared filesystem are not safe). Resubmitting reuses every cached measurement.
#SBATCH --job-name=tilegen-tune
#SBATCH --array=0-7
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --time=02:00:00
#SBATCH --output=results/shards/slurm-%A_%a.out
set -euo pipefail

bin=${TILEGEN_BIN:-./bin}
i=${SLURM_ARRAY_TASK_ID:?run me through sbatch}
n=${SLURM_ARRAY_TASK_COUNT:?run me through sbatch}

if [ "$i" -eq 0 ]; then
	# The merge waits for every task of this array, whatever their exit status.
	sbatch --dependency="afterany:${SLURM_ARRAY_JOB_ID}" --job-name=tilegen-merge \
		--output=results/shards/merge-%j.out --wrap \
		"$bin/runner merge results/shards/[0-9]* --out results/merged"
fi

mkdir -p "results/shards/$i"
"$bin/runner" tune --devices all --shard "$i/$n" --progress plain \
	--cache "results/shards/$i/cache.jsonl" --out "results/shards/$i" "$@"
