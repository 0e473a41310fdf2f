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
/// column-panels, which stay in L2, instead of sweeping all of B for every row of tiles.
///
/// Which cluster takes which place in that walk follows the GPU's processing clusters (GPCs). When
/// several SMs of one GPC ask L2 for the same sector at about the same time, the L2 request
/// coalescer serves them with one read, so the clusters of one GPC take 8 consecutive pairs of
/// tiles along one pair-row (gpc_position): they read the same A tile in step. No instruction names
/// a GPC, so a one-time setup per device, prepare_cluster_order(), measures where clusters run, and
/// every later launch passes its clusters' order by GPC to the kernel (ClusterOrder, cluster_order).
/// The launcher itself never measures (it allocates and synchronizes nothing, and may be captured in
/// a graph as the process's first call): without the setup it walks the clusters by index, the same
/// tiles and the same D, with fewer reads merged.
///
/// The epilogue moves behind the next tile's wgmma groups: a consumer packs its finished tile into
/// 64 registers of bf16 pairs (pack_tile), issues the next tile's wgmma groups, which overwrite the
/// fp32 accumulators, and writes the packed tile out one 64-column panel at a time through the
/// staging panels to TMA stores (store_packed_panel_at), behind windows spread over the tile
/// (panel_window). In step 12 both consumers convert and store while the tensor cores wait for
/// them; here the stores overlap the tensor cores' work, and spread out they interrupt it less
/// than all at once behind the first window.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>

#include "tc_gemm_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "tc_gemm_13_cluster.cuh needs wgmma and thread block clusters: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::tc_gemm {

/// Step 12's tile (128 x BN, a ring of Stages) in clusters of ClusterM blocks along M, the tiles
/// walked in groups of GroupRows cluster-rows; D stored through shared memory and TMA, or (with
/// TmaEpilogue false) straight from the registers.
template <int BN, int Stages, int ClusterM, int GroupRows, bool TmaEpilogue = true>
struct ClusterShapeOf : PersistentShapeOf<BN, Stages> {
  static constexpr int kClusterM = ClusterM, kGroupRows = GroupRows;
  static constexpr bool kTmaEpilogue = TmaEpilogue;
  static constexpr int kEmptyArrivals = PersistentShapeOf<BN, Stages>::kConsumers * kClusterM;
  static_assert(BN / 64 % ClusterM == 0, "each block multicasts a whole number of B panels");
};
/// Step 13's shape: step 12's tile, clusters of two, groups of 8 pair-rows.
using ClusterShape = ClusterShapeOf<256, 4, 2, 8>;

//! [cluster helpers]
/// This block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
/// Arrives on the barrier at the same shared-memory offset as `bar` in block `cta` of the cluster.
/// Plain (.release.cta) semantics: the only reads it orders are the wgmma reads already waited
/// for, and a .release.cluster arrive would add a memory fence to every release of a stage.
__device__ __forceinline__ void mbar_arrive_cluster(std::uint64_t* bar, unsigned cta) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
      "r"(cta)
      : "memory");
}
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
/// Every thread of every block of the cluster arrives, then waits for all the others.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait."
      "acquire.aligned;\n" ::
          : "memory");
}
//! [cluster helpers]

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

//! [cluster order]
/// The order of a launch's clusters by the GPC (GPU processing cluster: 16 or 18 SMs on the H100
/// and the H200) each one runs on: rank[c] is cluster c's place when the clusters are sorted by
/// GPC, so the clusters of one GPC have consecutive ranks (by index where nothing was measured).
struct ClusterOrder {
  static constexpr int kMax = 256;  ///< the most clusters a launch has (cluster_plan_with)
  unsigned short rank[kMax];
};

/// The place in the tile walk of the cluster of rank k among n: the walk's first n tiles, laid out
/// as grouped_tile lays them (place = group_rows * column + row), taken in runs of 8 along one
/// pair-row. So the clusters of one GPC work on the same pair-row, and read the same A tile at
/// about the same time: the L2 request coalescer merges the identical reads of one GPC into one.
__host__ __device__ inline int gpc_position(int k, int n, int group_rows) {
  if (k >= n) return k;
  for (int seen = 0, base = 0;; base += 8 * group_rows)
    for (int r = 0; r < group_rows; ++r)
      for (int j = 0; j < 8; ++j)
        if (const int p = base + group_rows * j + r; p < n && seen++ == k) return p;
}
//! [cluster order]

