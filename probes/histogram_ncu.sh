#!/usr/bin/env bash
# Nsight Compute on histogram step 5 (`vectorized`) and CUB at 2^30 uint8 in 256 bins, uniform and
# skewed (clocks not locked, the first launch of each): ./cookbook probe histogram_ncu writes
# histogram_ncu.txt, which the histogram page shows (profile histogram-ncu).
# Usage: probes/histogram_ncu.sh <build dir> <results/gpu/histogram_ncu>
set -euo pipefail
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__block_size,\
sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__inst_executed_op_shared_atom.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum
for data in uniform skewed; do
  for v in vectorized cub; do
    ncu --clock-control none --launch-count 1 --kernel-name "regex:^(vectorized_kernel|DeviceHistogramSweepKernel)$" \
      --metrics "$metrics" "$1/bench/histogram_bench" --benchmark_filter="^histogram/$v/uint8/256/$data/1073741824/" \
      --benchmark_min_time=5x
  done
done >"$2.txt" 2>&1
