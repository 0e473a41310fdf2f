/// \file probe_timing.cuh
/// \brief What the probes that time kernels in alternating rounds share: bf16 inputs drawn on the
/// device, and the mean time of a run of launches.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace smem::test {

/// x[i] uniform in [-1, 1), a hash of i and seed (the same on every run).
static __global__ void fill_random(__nv_bfloat16* x, long long n, unsigned seed) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    x[i] = __float2bfloat16(float(h & 0xffff) / 32768.0f - 1.0f);
  }
}

/// The mean time of `reps` launches of f (returning a cudaError_t), in ms.
template <class F>
float time_ms(F f, int reps) {
  cudaEvent_t a, b;
  SMEM_CUDA_CHECK(cudaEventCreate(&a));
  SMEM_CUDA_CHECK(cudaEventCreate(&b));
  SMEM_CUDA_CHECK(cudaEventRecord(a));
  for (int i = 0; i < reps; ++i) SMEM_CUDA_CHECK(f());
  SMEM_CUDA_CHECK(cudaEventRecord(b));
  SMEM_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  SMEM_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  SMEM_CUDA_CHECK(cudaEventDestroy(a));
  SMEM_CUDA_CHECK(cudaEventDestroy(b));
  return ms / reps;
}

}  // namespace smem::test
