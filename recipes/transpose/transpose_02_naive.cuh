/// \file transpose_02_naive.cuh
/// \brief Step 2, naive: each thread moves elements straight from in to out.
///
/// A warp reads 32 consecutive elements of a row of `in` (coalesced), and writes them down a
/// column of `out`: 32 addresses `rows` elements apart, 32 separate memory transactions per
/// warp store, each using 4 or 8 bytes of a 32-byte sector. The writes waste most of the
/// bandwidth; the following steps fix them with a shared-memory tile.
#pragma once
#include <cuda_runtime.h>

#include "transpose_common.cuh"

namespace smem::transpose {

//! [naive kernel]
template <class T>
__global__ void naive_kernel(int rows, int cols, const T* __restrict__ in, T* __restrict__ out) {
  const int tiles_c = tiles(cols, kTile);
  const int r0 = blockIdx.x / tiles_c * kTile, c0 = blockIdx.x % tiles_c * kTile;
  const int c = c0 + threadIdx.x;
  for (int j = threadIdx.y; j < kTile; j += kBlockRows) {
    const int r = r0 + j;
    if (r < rows && c < cols) out[std::size_t(c) * rows + r] = in[std::size_t(r) * cols + c];
  }
}
//! [naive kernel]

template <class T>
Plan<void (*)(int, int, const T*, T*)> naive_plan(int rows, int cols, const T*, const T*) {
  return grid_plan(naive_kernel<T>, tile_count(rows, cols, kTile), dim3(kTile, kBlockRows));
}

/// out (cols x rows) = transpose(in (rows x cols)), coalesced reads, strided writes.
template <class T>
cudaError_t naive(int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  if (Args a = check_args(rows, cols, in, out); a != Args::launch) return args_error(a);
  return launch(naive_plan(rows, cols, in, out), stream, rows, cols, in, out);
}

}  // namespace smem::transpose
