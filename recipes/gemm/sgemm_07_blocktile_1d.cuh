/// \file sgemm_07_blocktile_1d.cuh
/// \brief Step 7, 1D register blocktiling: each thread computes a column of 8 elements of C.
///
/// Change from step 6: the work per thread grows from one element of C to TM = 8 (a column
/// strip), and the block tile becomes 64 x 64 with a K window of BK = 8 (512 threads). In the
/// inner loop a thread reads one B value into a register and reuses it for 8 FMAs, against 8
/// A values that are broadcasts (all lanes of a warp share their 8 rows). Shared-memory loads
/// per FMA drop from 2 (steps 4-6) to 9/8: the tiled kernels were limited by shared-memory
/// bandwidth and load-instruction issue, not by arithmetic, and this is the first step where the
/// FMA units get most of the issue slots. Boundary tiles are zero-filled as in step 4.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_args.cuh"

namespace smem::gemm {

namespace bt1d {
inline constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
inline constexpr int kThreads = BM * BN / TM;  // 512
}  // namespace bt1d

//! [1D blocktiling kernel]
__global__ void __launch_bounds__(bt1d::kThreads) sgemm_blocktile_1d_kernel(
    int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  using namespace bt1d;
  __shared__ float As[BM * BK], Bs[BK * BN];
  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tx = tid % BN, ty = tid / BN;      // this thread: column tx, rows ty*TM .. ty*TM+TM-1
  const int ar = tid / BK, ac = tid % BK;      // the A element this thread loads
  const int br = tid / BN, bc = tid % BN;      // the B element this thread loads
  float acc[TM] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    As[ar * BK + ac] = m0 + ar < M && k0 + ac < K ? A[std::size_t(m0 + ar) * lda + k0 + ac] : 0.0f;
    Bs[br * BN + bc] = k0 + br < K && n0 + bc < N ? B[std::size_t(k0 + br) * ldb + n0 + bc] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float b = Bs[k * BN + tx];  // one register, reused TM times
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += As[(ty * TM + i) * BK + k] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = m0 + ty * TM + i, c = n0 + tx;
    if (r < M && c < N) update_c(&C[std::size_t(r) * ldc + c], acc[i], alpha, beta);
  }
}
//! [1D blocktiling kernel]

/// C = alpha * A * B + beta * C, row-major, 64 x 64 block tile, 8 results per thread.
inline cudaError_t sgemm_blocktile_1d(int M, int N, int K, float alpha, const float* A, int lda,
                                      const float* B, int ldb, float beta, float* C, int ldc,
                                      cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  if (tiles(M, bt1d::BM) > kMaxGridY) return cudaErrorInvalidValue;
  sgemm_blocktile_1d_kernel<<<dim3(tiles(N, bt1d::BN), tiles(M, bt1d::BM)), bt1d::kThreads, 0, stream>>>(
      M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  return cudaGetLastError();
}

inline cudaError_t sgemm_blocktile_1d_attributes(int /*K*/, KernelAttributes* out) {
  return kernel_attributes(sgemm_blocktile_1d_kernel, bt1d::kThreads, 0, out);
}

}  // namespace smem::gemm
