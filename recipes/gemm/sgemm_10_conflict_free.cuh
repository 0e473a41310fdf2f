/// \file sgemm_10_conflict_free.cuh
/// \brief Step 10, bank-conflict-free A tile: the vectorized kernel of step 9 with each row of
/// the transposed A tile padded by 4 floats.
///
/// Step 9 reads A with float4 along K and stores the four values down a column of the
/// transposed tile As[k][m]. With 128-float rows, the 32 lanes of a warp (16 rows m x 2 K-quads)
/// write words k * 128 + m: the two K-quads of a row are 4 * 128 words apart, the same bank, a
/// 2-way conflict on every one of the four stores. Padding each row to 128 + 4 floats moves the
/// second K-quad by 4 * 4 = 16 banks: bank (16 q + 4 c + m) % 32 differs for all 32 lanes. The
/// pad is 4 floats, not 1, so that every row still starts on a 16-byte boundary and the compute
/// loop keeps its float4 reads (a pad of 1 would break them: the trap of a 33-word row). A
/// swizzle would avoid the 128 bytes of padding per buffer; the pad is the smaller change.
/// Everything else is step 9: 128 x 128 x 8 tile, 8 x 8 per thread, double buffer, one barrier
/// per window. a_offset() is the constexpr function the host bank-model test evaluates.
///
/// Measured on the H200 (results/h200/gemm_ncu_steps10_13.txt, gemm.json): the profiler's shared
/// store bank conflicts fall from 16.8 M to 868 at 4096^3, as the model predicts, but the kernel
/// is slower than step 9 at every benchmarked shape (3-4% from 2048^3 up, 1-2% at 1000^3 and
/// 1024^3): the conflict cost 4 extra wavefronts per 512 FMAs of a thread, too little to matter,
/// and a removed conflict is not a speed-up.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gemm_args.cuh"
#include "sgemm_09_vectorized.cuh"

namespace smem::gemm {

namespace cf {
using vec::BM, vec::BN, vec::BK, vec::TM, vec::TN, vec::kThreads;
using vec::a_row, vec::a_col, vec::b_row, vec::b_col, vec::b_offset, vec::frag;

//! [conflict-free layout]
inline constexpr int kAPad = 4;          ///< floats added to each row of the transposed A tile
inline constexpr int kALd = BM + kAPad;  ///< 132: rows stay 16-byte aligned
/// Word offset of A(m, k) in the padded transposed A tile As[k][m] (step 9: k * BM + m).
__host__ __device__ constexpr int a_offset(int k, int m) { return k * kALd + m; }
//! [conflict-free layout]
}  // namespace cf

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

//! [conflict-free kernel]
template <bool Vec>
__global__ void __launch_bounds__(cf::kThreads, 2) sgemm_conflict_free_kernel(
    int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  using namespace cf;
  __shared__ __align__(16) float As[2][BK * kALd];  // padded rows: the only change from step 9
  __shared__ __align__(16) float Bs[2][BK * BN];
  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int ar = a_row(tid), ac = a_col(tid), br = b_row(tid), bc = b_col(tid);

  auto store_tiles = [&](int buf, float4 a, float4 b) {
    As[buf][a_offset(ac + 0, ar)] = a.x;  // 32 lanes, 32 banks: conflict-free
    As[buf][a_offset(ac + 1, ar)] = a.y;
    As[buf][a_offset(ac + 2, ar)] = a.z;
    As[buf][a_offset(ac + 3, ar)] = a.w;
    *reinterpret_cast<float4*>(&Bs[buf][b_offset(br, bc)]) = b;
  };
  float4 a_next = vec::load4<Vec>(A, m0 + ar, ac, M, K, lda);
  float4 b_next = vec::load4<Vec>(B, br, n0 + bc, K, N, ldb);
  store_tiles(0, a_next, b_next);
  __syncthreads();

  float acc[TM][TN] = {};
  const int windows = (K + BK - 1) / BK;
  for (int t = 0; t < windows; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < windows;
    if (more) {
      a_next = vec::load4<Vec>(A, m0 + ar, (t + 1) * BK + ac, M, K, lda);
      b_next = vec::load4<Vec>(B, (t + 1) * BK + br, n0 + bc, K, N, ldb);
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[cur][a_offset(k, frag(ty, 0))]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[cur][a_offset(k, frag(ty, 4))]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[cur][b_offset(k, frag(tx, 0))]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[cur][b_offset(k, frag(tx, 4))]);
      const float a[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) store_tiles(cur ^ 1, a_next, b_next);
    __syncthreads();
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
//! [conflict-free kernel]

/// C = alpha * A * B + beta * C, row-major; step 9 with the padded A tile. Any sizes and leading
/// dimensions: scalar path when not vectorizable().
inline cudaError_t sgemm_conflict_free(int M, int N, int K, float alpha, const float* A, int lda,
                                       const float* B, int ldb, float beta, float* C, int ldc,
                                       cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  if (tiles(M, cf::BM) > kMaxGridY) return cudaErrorInvalidValue;
  const dim3 grid(tiles(N, cf::BN), tiles(M, cf::BM));
  if (vectorizable(A, lda, B, ldb, C, ldc))
    sgemm_conflict_free_kernel<true><<<grid, cf::kThreads, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    sgemm_conflict_free_kernel<false><<<grid, cf::kThreads, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  return cudaGetLastError();
}

inline cudaError_t sgemm_conflict_free_attributes(int /*K*/, KernelAttributes* out) {
  return kernel_attributes(sgemm_conflict_free_kernel<true>, cf::kThreads, 0, out);
}

}  // namespace smem::gemm
