/// \file reduction_05_warp_shuffle.cuh
/// \brief Step 5, warp-shuffle final stage: the last 32 values never touch shared memory.
///
/// What changes from step 4: the shared-memory tree stops once 64 values remain; warp 0 combines
/// s[tid] and s[tid + 32] in registers and finishes with five `__shfl_down_sync` rounds, each
/// reading a register of the lane `offset` places up. The five last rounds of step 4 each cost
/// a shared-memory load, a store and a `__syncthreads()` for a single busy warp; a shuffle is one
/// instruction and needs no barrier (the lanes of a warp exchange in lock-step).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_common.cuh"

namespace smem::reduction {

//! [warp shuffle]
template <class T, class Op>
__global__ void __launch_bounds__(kTreeThreads)
    warp_shuffle_kernel(const T* in, long long n, T* out, Op op, T identity) {
  __shared__ T s[kTreeThreads];
  const unsigned tid = threadIdx.x;
  const long long i = (long long)blockIdx.x * (2 * kTreeThreads) + tid;
  T v = i < n ? in[i] : identity;
  if (i + kTreeThreads < n) v = op(v, in[i + kTreeThreads]);
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = kTreeThreads / 2; stride > 32; stride /= 2) {  // down to 64 values
    if (tid < stride) s[tid] = op(s[tid], s[sequential_partner(stride, tid)]);
    __syncthreads();
  }
  if (tid < 32) {
    v = warp_reduce(op(s[tid], s[tid + 32]), op);  // the last 32 values, in registers
    if (tid == 0) out[blockIdx.x] = v;
  }
}
//! [warp shuffle]

template <class T, class Op>
Plan<PassKernel<T, Op>> warp_shuffle_plan(long long n) {
  return pass_plan(warp_shuffle_kernel<T, Op>, n, kTreeThreads, 2 * kTreeThreads);
}

/// *out = reduction of in[0, n) with `op`; see reduction_common.cuh for the contract.
template <class T, class Op>
cudaError_t warp_shuffle(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                        T identity, cudaStream_t stream = nullptr) {
  return multi_pass(d_temp, temp_bytes, in, n, out, op, identity, stream, warp_shuffle_plan<T, Op>);
}

}  // namespace smem::reduction
