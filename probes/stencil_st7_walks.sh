#!/usr/bin/env bash
# Stencil 7-point step 6 (`st7_tma`) with other walks: PlaneSlab::kWalk output planes per block from
# kWalk + 2 slots ([walk N]). For each, the benchmark's medians at 256^3 and 512^3 beside the copy of the
# same process, then Nsight Compute's L2 and DRAM counters of the step at 512^3 (clocks not locked):
# ./cookbook probe stencil_st7_walks writes stencil_st7_walks.txt, which the stencil limits page shows
# (profile stencil-st7-walks).
# Usage: probes/stencil_st7_walks.sh <build dir> <results/gpu/stencil_st7_walks> (rebuilt_bench: ./cookbook)
set -euo pipefail
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,\
lts__throughput.avg.pct_of_peak_sustained_elapsed
{
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  echo "st7_tma with other walks ([walk kWalk]), $gpu, commit $commit with the constant changed"
  for w in 1 2 3 4; do
    bench=$(rebuilt_bench "st7_walk_$w" stencil_bench "s/kWalk = 3, kPlanes/kWalk = $w, kPlanes/" \
      $(grep -l "kWalk = 3, kPlanes" recipes/stencil/*.cuh))
    "$bench" --benchmark_filter='^stencil/(copy|st7_tma)/7point/float/(256x256x256|512x512x512)/' \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>/dev/null | grep _median |
      sed "s/^/[walk $w] /"
    ncu --clock-control none --launch-count 1 --kernel-name regex:st7_tma_kernel --metrics "$metrics" "$bench" \
      --benchmark_filter='^stencil/st7_tma/7point/float/512x512x512/' --benchmark_min_time=1x |
      grep -E '^ +[a-z0-9_]+__' | sed "s/^/[walk $w] /"
  done
} >"$2.txt"
