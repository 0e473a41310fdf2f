/// \file tc_gemm_13_cluster.cuh
/// \brief Step 13, clusters of two blocks with TMA multicast of the shared B tile, and a tile order
/// (rasterization) chosen for L2 reuse.
///
/// Change from step 12: the two blocks of a cluster compute vertically adjacent tiles of D, which
/// need the same B tile in every window. Each block loads its own A tile and only half of B's
/// panels, with `.multicast::cluster`: one read of L2 lands in both blocks' shared memory and
/// completes on both blocks' `full` barriers, so L2-to-SM traffic for B halves. Since a block's
/// copy now writes into its neighbour's stage too, a stage is free only when the consumers of both
/// blocks have released it: each consumer warpgroup arrives on the `empty` barrier of both blocks
/// (`mapa` gives the neighbour's address of the same barrier), which counts four arrivals. The
/// blocks synchronize as a cluster after initializing their barriers and before they exit, so no
/// copy or arrival reaches a block that is not there.
///
/// The tile scheduler walks pairs of tiles in groups of kGroupRows pair-rows, column by column
/// inside a group: the blocks running at the same time share a few A row-panels and B
/// column-panels, which stay in L2, instead of sweeping all of B for every row of tiles. Where in
/// that walk each cluster starts is a kernel argument (ClusterOrder): here cluster c starts at
/// place c; step 15 chooses the places from the GPU's layout. The epilogue is step 12's.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "tc_gemm_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "tc_gemm_13_cluster.cuh needs wgmma and thread block clusters: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::tc_gemm {

/// Step 12's tile (128 x BN, a ring of Stages) in clusters of ClusterM blocks along M, the tiles
/// walked in groups of GroupRows cluster-rows.
template <int BN, int Stages, int ClusterM, int GroupRows>
struct ClusterShapeOf : PersistentShapeOf<BN, Stages> {
  static constexpr int kClusterM = ClusterM, kGroupRows = GroupRows;
  static constexpr int kEmptyArrivals = PersistentShapeOf<BN, Stages>::kConsumers * kClusterM;
  static_assert(BN / 64 % ClusterM == 0, "each block multicasts a whole number of B panels");
};
/// Step 13's shape: step 12's tile, clusters of two, groups of 8 pair-rows.
using ClusterShape = ClusterShapeOf<256, 4, 2, 8>;

//! [cluster helpers]
/// The same box written to the same offset in the shared memory of every block of the cluster in
/// `mask`, completing on the barrier at the same offset in each.
__device__ __forceinline__ void tma_load_multicast(bf16* dst, const CUtensorMap* map, int c, int r, std::uint64_t* bar,
                                                   std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
      "complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(c), "r"(r), "r"(smem_u32(bar)), "h"(mask)
      : "memory");
}
//! [cluster helpers]

/// Where each cluster of a launch starts in the tile walk: cluster c takes places place[c],
/// place[c] + clusters, ... of the grouped walk; a permutation of 0 to clusters - 1.
struct ClusterOrder {
  static constexpr int kMax = 256;  ///< the most clusters a launch has (cluster_plan_with)
  unsigned short place[kMax];
};

/// The kernel of steps 13 to 16: step 12's, and where its clusters start (ClusterOrder).
using ClusterKernel = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, int, int, int, float, float,
                               const bf16*, int, bf16*, int, const ClusterOrder);

/// Every cluster at its own index: cluster c starts at place c.
inline ClusterOrder index_order(const Plan<ClusterKernel>&) {
  ClusterOrder order = {};
  for (int c = 0; c < ClusterOrder::kMax; ++c) order.place[c] = static_cast<unsigned short>(c);
  return order;
}

//! [cluster kernel]
template <class S>
__global__ void __cluster_dims__(S::kClusterM, 1, 1) __launch_bounds__(S::kThreads, 1)
    cluster_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
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
    auto release = [&](int s) {  // on the stage's empty barrier of every block of the cluster
      if (threadIdx.x % 128 == 0)
        for (unsigned cta = 0; cta < unsigned(kCM); ++cta) mbar_arrive_cluster(&empty[s], cta);
    };
    float acc[BN / 2];
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
        wgmma_wait<1>();
        fence_acc(acc);
        if (kt > 0) release((it - 1) % kStages);
      }
      wgmma_wait<0>();
      fence_acc(acc);
      release((it - 1) % kStages);
      store_tile_tma<BN, typename S::LD>(acc, staging, &d_map, m0 + 64 * wg, n0, M, N, alpha, beta, C, ldc, D, ldd,
                                         1 + wg);
      it = ring_after_tile<kStages>(it);
    }
    if (threadIdx.x % 128 == 0) tma_store_wait_read<0>();
  }
  cluster_sync();  // no block leaves while its neighbour may still copy into it or arrive on it
#else
  __trap();  // built for a target without wgmma (sm_90 without "a", or sm_100)
#endif
}
//! [cluster kernel]

/// The plan of `kernel`, a kernel of shape S: a whole number of clusters, one block per SM at
/// most, no more clusters than cluster-tiles or than ClusterOrder holds; null unless A, B and D
/// have 16-byte aligned rows and M N <= kMaxOutputElements (checked before the device is asked).
template <class S>
Plan<ClusterKernel> cluster_plan_with(ClusterKernel kernel, int M, int N, const bf16* A, int lda, const bf16* B,
                                      int ldb, const bf16* D, int ldd) {
  const long long pairs = tiles(M, S::kBM * S::kClusterM) * tiles(N, S::kBN);
  const bool fits = static_cast<long long>(M) * N <= kMaxOutputElements;
  const int sms = fits && tma_rows(A, lda) && tma_rows(B, ldb) && tma_rows(D, ldd) ? detail::gpu_key().sms : 0;
  const int clusters = std::min(sms / S::kClusterM, ClusterOrder::kMax);
  return grid_plan<ClusterKernel>(clusters > 0 ? kernel : nullptr,
                                  S::kClusterM * (pairs < clusters ? pairs : clusters), dim3(S::kThreads),
                                  S::kSmemBytes);
}

/// The plan of step 13.
inline Plan<ClusterKernel> cluster_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*,
                                         int, const bf16* D, int ldd) {
  return cluster_plan_with<ClusterShape>(cluster_kernel<ClusterShape>, M, N, A, lda, B, ldb, D, ldd);
}

/// D = alpha * A * B + beta * C: step 12 in clusters of two with B multicast, grouped tile order.
inline cudaError_t cluster(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                           const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return launch_tma<ClusterShape>(cluster_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream,
                                  index_order);
}

}  // namespace smem::tc_gemm
