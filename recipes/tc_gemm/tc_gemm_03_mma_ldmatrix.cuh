/// \file tc_gemm_03_mma_ldmatrix.cuh
/// \brief Step 3, `mma.sync` m16n8k16 with `ldmatrix` from row-major shared tiles: the PTX the
/// WMMA API hides, and the 8-way bank conflicts of the plain layout.
///
/// Change from step 2: the warps issue `mma.sync.m16n8k16` themselves and fetch their fragments
/// with `ldmatrix` (four 8 x 8 matrices per instruction; `.trans` turns the row-major K x N tile
/// of B into the column-major operand the instruction wants). The block tile grows to 128 x 128
/// with a K window of 64, 8 warps of 64 x 32, each holding 4 x 4 accumulator tiles of 16 x 8
/// (64 fp32 registers): 16 `mma.sync` per 4 A and 2 B `ldmatrix.x4` per step of 16 along K.
///
/// The price is in the layout. A row of the A tile is 64 bf16 = 128 bytes, the width of the bank
/// array, so the 8 rows one `ldmatrix` matrix reads (each lane of a quarter-warp gives one 16-byte
/// row) start on the same bank: an 8-way conflict, 8 wavefronts where 1 would do; the 256-byte
/// rows of the B tile do the same. The kernel is written over the tile layouts (LA, LB), so steps
/// 4 and 5 keep it and change only the layout.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "tc_gemm_sm80.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "tc_gemm_03_mma_ldmatrix.cuh needs bf16 mma.sync: compile for sm_80 or newer (e.g. -arch=sm_80)"
#endif

namespace smem::tc_gemm {

/// The block tile of steps 3 to 5: 128 x 128 x 64, 8 warps of 64 x 32.
inline constexpr int kTileM = 128, kTileN = 128, kTileK = 64;

//! [mma tiled kernel]
/// LA, LB: the layouts of the A (128 x 64) and B (64 x 128) tiles; kRows16: 16-byte global loads.
template <class LA, class LB, bool kRows16>
__global__ void __launch_bounds__(256) mma_tiled_kernel(int M, int N, int K, float alpha, const bf16* __restrict__ A,
                                                        int lda, const bf16* __restrict__ B, int ldb, float beta,
                                                        const bf16* C, int ldc, bf16* D, int ldd) {
  constexpr int BM = kTileM, BN = kTileN, BK = kTileK;
  __shared__ __align__(128) bf16 As[BM * LA::kLd], Bs[BK * LB::kLd];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const TileCoord t = row_major_tile(int(tiles(N, BN)));
  const int m0 = t.m * BM, n0 = t.n * BN, wm = warp / 4 * 64, wn = warp % 4 * 32;

  float acc[4][4][4] = {};
  // By window: after the last window of a K near 2^31, k0 += BK would pass INT_MAX.
  for (int kt = 0, tiles_k = int(tiles(K, BK)); kt < tiles_k; ++kt) {
    const int k0 = kt * BK;
    load_tile<BM, BK, 256, LA, kRows16>(As, A, lda, m0, k0, M, K);
    load_tile<BK, BN, 256, LB, kRows16>(Bs, B, ldb, k0, n0, K, N);
    __syncthreads();  // 1: the window's tiles are complete
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a[4][4], b[4][2];
      load_a_frags<4, LA>(a, As, wm, kk, lane);
      load_b_frags<4, LB>(b, Bs, wn, kk, lane);
      warp_mma(acc, a, b);
    }
    __syncthreads();  // 2: everyone is done reading before the next window is copied
  }
  store_acc(acc, m0 + wm, n0 + wn, lane, M, N, alpha, beta, C, ldc, D, ldd);
}
//! [mma tiled kernel]

/// The plan of mma_tiled_kernel with layouts LA and LB; steps 3, 4 and 5 are this.
template <class LA, class LB>
Plan<TcKernel> mma_tiled_plan(int M, int N, const bf16* A, int lda, const bf16* B, int ldb) {
  return grid_plan(rows16(A, lda, B, ldb) ? mma_tiled_kernel<LA, LB, true> : mma_tiled_kernel<LA, LB, false>,
                   tiles(M, kTileM) * tiles(N, kTileN), dim3(256));
}

/// Launches mma_tiled_kernel with layouts LA and LB.
template <class LA, class LB>
cudaError_t mma_tiled(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                      const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, D, ldd, stream);
  return launch(mma_tiled_plan<LA, LB>(M, N, A, lda, B, ldb), stream, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                D, ldd);
}

/// Step 3's layouts: plain row-major tiles.
using LdmatrixA = RowMajorTile<kTileK, 0>;
using LdmatrixB = RowMajorTile<kTileN, 0>;

inline Plan<TcKernel> mma_ldmatrix_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*,
                                        int, const bf16*, int) {
  return mma_tiled_plan<LdmatrixA, LdmatrixB>(M, N, A, lda, B, ldb);
}

/// D = alpha * A * B + beta * C: mma.sync with ldmatrix from row-major shared tiles.
inline cudaError_t mma_ldmatrix(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                                float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return mma_tiled<LdmatrixA, LdmatrixB>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm
