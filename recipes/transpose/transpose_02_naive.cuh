/// \file transpose_02_naive.cuh
/// \brief Step 2, naive: each thread moves elements straight from in to out.
///
/// A warp reads 32 consecutive elements of a row of `in` (coalesced), and writes them down a
/// column of `out`: 32 addresses `rows` elements apart, 32 separate memory transactions per
/// warp store, each using 4 or 8 bytes of a 32-byte sector. The writes waste most of the
/// bandwidth; the following steps fix them with a shared-memory tile.
#pragma once
#include <cuda_runtime.h>

#include "transpose_00_copy.cuh"

namespace smem::transpose {

//! [naive kernel]
template <class T>
__global__ void naive_kernel(int rows, int cols, const T* __restrict__ in, T* __restrict__ out) {
  const int tiles_c = (cols + kTile - 1) / kTile;
  const int r0 = blockIdx.x / tiles_c * kTile, c0 = blockIdx.x % tiles_c * kTile;
  const int c = c0 + threadIdx.x;
  for (int j = threadIdx.y; j < kTile; j += kBlockRows) {
    const int r = r0 + j;
    if (r < rows && c < cols) out[std::size_t(c) * rows + r] = in[std::size_t(r) * cols + c];
  }
}
//! [naive kernel]

/// out (cols x rows) = transpose(in (rows x cols)), coalesced reads, strided writes.
template <class T>
cudaError_t transpose_naive(int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  if (Args a = check_args(rows, cols, in, out); a != Args::launch) return args_error(a);
  naive_kernel<T><<<tile_count(rows, cols, kTile), dim3(kTile, kBlockRows), 0, stream>>>(rows, cols, in, out);
  return cudaGetLastError();
}

}  // namespace smem::transpose
