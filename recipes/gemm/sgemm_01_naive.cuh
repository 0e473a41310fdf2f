/// \file sgemm_01_naive.cuh
/// \brief Step 1, naive: one thread per element of C, thread x indexes the rows of C.
///
/// Thread (x, y) of a 32 x 32 block computes C[row][col] with row = 32 bx + x, col = 32 by + y:
/// a dot product of row `row` of A and column `col` of B, straight from global memory. The 32
/// lanes of a warp differ in x, so they hold 32 different rows: every A load of the warp touches
/// 32 rows lda floats apart (32 separate 32-byte sectors for 128 useful bytes) and the final C
/// store writes 32 words ldc apart; only the B load (one address for the whole warp) is cheap.
/// Nothing is reused through shared memory. This is the floor of the ladder.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_args.cuh"

namespace smem::gemm {

//! [naive kernel]
__global__ void __launch_bounds__(1024) sgemm_naive_kernel(int M, int N, int K, float alpha,
                                                           const float* __restrict__ A, int lda,
                                                           const float* __restrict__ B, int ldb,
                                                           float beta, float* __restrict__ C, int ldc) {
  const int row = blockIdx.x * 32 + threadIdx.x;  // lanes of a warp: 32 different rows
  const int col = blockIdx.y * 32 + threadIdx.y;  // one column per warp
  if (row >= M || col >= N) return;
  const float* a = A + std::size_t(row) * lda;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * B[std::size_t(k) * ldb + col];
  update_c(&C[std::size_t(row) * ldc + col], acc, alpha, beta);
}
//! [naive kernel]

/// C = alpha * A * B + beta * C, row-major (A M x K, B K x N, C M x N), naive kernel.
inline cudaError_t sgemm_naive(int M, int N, int K, float alpha, const float* A, int lda,
                               const float* B, int ldb, float beta, float* C, int ldc,
                               cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  if (tiles(N, 32) > kMaxGridY) return cudaErrorInvalidValue;  // columns in gridDim.y here
  sgemm_naive_kernel<<<dim3(tiles(M, 32), tiles(N, 32)), dim3(32, 32), 0, stream>>>(
      M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  return cudaGetLastError();
}

/// Registers, shared memory, threads and blocks per SM of the naive kernel.
inline cudaError_t sgemm_naive_attributes(int /*K*/, KernelAttributes* out) {
  return kernel_attributes(sgemm_naive_kernel, 1024, 0, out);
}

}  // namespace smem::gemm
