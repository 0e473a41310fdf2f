#!/usr/bin/env bash
# The mma.sync and ex2 ceilings of the attention page, and the TF32 and FMA ones of the gemm split
# page (probes/mma_sync_ex2.cu), per SM and clock: ./cookbook probe mma_sync_ex2 writes
# mma_sync_ex2.txt, which the attention limits page (profile attention-ceilings) and the gemm split
# page (profile gemm-split-ceiling) show. Needs sm_90 or newer (ex2 on bf16x2).
# Usage: probes/mma_sync_ex2.sh <build dir> <results/gpu/mma_sync_ex2>
set -euo pipefail
bin=$1/probes/mma_sync_ex2
mkdir -p "$(dirname "$bin")"
nvcc -std=c++17 -O3 -arch=native probes/mma_sync_ex2.cu -o "$bin"
{
  echo "mma.sync, ex2 and fma throughput on the $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $commit:"
  "$bin"
} >"$2.txt"
