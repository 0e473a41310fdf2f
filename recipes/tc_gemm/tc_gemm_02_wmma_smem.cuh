/// \file tc_gemm_02_wmma_smem.cuh
/// \brief Step 2, WMMA from shared-memory tiles: the seeds' tiled GEMM, with two barriers per K
/// window and zero-filled boundary tiles, on tensor cores.
///
/// Change from step 1: a block of 4 warps owns a 64 x 64 tile of D, and per window of 32 columns
/// of K it copies a 64 x 32 tile of A and a 32 x 64 tile of B into shared memory once (16-byte
/// loads where the rows allow them, zeros outside the matrices), `__syncthreads()`, then each
/// warp computes its 32 x 32 quarter as 2 x 2 WMMA tiles with fragments loaded from shared
/// memory, and a second `__syncthreads()` keeps the next window's copy from overwriting tiles
/// still being read. Each element of A and B now leaves global memory once per block instead of
/// once per warp that needs it, and the boundary handling moved into the copy: the compute loop
/// has no bounds checks at all. The tiles are plain row-major; what that costs in bank conflicts
/// is the subject of steps 3 to 5.
#pragma once
#include <cuda_runtime.h>
#include <mma.h>

#include <cstddef>

#include "tc_gemm_sm80.cuh"

namespace smem::tc_gemm {

//! [wmma smem kernel]
template <bool kRows16>
__global__ void __launch_bounds__(128) wmma_smem_kernel(int M, int N, int K, float alpha, const bf16* __restrict__ A,
                                                        int lda, const bf16* __restrict__ B, int ldb, float beta,
                                                        const bf16* C, int ldc, bf16* D, int ldd) {
  using namespace nvcuda;
  constexpr int BM = 64, BN = 64, BK = 32;
  using LA = RowMajorTile<BK, 0>;
  using LB = RowMajorTile<BN, 0>;
  __shared__ __align__(32) bf16 As[BM * BK], Bs[BK * BN];
  __shared__ __align__(32) float out[4][16 * 16];  // per warp: one accumulator tile, for the epilogue
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const TileCoord t = row_major_tile(int(tiles(N, BN)));
  const int m0 = t.m * BM, n0 = t.n * BN, wm = warp / 2 * 32, wn = warp % 2 * 32;

  wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a[2];
  wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> b[2];
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  for (auto& row : acc)
    for (auto& f : row) wmma::fill_fragment(f, 0.0f);
  // An unsigned k0: after the last window of a K near 2^31, k0 + BK passes INT_MAX, not UINT_MAX.
  for (unsigned uk = 0; uk < unsigned(K); uk += BK) {
    const int k0 = int(uk);
    load_tile<BM, BK, 128, LA, kRows16>(As, A, lda, m0, k0, M, K);
    load_tile<BK, BN, 128, LB, kRows16>(Bs, B, ldb, k0, n0, K, N);
    __syncthreads();  // 1: the window's tiles are complete
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], As + LA::offset(wm + 16 * i, kk), LA::kLd);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], Bs + LB::offset(kk, wn + 16 * j), LB::kLd);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // 2: everyone is done reading before the next window is copied
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      wmma::store_matrix_sync(out[warp], acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 16 * 16; e += 32)
        store_d(m0 + wm + 16 * i + e / 16, n0 + wn + 16 * j + e % 16, out[warp][e], M, N, alpha, beta, C, ldc, D,
                ldd);
      __syncwarp();
    }
}
//! [wmma smem kernel]

inline Plan<TcKernel> wmma_smem_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*,
                                     int, const bf16*, int) {
  return grid_plan(rows16(A, lda, B, ldb) ? wmma_smem_kernel<true> : wmma_smem_kernel<false>,
                   tiles(M, 64) * tiles(N, 64), dim3(128));
}

/// D = alpha * A * B + beta * C, bf16 in and out, fp32 accumulation: WMMA from shared tiles.
inline cudaError_t wmma_smem(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                             float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, D, ldd, stream);
  return launch(wmma_smem_plan(M, N, K, A, lda, B, ldb, C, ldc, D, ldd), stream, M, N, K, alpha, A, lda, B, ldb, beta,
                C, ldc, D, ldd);
}

}  // namespace smem::tc_gemm
