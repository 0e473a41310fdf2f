/// \file reduction_07_grid_stride.cuh
/// \brief Step 7, grid-stride loop with 16-byte vector loads and many elements per thread.
///
/// What changes from step 6, and why it is faster:
/// - A fixed grid that just fills the GPU: (number of SMs) x (resident blocks per SM, from the
///   occupancy calculator), fewer for small inputs. Each thread walks the input with a
///   grid-wide stride and keeps its running result in registers: the per-element cost is one
///   load and one `op`, and the tree runs once per block instead of once per 512 elements.
/// - 16-byte loads (`float4`-sized: 4 floats or ints, 2 doubles or long longs), kUnroll of them
///   issued back to back before the first use: 16 x kUnroll bytes in flight per thread, enough
///   to cover the DRAM latency at full occupancy. Elements before the first 16-byte boundary
///   (any T-aligned pointer works) and after the last whole vector are read one by one.
/// - The block's result goes through a warp-shuffle block reduction (one shared word per warp,
///   one barrier) instead of a shared-memory tree.
/// The grid-stride loop (thread_reduce), the block reduction and the grid (stride_plan) are in
/// reduction_common.cuh, because steps 8 to 10 reuse them.
/// Two launches: the grid writes one partial per block, then one block reduces the partials.
/// Deterministic: the grid, and so the grouping of the operands, depends only on n and the GPU.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_common.cuh"

namespace smem::reduction {

//! [grid stride kernel]
template <class T, class Op, int kThreads, int kUnroll, Load kLoad>
__global__ void __launch_bounds__(kThreads, kMinBlocks<kThreads, kUnroll>)
    grid_stride_kernel(const T* __restrict__ in, long long n, T* __restrict__ out, Op op, T identity) {
  using BlockReduce = ShuffleBlockReduce<kThreads>;
  __shared__ typename BlockReduce::template TempStorage<T> storage;  // one word per warp
  T v = thread_reduce<kThreads, kUnroll, kLoad>(in, n, op, identity);
  v = BlockReduce::reduce(v, op, storage);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
//! [grid stride kernel]

/// Workspace of step 7: one partial per block.
template <class T, int kThreads = kStrideThreads>
constexpr std::size_t grid_stride_bytes(long long n) {
  return align_up(std::size_t(stride_tiles<T, kThreads>(n)) * sizeof(T));
}

template <class T, class Op, int kThreads = kStrideThreads, int kUnroll = kStrideUnroll, Load kLoad = kStrideLoad>
Plan<PassKernel<T, Op>> grid_stride_plan(long long n) {
  return stride_plan<T, kThreads, 1, grid_stride_kernel<T, Op, kThreads, kUnroll, kLoad>>(n);
}

/// *out = reduction of in[0, n) with `op`; see reduction_common.cuh for the contract.
template <int kThreads = kStrideThreads, int kUnroll = kStrideUnroll, Load kLoad = kStrideLoad, class T, class Op>
cudaError_t grid_stride(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                        T identity, cudaStream_t stream = nullptr) {
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, grid_stride_bytes<T, kThreads>(n), in, n, out, err)) return err;
  const auto p = grid_stride_plan<T, Op, kThreads, kUnroll, kLoad>(n);
  if (p.grid.x == 1) {
    p.kernel<<<1, kThreads, 0, stream>>>(in, n, out, op, identity);
    return cudaGetLastError();
  }
  T* partials = static_cast<T*>(d_temp);
  p.kernel<<<p.grid, p.block, 0, stream>>>(in, n, partials, op, identity);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  p.kernel<<<1, kThreads, 0, stream>>>(partials, p.grid.x, out, op, identity);  // reduce the partials
  return cudaGetLastError();
}

}  // namespace smem::reduction
