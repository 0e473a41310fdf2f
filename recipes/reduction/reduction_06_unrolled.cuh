/// \file reduction_06_unrolled.cuh
/// \brief Step 6, fully unrolled: the block size is a template parameter.
///
/// What changes from step 5: with `kBlock` known at compile time every round of the tree is a
/// separate `if constexpr` block, so there is no loop counter, no loop branch and no run-time
/// stride, and the rounds a block size does not need vanish. The warp stage is the shuffle of
/// step 5, unrolled too. The work per element is unchanged, so the gain can only be in
/// instruction count, which this kernel is not bound by: like steps 1-5 it moves two elements
/// per thread and then spends a whole tree on them, which is what step 7 changes.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_common.cuh"

namespace smem::reduction {

//! [unrolled tree]
/// s[0 .. kBlock) -> the reduction, returned in thread 0; kBlock a power of two, 64 to 1024.
template <int kBlock, class T, class Op>
__device__ T unrolled_tree(T* s, Op op) {
  static_assert(kBlock >= 64 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0, "power of two, 64..1024");
  const unsigned tid = threadIdx.x;
  if constexpr (kBlock >= 1024) { if (tid < 512) s[tid] = op(s[tid], s[tid + 512]); __syncthreads(); }
  if constexpr (kBlock >= 512) { if (tid < 256) s[tid] = op(s[tid], s[tid + 256]); __syncthreads(); }
  if constexpr (kBlock >= 256) { if (tid < 128) s[tid] = op(s[tid], s[tid + 128]); __syncthreads(); }
  if constexpr (kBlock >= 128) { if (tid < 64) s[tid] = op(s[tid], s[tid + 64]); __syncthreads(); }
  T v{};
  if (tid < 32) v = warp_reduce(op(s[tid], s[tid + 32]), op);
  return v;
}
//! [unrolled tree]

template <int kBlock, class T, class Op>
__global__ void __launch_bounds__(kBlock) unrolled_kernel(const T* in, long long n, T* out, Op op, T identity) {
  __shared__ T s[kBlock];
  const unsigned tid = threadIdx.x;
  const long long i = (long long)blockIdx.x * (2 * kBlock) + tid;
  T v = i < n ? in[i] : identity;
  if (i + kBlock < n) v = op(v, in[i + kBlock]);
  s[tid] = v;
  __syncthreads();
  v = unrolled_tree<kBlock>(s, op);
  if (tid == 0) out[blockIdx.x] = v;
}

template <class T, class Op, int kBlock = kTreeThreads>
Plan<PassKernel<T, Op>> unrolled_plan(long long n) {
  return pass_plan(unrolled_kernel<kBlock, T, Op>, n, kBlock, 2 * kBlock);
}

/// *out = reduction of in[0, n) with `op`, kBlock threads per block (a power of two, 64 to
/// 1024); see reduction_common.cuh for the contract.
template <int kBlock = kTreeThreads, class T, class Op>
cudaError_t unrolled(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                     T identity, cudaStream_t stream = nullptr) {
  return multi_pass(d_temp, temp_bytes, in, n, out, op, identity, stream, unrolled_plan<T, Op, kBlock>);
}

}  // namespace smem::reduction
