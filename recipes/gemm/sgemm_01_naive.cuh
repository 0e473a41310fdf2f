/// \file sgemm_01_naive.cuh
/// \brief Step 1, naive: one thread per element of C, thread x indexes the rows of C.
///
/// Thread (x, y) of a 32 x 32 block computes C[row][col] with row = 32 bm + x, col = 32 bn + y:
/// a dot product of row `row` of A and column `col` of B, straight from global memory. The 32
/// lanes of a warp differ in x, so they hold 32 different rows: every A load of the warp touches
/// 32 rows lda floats apart (32 separate 32-byte sectors for 128 useful bytes) and the final C
/// store writes 32 words ldc apart; only the B load (one address for the whole warp) is cheap.
/// Nothing is reused through shared memory. This is the floor of the ladder. The blocks form a
/// 1D grid (bm = blockIdx.x mod the row tiles, bn the quotient), so M and N are limited only by
/// the grid's 2^31 - 1 blocks (gemm_common.cuh's contract), not by gridDim.y's 65,535.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_common.cuh"

namespace smem::gemm {

//! [naive kernel]
static __global__ void __launch_bounds__(1024) naive_kernel(int M, int N, int K, float alpha,
                                                           const float* __restrict__ A, int lda,
                                                           const float* __restrict__ B, int ldb,
                                                           float beta, float* __restrict__ C, int ldc) {
  const int tiles_m = tiles(M, 32);
  const int row = int(blockIdx.x % tiles_m) * 32 + threadIdx.x;  // lanes of a warp: 32 different rows
  const int col = int(blockIdx.x / tiles_m) * 32 + threadIdx.y;  // one column per warp
  if (row >= M || col >= N) return;
  const float* a = A + std::size_t(row) * lda;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * B[std::size_t(k) * ldb + col];
  update_c(&C[std::size_t(row) * ldc + col], acc, alpha, beta);
}
//! [naive kernel]

inline Plan<GemmKernel> naive_plan(int M, int N, int, const float*, int, const float*, int, const float*, int) {
  return grid_plan(naive_kernel, tile_blocks(M, N, 32, 32), dim3(32, 32));
}

/// C = alpha * A * B + beta * C, row-major (A M x K, B K x N, C M x N), naive kernel.
inline cudaError_t naive(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                         float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(naive_plan(M, N, K, A, lda, B, ldb, C, ldc), stream, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace smem::gemm
