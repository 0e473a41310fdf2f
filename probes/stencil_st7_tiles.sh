#!/usr/bin/env bash
# Stencil 7-point steps 4 (`st7_registers`) and 5 with other tiles: RegisterPlane::kThreadsY rows of 128
# points and kRegPlanesZ planes per walk ([rows:planes]), the launch bound kept at 1024 threads per SM.
# For each, the benchmark's medians at 512^3 beside the copy of the same process, then Nsight Compute's
# counters of step 4 (clocks not locked): ./cookbook probe stencil_st7_tiles writes stencil_st7_tiles.txt,
# which the stencil limits page shows (profile stencil-st7-tiles).
# Usage: probes/stencil_st7_tiles.sh <build dir> <results/gpu/stencil_st7_tiles> (rebuilt_bench: ./cookbook)
set -euo pipefail
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,lts__t_bytes.sum,\
lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed,\
sm__warps_active.avg.pct_of_peak_sustained_active
shape=7point/float/512x512x512
{
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  echo "st7_registers with other tiles ([kThreadsY:kRegPlanesZ]), $gpu, commit $commit with the constants changed"
  for t in 8:32 4:32 4:64 8:64 16:16 16:32 16:64 32:32; do
    bench=$(rebuilt_bench "st7_tiles_${t/:/_}" stencil_bench "s/kThreadsY = 8,/kThreadsY = ${t%:*},/; \
s/kRegPlanesZ = 32;/kRegPlanesZ = ${t#*:};/; \
s/__launch_bounds__\(RegisterPlane::kThreads, 4\)/__launch_bounds__(RegisterPlane::kThreads, 1024 \/ \
RegisterPlane::kThreads)/" \
      recipes/stencil/st7_04_registers.cuh recipes/stencil/st7_05_cluster.cuh)
    "$bench" --benchmark_filter="^stencil/(copy|st7_registers|st7_cluster)/$shape/" --benchmark_repetitions=5 \
      --benchmark_report_aggregates_only=true 2>/dev/null | grep _median | sed "s/^/[$t] /"
    ncu --clock-control none --launch-count 1 --kernel-name regex:st7_registers_kernel --metrics "$metrics" "$bench" \
      --benchmark_filter="^stencil/st7_registers/$shape/" --benchmark_min_time=1x |
      grep -E '^ +[a-z0-9_]+__' | sed "s/^/[$t] /"
  done
} >"$2.txt"
