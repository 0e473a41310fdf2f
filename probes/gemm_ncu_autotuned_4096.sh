#!/usr/bin/env bash
# Nsight Compute's full set on SGEMM step 13 (`autotuned`) at 4096^3 (clocks not locked, the first
# launch): ./cookbook probe gemm_ncu_autotuned_4096 writes gemm_ncu_autotuned_4096.txt, which the SGEMM
# limits page shows (profile gemm-autotuned).
# Usage: probes/gemm_ncu_autotuned_4096.sh <build dir> <results/gpu/gemm_ncu_autotuned_4096>
set -euo pipefail
ncu --clock-control none --set full --launch-count 1 --kernel-name-base demangled --kernel-name regex:smem::gemm:: \
  "$1/bench/gemm_bench" --benchmark_filter='^gemm/autotuned/4096x4096x4096/' --benchmark_min_time=5x >"$2.txt" 2>&1
