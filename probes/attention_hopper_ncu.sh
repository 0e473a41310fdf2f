#!/usr/bin/env bash
# Where attention's Hopper steps (9 to 12, and 14) spend their time at hd128 full 2x16x16x8192x8192
# (steps 11, 12 and 14 also at hd128 causal 4x16x16x4096x4096, steps 9 and 11 at hd64 full
# 2x32x32x8192x8192, three consumer warpgroups): Nsight
# Compute's tensor-pipe utilization, issue activity, the pipes of the softmax (xu: ex2; fma; alu),
# shared memory, L2 and DRAM throughput and the issue-stall ratios (warp cycles in each state per
# issued instruction), clocks not locked, the first launch of each step: ./cookbook probe
# attention_hopper_ncu writes attention_hopper_ncu.txt, which the Hopper attention page shows
# (profile attention-hopper-ncu).
# Usage: probes/attention_hopper_ncu.sh <build dir> <results/gpu/attention_hopper_ncu>
set -euo pipefail
metrics='sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
full=hd128/full/2x16x16x8192x8192 causal=hd128/causal/4x16x16x4096x4096 hd64=hd64/full/2x32x32x8192x8192
kernels='regex:wgmma_kernel|pingpong_kernel|persistent_kernel|fp8_kernel'
{
  echo "Nsight Compute on the $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $commit, steps 9 to 12 and 14"
  echo "at $full (steps 11, 12 and 14 also at $causal; steps 9 and 11 at $hd64), clocks not locked, the first"
  echo "launch of each:"
  echo "  ncu --clock-control none --launch-count 1 --kernel-name '$kernels' --metrics $metrics"
  echo "  $1/bench/attention_bench --benchmark_filter=^attention/<step>/<shape>/"
  echo "Output (stall ratios: warp cycles in each state per issued instruction; ratios below 0.05 left out):"
  for run in wgmma:$full pingpong:$full overlap:$full persistent:$full fp8:$full overlap:$causal persistent:$causal \
    fp8:$causal wgmma:$hd64 overlap:$hd64; do
    echo
    echo "  ${run%%:*} at ${run#*:}:"
    ncu --clock-control none --launch-count 1 --kernel-name "$kernels" --metrics "$metrics" \
      "$1/bench/attention_bench" --benchmark_filter="^attention/${run%%:*}/${run#*:}/" |
      grep -E '^ +(sm__|smsp__|l1tex__|lts__|dram__|gpu__)' | awk '$1 !~ /stalled/ || $NF + 0 >= 0.05' | sort -k1,1
  done
} >"$2.txt"
