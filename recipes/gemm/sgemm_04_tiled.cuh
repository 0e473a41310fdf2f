/// \file sgemm_04_tiled.cuh
/// \brief Step 4, tiled: a T x T tile of C per block, with a sliding T-wide window over K held in
/// two T x T shared tiles (T = 16 or 32), two barriers per window, zero-filled boundary tiles.
///
/// Change from step 3: instead of the whole K extent, the block keeps only the current window
/// k0..k0+T-1 of its A rows and B columns in shared memory (2 T^2 floats: 2 KB for T = 16, 8 KB
/// for T = 32), so any K runs and several blocks fit on an SM. Per window, each thread loads one
/// element of each tile (coalesced: a warp reads consecutive floats of a row), the first
/// `__syncthreads` makes the tiles complete, each thread does T multiply-adds from shared memory,
/// and the second `__syncthreads` keeps the next window's stores from overwriting a tile that a
/// slower warp is still reading. Elements outside A or B are stored as zeros, so the inner loop
/// needs no bounds checks and any M, N, K works. Each global element is loaded once per block:
/// T times fewer loads than step 2, so T = 32 moves half the bytes T = 16 does.
///
/// Shared-memory banks (checked by the host bank model on tile_offset()): in the inner loop a
/// warp reads `As[ty][k]` (one word for T = 32, whose warp is one row: a broadcast; two words in
/// different banks for T = 16) and `Bs[k][tx]` (consecutive words): one wavefront each. The
/// tiles are conflict-free as they are, which is why padding them (step 5) cannot help.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_common.cuh"

namespace smem::gemm {

//! [tile layout]
/// A T x T shared tile with rows Pad words longer than T: element (r, c) at word r (T + Pad) + c.
template <int T, int Pad>
struct TileLayout {
  static constexpr int kStride = T + Pad;
  static constexpr int kElements = T * kStride;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * kStride + c; }
};
//! [tile layout]

//! [tiled kernel]
template <int T, int Pad>
__global__ void __launch_bounds__(T* T) tiled_kernel(int M, int N, int K, float alpha,
                                                         const float* __restrict__ A, int lda,
                                                         const float* __restrict__ B, int ldb,
                                                         float beta, float* __restrict__ C, int ldc) {
  using L = TileLayout<T, Pad>;
  __shared__ float As[L::kElements], Bs[L::kElements];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const TileCoord t = row_major_tile(tiles(N, T));
  const int row = t.m * T + ty, col = t.n * T + tx;
  const float* a = A + std::size_t(row < M ? row : 0) * lda;  // this thread's row of A
  float acc = 0.0f;
  for (unsigned k0u = 0; k0u < unsigned(K); k0u += T) {  // unsigned: the last k0 += T may pass INT_MAX
    const int k0 = int(k0u);
    As[L::offset(ty, tx)] = row < M && k0 + tx < K ? a[k0 + tx] : 0.0f;
    Bs[L::offset(ty, tx)] = k0 + ty < K && col < N ? B[std::size_t(k0 + ty) * ldb + col] : 0.0f;
    __syncthreads();  // 1: the window's tiles are complete
#pragma unroll
    for (int k = 0; k < T; ++k) acc += As[L::offset(ty, k)] * Bs[L::offset(k, tx)];
    __syncthreads();  // 2: everyone is done reading before the next window is stored
  }
  if (row < M && col < N) update_c(&C[std::size_t(row) * ldc + col], acc, alpha, beta);
}
//! [tiled kernel]

/// The plan of tiled_kernel<T, Pad>; steps 4 (tiled 16 and 32) and 5 (padded) are this.
template <int T, int Pad>
Plan<GemmKernel> tiled_plan(int M, int N) {
  return grid_plan(tiled_kernel<T, Pad>, tile_blocks(M, N, T, T), dim3(T, T));
}

/// Launches tiled_kernel<T, Pad>.
template <int T, int Pad>
cudaError_t tiled(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                  float* C, int ldc, cudaStream_t stream) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(tiled_plan<T, Pad>(M, N), stream, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

inline Plan<GemmKernel> tiled_16_plan(int M, int N, int, const float*, int, const float*, int, const float*, int) {
  return tiled_plan<16, 0>(M, N);
}
inline Plan<GemmKernel> tiled_32_plan(int M, int N, int, const float*, int, const float*, int, const float*, int) {
  return tiled_plan<32, 0>(M, N);
}

/// C = alpha * A * B + beta * C, row-major, 16 x 16 tiles.
inline cudaError_t tiled_16(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                            float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return tiled<16, 0>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

/// C = alpha * A * B + beta * C, row-major, 32 x 32 tiles.
inline cudaError_t tiled_32(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                            float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return tiled<32, 0>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

}  // namespace smem::gemm
