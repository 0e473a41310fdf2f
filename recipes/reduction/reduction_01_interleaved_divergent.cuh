/// \file reduction_01_interleaved_divergent.cuh
/// \brief Step 1, interleaved addressing with a divergent branch: the textbook starting point.
///
/// Each block loads one element per thread into shared memory, then halves the number of live
/// values per round: in round s (1, 2, 4, ...) thread `tid` with `tid % (2 s) == 0` adds the
/// value s places to its right. The partial of each block goes to the workspace, and the same
/// kernel reduces the partials until one block is left (reduction_common.cuh, multi_pass()).
///
/// Why it is slow: the active threads are spread over every warp (`tid % (2 s) == 0`), so in
/// round s only 1 lane in 2 s of each warp works while all warps stay busy issuing: divergence.
/// The `%` is an integer division on every thread of every round. Each thread also moves a
/// single element from global memory, so few bytes are in flight per SM.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_common.cuh"

namespace smem::reduction {

//! [interleaved divergent]
template <class T, class Op>
__global__ void __launch_bounds__(kTreeThreads)
    interleaved_divergent_kernel(const T* in, long long n, T* out, Op op, T identity) {
  __shared__ T s[kTreeThreads];
  const unsigned tid = threadIdx.x;
  const long long i = (long long)blockIdx.x * kTreeThreads + tid;  // 64-bit: n may exceed 2^31
  s[tid] = i < n ? in[i] : identity;
  __syncthreads();
  for (unsigned stride = 1; stride < kTreeThreads; stride *= 2) {
    if (tid % (2 * stride) == 0) s[tid] = op(s[tid], s[tid + stride]);  // divergent branch
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}
//! [interleaved divergent]

template <class T, class Op>
Plan<PassKernel<T, Op>> interleaved_divergent_plan(long long n) {
  return pass_plan(interleaved_divergent_kernel<T, Op>, n, kTreeThreads, kTreeThreads);
}

/// *out = reduction of in[0, n) with `op`; see reduction_common.cuh for the contract.
template <class T, class Op>
cudaError_t interleaved_divergent(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                                 T identity, cudaStream_t stream = nullptr) {
  return multi_pass(d_temp, temp_bytes, in, n, out, op, identity, stream, interleaved_divergent_plan<T, Op>);
}

}  // namespace smem::reduction
