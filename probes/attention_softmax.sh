#!/usr/bin/env bash
# Parts of the online softmax changed in step 11's loop (probes/attention_softmax.cu): the TFLOP/s of
# each variant against step 11 at full attention, hd128 and hd64, and whether its O and LSE are step 11's
# bit for bit. ./cookbook probe attention_softmax writes attention_softmax.txt, which the attention
# Hopper limits page shows (profile attention-softmax). Needs an sm_90a GPU (H100, H200).
# Usage: probes/attention_softmax.sh <build dir> <results/gpu/attention_softmax>
set -euo pipefail
bin=$1/probes/attention_softmax
mkdir -p "$(dirname "$bin")"
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I recipes/attention -I recipes -I support \
  probes/attention_softmax.cu -o "$bin"
{
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  echo "parts of the softmax changed in step 11, $gpu, commit $commit"
  "$bin"
} >"$2.txt"
