#!/usr/bin/env bash
# Where SGEMM step 13's warps wait at 4096^3: Nsight Compute's issue-stall ratios (warp cycles in each
# state per issued instruction; clocks not locked, the first launch), sorted by value:
# ./cookbook probe gemm_ncu_stalls_4096 writes gemm_ncu_stalls_4096.txt, which the SGEMM stall page
# shows (profile gemm-stalls).
# Usage: probes/gemm_ncu_stalls_4096.sh <build dir> <results/gpu/gemm_ncu_stalls_4096>
set -euo pipefail
cmd=(ncu --clock-control none --launch-count 1 --kernel-name-base demangled --kernel-name regex:smem::gemm::
  --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
  "$1/bench/gemm_bench" --benchmark_filter='^gemm/autotuned/4096x4096x4096/' --benchmark_min_time=1x)
{
  echo "Nsight Compute on the $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $commit, the"
  echo "autotuned variant at 4096^3, clocks not locked:"
  echo "  ${cmd[*]}"
  echo "Output, sorted by value (warp cycles spent in each state per issued instruction):"
  echo
  "${cmd[@]}" | grep -E '^ +smsp__average_warps_issue_stalled_' | sort -k3 -g -r
} >"$2.txt"