/// The kernel of steps 13 and 14: step 12's, and the order of its clusters (cluster_order).
using ClusterKernel = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, int, int, int, float, float,
                               const bf16*, int, bf16*, int, const ClusterOrder);

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
  const int clusters = gridDim.x / kCM, cluster = gpc_position(order.rank[blockIdx.x / kCM], clusters, S::kGroupRows);
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
  cluster_sync();  // both blocks' barriers exist before either block copies or
                   // arrives

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
        if constexpr (S::kTmaEpilogue)  // the last tile's panels, spread over this tile's windows
          while (done_row >= 0 && (kt >= first_window + window_step * done_panel || kt == tiles_k - 1)) {
            store_packed_panel_at<BN, typename S::LD>(done, done_panel, staging, &d_map, done_row, done_col, M, N, D,
                                                      ldd, 1 + wg);
            if (++done_panel == BN / 64) done_row = -1;
          }
        wgmma_wait<1>();
        fence_acc(acc);
        if (kt > 0) release((it - 1) % kStages);
      }
      wgmma_wait<0>();
      fence_acc(acc);
      release((it - 1) % kStages);
      if constexpr (S::kTmaEpilogue) {
        pack_tile<BN>(acc, done, m0 + 64 * wg, n0, M, N, alpha, beta, C, ldc);
        done_row = m0 + 64 * wg, done_col = n0, done_panel = 0;
      } else {  // a tuning candidate: step 11's stores straight from the registers
        store_wgmma_acc<BN>(acc, m0 + 64 * wg, n0, M, N, alpha, beta, C, ldc, D, ldd);
      }
      it = ring_after_tile<kStages>(it);
    }
    if constexpr (S::kTmaEpilogue)
      if (done_row >= 0)
        store_packed_tma<BN, typename S::LD>(done, staging, &d_map, done_row, done_col, M, N, D, ldd, 1 + wg);
    if (threadIdx.x % 128 == 0) tma_store_wait_read<0>();
  }
  cluster_sync();  // no block leaves while its neighbour may still copy into it
                   // or arrive on it
#else
  __trap();  // built for a target without wgmma (sm_90 without "a", or sm_100)
#endif
}
//! [cluster kernel]

namespace detail {
/// Writes the SM each block runs on.
static __global__ void smid_kernel(unsigned* sm_of_block) {
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
  if (threadIdx.x == 0) sm_of_block[blockIdx.x] = sm;
}

/// smid_kernel over `blocks` blocks of 32 threads in clusters of `cluster`, asking `smem` bytes each.
inline cudaError_t launch_smid(unsigned* out, int blocks, int cluster, unsigned smem, cudaStream_t stream) {
  cudaLaunchAttribute dims = {};
  dims.id = cudaLaunchAttributeClusterDimension;
  dims.val.clusterDim.x = unsigned(cluster), dims.val.clusterDim.y = 1, dims.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(blocks)), cfg.blockDim = dim3(32), cfg.dynamicSmemBytes = smem, cfg.stream = stream;
  cfg.attrs = &dims, cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, smid_kernel, out);
}

/// What prepare_cluster_order measured on one device for clusters of one size: the GPC label of each
/// of the first `clusters` clusters of a launch that fills the GPU with them (clusters of one GPC
/// share a label).
struct MeasuredGpcs {
  int clusters;
  unsigned short gpc[ClusterOrder::kMax];
};

/// The measurements, one per device (0 to kMaxDevices - 1) and cluster size cm (1 or 2): slot
/// 2 device + cm - 1.
inline PerDevice<MeasuredGpcs, 2 * kMaxDevices>& measured_gpcs_slots() {
  static PerDevice<MeasuredGpcs, 2 * kMaxDevices> slots;
  return slots;
}

/// The measurement of `device` for clusters of cm blocks once made, else null (prepare_cluster_order
/// has not made it).
inline const MeasuredGpcs* measured_gpcs(int device, int cm) {
  if (device < 0 || device >= kMaxDevices || cm < 1 || cm > 2) return nullptr;
  return measured_gpcs_slots().find(2 * device + cm - 1);
}

