#!/usr/bin/env bash
# Where attention step 8 (`tuned`) spends its time at hd128 full 4x16x16x4096x4096: Nsight Compute's
# pipe utilizations and issue-stall ratios (warp cycles in each state per issued instruction), clocks
# not locked, the first launch: ./cookbook probe attention_ncu writes attention_ncu.txt, which the
# attention limits page shows (profile attention-ncu).
# Usage: probes/attention_ncu.sh <build dir> <results/gpu/attention_ncu>
set -euo pipefail
cmd=(ncu --clock-control none --launch-count 1 --kernel-name regex:causal_kernel
  --metrics 'sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
  "$1/bench/attention_bench" --benchmark_filter='^attention/tuned/hd128/full/4x16x16x4096x4096/')
{
  echo "Nsight Compute on the $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $commit, step 8"
  echo "(tuned) at hd128 full 4x16x16x4096x4096, clocks not locked:"
  echo "  ${cmd[*]}"
  echo "Output (stall ratios: warp cycles in each state per issued instruction):"
  echo
  "${cmd[@]}" | grep -E '^ +(sm__|smsp__|l1tex__|launch__)' | sort -k3 -g -r
} >"$2.txt"
