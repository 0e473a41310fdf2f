/// \file tc_gemm_15_gpc_order.cuh
/// \brief Step 15, clusters placed in the tile walk by the GPC they run on.
///
/// Change from step 14: the kernel is step 14's; only where each cluster starts in the walk
/// (ClusterOrder) changes. When several SMs of one GPU processing cluster (GPC: 16 or 18 SMs on the
/// H100 and the H200) ask L2 for the same sector at about the same time, the L2 request coalescer
/// serves them with one read. So the clusters of one GPC take 8 consecutive pairs of tiles along
/// one pair-row (gpc_position): they read the same A tile in step. No instruction names a GPC, so a
/// one-time setup per device, prepare_cluster_order(), measures where clusters run (a launch of
/// clusters of 8 small blocks, which never span two GPCs, joins SMs into GPCs by union-find), and
/// every later launch passes its clusters' places to the kernel (cluster_order). The launcher
/// itself never measures (it allocates and synchronizes nothing, and may be captured in a graph as
/// the process's first call): without the setup it walks the clusters by index, step 14's walk, the
/// same tiles and the same D, with fewer reads merged.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "tc_gemm_14_overlapped.cuh"

namespace smem::tc_gemm {

//! [cluster order]
/// The clusters of a launch ranked by GPC: rank[c] is cluster c's place when the clusters are
/// sorted by the GPC each one runs on, so the clusters of one GPC have consecutive ranks.
struct ClusterRanks {
  unsigned short rank[ClusterOrder::kMax];
};

/// The place in the tile walk of the cluster of rank k among n: the walk's first n tiles, laid out
/// as grouped_tile lays them (place = group_rows * column + row), taken in runs of 8 along one
/// pair-row. So the clusters of one GPC work on the same pair-row, and read the same A tile at
/// about the same time: the L2 request coalescer merges the identical reads of one GPC into one.
inline int gpc_position(int k, int n, int group_rows) {
  if (k >= n) return k;
  for (int seen = 0, base = 0;; base += 8 * group_rows)
    for (int r = 0; r < group_rows; ++r)
      for (int j = 0; j < 8; ++j)
        if (const int p = base + group_rows * j + r; p < n && seen++ == k) return p;
}
//! [cluster order]

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

/// The one setup of steps 15 and 16, once per device: measures which GPC each cluster of a launch
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
inline ClusterRanks rank_by_gpc(const unsigned short* gpc, int n) {
  int by_gpc[ClusterOrder::kMax];
  for (int i = 0; i < n; ++i) {
    int j = i;
    for (; j > 0 && gpc[by_gpc[j - 1]] > gpc[i]; --j) by_gpc[j] = by_gpc[j - 1];
    by_gpc[j] = i;
  }
  ClusterRanks r = {};
  for (int i = 0; i < n; ++i) r.rank[by_gpc[i]] = static_cast<unsigned short>(i);
  return r;
}

/// Where the clusters of a plan of step 14's kernel in shape S start, what the launchers pass to
/// the kernel: by GPC (gpc_position of each cluster's rank) where prepare_cluster_order measured
/// this device for clusters of S's size (the labels of the measurement's first clusters: a
/// launch's clusters land where the measurement's did while nothing else holds SMs), else by index.
/// It allocates, synchronizes and measures nothing. Either way a permutation of the clusters, so
/// the walk still covers every tile once: D is the same, only fewer reads are merged where clusters
/// land elsewhere.
template <class S>
ClusterOrder cluster_order(const Plan<ClusterKernel>& p) {
  ClusterOrder order = index_order(p);
  const int n = std::min(int(p.grid.x) / S::kClusterM, ClusterOrder::kMax);
  int dev = 0;
  const detail::MeasuredGpcs* m = cudaGetDevice(&dev) == cudaSuccess ? detail::measured_gpcs(dev, S::kClusterM) : nullptr;
  if (m == nullptr || n > m->clusters) return order;
  const ClusterRanks r = rank_by_gpc(m->gpc, n);
  for (int c = 0; c < n; ++c) order.place[c] = static_cast<unsigned short>(gpc_position(r.rank[c], n, S::kGroupRows));
  return order;
}

/// The plan of step 15: step 14's.
inline constexpr auto gpc_order_plan = overlapped_plan;

/// D = alpha * A * B + beta * C: step 14 with its clusters placed by GPC once the device is measured.
inline cudaError_t gpc_order(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                             float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return launch_tma<ClusterShape>(gpc_order_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream,
                                  cluster_order<ClusterShape>);
}

}  // namespace smem::tc_gemm
