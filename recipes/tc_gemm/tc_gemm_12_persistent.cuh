/// \file tc_gemm_12_persistent.cuh
/// \brief Step 12, a persistent kernel with a tile scheduler, and the epilogue through shared
/// memory with a TMA store.
///
/// Change from step 11: one block per SM stays resident and walks the tiles of D (tile blockIdx.x,
/// then gridDim.x further, ...). The ring does not restart between tiles: the producer runs on into
/// the next tile's windows while the consumers finish the last one and write it out, so the loads
/// of tile i + 1 overlap the epilogue of tile i, and the block's setup (barriers, tensor-map fetch)
/// is paid once per SM instead of once per tile. The first wgmma of a tile overwrites the
/// accumulators (scale-d = 0) instead of zeroing 128 registers.
///
/// The epilogue: each consumer warpgroup converts its 64 x 256 accumulators to bf16 pairs, then
/// writes them one 64 x 64 panel at a time into a swizzled staging buffer (TmaTile, conflict-free
/// 4-byte writes), and one thread stores the panel with `cp.async.bulk.tensor` (rows past M are
/// clipped by the copy; a panel that ends inside a 16-byte chunk of a row is stored by the threads;
/// store_tile_tma in the kit: pack_tile, then the panel stores of store_packed_tma, which step 14
/// calls apart). Two staging buffers per warpgroup alternate, so writing a panel overlaps storing
/// the one before. D too must then have 16-byte aligned rows (cudaErrorInvalidValue otherwise).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "tc_gemm_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "tc_gemm_12_persistent.cuh needs wgmma and setmaxnreg: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::tc_gemm {

/// Step 11's tile, ring and warpgroups, plus two 64 x 64 staging panels per consumer.
using PersistentShape = PersistentShapeOf<256, 4>;

/// The kernel of step 12, which stores D with TMA: (a_map, b_map, d_map, M, N, K, alpha, beta, C,
/// ldc, D, ldd); D itself for the columns TMA cannot store alone (see store_packed_panel).
using TmaStoreKernel = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, int, int, int, float, float,
                                const bf16*, int, bf16*, int);

//! [persistent kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    persistent_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                      const __grid_constant__ CUtensorMap d_map, int M, int N, int K, float alpha, float beta,
                      const bf16* C, int ldc, bf16* D, int ldd) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK, kStages = S::kStages;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kStages], empty[kStages];
  bf16* smem = reinterpret_cast<bf16*>(S::LA::align(smem_raw));
  const int tiles_n = int(tiles(N, BN)), tiles_k = int(tiles(K, BK));
  const int num_tiles = int(tiles(M, BM)) * tiles_n;  // far below 2^31 - gridDim.x: M N <= kMaxOutputElements

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], S::kConsumers);
    fence_barrier_init();
  }
  __syncthreads();

  if (threadIdx.x < 128) {  // producer: every window of every tile of this block, in order
    regs_down<S::kProducerRegs>();
    if (threadIdx.x == 0) {
      int it = 0;  // windows issued so far: stage it % kStages, its use number
                   // it / kStages (cut back after each tile: ring_after_tile)
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        for (int kt = 0; kt < tiles_k; ++kt, ++it) {
          const int s = it % kStages;
          if (it >= kStages) mbar_wait(&empty[s], unsigned(it / kStages - 1) % 2);
          S::load(smem + s * S::kElems, &a_map, &b_map, tile / tiles_n * BM, tile % tiles_n * BN, kt, &full[s]);
        }
        it = ring_after_tile<kStages>(it);
      }
    }
    return;
  }

  regs_up<S::kConsumerRegs>();
  const int wg = warpgroup() - 1;
  const RingDescs<S> descs(smem);
  bf16* staging = smem + kStages * S::kElems + wg * 2 * S::kPanelElems;
  float acc[BN / 2];
  int it = 0;
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    for (int kt = 0; kt < tiles_k; ++kt, ++it) {
      const int s = it % kStages;
      mbar_wait(&full[s], unsigned(it / kStages) % 2);
      fence_acc(acc);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK; kk += 16)
        wgmma_tile<BN>(acc, descs.a(s, 64 * wg, kk), descs.b(s, kk), kt > 0 || kk > 0);
      wgmma_commit();
      wgmma_wait<1>();
      fence_acc(acc);
      if (kt > 0 && threadIdx.x % 128 == 0) mbar_arrive(&empty[(it - 1) % kStages]);
    }
    wgmma_wait<0>();
    fence_acc(acc);
    if (threadIdx.x % 128 == 0) mbar_arrive(&empty[(it - 1) % kStages]);  // the tile's last window
    store_tile_tma<BN, typename S::LD>(acc, staging, &d_map, tile / tiles_n * BM + 64 * wg, tile % tiles_n * BN, M, N,
                                       alpha, beta, C, ldc, D, ldd, 1 + wg);
    it = ring_after_tile<kStages>(it);
  }
  if (threadIdx.x % 128 == 0) tma_store_wait_read<0>();  // staging must outlive the stores' reads
#else
  __trap();  // built for a target without wgmma (sm_90 without "a", or sm_100)
#endif
}
//! [persistent kernel]

/// The plan of step 12: one block per SM (at most one per tile); null unless A, B and D have
/// 16-byte aligned rows and M N <= kMaxOutputElements (checked before the device is asked).
inline Plan<TmaStoreKernel> persistent_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb,
                                            const bf16*, int, const bf16* D, int ldd) {
  using S = PersistentShape;
  const long long tiles_mn = tiles(M, S::kBM) * tiles(N, S::kBN);
  const bool fits = static_cast<long long>(M) * N <= kMaxOutputElements;
  const int sms = fits && tma_rows(A, lda) && tma_rows(B, ldb) && tma_rows(D, ldd) ? detail::gpu_key().sms : 0;
  return grid_plan<TmaStoreKernel>(sms > 0 ? persistent_kernel<S> : nullptr, tiles_mn < sms ? tiles_mn : sms,
                                   dim3(S::kThreads), S::kSmemBytes);
}

/// D = alpha * A * B + beta * C: step 11 made persistent, with a TMA-store epilogue.
inline cudaError_t persistent(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                              float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return launch_tma<PersistentShape>(persistent_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm
