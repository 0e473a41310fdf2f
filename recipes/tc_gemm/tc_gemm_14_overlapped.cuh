/// \file tc_gemm_14_overlapped.cuh
/// \brief Step 14, the epilogue behind the next tile's wgmma groups.
///
/// Change from step 13, where both consumers store a finished tile while the tensor cores wait: a
/// consumer packs its finished tile into 64 registers of bf16 pairs (pack_tile), issues the next
/// tile's wgmma groups, which overwrite the fp32 accumulators, and stores the packed tile one
/// 64-column panel at a time (store_packed_panel_at) behind windows spread over the next tile
/// (panel_window): the stores overlap the tensor cores' work and interrupt it less than all at once.
/// A cluster of one block (a tuning candidate of step 16) loads as step 12 does.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "tc_gemm_13_cluster.cuh"

namespace smem::tc_gemm {

/// The window of the next tile behind whose wgmma group panel p of a finished tile is stored, for
/// BN / 64 panels and a tile of `windows` windows: the first at window 1, the others evenly after
/// it, the last by the tile's last window; all at window 1 (or 0) where the tile is too short.
template <int BN>
__host__ __device__ __forceinline__ int panel_window(int p, int windows) {
  constexpr int kPanels = BN / 64, kGaps = kPanels > 1 ? kPanels - 1 : 1;
  const int first = windows > 1 ? 1 : 0, stride = windows > kPanels ? (windows - 2) / kGaps : 0;
  return first + stride * p;
}
/// Panel p, chosen at run time (a chain of branches, so v stays in registers).
template <int BN, class LD, int P = 0>
__device__ __forceinline__ void store_packed_panel_at(const unsigned (&v)[BN / 4], int p, bf16* stage,
                                                      const CUtensorMap* d_map, int row0, int col0, int M, int N,
                                                      bf16* D, int ldd, int bar_id) {
  if constexpr (P < BN / 64) {
    if (p == P)
      store_packed_panel<BN, LD, P>(v, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
    else
      store_packed_panel_at<BN, LD, P + 1>(v, p, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
  }
}

//! [overlapped kernel]
template <class S>
__global__ void __cluster_dims__(S::kClusterM, 1, 1) __launch_bounds__(S::kThreads, 1)
    overlapped_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                   const __grid_constant__ CUtensorMap d_map, int M, int N, int K, float alpha, float beta,
                   const bf16* C, int ldc, bf16* D, int ldd, const __grid_constant__ ClusterOrder order) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK, kStages = S::kStages, kCM = S::kClusterM;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kStages], empty[kStages];
  bf16* smem = reinterpret_cast<bf16*>(S::LA::align(smem_raw));
  const unsigned rank = cluster_rank();
  const int tiles_n = int(tiles(N, BN)), tiles_k = int(tiles(K, BK));
  // Far below 2^31 - gridDim.x: the plan refuses M N > kMaxOutputElements.
  const int pair_rows = int(tiles(M, BM * kCM)), num_pairs = pair_rows * tiles_n;
  const int clusters = gridDim.x / kCM, cluster = order.place[blockIdx.x / kCM];
  // Pair q: its pair-row p.m and column p.n in the grouped order; this block takes row kCM p.m + rank.
  auto tile_of = [&](int q, int& m0, int& n0) {
    const TileCoord p = grouped_tile(q, S::kGroupRows, pair_rows, tiles_n);
    m0 = (p.m * kCM + int(rank)) * BM;
    n0 = p.n * BN;
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], S::kEmptyArrivals);
    fence_barrier_init();
  }
  cluster_sync();  // both blocks' barriers exist before either block copies or arrives

  if (threadIdx.x < 128) {  // producer
    regs_down<S::kProducerRegs>();
    if (threadIdx.x == 0) {
      int it = 0;
      for (int q = cluster; q < num_pairs; q += clusters) {
        int m0, n0;
        tile_of(q, m0, n0);
        for (int kt = 0; kt < tiles_k; ++kt, ++it) {
          const int s = it % kStages;
          if (it >= kStages) mbar_wait(&empty[s], unsigned(it / kStages - 1) % 2);  // both blocks released it
          bf16* As = smem + s * S::kElems;
          if constexpr (kCM == 1) {  // a cluster of one (a tuning candidate): step 12's loads
            S::load(As, &a_map, &b_map, m0, n0, kt, &full[s]);
            continue;
          }
          mbar_arrive_expect_tx(&full[s], S::kBytes);  // own A, all of B (half of it from the neighbour)
          tma_load(As, &a_map, kt * BK, m0, &full[s]);
#pragma unroll
          for (int p = int(rank) * (BN / 64 / kCM); p < int(rank + 1) * (BN / 64 / kCM); ++p)
            tma_load_multicast(As + S::kAElems + p * S::LB::kPanel, &b_map, n0 + 64 * p, kt * BK, &full[s],
                               (1u << kCM) - 1);
        }
        it = ring_after_tile<kStages>(it);
      }
    }
  } else {
    regs_up<S::kConsumerRegs>();
    const int wg = warpgroup() - 1;
    const RingDescs<S> descs(smem);
    bf16* staging = smem + kStages * S::kElems + wg * 2 * S::kPanelElems;
    auto release = [&](int s) {
      if (threadIdx.x % 128 != 0) return;
      if constexpr (kCM == 1) {
        mbar_arrive(&empty[s]);
      } else {
        for (unsigned cta = 0; cta < unsigned(kCM); ++cta) mbar_arrive_cluster(&empty[s], cta);
      }
    };
    float acc[BN / 2];
    unsigned done[BN / 4];  // the last tile in bf16, its panels stored behind the next tile's wgmma groups
    int done_row = -1, done_col = 0, done_panel = 0;
    const int first_window = panel_window<BN>(0, tiles_k), window_step = panel_window<BN>(1, tiles_k) - first_window;
    int it = 0;
    for (int q = cluster; q < num_pairs; q += clusters) {
      int m0, n0;
      tile_of(q, m0, n0);
      for (int kt = 0; kt < tiles_k; ++kt, ++it) {
        const int s = it % kStages;
        mbar_wait(&full[s], unsigned(it / kStages) % 2);
        fence_acc(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16)
          wgmma_tile<BN>(acc, descs.a(s, 64 * wg, kk), descs.b(s, kk), kt > 0 || kk > 0);
        wgmma_commit();
        // The last tile's panels, spread over this tile's windows.
        while (done_row >= 0 && (kt >= first_window + window_step * done_panel || kt == tiles_k - 1)) {
          store_packed_panel_at<BN, typename S::LD>(done, done_panel, staging, &d_map, done_row, done_col, M, N, D, ldd,
                                                    1 + wg);
          if (++done_panel == BN / 64) done_row = -1;
        }
        wgmma_wait<1>();
        fence_acc(acc);
        if (kt > 0) release((it - 1) % kStages);
      }
      wgmma_wait<0>();
      fence_acc(acc);
      release((it - 1) % kStages);
      pack_tile<BN>(acc, done, m0 + 64 * wg, n0, M, N, alpha, beta, C, ldc);
      done_row = m0 + 64 * wg, done_col = n0, done_panel = 0;
      it = ring_after_tile<kStages>(it);
    }
    if (done_row >= 0)
      store_packed_tma<BN, typename S::LD>(done, staging, &d_map, done_row, done_col, M, N, D, ldd, 1 + wg);
    if (threadIdx.x % 128 == 0) tma_store_wait_read<0>();
  }
  cluster_sync();  // no block leaves while its neighbour may still copy into it or arrive on it
#else
  __trap();  // built for a target without wgmma (sm_90 without "a", or sm_100)
#endif
}
//! [overlapped kernel]

/// The plan of step 14's kernel in shape S (step 16's shapes too).
template <class S>
Plan<ClusterKernel> overlapped_plan_with(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*,
                                         int, const bf16* D, int ldd) {
  return cluster_plan_with<S>(overlapped_kernel<S>, M, N, A, lda, B, ldb, D, ldd);
}
/// The plan of step 14.
inline constexpr auto overlapped_plan = overlapped_plan_with<ClusterShape>;

/// D = alpha * A * B + beta * C: step 13 with each tile's stores behind the next tile's wgmma groups.
inline cudaError_t overlapped(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                              float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return launch_tma<ClusterShape>(overlapped_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream,
                                  index_order);
}

}  // namespace smem::tc_gemm
