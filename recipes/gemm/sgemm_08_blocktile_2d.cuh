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
/// 8 words apart, so pairs of lanes in a quarter-warp hit the same banks (the bank model and the
/// profiler's counts are on the page). Step 9 reorganises the fragments and the loads.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_common.cuh"

namespace smem::gemm {

//! [2D blocktiling layout]
/// Step 8's shape and its thread-to-shared-memory maps (the kernel and the bank-model tests both
/// use these).
struct Blocktile2d {
  static constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  static constexpr int kThreads = BM * BN / (TM * TN);  // 256
  static constexpr int kLoads = BM * BK / kThreads;     // elements of each tile a thread loads
  /// As[m][k] and Bs[k][n], row-major.
  __host__ __device__ static constexpr int a_offset(int m, int k) { return m * BK + k; }
  __host__ __device__ static constexpr int b_offset(int k, int n) { return k * BN + n; }
  /// Load i of thread `tid`: consecutive threads take consecutive columns of each tile.
  __host__ __device__ static constexpr int a_m(int tid, int i) { return (tid + i * kThreads) / BK; }
  __host__ __device__ static constexpr int a_k(int tid, int i) { return (tid + i * kThreads) % BK; }
  __host__ __device__ static constexpr int b_k(int tid, int i) { return (tid + i * kThreads) / BN; }
  __host__ __device__ static constexpr int b_n(int tid, int i) { return (tid + i * kThreads) % BN; }
  /// The TM x TN outputs of thread `tid`: rows thread_m(tid, i), columns thread_n(tid, j).
  __host__ __device__ static constexpr int thread_m(int tid, int i) { return tid / (BN / TN) * TM + i; }
  __host__ __device__ static constexpr int thread_n(int tid, int j) { return tid % (BN / TN) * TN + j; }
};
//! [2D blocktiling layout]

//! [2D blocktiling kernel]
static __global__ void __launch_bounds__(Blocktile2d::kThreads) blocktile_2d_kernel(
    int M, int N, int K, float alpha, const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
    float beta, float* __restrict__ C, int ldc) {
  using L = Blocktile2d;
  __shared__ float As[L::BM * L::BK], Bs[L::BK * L::BN];
  const int tid = threadIdx.x;
  const TileCoord t = row_major_tile(tiles(N, L::BN));
  const int m0 = t.m * L::BM, n0 = t.n * L::BN;
  float acc[L::TM][L::TN] = {};
  float a[L::TM], b[L::TN];
  for (unsigned k0u = 0; k0u < unsigned(K); k0u += L::BK) {  // unsigned: the last k0 += BK may pass INT_MAX
    const int k0 = int(k0u);
#pragma unroll
    for (int i = 0; i < L::kLoads; ++i) {
      const int m = L::a_m(tid, i), k = L::a_k(tid, i);
      As[L::a_offset(m, k)] = m0 + m < M && k0 + k < K ? A[std::size_t(m0 + m) * lda + k0 + k] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < L::kLoads; ++i) {
      const int k = L::b_k(tid, i), n = L::b_n(tid, i);
      Bs[L::b_offset(k, n)] = k0 + k < K && n0 + n < N ? B[std::size_t(k0 + k) * ldb + n0 + n] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < L::BK; ++k) {
#pragma unroll
      for (int i = 0; i < L::TM; ++i) a[i] = As[L::a_offset(L::thread_m(tid, i), k)];
#pragma unroll
      for (int j = 0; j < L::TN; ++j) b[j] = Bs[L::b_offset(k, L::thread_n(tid, j))];
#pragma unroll
      for (int i = 0; i < L::TM; ++i)
#pragma unroll
        for (int j = 0; j < L::TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < L::TM; ++i)
#pragma unroll
    for (int j = 0; j < L::TN; ++j) {
      const int r = m0 + L::thread_m(tid, i), c = n0 + L::thread_n(tid, j);
      if (r < M && c < N) update_c(&C[std::size_t(r) * ldc + c], acc[i][j], alpha, beta);
    }
}
//! [2D blocktiling kernel]

inline Plan<GemmKernel> blocktile_2d_plan(int M, int N, int, const float*, int, const float*, int, const float*, int) {
  return grid_plan(blocktile_2d_kernel, tile_blocks(M, N, Blocktile2d::BM, Blocktile2d::BN),
                   dim3(Blocktile2d::kThreads));
}

/// C = alpha * A * B + beta * C, row-major, 128 x 128 block tile, 8 x 8 outputs per thread.
inline cudaError_t blocktile_2d(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                                float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(blocktile_2d_plan(M, N, K, A, lda, B, ldb, C, ldc), stream, M, N, K, alpha, A, lda, B, ldb, beta,
                C, ldc);
}

}  // namespace smem::gemm
