/// \file scan_04_warp_shuffle.cuh
/// \brief Step 4, warp shuffles: each warp scans its 32 elements in registers; shared memory
/// carries only one total per warp.
///
/// What changes from step 3: the tree of shared-memory rounds, with a barrier after each, is
/// replaced by five `__shfl_up_sync` rounds inside each warp (a Kogge-Stone scan whose lanes
/// exchange registers in lock-step, so it needs no barrier) and one barrier for the warp totals
/// (`block_exclusive_scan` in scan_common.cuh). A tile of 1024 elements costs each thread about
/// ten shuffles and one barrier, where step 3 costs 19 barriers and their shared-memory traffic;
/// and every shared access left is conflict-free (the totals: one word per warp).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "scan_common.cuh"

namespace smem::scan {

inline constexpr int kWarpShuffleThreads = 1024;

//! [warp shuffle]
template <class T, class Op>
__global__ void __launch_bounds__(kWarpShuffleThreads)
    warp_shuffle_kernel(const T* in, T* out, long long n, T* sums, Op op, T identity, Kind kind) {
  const long long i = (long long)blockIdx.x * kWarpShuffleThreads + threadIdx.x;
  __shared__ T warp_totals[kWarpShuffleThreads / 32];
  const T x = i < n ? in[i] : identity;
  T total;
  const T before = block_exclusive_scan<kWarpShuffleThreads>(x, op, identity, total, warp_totals);
  if (i < n) out[i] = kind == Kind::inclusive ? op(before, x) : before;  // each thread its own element
  if (sums != nullptr && threadIdx.x == 0) sums[blockIdx.x] = total;
}
//! [warp shuffle]

template <class T, class Op>
Plan<TileKernel<T, Op>> warp_shuffle_plan(long long n) {
  return tile_plan<TileKernel<T, Op>>(warp_shuffle_kernel<T, Op>, n, kWarpShuffleThreads, kWarpShuffleThreads);
}

/// Scans in[0, n) into out with `op`; see scan_common.cuh for the contract.
template <class T, class Op>
cudaError_t warp_shuffle(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, long long n, Op op,
                         T identity, Kind kind, cudaStream_t stream = nullptr) {
  return scan_then_propagate<T, Op>(warp_shuffle_kernel<T, Op>, kWarpShuffleThreads, kWarpShuffleThreads, d_temp,
                                    temp_bytes, in, out, n, op, identity, kind, stream);
}

}  // namespace smem::scan
