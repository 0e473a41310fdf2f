/// \file tc_gemm_08_tma.cuh
/// \brief Step 8, TMA loads completed on an mbarrier: Hopper's copy engine fills the 128-byte
/// swizzled tiles that step 6's threads filled with `cp.async`; the math is still mma.sync.
///
/// Change from step 6: one thread per block issues each stage's copies. A tensor map (made on the
/// host with `cuTensorMapEncodeTiled`, reached through the runtime's driver entry point) describes
/// A and B; `cp.async.bulk.tensor` copies a whole box of 64 columns by up to 256 rows, swizzles it
/// on the way (TmaTile: step 5's XOR, which ldmatrix reads without conflicts) and zero-fills what
/// lies past the matrix, so no thread computes an address or a bound. The copy reports its bytes to
/// the stage's mbarrier (complete_tx); the threads wait on the barrier's phase instead of
/// `cp.async.wait_group`, and one `__syncthreads` per window still tells the issuing thread that a
/// stage is free. The 256 threads now spend their issue slots on ldmatrix and mma.sync only.
/// The warp loop is step 3's (fragments loaded per step of 16, tiles in row order), not step 6's
/// later one (LaneFrags, fragments double-buffered, grouped tile order), so the comparison with
/// step 6 also carries those differences.
///
/// The tensor map's stride rule: A and B must have 16-byte aligned rows (base 16-byte aligned,
/// leading dimension a multiple of 8). Other operands are rejected with cudaErrorInvalidValue;
/// steps 1 to 7 take them.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "tc_gemm_sm90.cuh"
#include "tc_gemm_sm80.cuh"  // the mma.sync warp tile: the one step that takes both kits

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "tc_gemm_08_tma.cuh needs TMA and mbarrier transactions: compile for sm_90 or newer (e.g. -arch=sm_90a)"
#endif

namespace smem::tc_gemm {

/// Step 6's block, warp and stage shape (128 x 256 x 64, 8 warps of 64 x 64, 3 stages) on the tiles
/// TMA writes.
struct TmaMmaShape : TmaStage<128, 256, 64> {
  static constexpr int kBM = 128, kBN = 256, kBK = 64, kWM = 64, kWN = 64, kStages = 3;
  static constexpr int kWarpsN = kBN / kWN, kThreads = 32 * (kBM / kWM) * kWarpsN;
  static constexpr int kMI = kWM / 16, kNJ = kWN / 8;
  static constexpr unsigned kSmemBytes = smem_bytes(kStages);
};

//! [tma kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    tma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, int M, int N,
               int K, float alpha, float beta, const bf16* C, int ldc, bf16* D, int ldd) {
  constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK, kStages = S::kStages;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kStages];  // phase n of full[s]: window s + n kStages has landed
  bf16* smem = reinterpret_cast<bf16*>(S::LA::align(smem_raw));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const TileCoord t = row_major_tile(int(tiles(N, BN)));
  const int m0 = t.m * BM, n0 = t.n * BN;
  const int wm = warp / S::kWarpsN * S::kWM, wn = warp % S::kWarpsN * S::kWN;
  const int tiles_k = int(tiles(K, BK));

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1);
    fence_barrier_init();
  }
  __syncthreads();

  // Thread 0: window kt into stage s, one box of A and BN / 64 boxes of B, all on full[s].
  auto issue = [&](int s, int kt) { S::load(smem + s * S::kElems, &a_map, &b_map, m0, n0, kt, &full[s]); };
  if (threadIdx.x == 0)
    for (int s = 0; s < kStages - 1 && s < tiles_k; ++s) issue(s, s);

  float acc[S::kMI][S::kNJ][4] = {};
  for (int kt = 0; kt < tiles_k; ++kt) {
    __syncthreads();  // every warp is past window kt - 1: its stage takes window
                      // kt + kStages - 1
    if (threadIdx.x == 0 && kt + kStages - 1 < tiles_k) issue((kt + kStages - 1) % kStages, kt + kStages - 1);
    const int s = kt % kStages;
    mbar_wait(&full[s], unsigned(kt / kStages) % 2);
    const bf16* As = smem + s * S::kElems;
    const bf16* Bs = As + S::kAElems;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a[S::kMI][4], b[S::kNJ][2];
      load_a_frags<S::kMI, typename S::LA>(a, As, wm, kk, lane);
      load_b_frags<S::kNJ, typename S::LB>(b, Bs, wn, kk, lane);
      warp_mma(acc, a, b);
    }
  }
  store_acc(acc, m0 + wm, n0 + wn, lane, M, N, alpha, beta, C, ldc, D, ldd);
}
//! [tma kernel]

/// The plan of step 8: null unless A and B have 16-byte aligned rows (tma_rows).
inline Plan<TmaKernel> tma_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*, int,
                                const bf16*, int) {
  using S = TmaMmaShape;
  return grid_plan<TmaKernel>(tma_rows(A, lda) && tma_rows(B, ldb) ? tma_kernel<S> : nullptr,
                              tiles(M, S::kBM) * tiles(N, S::kBN), dim3(S::kThreads), S::kSmemBytes);
}

/// D = alpha * A * B + beta * C: TMA into swizzled stages, mma.sync from them.
inline cudaError_t tma(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                       const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return launch_tma<TmaMmaShape>(tma_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm
