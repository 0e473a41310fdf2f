/// \file reduction_04_first_add.cuh
/// \brief Step 4, first add during the load: every thread reads two elements.
///
/// What changes from step 3: a block covers 2 x 256 elements, and each thread combines its two
/// elements (256 apart, so both loads stay coalesced) before storing one value to shared
/// memory. Half of step 3's threads were idle from the first round of the tree; now every
/// thread does useful work first, there are half as many blocks and half as many partials,
/// and each thread has two independent loads in flight instead of one.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_03_sequential.cuh"

namespace smem::reduction {

//! [first add]
template <class T, class Op>
__global__ void __launch_bounds__(kTreeThreads)
    first_add_kernel(const T* in, long long n, T* out, Op op, T identity) {
  __shared__ T s[kTreeThreads];
  const unsigned tid = threadIdx.x;
  const long long i = (long long)blockIdx.x * (2 * kTreeThreads) + tid;
  T v = i < n ? in[i] : identity;
  if (i + kTreeThreads < n) v = op(v, in[i + kTreeThreads]);  // the first add, in registers
  s[tid] = v;
  __syncthreads();
  sequential_tree(s, op);
  if (tid == 0) out[blockIdx.x] = s[0];
}
//! [first add]

template <class T, class Op>
Plan<PassKernel<T, Op>> first_add_plan(long long n) {
  return pass_plan(first_add_kernel<T, Op>, n, kTreeThreads, 2 * kTreeThreads);
}

/// *out = reduction of in[0, n) with `op`; see reduction_common.cuh for the contract.
template <class T, class Op>
cudaError_t first_add(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                     T identity, cudaStream_t stream = nullptr) {
  return multi_pass(d_temp, temp_bytes, in, n, out, op, identity, stream, first_add_plan<T, Op>);
}

}  // namespace smem::reduction
