/// \file tc_gemm_09_wgmma.cuh
/// \brief Step 9, `wgmma`: one warpgroup multiplies straight from the swizzled shared tiles through
/// descriptors, fed by TMA double buffering.
///
/// Change from step 8: no ldmatrix and no mma.sync. `wgmma.mma_async` is issued by a warpgroup (4
/// warps, 128 threads) at once and reads both operands from shared memory itself: a 64-bit
/// descriptor gives the tile's address, its 128-byte swizzle and the byte strides between its 8-row
/// groups (TmaTile::desc), so the layout TMA wrote is the layout the tensor cores read, with no
/// register copy of A or B. One instruction multiplies 64 x 16 by 16 x 128; the accumulators stay
/// in registers (64 per thread per m64 block). A is K-major (rows of 64 k); B, row-major K x N, is
/// MN-major, which the instruction's transpose flag for B accepts. The instruction is asynchronous:
/// the warpgroup commits a group and waits for it (wgmma.wait_group) before the stage is handed
/// back.
///
/// The block is one warpgroup with a 128 x 128 tile (two m64 blocks) and two stages: TMA fills one
/// while the tensor cores read the other. wgmma needs the arch-specific target sm_90a.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "tc_gemm_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "tc_gemm_09_wgmma.cuh needs wgmma: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::tc_gemm {

/// 128 x 128 x 64 block tile, one warpgroup, two stages.
struct WgmmaShape : TmaStage<128, 128, 64> {
  static constexpr int kBM = 128, kBN = 128, kBK = 64, kStages = 2, kThreads = 128;
  static constexpr unsigned kSmemBytes = smem_bytes(kStages);
};

//! [wgmma kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, int M, int N,
                 int K, float alpha, float beta, const bf16* C, int ldc, bf16* D, int ldd) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK, kStages = S::kStages;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kStages];
  bf16* smem = reinterpret_cast<bf16*>(S::LA::align(smem_raw));
  const TileCoord t = row_major_tile(int(tiles(N, BN)));
  const int m0 = t.m * BM, n0 = t.n * BN;
  const int tiles_k = int(tiles(K, BK));

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1);
    fence_barrier_init();
  }
  __syncthreads();
  auto issue = [&](int s, int kt) { S::load(smem + s * S::kElems, &a_map, &b_map, m0, n0, kt, &full[s]); };
  if (threadIdx.x == 0)
    for (int s = 0; s < kStages && s < tiles_k; ++s) issue(s, s);

  float acc[BM / 64][BN / 2] = {};
  for (int kt = 0; kt < tiles_k; ++kt) {
    const int s = kt % kStages;
    mbar_wait(&full[s], unsigned(kt / kStages) % 2);
    const bf16* As = smem + s * S::kElems;
    const bf16* Bs = As + S::kAElems;
#pragma unroll
    for (int i = 0; i < BM / 64; ++i) fence_acc(acc[i]);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16)
#pragma unroll
      for (int i = 0; i < BM / 64; ++i)
        wgmma_tile<BN>(acc[i], a_desc<typename S::LA>(As, 64 * i, kk), b_desc<typename S::LB>(Bs, kk), true);
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < BM / 64; ++i) fence_acc(acc[i]);
    __syncthreads();  // all four warps are done with stage s: it takes window kt
                      // + kStages
    if (threadIdx.x == 0 && kt + kStages < tiles_k) issue(s, kt + kStages);
  }
#pragma unroll
  for (int i = 0; i < BM / 64; ++i) store_wgmma_acc<BN>(acc[i], m0 + 64 * i, n0, M, N, alpha, beta, C, ldc, D, ldd);
#else
  __trap();  // built for a target without wgmma (sm_90 without "a", or sm_100)
#endif
}
//! [wgmma kernel]

/// The plan of step 9: null unless A and B have 16-byte aligned rows.
inline Plan<TmaKernel> wgmma_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*, int,
                                  const bf16*, int) {
  using S = WgmmaShape;
  return grid_plan<TmaKernel>(tma_rows(A, lda) && tma_rows(B, ldb) ? wgmma_kernel<S> : nullptr,
                              tiles(M, S::kBM) * tiles(N, S::kBN), dim3(S::kThreads), S::kSmemBytes);
}

/// D = alpha * A * B + beta * C: one warpgroup's wgmma on TMA double buffers.
inline cudaError_t wgmma(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                         const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return launch_tma<WgmmaShape>(wgmma_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm
