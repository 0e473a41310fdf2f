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
/// model checks this on a_offset()). It is 4 stores per 512 FMAs of a thread, so it matters little;
/// removing it is the next step of the ladder.
///
/// The float4 paths need A, B and C 16-byte aligned and lda, ldb, ldc multiples of 4. Otherwise
/// the same kernel runs with scalar loads and stores (Vec = false); any M, N, K is handled in
/// both, with guarded scalar tails and zero-filled boundary tiles.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gemm_args.cuh"

namespace smem::gemm {

namespace vec {
inline constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
inline constexpr int kThreads = BM * BN / (TM * TN);  // 256

//! [vectorized layout]
/// Word offset of A(m, k) in a transposed A tile As[k][m] whose rows hold ALd floats.
template <int ALd>
__host__ __device__ constexpr int a_tile_offset(int k, int m) { return k * ALd + m; }
/// Step 9's transposed A tile: rows of BM floats.
__host__ __device__ constexpr int a_offset(int k, int m) { return a_tile_offset<BM>(k, m); }
/// Word offset of B(k, n) in the B tile, Bs[k][n].
__host__ __device__ constexpr int b_offset(int k, int n) { return k * BN + n; }
/// The float4 of A thread `tid` loads per window: row a_row(tid), columns a_col(tid) .. + 3.
__host__ __device__ constexpr int a_row(int tid) { return tid / (BK / 4); }
__host__ __device__ constexpr int a_col(int tid) { return tid % (BK / 4) * 4; }
/// The float4 of B thread `tid` loads per window: row b_row(tid), columns b_col(tid) .. + 3.
__host__ __device__ constexpr int b_row(int tid) { return tid / (BN / 4); }
__host__ __device__ constexpr int b_col(int tid) { return tid % (BN / 4) * 4; }
/// Row (or column) of the i-th of a thread's 8 results along one dimension, for thread
/// coordinate t (ty for rows, tx for columns): two groups of 4, half a tile apart.
__host__ __device__ constexpr int frag(int t, int i) { return (i < 4 ? 0 : BM / 2) + t * 4 + i % 4; }
//! [vectorized layout]
}  // namespace vec

namespace detail {

/// Four consecutive floats p[k .. k + 3] of a row, zero past `limit`; one float4 load when `vec`
/// (the row start and the leading dimension are multiples of 4 floats) and all four are inside.
__device__ __forceinline__ float4 load4_row(const float* p, int k, int limit, bool vec) {
  if (vec && k + 3 < limit) return *reinterpret_cast<const float4*>(p + k);
  float4 v;
  v.x = k + 0 < limit ? p[k + 0] : 0.0f;
  v.y = k + 1 < limit ? p[k + 1] : 0.0f;
  v.z = k + 2 < limit ? p[k + 2] : 0.0f;
  v.w = k + 3 < limit ? p[k + 3] : 0.0f;
  return v;
}

/// The epilogue of four consecutive outputs of one row: c[n .. n + 3] = alpha * acc + beta * c,
/// columns at or past N skipped, C not read when beta == 0; one float4 access when `vec`.
__device__ __forceinline__ void store4_row(float* c, int n, int N, float4 acc, float alpha,
                                           float beta, bool vec) {
  if (vec && n + 3 < N) {
    float4 r = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    if (beta != 0.0f) {
      const float4 o = *reinterpret_cast<const float4*>(c + n);
      r.x += beta * o.x, r.y += beta * o.y, r.z += beta * o.z, r.w += beta * o.w;
    }
    *reinterpret_cast<float4*>(c + n) = r;
    return;
  }
  const float a[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (n + j < N) c[n + j] = beta == 0.0f ? alpha * a[j] : alpha * a[j] + beta * c[n + j];
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace detail

//! [vectorized kernel]
/// ALd: floats per row of the transposed A tile (vec::BM here; step 10 pads the rows).
template <int ALd, bool Vec>
__global__ void __launch_bounds__(vec::kThreads, 2) sgemm_vectorized_kernel(
    int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  using namespace vec;
  __shared__ __align__(16) float As[2][BK * ALd];
  __shared__ __align__(16) float Bs[2][BK * BN];
  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int ar = a_row(tid), ac = a_col(tid), br = b_row(tid), bc = b_col(tid);

  // This thread's float4 of the A and B windows that start at column (row) k0; zeros outside.
  auto load_a = [&](int k0) {
    return m0 + ar < M ? detail::load4_row(A + std::size_t(m0 + ar) * lda, k0 + ac, K, Vec) : float4{};
  };
  auto load_b = [&](int k0) {
    return k0 + br < K ? detail::load4_row(B + std::size_t(k0 + br) * ldb, n0 + bc, N, Vec) : float4{};
  };
  auto store_tiles = [&](int buf, float4 a, float4 b) {
    As[buf][a_tile_offset<ALd>(ac + 0, ar)] = a.x;  // the transpose: 4 scalar stores to 4 rows of As
    As[buf][a_tile_offset<ALd>(ac + 1, ar)] = a.y;
    As[buf][a_tile_offset<ALd>(ac + 2, ar)] = a.z;
    As[buf][a_tile_offset<ALd>(ac + 3, ar)] = a.w;
    *reinterpret_cast<float4*>(&Bs[buf][b_offset(br, bc)]) = b;
  };
  float4 a_next = load_a(0), b_next = load_b(0);
  store_tiles(0, a_next, b_next);
  __syncthreads();

  float acc[TM][TN] = {};
  const int windows = (K + BK - 1) / BK;
  for (int t = 0; t < windows; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < windows;
    if (more) {  // next window's loads, in flight during this window's FMAs
      a_next = load_a((t + 1) * BK);
      b_next = load_b((t + 1) * BK);
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[cur][a_tile_offset<ALd>(k, frag(ty, 0))]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[cur][a_tile_offset<ALd>(k, frag(ty, 4))]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[cur][b_offset(k, frag(tx, 0))]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[cur][b_offset(k, frag(tx, 4))]);
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
    const int r = m0 + frag(ty, i);
    if (r >= M) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h)
      detail::store4_row(C + std::size_t(r) * ldc, n0 + frag(tx, 4 * h), N,
                         make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]),
                         alpha, beta, Vec);
  }
}
//! [vectorized kernel]

/// True when the float4 paths may be used: 16-byte aligned matrices, leading dimensions
/// multiples of 4 floats.
inline bool vectorizable(const float* A, int lda, const float* B, int ldb, const float* C, int ldc) {
  return detail::aligned16(A) && detail::aligned16(B) && detail::aligned16(C) && lda % 4 == 0 &&
         ldb % 4 == 0 && ldc % 4 == 0;
}

/// Launches sgemm_vectorized_kernel with A tile rows of ALd floats: the float4 kernel when
/// vectorizable(), the scalar one otherwise.
template <int ALd>
cudaError_t sgemm_vectorized_with(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                                  int ldb, float beta, float* C, int ldc, cudaStream_t stream) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  if (tiles(M, vec::BM) > kMaxGridY) return cudaErrorInvalidValue;
  const dim3 grid(tiles(N, vec::BN), tiles(M, vec::BM));
  if (vectorizable(A, lda, B, ldb, C, ldc))
    sgemm_vectorized_kernel<ALd, true><<<grid, vec::kThreads, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    sgemm_vectorized_kernel<ALd, false><<<grid, vec::kThreads, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  return cudaGetLastError();
}

/// C = alpha * A * B + beta * C, row-major, 128 x 128 block tile, float4 loads, transposed A
/// tile, double-buffered. Any sizes and leading dimensions: scalar path when not vectorizable().
inline cudaError_t sgemm_vectorized(int M, int N, int K, float alpha, const float* A, int lda,
                                    const float* B, int ldb, float beta, float* C, int ldc,
                                    cudaStream_t stream = nullptr) {
  return sgemm_vectorized_with<vec::BM>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

/// Attributes of the float4 (Vec = true) kernel.
inline cudaError_t sgemm_vectorized_attributes(int /*K*/, KernelAttributes* out) {
  return kernel_attributes(sgemm_vectorized_kernel<vec::BM, true>, vec::kThreads, 0, out);
}

}  // namespace smem::gemm
