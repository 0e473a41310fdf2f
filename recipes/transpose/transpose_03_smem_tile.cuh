/// \file transpose_03_smem_tile.cuh
/// \brief Step 3, shared-memory tile 32 x 32: coalesced both ways, 32-way bank conflicts.
///
/// Each block reads a 32 x 32 tile of `in` row by row (coalesced) into shared memory, waits at a
/// barrier, then reads the tile column by column and writes rows of `out` (coalesced). The
/// strided global writes of step 2 are gone. The price is in shared memory: the column read
/// `tile[tx][j]` has the 32 lanes of a warp at addresses 32 words apart, all in one bank: a
/// 32-way conflict, served in 32 wavefronts instead of 1 (see the bank model).
///
/// The kernel is written over a tile *layout*, the function that places element (r, c) of the
/// tile in shared memory. Steps 4 and 5 keep this kernel and change only the layout.
#pragma once
#include <cuda_runtime.h>

#include "transpose_common.cuh"

namespace smem::transpose {

//! [unpadded layout]
/// Row-major 32 x 32 tile: element (r, c) at word r * 32 + c.
struct UnpaddedLayout {
  static constexpr int kElements = kTile * kTile;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * kTile + c; }
};
//! [unpadded layout]

//! [tile kernel]
/// out (cols x rows) = transpose(in), through a shared tile placed by Layout.
template <class T, class Layout>
__global__ void tile_kernel(int rows, int cols, const T* __restrict__ in, T* __restrict__ out) {
  __shared__ T tile[Layout::kElements];
  const int tiles_c = tiles(cols, kTile);
  const int r0 = blockIdx.x / tiles_c * kTile, c0 = blockIdx.x % tiles_c * kTile;
  const int tx = threadIdx.x;

  // Load: lane tx reads column c0 + tx of rows r0 + j -- a warp reads 32 consecutive elements.
  for (int j = threadIdx.y; j < kTile; j += kBlockRows)
    if (r0 + j < rows && c0 + tx < cols)
      tile[Layout::offset(j, tx)] = in[std::size_t(r0 + j) * cols + c0 + tx];
  __syncthreads();  // the whole tile is in shared memory before anyone reads a column of it

  // Store: out row c0 + j is tile column j; lane tx writes out column r0 + tx -- coalesced.
  for (int j = threadIdx.y; j < kTile; j += kBlockRows)
    if (c0 + j < cols && r0 + tx < rows)
      out[std::size_t(c0 + j) * rows + r0 + tx] = tile[Layout::offset(tx, j)];
}
//! [tile kernel]

/// The plan of tile_kernel with a given layout; steps 3, 4 and 5 are this with their layouts.
template <class T, class Layout>
Plan<void (*)(int, int, const T*, T*)> tile_plan(int rows, int cols) {
  return grid_plan(tile_kernel<T, Layout>, tile_count(rows, cols, kTile), dim3(kTile, kBlockRows));
}

/// Launches tile_kernel with a given layout.
template <class T, class Layout>
cudaError_t tiled(int rows, int cols, const T* in, T* out, cudaStream_t stream) {
  if (Args a = check_args(rows, cols, in, out); a != Args::launch) return args_error(a);
  return launch(tile_plan<T, Layout>(rows, cols), stream, rows, cols, in, out);
}

template <class T>
Plan<void (*)(int, int, const T*, T*)> smem_tile_plan(int rows, int cols, const T*, const T*) {
  return tile_plan<T, UnpaddedLayout>(rows, cols);
}

/// out (cols x rows) = transpose(in (rows x cols)) through an unpadded 32 x 32 shared tile.
template <class T>
cudaError_t smem_tile(int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  return tiled<T, UnpaddedLayout>(rows, cols, in, out, stream);
}

}  // namespace smem::transpose
