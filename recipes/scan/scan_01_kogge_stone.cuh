/// \file scan_01_kogge_stone.cuh
/// \brief Step 1, Kogge-Stone: one element per thread, log2(tile) rounds over double-buffered
/// shared arrays.
///
/// The textbook starting point. A block of 1024 threads loads a tile of 1024 elements into
/// shared memory; in the round of distance d, every thread t >= d combines element t - d with
/// element t. After log2(1024) = 10 rounds element t holds the tile's prefix up to t. Each round
/// reads one array and writes the other, so a round needs one `__syncthreads()` instead of two
/// (a single array would need a barrier between every thread's read of t - d and another
/// thread's write of it). It does n log2(tile) operations where a sequential scan does n: work
/// that steps 2 and 3 remove. Tiles longer than one block are handled by the scan-then-propagate
/// driver of scan_common.cuh: tile totals scanned the same way, then added back.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "scan_common.cuh"

namespace smem::scan {

inline constexpr int kKoggeStoneThreads = 1024;

//! [kogge stone]
template <class T, class Op>
__global__ void __launch_bounds__(kKoggeStoneThreads)
    kogge_stone_kernel(const T* in, T* out, long long n, T* sums, Op op, T identity, Kind kind) {
  constexpr int kTile = kKoggeStoneThreads;
  __shared__ T buf[2][kTile];
  const int t = threadIdx.x;
  const long long i = (long long)blockIdx.x * kTile + t;
  buf[0][t] = i < n ? in[i] : identity;
  __syncthreads();
  int src = 0;
  for (int d = 1; d < kTile; d *= 2) {  // read buf[src], write buf[src ^ 1]: one barrier a round
    buf[src ^ 1][t] = t >= d ? op(buf[src][t - d], buf[src][t]) : buf[src][t];
    src ^= 1;
    __syncthreads();
  }
  write_tile<kTile, kKoggeStoneThreads>(out, n, sums, kind, identity, [&](int j) { return buf[src][j]; });
}
//! [kogge stone]

template <class T, class Op>
Plan<TileKernel<T, Op>> kogge_stone_plan(long long n) {
  return tile_plan<TileKernel<T, Op>>(kogge_stone_kernel<T, Op>, n, kKoggeStoneThreads, kKoggeStoneThreads);
}

/// Scans in[0, n) into out with `op`; see scan_common.cuh for the contract.
template <class T, class Op>
cudaError_t kogge_stone(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, long long n, Op op,
                        T identity, Kind kind, cudaStream_t stream = nullptr) {
  return scan_then_propagate<T, Op>(kogge_stone_kernel<T, Op>, kKoggeStoneThreads, kKoggeStoneThreads, d_temp,
                                    temp_bytes, in, out, n, op, identity, kind, stream);
}

}  // namespace smem::scan
