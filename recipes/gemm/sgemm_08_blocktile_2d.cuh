/// \file sgemm_08_blocktile_2d.cuh
/// \brief Step 8, 2D register blocktiling: each thread computes an 8 x 8 block of C.
///
/// Change from step 7: the thread's strip becomes a TM x TN = 8 x 8 block (an outer product per
/// k: 8 A values and 8 B values in registers feed 64 FMAs), the block tile 128 x 128 with BK = 8
/// and 256 threads. Shared-memory loads per FMA drop from 9/8 to 16/64 = 1/4, and each element
/// loaded from global memory now serves 128 FMAs of the block instead of 64. The 64 accumulators
/// cost registers (about 128 per thread), which caps the SM at two such blocks.
/// What is left: the compiler already turns the fragment reads into 128-bit loads (4 consecutive
/// k of an A row, 4 consecutive columns of a B row), but the B fragments of neighbouring lanes are
/// 8 words apart, so pairs of lanes in a quarter-warp hit the same banks: ncu counts 5 wavefronts
/// per shared load where step 9 needs 3. And 153 registers per thread leave room for one block
/// per SM. Step 9 reorganises the fragments and the loads.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_args.cuh"

namespace smem::gemm {

namespace bt2d {
inline constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
inline constexpr int kThreads = BM * BN / (TM * TN);  // 256
}  // namespace bt2d

//! [2D blocktiling kernel]
__global__ void __launch_bounds__(bt2d::kThreads) sgemm_blocktile_2d_kernel(
    int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  using namespace bt2d;
  __shared__ float As[BM * BK], Bs[BK * BN];
  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);  // this thread's 8 x 8 block of C
  float acc[TM][TN] = {};
  float a[TM], b[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
    // 1024 elements of each tile, 4 per thread; consecutive threads take consecutive columns.
#pragma unroll
    for (int i = 0; i < BM * BK / kThreads; ++i) {
      const int idx = tid + i * kThreads, r = idx / BK, c = idx % BK;
      As[idx] = m0 + r < M && k0 + c < K ? A[std::size_t(m0 + r) * lda + k0 + c] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < BK * BN / kThreads; ++i) {
      const int idx = tid + i * kThreads, r = idx / BN, c = idx % BN;
      Bs[idx] = k0 + r < K && n0 + c < N ? B[std::size_t(k0 + r) * ldb + n0 + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[(ty * TM + i) * BK + k];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k * BN + tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int r = m0 + ty * TM + i, c = n0 + tx * TN + j;
      if (r < M && c < N) update_c(&C[std::size_t(r) * ldc + c], acc[i][j], alpha, beta);
    }
}
//! [2D blocktiling kernel]

/// C = alpha * A * B + beta * C, row-major, 128 x 128 block tile, 8 x 8 results per thread.
inline cudaError_t sgemm_blocktile_2d(int M, int N, int K, float alpha, const float* A, int lda,
                                      const float* B, int ldb, float beta, float* C, int ldc,
                                      cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  if (tiles(M, bt2d::BM) > kMaxGridY) return cudaErrorInvalidValue;
  sgemm_blocktile_2d_kernel<<<dim3(tiles(N, bt2d::BN), tiles(M, bt2d::BM)), bt2d::kThreads, 0, stream>>>(
      M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  return cudaGetLastError();
}

inline cudaError_t sgemm_blocktile_2d_attributes(int /*K*/, KernelAttributes* out) {
  return kernel_attributes(sgemm_blocktile_2d_kernel, bt2d::kThreads, 0, out);
}

}  // namespace smem::gemm
