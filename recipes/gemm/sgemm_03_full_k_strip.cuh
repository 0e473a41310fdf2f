/// \file sgemm_03_full_k_strip.cuh
/// \brief Step 3, full-K strip: a block stages a whole 16-row strip of A and 16-column strip of B
/// in dynamic shared memory, then computes its 16 x 16 tile of C from there.
///
/// Change from step 2: before computing, the block copies rows m0..m0+15 of A (all K columns)
/// and columns n0..n0+15 of B (all K rows) into shared memory, once. Each element of A and B
/// that the block needs is then read from global memory once per block instead of once per
/// thread: 16 times fewer global loads. The price is the size: (16 (K + 1) + 16 K) floats of
/// shared memory per block, dynamic because it depends on K. Above 48 KB the kernel must be
/// opted in with `cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...)`;
/// a K whose strips exceed the device's opt-in limit (227 KB on Hopper, so K <= 1815) cannot run
/// and the launcher returns cudaErrorInvalidValue. Even where it runs, a block holding
/// 128 KB (K = 1024) leaves room for one block per SM: 8 warps to hide every latency, and no
/// overlap between the load phase and the compute phase. The sliding window of step 4 fixes both.
/// The A strip's rows are K + 1 floats apart so that the two rows a warp reads sit in different
/// banks whatever K is.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_common.cuh"

namespace smem::gemm {

inline constexpr int kStrip = 16;  ///< rows of A / columns of B (and C tile side) per block

/// Word offsets in the dynamic shared buffer: the A strip (kStrip rows of K + 1 floats), then the
/// B strip (K rows of kStrip floats).
__host__ __device__ constexpr int strip_a_offset(int K, int r, int k) { return r * (K + 1) + k; }
__host__ __device__ constexpr int strip_b_offset(int K, int k, int c) {
  return kStrip * (K + 1) + k * kStrip + c;
}
/// Dynamic shared memory the kernel needs for a given K (any K >= 0: 64-bit).
constexpr std::size_t full_k_smem_bytes(int K) {
  return (kStrip * (std::size_t(K) + 1) + std::size_t(K) * kStrip) * sizeof(float);
}

//! [full-K kernel]
static __global__ void __launch_bounds__(kStrip* kStrip) full_k_strip_kernel(
    int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  extern __shared__ float strip[];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const TileCoord t = row_major_tile(tiles(N, kStrip));
  const int m0 = t.m * kStrip, n0 = t.n * kStrip;
  // Load phase: row m0 + ty of A, 16 consecutive floats per half-warp; rows k of the B strip.
  for (int k = tx; k < K; k += kStrip)
    strip[strip_a_offset(K, ty, k)] = m0 + ty < M ? A[std::size_t(m0 + ty) * lda + k] : 0.0f;
  for (int k = ty; k < K; k += kStrip)
    strip[strip_b_offset(K, k, tx)] = n0 + tx < N ? B[std::size_t(k) * ldb + n0 + tx] : 0.0f;
  __syncthreads();  // both strips complete before any thread reads them
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += strip[strip_a_offset(K, ty, k)] * strip[strip_b_offset(K, k, tx)];
  if (m0 + ty < M && n0 + tx < N) update_c(&C[std::size_t(m0 + ty) * ldc + n0 + tx], acc, alpha, beta);
}
//! [full-K kernel]

/// The largest K this step accepts on the current device (0 if the device cannot be queried).
inline int full_k_max_k() {
  int dev = 0, optin = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  // 4 * (16 (K + 1) + 16 K) <= optin
  return (optin / int(sizeof(float)) - kStrip) / (2 * kStrip);
}

/// The plan: a null kernel when the grid is too large (decided before any CUDA call) or the
/// strips of this K do not fit the device's shared memory (a device query).
inline Plan<GemmKernel> full_k_strip_plan(int M, int N, int K, const float*, int, const float*, int, const float*,
                                          int) {
  auto p = grid_plan(full_k_strip_kernel, tile_blocks(M, N, kStrip, kStrip), dim3(kStrip, kStrip));
  if (p.kernel == nullptr || K > full_k_max_k()) return {nullptr, p.grid, p.block, 0};
  p.smem = unsigned(full_k_smem_bytes(K));
  return p;
}

/// C = alpha * A * B + beta * C, row-major, with full-K strips of A and B in shared memory.
/// Precondition: K <= full_k_max_k() (checked after the argument checks and the grid's size, with
/// a device query; cudaErrorInvalidValue otherwise, C untouched).
inline cudaError_t full_k_strip(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                                float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(full_k_strip_plan(M, N, K, A, lda, B, ldb, C, ldc), stream, M, N, K, alpha, A, lda, B, ldb, beta,
                C, ldc);
}

}  // namespace smem::gemm
