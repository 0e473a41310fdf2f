/// \file scan_05_reduce_then_scan.cuh
/// \brief Step 5, reduce-then-scan: three kernels over large tiles, with the input read twice
/// and the output written once.
///
/// What changes from step 4: steps 1 to 4 write the whole output and then read and write it
/// again to add each tile's carry, four passes over memory in all. Here the first kernel only
/// reduces each tile to its total, the second scans the totals in one block, and the third scans
/// each tile again, starting from its carry: three passes (two reads, one write). Each thread now
/// handles 128 bytes (32 floats): each warp reads its slice of the tile with 16-byte loads in the
/// coalesced order and turns it into runs of consecutive elements per lane by a transpose through
/// its own piece of shared memory, in 16-byte vectors kept conflict-free by an XOR swizzle
/// (`TileMap`: step 3's padding would break the vectors' alignment). A thread scans its run
/// sequentially in registers, so the block-wide scan (step 4's shuffles) works on one total per
/// thread (kTileThreads of them) instead of every element of the tile.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "scan_common.cuh"

namespace smem::scan {

//! [reduce then scan]
/// Kernel 1: partials[tile] = the total of each tile, combined in index order.
template <class T, class Op, int kThreads = kTileThreads, int kItems = kTileItems<T>>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks)
    tile_totals_kernel(const T* in, long long n, T* partials, Op op, T identity) {
  __shared__ __align__(16) T smem[kTileSmem<T, kThreads, kItems>];
  T items[kItems];
  load_tile<kThreads>(in, n, blockIdx.x, items, identity, smem);
  T total = thread_scan(items, op);
  block_exclusive_scan<kThreads>(total, op, identity, total);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

/// Kernel 2, one block: partials[0, count) becomes its exclusive scan, a tile of it at a time,
/// each tile starting from the total of those before it.
template <class T, class Op, int kThreads = kTileThreads, int kItems = kTileItems<T>>
__global__ void __launch_bounds__(kThreads) scan_partials_kernel(T* partials, long long count, Op op, T identity) {
  __shared__ __align__(16) T smem[kTileSmem<T, kThreads, kItems>];
  T carry = identity;
  for (long long tile = 0; tile * kThreads * kItems < count; ++tile) {
    T items[kItems];
    load_tile<kThreads>(partials, count, tile, items, identity, smem);
    T total;
    const T before = block_exclusive_scan<kThreads>(thread_scan(items, op), op, identity, total);
    finish_items(items, op(carry, before), op, Kind::exclusive);
    store_tile<kThreads>(partials, count, tile, items, smem);  // starts with a barrier
    carry = op(carry, total);
    __syncwarp();  // the warp done reading its slice before the next tile is staged in it
  }
}

/// Kernel 3: each tile scanned again, starting from its carry (the scanned partials).
template <class T, class Op, int kThreads = kTileThreads, int kItems = kTileItems<T>>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks)
    scan_tiles_kernel(const T* in, T* out, long long n, const T* carries, Op op, T identity, Kind kind) {
  __shared__ __align__(16) T smem[kTileSmem<T, kThreads, kItems>];
  T items[kItems];
  load_tile<kThreads>(in, n, blockIdx.x, items, identity, smem);
  T total;
  const T before = block_exclusive_scan<kThreads>(thread_scan(items, op), op, identity, total);
  finish_items(items, op(carries[blockIdx.x], before), op, kind);
  store_tile<kThreads>(out, n, blockIdx.x, items, smem);
}
//! [reduce then scan]

/// The kernel of step 5's first pass: (in, n, partials, op, identity).
template <class T, class Op>
using TotalsKernel = void (*)(const T*, long long, T*, Op, T);

template <class T, class Op>
Plan<TotalsKernel<T, Op>> reduce_then_scan_plan(long long n) {
  return tile_plan<TotalsKernel<T, Op>>(tile_totals_kernel<T, Op>, n, kTileElems<T>, kTileThreads);
}

/// Workspace of step 5: one partial per tile.
template <class T>
constexpr std::size_t reduce_then_scan_bytes(long long n) {
  return align_up(std::size_t(n <= kTileElems<T> ? 1 : (n - 1) / kTileElems<T> + 1) * sizeof(T));
}

/// Scans in[0, n) into out with `op`; see scan_common.cuh for the contract.
template <class T, class Op>
cudaError_t reduce_then_scan(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, long long n, Op op,
                             T identity, Kind kind, cudaStream_t stream = nullptr) {
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, reduce_then_scan_bytes<T>(n < 0 ? 0 : n), in, out, n, kTileMaxN<T>, kind, err))
    return err;
  const auto p = reduce_then_scan_plan<T, Op>(n);  // n <= kTileMaxN<T>: a kernel
  T* partials = static_cast<T*>(d_temp);
  p.kernel<<<p.grid, p.block, p.smem, stream>>>(in, n, partials, op, identity);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  scan_partials_kernel<T, Op><<<1, kTileThreads, 0, stream>>>(partials, p.grid.x, op, identity);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  scan_tiles_kernel<T, Op><<<p.grid, p.block, 0, stream>>>(in, out, n, partials, op, identity, kind);
  return cudaGetLastError();
}

}  // namespace smem::scan