/// The GPC of each of `clusters` clusters (1 to ClusterOrder::kMax) of a launch of clusters of `cm`
/// blocks (1 or 2) that take a whole SM each (ClusterShape's shared memory), on the current device,
/// as labels in `gpc`: two SMs share a label when a cluster of 8 small blocks ran on both (a cluster
/// never spans two GPCs). It allocates (stream-ordered) and synchronizes on a stream of its own.
/// Fixed-size host arrays: nothing it does can throw.
inline cudaError_t measure_cluster_gpcs(int cm, int clusters, unsigned short (&gpc)[ClusterOrder::kMax]) {
  constexpr int kProbes = 8 * 512;  // blocks in clusters of 8 that tell which SMs share a GPC
  constexpr int kMaxSmId = 1024;    // the SM ids (%smid) the union-find holds
  const int blocks = clusters * cm;
  unsigned sm[2 * ClusterOrder::kMax + kProbes];  // the SM of each block: the launch's, then the probes'
  cudaStream_t st;
  cudaError_t e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  if (e == cudaSuccess) {
    const std::size_t bytes = std::size_t(blocks + kProbes) * sizeof(unsigned);
    unsigned* d = nullptr;
    e = cudaMallocAsync(&d, bytes, st);
    if (e == cudaSuccess) {
      e = cudaFuncSetAttribute(smid_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(ClusterShape::kSmemBytes));
      if (e == cudaSuccess) e = launch_smid(d, blocks, cm, ClusterShape::kSmemBytes, st);
      if (e == cudaSuccess) e = launch_smid(d + blocks, kProbes, 8, 0, st);
      if (e == cudaSuccess) e = cudaMemcpyAsync(sm, d, bytes, cudaMemcpyDeviceToHost, st);
      const cudaError_t freed = cudaFreeAsync(d, st);
      if (e == cudaSuccess) e = freed;
    }
    const cudaError_t synced = cudaStreamSynchronize(st);
    if (e == cudaSuccess) e = synced;
    cudaStreamDestroy(st);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();  // a failed measurement leaves no error for the caller's next launch to report
    return e;
  }
  for (int b = 0; b < blocks + kProbes; ++b)
    if (sm[b] >= unsigned(kMaxSmId)) return cudaErrorNotSupported;
  int up[kMaxSmId];  // union-find over SM ids: one set per group of SMs that clusters of 8 joined
  std::iota(up, up + kMaxSmId, 0);
  auto root = [&](int x) {
    while (up[x] != x) x = up[x] = up[up[x]];
    return x;
  };
  for (int b = 0; b < kProbes; ++b) up[root(int(sm[blocks + b]))] = root(int(sm[blocks + b - b % 8]));
  for (int c = 0; c < clusters; ++c) gpc[c] = static_cast<unsigned short>(root(int(sm[c * cm])));
  return cudaSuccess;
}
}  // namespace detail

/// The one setup of steps 13 and 14, once per device: measures which GPC each cluster of a launch
/// that fills `device` runs on, for clusters of one and of two blocks, and keeps it for every later
/// launch on that device (cluster_order). Until then the launchers walk their clusters by index:
/// the same D, with fewer of the clusters' identical reads merged in L2. Unlike a launcher it
/// allocates, launches and synchronizes, so call it before capturing or timing; it does so on a
/// stream of its own in relaxed capture mode, so a capture under way in this thread neither
/// forbids nor records it. cudaSuccess once measured, by this call or an earlier one; else the
/// error, nothing kept (a later call measures again). Thread-safe; the current device stays.
inline cudaError_t prepare_cluster_order(int device) {
  if (device < 0 || device >= detail::kMaxDevices) return cudaErrorInvalidDevice;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaError_t e = cudaThreadExchangeStreamCaptureMode(&mode);
  if (e != cudaSuccess) return e;
  int current = 0, sms = 0;
  e = cudaGetDevice(&current);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e == cudaSuccess && current != device) e = cudaSetDevice(device);
  const bool switched = e == cudaSuccess && current != device;
  for (int cm = 1; cm <= 2 && e == cudaSuccess; ++cm) {
    const int clusters = std::min(sms / cm, ClusterOrder::kMax);
    detail::measured_gpcs_slots().made_once(2 * device + cm - 1, [&](detail::MeasuredGpcs& m) {
      e = clusters > 0 ? detail::measure_cluster_gpcs(cm, clusters, m.gpc) : cudaErrorNotSupported;
      m.clusters = clusters;
      return e == cudaSuccess;
    });
  }
  if (switched) cudaSetDevice(current);
  cudaThreadExchangeStreamCaptureMode(&mode);
  return e;
}

