#!/usr/bin/env bash
# Scan step 6 (`decoupled_look_back`) with other tiles: kTileThreads threads per block, the launch bound
# kept at 1280 threads per SM ([threads:blocks per SM]); for each, the medians of step 6 and CUB in the
# same process over the benchmark's sizes: ./cookbook probe scan_tiles writes scan_tiles.txt, which the
# scan limits page shows (profile scan-tiles).
# Usage: probes/scan_tiles.sh <build dir> <results/gpu/scan_tiles> (rebuilt_bench: ./cookbook)
set -euo pipefail
{
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  echo "scan step 6 with other tiles ([kTileThreads:kTileMinBlocks]), $gpu, commit $commit with the constant changed"
  for t in 128 256 384 512; do
    bench=$(rebuilt_bench "scan_tiles_$t" scan_bench "s/kTileThreads = 256;/kTileThreads = $t;/" \
      $(grep -l "kTileThreads = 256;" recipes/scan/*.cuh))
    "$bench" --benchmark_filter='^scan/(cub|decoupled_look_back)/inclusive/' --benchmark_repetitions=5 \
      --benchmark_report_aggregates_only=true 2>/dev/null | grep _median | sed "s/^/[$t:$((1280 / t))] /"
  done
} >"$2.txt"
