/// \file sgemm_09_vectorized.cuh
/// \brief Step 9, vectorized 2D blocktiling: 128-bit global and shared loads, a transposed A
/// tile, and the double buffering of step 6.
///
/// Changes from step 8, same 128 x 128 x 8 block tile and 8 x 8 results per thread:
///  - Global loads are float4: each thread fetches 4 consecutive floats of a row of A and of B
///    per window (one 128-bit load each instead of four 32-bit loads).
///  - The A tile is stored transposed, As[k][m], so the 8 A values a thread needs at step k are
///    contiguous and come as two 128-bit shared loads (step 8 needed eight 32-bit loads).
///  - A thread's 8 rows (and 8 columns) are two groups of 4, 64 apart: rows 4 ty..4 ty+3 and
///    64 + 4 ty..; so the 8 lanes of a quarter-warp read 8 consecutive float4 of a B row, all 32
///    banks once (conflict-free, where step 8's 8-word stride put pairs of lanes on the same banks), and
///    the C stores are float4 too.
///  - Two buffers per tile and one barrier per window, as in step 6: the next window's float4
///    loads are in flight during the current window's 512 FMAs per thread.
/// The price of the transpose is in the A store: a float4 of a row of A goes to four different
/// rows of As, as four 32-bit stores in which lanes 2j and 2j + 1 (same m, k 4 apart, 512 words
/// apart) hit the same bank: a 2-way conflict, 2 wavefronts per store instead of 1 (the host bank
/// model checks this on Vectorized::a_offset()). It is 4 stores per 512 FMAs of a thread, so it matters little;
/// removing it is the next step of the ladder.
///
/// The float4 paths need A, B and C 16-byte aligned and lda, ldb, ldc multiples of 4. Otherwise
/// the same kernel runs with scalar loads and stores (Vec = false); any M, N, K is handled in
/// both, with guarded scalar tails and zero-filled boundary tiles.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_common.cuh"

