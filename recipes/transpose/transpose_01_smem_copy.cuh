/// \file transpose_01_smem_copy.cuh
/// \brief Step 1, the shared-memory roof: the copy of step 0 staged through a shared tile.
///
/// Each block writes its tile to shared memory, waits at a barrier, and reads it back in the same
/// orientation: row reads and row writes, conflict-free. What it costs over step 0 is the price of
/// the staging itself (a barrier and two shared-memory accesses per element); a transpose through
/// shared memory cannot beat it.
#pragma once
#include <cuda_runtime.h>

#include "transpose_common.cuh"

namespace smem::transpose {

//! [smem copy kernel]
template <class T>
__global__ void smem_copy_kernel(int rows, int cols, const T* __restrict__ in, T* __restrict__ out) {
  __shared__ T tile[kTile][kTile];
  const int tiles_c = tiles(cols, kTile);
  const int r0 = blockIdx.x / tiles_c * kTile, c0 = blockIdx.x % tiles_c * kTile;
  const int c = c0 + threadIdx.x;
  for (int j = threadIdx.y; j < kTile; j += kBlockRows)
    if (r0 + j < rows && c < cols) tile[j][threadIdx.x] = in[std::size_t(r0 + j) * cols + c];
  __syncthreads();
  for (int j = threadIdx.y; j < kTile; j += kBlockRows)
    if (r0 + j < rows && c < cols) out[std::size_t(r0 + j) * cols + c] = tile[j][threadIdx.x];
}
//! [smem copy kernel]

template <class T>
Plan<void (*)(int, int, const T*, T*)> smem_copy_plan(int rows, int cols, const T*, const T*) {
  return grid_plan(smem_copy_kernel<T>, tile_count(rows, cols, kTile), dim3(kTile, kBlockRows));
}

/// Copies in (rows x cols) to out through a shared-memory tile. Not a transpose: a roof.
template <class T>
cudaError_t smem_copy(int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  if (Args a = check_args(rows, cols, in, out); a != Args::launch) return args_error(a);
  return launch(smem_copy_plan(rows, cols, in, out), stream, rows, cols, in, out);
}

}  // namespace smem::transpose
