#!/usr/bin/env bash
# Nsight Compute on reduction step 8 (`single_pass`) and CUB at 2^28 floats (clocks not locked, the
# first two launches of each): ./cookbook probe reduction_ncu writes reduction_ncu.txt, which the
# reduction page shows (profile reduction-ncu).
# Usage: probes/reduction_ncu.sh <build dir> <results/gpu/reduction_ncu>
set -euo pipefail
metrics=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__bytes_read.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,\
smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct
for v in single_pass cub; do
  ncu --clock-control none --launch-count 2 --kernel-name "regex:^(single_pass_kernel|DeviceReduceKernel)$" \
    --metrics "$metrics" "$1/bench/reduction_bench" --benchmark_filter="^reduction/$v/float/268435456/" \
    --benchmark_min_time=100x
done >"$2.txt" 2>&1
