#!/bin/bash
# Profile variants next to cuBLAS with Nsight Compute on a GPU host (needs ncu, python3 with CuPy,
# and a generated/ directory with ptx/). For each "SHAPE VARIANT..." argument it writes
#   OUTDIR/ncu_SHAPE.txt      launch, occupancy, speed-of-light, warp-state and scheduler sections
#   OUTDIR/metrics/m_SHAPE.csv executed instructions, FFMA share, issue rate and stall reasons
# and prints one summary line per kernel (scripts/ncu_summary.py).
# usage: scripts/ncu-probe.sh OUTDIR "535x792x414 cublas cpasync_64x64x16_w32_t8x4_s3_k3" ...
set -eu
out=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/metrics"
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
M="gpu__time_duration.sum,smsp__inst_executed.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,sm__cycles_active.avg,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for a in "$@"; do
  set -- $a
  # --clock-control none: leave the GPU's clocks as they are (profiled numbers then match runs).
  ncu --clock-control none --profile-from-start off $S python3 "$here/ncu_probe.py" prof generated $a > "$out/ncu_$1.txt" 2>&1
  ncu --clock-control none --profile-from-start off --metrics "$M" --csv python3 "$here/ncu_probe.py" prof generated $a > "$out/metrics/m_$1.csv" 2>&1
done
python3 "$here/ncu_summary.py" "$out"/metrics/m_*.csv
