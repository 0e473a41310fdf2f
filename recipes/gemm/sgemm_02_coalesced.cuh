/// \file sgemm_02_coalesced.cuh
/// \brief Step 2, coalesced: the naive kernel with thread x indexing the columns of C.
///
/// The only change from step 1 is which thread index walks which dimension: col = 32 bn + x,
/// row = 32 bm + y (block b owns tile (bm, bn) = (b / tiles_n, b % tiles_n) of a 1D grid). Now
/// the 32 lanes of a warp share a row of A (one address, a broadcast) and read 32 consecutive
/// floats of a row of B (one 128-byte line), and the C store is one 128-byte line too. Same
/// arithmetic, same lack of reuse, but every load the warp issues is now fully used: the step is
/// bound by how often the same A and B elements are re-fetched through L1/L2.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_common.cuh"

namespace smem::gemm {

//! [coalesced kernel]
static __global__ void __launch_bounds__(1024) coalesced_kernel(int M, int N, int K, float alpha,
                                                               const float* __restrict__ A, int lda,
                                                               const float* __restrict__ B, int ldb,
                                                               float beta, float* __restrict__ C,
                                                               int ldc) {
  const TileCoord t = row_major_tile(tiles(N, 32));
  const int col = t.n * 32 + threadIdx.x;  // lanes of a warp: 32 consecutive columns
  const int row = t.m * 32 + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + std::size_t(row) * lda;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * B[std::size_t(k) * ldb + col];
  update_c(&C[std::size_t(row) * ldc + col], acc, alpha, beta);
}
//! [coalesced kernel]

inline Plan<GemmKernel> coalesced_plan(int M, int N, int, const float*, int, const float*, int, const float*, int) {
  return grid_plan(coalesced_kernel, tile_blocks(M, N, 32, 32), dim3(32, 32));
}

/// C = alpha * A * B + beta * C, row-major, one thread per element, coalesced.
inline cudaError_t coalesced(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                             float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(coalesced_plan(M, N, K, A, lda, B, ldb, C, ldc), stream, M, N, K, alpha, A, lda, B, ldb, beta, C,
                ldc);
}

}  // namespace smem::gemm
