/// \file tc_gemm_01_wmma_global.cuh
/// \brief Step 1, WMMA fragments loaded straight from global memory: the tensor-core naive step.
///
/// Each warp owns a 16 x 16 tile of D and walks K in steps of 16: it loads a 16 x 16 fragment of
/// A and one of B with `wmma::load_matrix_sync` directly from global memory, multiplies them on
/// the tensor cores (`wmma::mma_sync`, bf16 in, fp32 accumulators), and finally writes its tile
/// through a small shared-memory scratch, which the epilogue needs to apply alpha, beta and the
/// bounds. Four warps make a 32 x 32 block tile. Nothing is shared between warps: every fragment
/// is read from global memory (L1 and L2 serve the repeats), which is what the next step fixes.
///
/// `load_matrix_sync` needs a 32-byte aligned fragment and a leading dimension that is a multiple
/// of 16 bytes; a tile that crosses the edge of A, B or D, or operands that are not aligned like
/// that, are staged element by element into the warp's scratch with zeros outside, so any M, N,
/// K and leading dimension run.
#pragma once
#include <cuda_runtime.h>
#include <mma.h>

#include <cstddef>

#include "tc_gemm_common.cuh"

namespace smem::tc_gemm {

//! [wmma global kernel]
/// kDirect: A and B allow fragment loads straight from global memory (wmma_direct()).
template <bool kDirect>
__global__ void __launch_bounds__(128) wmma_global_kernel(int M, int N, int K, float alpha, const bf16* __restrict__ A,
                                                          int lda, const bf16* __restrict__ B, int ldb, float beta,
                                                          const bf16* C, int ldc, bf16* D, int ldd) {
  using namespace nvcuda;
  __shared__ __align__(32) bf16 stage[4][2][16 * 16];  // per warp: an edge fragment of A and of B
  __shared__ __align__(32) float out[4][16 * 16];      // per warp: the accumulators, for the epilogue
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const TileCoord t = row_major_tile(int(tiles(N, 32)));
  const int m0 = t.m * 32 + warp / 2 * 16, n0 = t.n * 32 + warp % 2 * 16;
  const bool inside = M - m0 >= 16 && N - n0 >= 16;  // the same for the whole warp

  wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  // By window (K >= 1 in a launch): k0 += 16 and K + 15 would pass INT_MAX for a K near 2^31.
  for (int kt = 0, tiles_k = (K - 1) / 16 + 1; kt < tiles_k; ++kt) {
    const int k0 = kt * 16;
    if (kDirect && inside && K - k0 >= 16) {
      wmma::load_matrix_sync(a, A + std::size_t(m0) * lda + k0, lda);
      wmma::load_matrix_sync(b, B + std::size_t(k0) * ldb + n0, ldb);
    } else {  // an edge tile, or unaligned operands: stage the fragments with zeros outside
      for (int i = lane; i < 16 * 16; i += 32) {
        const int r = i / 16, c = i % 16;
        stage[warp][0][i] = m0 + r < M && k0 + c < K ? A[std::size_t(m0 + r) * lda + k0 + c] : bf16(0.0f);
        stage[warp][1][i] = k0 + r < K && n0 + c < N ? B[std::size_t(k0 + r) * ldb + n0 + c] : bf16(0.0f);
      }
      __syncwarp();
      wmma::load_matrix_sync(a, stage[warp][0], 16);
      wmma::load_matrix_sync(b, stage[warp][1], 16);
      __syncwarp();  // the fragments are read before the next tile overwrites the stage
    }
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(out[warp], acc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int i = lane; i < 16 * 16; i += 32)
    store_d(m0 + i / 16, n0 + i % 16, out[warp][i], M, N, alpha, beta, C, ldc, D, ldd);
}
//! [wmma global kernel]

/// True when every 16 x 16 fragment of A and B starts 32-byte aligned with a leading dimension
/// that load_matrix_sync accepts: 32-byte aligned matrices, leading dimensions multiples of 16.
inline bool wmma_direct(const bf16* A, int lda, const bf16* B, int ldb) {
  return aligned(A, 32) && aligned(B, 32) && lda % 16 == 0 && ldb % 16 == 0;
}

inline Plan<TcKernel> wmma_global_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*,
                                       int, const bf16*, int) {
  return grid_plan(wmma_direct(A, lda, B, ldb) ? wmma_global_kernel<true> : wmma_global_kernel<false>,
                   tiles(M, 32) * tiles(N, 32), dim3(128));
}

/// D = alpha * A * B + beta * C, bf16 in and out, fp32 accumulation: WMMA fragments from global.
inline cudaError_t wmma_global(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                               float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, D, ldd, stream);
  return launch(wmma_global_plan(M, N, K, A, lda, B, ldb, C, ldc, D, ldd), stream, M, N, K, alpha, A, lda, B, ldb,
                beta, C, ldc, D, ldd);
}

}  // namespace smem::tc_gemm
