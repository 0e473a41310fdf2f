#!/usr/bin/env bash
# The ceilings of the gemm split page (probes/gemm_split_ceiling.cu), per SM and clock: mma.sync
# TF32, which step 14's three products share, and the FMA pipe of the fp32 steps:
# ./cookbook probe gemm_split_ceiling writes gemm_split_ceiling.txt, which the gemm split page shows
# (profile gemm-split-ceiling). Needs sm_80 or newer (TF32 mma.sync).
# Usage: probes/gemm_split_ceiling.sh <build dir> <results/gpu/gemm_split_ceiling>
set -euo pipefail
bin=$1/probes/gemm_split_ceiling
mkdir -p "$(dirname "$bin")"
nvcc -std=c++17 -O3 -arch=native probes/gemm_split_ceiling.cu -o "$bin"
{
  echo "mma.sync TF32 and fp32 FMA throughput on the $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $commit:"
  "$bin"
} >"$2.txt"
