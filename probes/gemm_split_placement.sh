#!/usr/bin/env bash
# Split TF32 on wgmma, the two places for the low parts (probes/gemm_split_placement.cu): step 15's
# (B^T's parts in registers, A's lo tile in shared memory) against B transposed into K-major hi and lo
# tiles with A's parts in registers; accuracy against float64 and TFLOP/s at 2048^3 to 8192^3.
# ./cookbook probe gemm_split_placement writes gemm_split_placement.txt, which the gemm split page
# shows (profile gemm-split-placement). Needs an sm_90a GPU (H100, H200).
# Usage: probes/gemm_split_placement.sh <build dir> <results/gpu/gemm_split_placement>
set -euo pipefail
bin=$1/probes/gemm_split_placement
mkdir -p "$(dirname "$bin")"
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I recipes/gemm -I recipes \
  probes/gemm_split_placement.cu -o "$bin"
{
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  echo "split TF32 on wgmma, where the low parts live: split_wgmma (step 15) and transposed_b, $gpu, commit $commit"
  "$bin"
} >"$2.txt"
