/// \file scan_02_brent_kung.cuh
/// \brief Step 2, Brent-Kung: the work-efficient up-sweep and down-sweep, two elements per
/// thread, with the bank conflicts of its power-of-two strides.
///
/// What changes from step 1: 2 (tile - 1) operations per tile instead of tile log2(tile), and
/// half the threads (512 for a tile of 1024). The up-sweep builds a reduction tree in place: in
/// the round of stride s, element k = 2 s (t + 1) - 1 takes in element k - s. The down-sweep
/// passes the partial sums back down: element k + s takes in element k. The price is twice as
/// many rounds, each with fewer busy threads, and the access pattern: the busy lanes of a warp
/// are 2 s elements apart, so they share 32 / (2 s) banks, and from s = 16 on (4-byte elements)
/// they all fall into one bank: one warp access is served in up to 32 wavefronts instead of one.
/// `DenseLayout` is the index map; step 3 swaps it.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "scan_common.cuh"

namespace smem::scan {

inline constexpr int kBrentKungThreads = 512;
inline constexpr int kBrentKungTile = 2 * kBrentKungThreads;

//! [layout]
/// Step 2's map from a tile element to its shared-memory slot: the identity.
struct DenseLayout {
  __host__ __device__ static constexpr int offset(int j) { return j; }
  static constexpr int kSize = kBrentKungTile;
};
//! [layout]

//! [brent kung]
/// Element that thread t updates in the up-sweep round of stride s (it takes in k - s), and in
/// the down-sweep round of stride s (element k + s takes in k): the same k in both.
__host__ __device__ constexpr int brent_kung_index(int s, int t) { return 2 * s * (t + 1) - 1; }

template <class T, class Op, class Layout>
__global__ void __launch_bounds__(kBrentKungThreads)
    brent_kung_kernel(const T* in, T* out, long long n, T* sums, Op op, T identity, Kind kind) {
  constexpr int kTile = kBrentKungTile;
  __shared__ T s[Layout::kSize];
  const int t = threadIdx.x;
  const long long base = (long long)blockIdx.x * kTile;
  for (int j = t; j < kTile; j += kBrentKungThreads) s[Layout::offset(j)] = base + j < n ? in[base + j] : identity;
  __syncthreads();
  for (int stride = 1; stride < kTile; stride *= 2) {  // up-sweep: a reduction tree in place
    const int k = brent_kung_index(stride, t);
    if (k < kTile) s[Layout::offset(k)] = op(s[Layout::offset(k - stride)], s[Layout::offset(k)]);
    __syncthreads();
  }
  for (int stride = kTile / 4; stride > 0; stride /= 2) {  // down-sweep: partial sums to the right
    const int k = brent_kung_index(stride, t);
    if (k + stride < kTile) s[Layout::offset(k + stride)] = op(s[Layout::offset(k)], s[Layout::offset(k + stride)]);
    __syncthreads();
  }
  write_tile<kTile, kBrentKungThreads>(out, n, sums, kind, identity, [&](int j) { return s[Layout::offset(j)]; });
}
//! [brent kung]

template <class T, class Op>
Plan<TileKernel<T, Op>> brent_kung_plan(long long n) {
  return tile_plan<TileKernel<T, Op>>(brent_kung_kernel<T, Op, DenseLayout>, n, kBrentKungTile, kBrentKungThreads);
}

/// Scans in[0, n) into out with `op`; see scan_common.cuh for the contract.
template <class T, class Op>
cudaError_t brent_kung(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, long long n, Op op,
                       T identity, Kind kind, cudaStream_t stream = nullptr) {
  return scan_then_propagate<T, Op>(brent_kung_kernel<T, Op, DenseLayout>, kBrentKungTile, kBrentKungThreads,
                                    d_temp, temp_bytes, in, out, n, op, identity, kind, stream);
}

}  // namespace smem::scan
