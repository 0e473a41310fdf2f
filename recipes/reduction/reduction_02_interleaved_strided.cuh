/// \file reduction_02_interleaved_strided.cuh
/// \brief Step 2, interleaved addressing with a strided index: no divergence, bank conflicts.
///
/// What changes from step 1: in round s, thread `tid` works on index `k = 2 s tid` (when k is
/// in the block), so the active threads are the first ones, packed into as few warps as
/// possible: whole warps retire instead of every warp running at 1 / (2 s) of its lanes, and
/// the `%` is gone.
///
/// What it costs: the 32 lanes of a warp now touch words 2 s apart. Words 32 apart share a bank,
/// so for 4-byte types round s = 1 is a 2-way bank conflict, s = 2 a 4-way one, s = 4 8-way
/// (the bank-model test evaluates strided_index() itself). The shared-memory traffic of the
/// early rounds, which do most of the work, is served 2 to 8 times slower.
/// Whether that costs more than the divergence it removes is a measurement: see the page.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_common.cuh"

namespace smem::reduction {

//! [strided index]
/// Shared-memory index thread `tid` updates in round `stride` of step 2: s[k] = s[k] op s[k + stride].
__host__ __device__ constexpr unsigned strided_index(unsigned stride, unsigned tid) { return 2 * stride * tid; }
//! [strided index]

//! [interleaved strided]
template <class T, class Op>
__global__ void __launch_bounds__(kTreeThreads)
    interleaved_strided_kernel(const T* in, long long n, T* out, Op op, T identity) {
  __shared__ T s[kTreeThreads];
  const unsigned tid = threadIdx.x;
  const long long i = (long long)blockIdx.x * kTreeThreads + tid;
  s[tid] = i < n ? in[i] : identity;
  __syncthreads();
  for (unsigned stride = 1; stride < kTreeThreads; stride *= 2) {
    const unsigned k = strided_index(stride, tid);
    if (k < kTreeThreads) s[k] = op(s[k], s[k + stride]);  // lanes 2*stride words apart: conflicts
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}
//! [interleaved strided]

template <class T, class Op>
Plan<PassKernel<T, Op>> interleaved_strided_plan(long long n) {
  return pass_plan(interleaved_strided_kernel<T, Op>, n, kTreeThreads, kTreeThreads);
}

/// *out = reduction of in[0, n) with `op`; see reduction_common.cuh for the contract.
template <class T, class Op>
cudaError_t interleaved_strided(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                               T identity, cudaStream_t stream = nullptr) {
  return multi_pass(d_temp, temp_bytes, in, n, out, op, identity, stream, interleaved_strided_plan<T, Op>);
}

}  // namespace smem::reduction
