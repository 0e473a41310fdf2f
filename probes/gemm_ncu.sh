#!/usr/bin/env bash
# Nsight Compute's shared-memory counters of SGEMM steps 4 (`tiled_32`), 5 (`tiled_32_padded`), 8, 9
# and 10 at 2048^3 (clocks not locked, the first launch of each), one line per variant and metric:
# ./cookbook probe gemm_ncu writes gemm_ncu.txt, which the SGEMM bank page shows (profile gemm-padding,
# profile gemm-conflict-free).
# Usage: probes/gemm_ncu.sh <build dir> <results/gpu/gemm_ncu>
set -euo pipefail
metrics=gpu__time_duration.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
{
  echo "# ncu --clock-control none, the first launch of each kernel of"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  echo "# gemm_bench --benchmark_filter=gemm/<variant>/2048x2048x2048 ($gpu, commit $commit)"
  echo "# variant metric value"
  for v in tiled_32 tiled_32_padded blocktile_2d vectorized conflict_free; do
    ncu --clock-control none --launch-count 1 --kernel-name-base demangled --kernel-name regex:smem::gemm:: \
      --metrics "$metrics" "$1/bench/gemm_bench" --benchmark_filter="^gemm/$v/2048x2048x2048/" --benchmark_min_time=1x |
      awk -v v="$v" '/^ +[a-z0-9_]+__[a-z0-9_.]+ / { print v, $1, $NF }'
  done
} >"$2.txt"
