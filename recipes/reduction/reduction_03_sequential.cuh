/// \file reduction_03_sequential.cuh
/// \brief Step 3, sequential addressing: conflict-free and without divergence.
///
/// What changes from step 2: the stride runs backwards (half the block, then a quarter, ...)
/// and thread `tid` combines s[tid] with s[tid + stride]. The active threads are still the
/// first ones (whole warps retire), and now the 32 lanes of a warp touch 32 consecutive words:
/// 32 different banks, one wavefront per request, for every round (bank-model test on
/// sequential_partner()). Divergence remains only inside the last warp (stride < 32).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_common.cuh"

namespace smem::reduction {

/// The shared-memory tree of steps 3 and 4: s[0] = s[0] op ... op s[kTreeThreads - 1].
template <class T, class Op>
__device__ void sequential_tree(T* s, Op op) {
  const unsigned tid = threadIdx.x;
  //! [sequential tree]
  for (unsigned stride = kTreeThreads / 2; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] = op(s[tid], s[sequential_partner(stride, tid)]);  // consecutive words
    __syncthreads();
  }
  //! [sequential tree]
}

template <class T, class Op>
__global__ void __launch_bounds__(kTreeThreads)
    sequential_kernel(const T* in, long long n, T* out, Op op, T identity) {
  __shared__ T s[kTreeThreads];
  const unsigned tid = threadIdx.x;
  const long long i = (long long)blockIdx.x * kTreeThreads + tid;
  s[tid] = i < n ? in[i] : identity;
  __syncthreads();
  sequential_tree(s, op);
  if (tid == 0) out[blockIdx.x] = s[0];
}

template <class T, class Op>
Plan<PassKernel<T, Op>> sequential_plan(long long n) {
  return pass_plan(sequential_kernel<T, Op>, n, kTreeThreads, kTreeThreads);
}

/// *out = reduction of in[0, n) with `op`; see reduction_common.cuh for the contract.
template <class T, class Op>
cudaError_t sequential(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                      T identity, cudaStream_t stream = nullptr) {
  return multi_pass(d_temp, temp_bytes, in, n, out, op, identity, stream, sequential_plan<T, Op>);
}

}  // namespace smem::reduction
