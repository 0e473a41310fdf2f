#!/usr/bin/env bash
# Nsight Compute on scan step 6 (`decoupled_look_back`) and CUB at 2^28 int, inclusive (clocks not
# locked, the first launch of each): ./cookbook probe scan_ncu writes scan_ncu.txt, which the scan
# limits page shows (profile scan-ncu).
# Usage: probes/scan_ncu.sh <build dir> <results/gpu/scan_ncu>
set -euo pipefail
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,\
sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__inst_executed_op_shared_ld.sum,\
smsp__inst_executed_op_shared_st.sum
for v in decoupled_look_back cub; do
  ncu --clock-control none --launch-count 1 --kernel-name "regex:^(decoupled_look_back_kernel|DeviceScanKernel)$" \
    --metrics "$metrics" "$1/bench/scan_bench" --benchmark_filter="^scan/$v/inclusive/int/268435456/" \
    --benchmark_min_time=20x
done >"$2.txt" 2>&1
