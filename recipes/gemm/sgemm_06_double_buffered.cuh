/// \file sgemm_06_double_buffered.cuh
/// \brief Step 6, double-buffered 32 x 32 tiles: two copies of each tile, one barrier per window.
///
/// Change from step 4 (T = 32): the block owns two A tiles and two B tiles. While it computes
/// window t from buffer t % 2, each thread has already issued the global loads of window t + 1
/// into registers; after its multiply-adds it stores them into buffer (t + 1) % 2, and a single
/// `__syncthreads` ends the iteration. One barrier is enough because the two hazards of step 4
/// now involve different buffers:
///  - read-after-write: buffer (t + 1) % 2 is written before the barrier that ends iteration t
///    and read only after it;
///  - write-after-read: buffer (t + 1) % 2 was last read in iteration t - 1, and every thread
///    passed the barrier ending t - 1 after those reads, before writing it in iteration t.
/// The global-load latency of the next window now overlaps the current window's FMAs instead of
/// stalling the warp at the top of the loop, and the barrier count halves. The cost is 16 KB of
/// shared memory instead of 8 KB. It extends step 4: the same tile layout (TileLayout). These
/// 32 x 32 kernels are bound by shared-memory load instructions, which this does not change, so
/// expect little (the page has the measurement).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "sgemm_04_tiled.cuh"

namespace smem::gemm {

//! [double-buffered kernel]
static __global__ void __launch_bounds__(32 * 32) double_buffered_kernel(
    int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  constexpr int T = 32;
  using L = TileLayout<T, 0>;
  __shared__ float As[2][L::kElements], Bs[2][L::kElements];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const TileCoord tile = row_major_tile(tiles(N, T));
  const int row = tile.m * T + ty, col = tile.n * T + tx;
  const float* a = A + std::size_t(row < M ? row : 0) * lda;
  auto load_a = [&](int k0) { return row < M && k0 + tx < K ? a[k0 + tx] : 0.0f; };
  auto load_b = [&](int k0) { return k0 + ty < K && col < N ? B[std::size_t(k0 + ty) * ldb + col] : 0.0f; };

  As[0][L::offset(ty, tx)] = load_a(0);
  Bs[0][L::offset(ty, tx)] = load_b(0);
  __syncthreads();
  float acc = 0.0f;
  const int windows = tiles(K, T);
  for (int t = 0; t < windows; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < windows;
    float next_a = 0.0f, next_b = 0.0f;
    if (more) next_a = load_a((t + 1) * T), next_b = load_b((t + 1) * T);  // in flight during the FMAs
#pragma unroll
    for (int k = 0; k < T; ++k) acc += As[cur][L::offset(ty, k)] * Bs[cur][L::offset(k, tx)];
    if (more) As[cur ^ 1][L::offset(ty, tx)] = next_a, Bs[cur ^ 1][L::offset(ty, tx)] = next_b;
    __syncthreads();  // the only barrier: buffer cur ^ 1 complete, buffer cur free again
  }
  if (row < M && col < N) update_c(&C[std::size_t(row) * ldc + col], acc, alpha, beta);
}
//! [double-buffered kernel]

inline Plan<GemmKernel> double_buffered_plan(int M, int N, int, const float*, int, const float*, int, const float*,
                                             int) {
  return grid_plan(double_buffered_kernel, tile_blocks(M, N, 32, 32), dim3(32, 32));
}

/// C = alpha * A * B + beta * C, row-major, double-buffered 32 x 32 tiles.
inline cudaError_t double_buffered(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                                   int ldb, float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(double_buffered_plan(M, N, K, A, lda, B, ldb, C, ldc), stream, M, N, K, alpha, A, lda, B, ldb,
                beta, C, ldc);
}

}  // namespace smem::gemm
