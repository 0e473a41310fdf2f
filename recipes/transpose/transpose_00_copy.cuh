/// \file transpose_00_copy.cuh
/// \brief Step 0, the roof: a plain copy with the transpose's tiling and the same block shape.
///
/// Every read and every write is coalesced, so this is the bandwidth a transpose can at best
/// reach with this tiling. The benchmark also measures `cudaMemcpy` device-to-device, the roof
/// for any kernel.
#pragma once
#include <cuda_runtime.h>

#include "transpose_common.cuh"

namespace smem::transpose {

//! [copy kernel]
/// out = in (rows x cols), one 32 x 32 tile per block.
template <class T>
__global__ void copy_kernel(int rows, int cols, const T* __restrict__ in, T* __restrict__ out) {
  const int tiles_c = tiles(cols, kTile);
  const int r0 = blockIdx.x / tiles_c * kTile, c0 = blockIdx.x % tiles_c * kTile;
  const int c = c0 + threadIdx.x;
  for (int j = threadIdx.y; j < kTile; j += kBlockRows) {
    const int r = r0 + j;
    if (r < rows && c < cols) out[std::size_t(r) * cols + c] = in[std::size_t(r) * cols + c];
  }
}
//! [copy kernel]

template <class T>
Plan<void (*)(int, int, const T*, T*)> copy_plan(int rows, int cols, const T*, const T*) {
  return grid_plan(copy_kernel<T>, tile_count(rows, cols, kTile), dim3(kTile, kBlockRows));
}

/// Copies in (rows x cols) to out with copy_kernel. Not a transpose: the roof of the ladder.
template <class T>
cudaError_t copy(int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  if (Args a = check_args(rows, cols, in, out); a != Args::launch) return args_error(a);
  return launch(copy_plan(rows, cols, in, out), stream, rows, cols, in, out);
}

}  // namespace smem::transpose
