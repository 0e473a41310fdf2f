#!/usr/bin/env bash
# Clusters of two with TMA multicast of K and V against step 11 (probes/attention_cluster.cu): both
# kernels' TFLOP/s at full attention, hd128 and hd64, and whether the cluster kernel's O and LSE are
# step 11's bit for bit. ./cookbook probe attention_cluster writes attention_cluster.txt, which the
# attention limits page shows (profile attention-cluster). Needs an sm_90a GPU (H100, H200).
# Usage: probes/attention_cluster.sh <build dir> <results/gpu/attention_cluster>
set -euo pipefail
bin=$1/probes/attention_cluster
mkdir -p "$(dirname "$bin")"
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I recipes/attention -I recipes -I support \
  probes/attention_cluster.cu -o "$bin"
{
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  echo "clusters with TMA multicast of K and V against step 11, $gpu, commit $commit"
  "$bin"
} >"$2.txt"