/// The ranks of clusters 0 to n - 1 (n <= ClusterOrder::kMax) sorted by their GPC labels gpc[0] to
/// gpc[n - 1], stably (by index within a GPC); an insertion sort, nothing allocated.
inline ClusterOrder rank_by_gpc(const unsigned short* gpc, int n) {
  int by_gpc[ClusterOrder::kMax];
  for (int i = 0; i < n; ++i) {
    int j = i;
    for (; j > 0 && gpc[by_gpc[j - 1]] > gpc[i]; --j) by_gpc[j] = by_gpc[j - 1];
    by_gpc[j] = i;
  }
  ClusterOrder order = {};
  for (int i = 0; i < n; ++i) order.rank[by_gpc[i]] = static_cast<unsigned short>(i);
  return order;
}

/// The order of a plan's clusters, what the launchers pass to the kernel: by GPC where
/// prepare_cluster_order measured this device for clusters of the plan's size (the labels of the
/// measurement's first clusters: a launch's clusters land where the measurement's did while nothing
/// else holds SMs), else by index. It allocates, synchronizes and measures nothing. Either way a
/// permutation of the clusters, so the walk is still one of the tiles: D is the same, only fewer
/// reads are merged where clusters land elsewhere.
inline ClusterOrder cluster_order(const Plan<ClusterKernel>& p) {
  cudaFuncAttributes fa = {};
  const int cm = cudaFuncGetAttributes(&fa, p.kernel) == cudaSuccess && fa.requiredClusterWidth > 0
                     ? fa.requiredClusterWidth
                     : 1;
  const int n = std::min(int(p.grid.x) / cm, ClusterOrder::kMax);
  int dev = 0;
  const detail::MeasuredGpcs* m = cudaGetDevice(&dev) == cudaSuccess ? detail::measured_gpcs(dev, cm) : nullptr;
  if (m != nullptr && n <= m->clusters) return rank_by_gpc(m->gpc, n);
  ClusterOrder order = {};
  for (int c = 0; c < n; ++c) order.rank[c] = static_cast<unsigned short>(c);
  return order;
}

/// The plan of `cluster_kernel<S>`: a whole number of clusters, one block per SM at most, no more
/// clusters than cluster-tiles or than ClusterOrder holds; null unless A, B and D have 16-byte
/// aligned rows and M N <= kMaxOutputElements (checked before the device is asked).
template <class S>
Plan<ClusterKernel> cluster_plan_with(int M, int N, const bf16* A, int lda, const bf16* B, int ldb, const bf16* D,
                                      int ldd) {
  const long long pairs = tiles(M, S::kBM * S::kClusterM) * tiles(N, S::kBN);
  const bool fits = static_cast<long long>(M) * N <= kMaxOutputElements;
  const int sms = fits && tma_rows(A, lda) && tma_rows(B, ldb) && tma_rows(D, ldd) ? detail::gpu_key().sms : 0;
  const int clusters = std::min(sms / S::kClusterM, ClusterOrder::kMax);
  return grid_plan<ClusterKernel>(clusters > 0 ? cluster_kernel<S> : nullptr,
                                  S::kClusterM * (pairs < clusters ? pairs : clusters), dim3(S::kThreads),
                                  S::kSmemBytes);
}

/// The plan of step 13.
inline Plan<ClusterKernel> cluster_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*,
                                         int, const bf16* D, int ldd) {
  return cluster_plan_with<ClusterShape>(M, N, A, lda, B, ldb, D, ldd);
}

/// D = alpha * A * B + beta * C: step 12 in clusters of two with B multicast, grouped tile order.
inline cudaError_t cluster(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                           const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return launch_tma<ClusterShape>(cluster_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream,
                                  cluster_order);
}

}  // namespace smem::tc_gemm
