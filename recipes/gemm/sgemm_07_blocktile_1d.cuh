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

#include "gemm_common.cuh"

namespace smem::gemm {

//! [1D blocktiling layout]
/// Step 7's shape and its thread-to-shared-memory maps (the kernel and the bank-model tests both
/// use these).
struct Blocktile1d {
  static constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
  static constexpr int kThreads = BM * BN / TM;  // 512
  /// As[m][k] and Bs[k][n], row-major.
  __host__ __device__ static constexpr int a_offset(int m, int k) { return m * BK + k; }
  __host__ __device__ static constexpr int b_offset(int k, int n) { return k * BN + n; }
  /// The element of each tile that thread `tid` loads per window: A(a_m, a_k), B(b_k, b_n).
  __host__ __device__ static constexpr int a_m(int tid) { return tid / BK; }
  __host__ __device__ static constexpr int a_k(int tid) { return tid % BK; }
  __host__ __device__ static constexpr int b_k(int tid) { return tid / BN; }
  __host__ __device__ static constexpr int b_n(int tid) { return tid % BN; }
  /// The outputs of thread `tid`: rows thread_m(tid, 0 .. TM - 1) of column thread_n(tid).
  __host__ __device__ static constexpr int thread_m(int tid, int i) { return tid / BN * TM + i; }
  __host__ __device__ static constexpr int thread_n(int tid) { return tid % BN; }
};
//! [1D blocktiling layout]

//! [1D blocktiling kernel]
static __global__ void __launch_bounds__(Blocktile1d::kThreads) blocktile_1d_kernel(
    int M, int N, int K, float alpha, const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
    float beta, float* __restrict__ C, int ldc) {
  using L = Blocktile1d;
  __shared__ float As[L::BM * L::BK], Bs[L::BK * L::BN];
  const int tid = threadIdx.x;
  const TileCoord t = row_major_tile(tiles(N, L::BN));
  const int m0 = t.m * L::BM, n0 = t.n * L::BN;
  const int am = L::a_m(tid), ak = L::a_k(tid), bk = L::b_k(tid), bn = L::b_n(tid);
  float acc[L::TM] = {};
  for (unsigned k0u = 0; k0u < unsigned(K); k0u += L::BK) {  // unsigned: the last k0 += BK may pass INT_MAX
    const int k0 = int(k0u);
    As[L::a_offset(am, ak)] = m0 + am < M && k0 + ak < K ? A[std::size_t(m0 + am) * lda + k0 + ak] : 0.0f;
    Bs[L::b_offset(bk, bn)] = k0 + bk < K && n0 + bn < N ? B[std::size_t(k0 + bk) * ldb + n0 + bn] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < L::BK; ++k) {
      const float b = Bs[L::b_offset(k, L::thread_n(tid))];  // one register, reused TM times
#pragma unroll
      for (int i = 0; i < L::TM; ++i) acc[i] += As[L::a_offset(L::thread_m(tid, i), k)] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < L::TM; ++i) {
    const int r = m0 + L::thread_m(tid, i), c = n0 + L::thread_n(tid);
    if (r < M && c < N) update_c(&C[std::size_t(r) * ldc + c], acc[i], alpha, beta);
  }
}
//! [1D blocktiling kernel]

inline Plan<GemmKernel> blocktile_1d_plan(int M, int N, int, const float*, int, const float*, int, const float*, int) {
  return grid_plan(blocktile_1d_kernel, tile_blocks(M, N, Blocktile1d::BM, Blocktile1d::BN),
                   dim3(Blocktile1d::kThreads));
}

/// C = alpha * A * B + beta * C, row-major, 64 x 64 block tile, 8 outputs per thread.
inline cudaError_t blocktile_1d(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                                float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(blocktile_1d_plan(M, N, K, A, lda, B, ldb, C, ldc), stream, M, N, K, alpha, A, lda, B, ldb, beta,
                C, ldc);
}

}  // namespace smem::gemm