namespace smem::gemm {

//! [vectorized layout]
/// Step 9's shape and its thread-to-shared-memory maps, for a transposed A tile whose rows hold
/// ALd floats (BM here; step 10 pads the rows).
template <int ALd>
struct Vectorized {
  static constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  static constexpr int kThreads = BM * BN / (TM * TN);  // 256
  /// Word offset of A(m, k) in the transposed A tile As[k][m].
  __host__ __device__ static constexpr int a_offset(int k, int m) { return k * ALd + m; }
  /// Word offset of B(k, n) in the B tile, Bs[k][n].
  __host__ __device__ static constexpr int b_offset(int k, int n) { return k * BN + n; }
  /// The float4 of A thread `tid` loads per window: row a_row(tid), columns a_col(tid) .. + 3.
  __host__ __device__ static constexpr int a_row(int tid) { return tid / (BK / 4); }
  __host__ __device__ static constexpr int a_col(int tid) { return tid % (BK / 4) * 4; }
  /// The float4 of B thread `tid` loads per window: row b_row(tid), columns b_col(tid) .. + 3.
  __host__ __device__ static constexpr int b_row(int tid) { return tid / (BN / 4); }
  __host__ __device__ static constexpr int b_col(int tid) { return tid % (BN / 4) * 4; }
  /// Row (or column) of the i-th of a thread's 8 results along one dimension, for thread
  /// coordinate t (ty = tid / 16 for rows, tx = tid % 16 for columns): two groups of 4, half a
  /// tile apart.
  __host__ __device__ static constexpr int frag(int t, int i) { return (i < 4 ? 0 : BM / 2) + t * 4 + i % 4; }
};
//! [vectorized layout]

//! [vectorized kernel]
/// L: a Vectorized layout; Vec: float4 global accesses (vectorizable()).
template <class L, bool Vec>
__global__ void __launch_bounds__(L::kThreads, 2) vectorized_kernel(int M, int N, int K, float alpha,
                                                                   const float* __restrict__ A, int lda,
                                                                   const float* __restrict__ B, int ldb, float beta,
                                                                   float* __restrict__ C, int ldc) {
  constexpr int BM = L::BM, BN = L::BN, BK = L::BK, TM = L::TM, TN = L::TN;
  __shared__ __align__(16) float As[2][L::a_offset(BK, 0)];
  __shared__ __align__(16) float Bs[2][BK * BN];
  const int tid = threadIdx.x;
  const TileCoord t = row_major_tile(tiles(N, BN));
  const int m0 = t.m * BM, n0 = t.n * BN;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int ar = L::a_row(tid), ac = L::a_col(tid), br = L::b_row(tid), bc = L::b_col(tid);

  // This thread's float4 of the A and B windows that start at column (row) k0; zeros outside.
  auto load_a = [&](int k0) {
    return m0 + ar < M ? load4_row(A + std::size_t(m0 + ar) * lda, k0 + ac, K, Vec) : float4{};
  };
  auto load_b = [&](int k0) {
    return k0 + br < K ? load4_row(B + std::size_t(k0 + br) * ldb, n0 + bc, N, Vec) : float4{};
  };
  auto store_tiles = [&](int buf, float4 a, float4 b) {
    As[buf][L::a_offset(ac + 0, ar)] = a.x;  // the transpose: 4 scalar stores to 4 rows of As
    As[buf][L::a_offset(ac + 1, ar)] = a.y;
    As[buf][L::a_offset(ac + 2, ar)] = a.z;
    As[buf][L::a_offset(ac + 3, ar)] = a.w;
    *reinterpret_cast<float4*>(&Bs[buf][L::b_offset(br, bc)]) = b;
  };
  float4 a_next = load_a(0), b_next = load_b(0);
  store_tiles(0, a_next, b_next);
  __syncthreads();

  float acc[TM][TN] = {};
  // K >= 1 here (K == 0 never launches), so no wrap at K = INT_MAX. A signed count on purpose: with
  // tiles()' unsigned one, nvcc schedules this loop into a slower kernel (bench: vectorized).
  const int windows = (K - 1) / BK + 1;
  for (int w = 0; w < windows; ++w) {
    const int cur = w & 1;
    const bool more = w + 1 < windows;
    if (more) {  // next window's loads, in flight during this window's FMAs
      a_next = load_a((w + 1) * BK);
      b_next = load_b((w + 1) * BK);
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[cur][L::a_offset(k, L::frag(ty, 0))]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[cur][L::a_offset(k, L::frag(ty, 4))]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[cur][L::b_offset(k, L::frag(tx, 0))]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[cur][L::b_offset(k, L::frag(tx, 4))]);
      const float a[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    if (more) store_tiles(cur ^ 1, a_next, b_next);
    __syncthreads();  // one barrier per window, as in step 6
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = m0 + L::frag(ty, i);
    if (r >= M) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h)
      store4_row(C + std::size_t(r) * ldc, n0 + L::frag(tx, 4 * h), N,
                 make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]), alpha, beta,
                 Vec);
  }
}
//! [vectorized kernel]

/// True when the float4 paths may be used: 16-byte aligned matrices, leading dimensions
/// multiples of 4 floats.
inline bool vectorizable(const float* A, int lda, const float* B, int ldb, const float* C, int ldc) {
  return aligned16(A) && aligned16(B) && aligned16(C) && lda % 4 == 0 && ldb % 4 == 0 && ldc % 4 == 0;
}

/// The plan of vectorized_kernel with layout L: the float4 kernel when vectorizable(), the
/// scalar one otherwise. Steps 9 and 10 are this with their layouts.
template <class L>
Plan<GemmKernel> vectorized_plan_with(int M, int N, const float* A, int lda, const float* B, int ldb, const float* C,
                                      int ldc) {
  return grid_plan(vectorizable(A, lda, B, ldb, C, ldc) ? vectorized_kernel<L, true> : vectorized_kernel<L, false>,
                   tile_blocks(M, N, L::BM, L::BN), dim3(L::kThreads));
}

/// Launches vectorized_kernel with layout L.
template <class L>
cudaError_t vectorized_with(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                            float beta, float* C, int ldc, cudaStream_t stream) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(vectorized_plan_with<L>(M, N, A, lda, B, ldb, C, ldc), stream, M, N, K, alpha, A, lda, B, ldb, beta,
                C, ldc);
}

inline Plan<GemmKernel> vectorized_plan(int M, int N, int, const float* A, int lda, const float* B, int ldb,
                                        const float* C, int ldc) {
  return vectorized_plan_with<Vectorized<128>>(M, N, A, lda, B, ldb, C, ldc);
}

/// C = alpha * A * B + beta * C, row-major, 128 x 128 block tile, float4 loads, transposed A
/// tile, double-buffered. Any sizes and leading dimensions: scalar path when not vectorizable().
inline cudaError_t vectorized(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                              float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return vectorized_with<Vectorized<128>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

}  // namespace smem::gemm
