/// \file scan_03_padded.cuh
/// \brief Step 3, conflict-free Brent-Kung: step 2's kernel with one padding word after every 32.
///
/// What changes from step 2: only the index map. Element j lives at j + j / 32, so elements 32
/// apart (which step 2 put in one bank) land in consecutive banks, and the lanes of the deep
/// rounds, 2 s elements apart, spread over the banks instead of queueing on a few. It costs 1/32
/// more shared memory and an add and a shift per index; the rounds, the barriers and the work stay
/// as they are. The page's bank tables give every access's cost under both maps.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "scan_02_brent_kung.cuh"
#include "scan_common.cuh"

namespace smem::scan {

//! [padded layout]
/// Element j at slot j + j / 32: one padding element after every 32.
struct PaddedLayout {
  __host__ __device__ static constexpr int offset(int j) { return j + j / 32; }
  static constexpr int kSize = kBrentKungTile + kBrentKungTile / 32;
};
//! [padded layout]

template <class T, class Op>
Plan<TileKernel<T, Op>> padded_plan(long long n) {
  return tile_plan<TileKernel<T, Op>>(brent_kung_kernel<T, Op, PaddedLayout>, n, kBrentKungTile, kBrentKungThreads);
}

/// Scans in[0, n) into out with `op`; see scan_common.cuh for the contract.
template <class T, class Op>
cudaError_t padded(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, long long n, Op op, T identity,
                   Kind kind, cudaStream_t stream = nullptr) {
  return scan_then_propagate<T, Op>(brent_kung_kernel<T, Op, PaddedLayout>, kBrentKungTile, kBrentKungThreads,
                                    d_temp, temp_bytes, in, out, n, op, identity, kind, stream);
}

}  // namespace smem::scan
