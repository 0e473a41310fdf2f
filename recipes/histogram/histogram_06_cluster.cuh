/// \file histogram_06_cluster.cuh
/// \brief Step 6, bins beyond one block's shared memory: the histogram split over the distributed
/// shared memory of a thread block cluster (Hopper, sm_90).
///
/// What changes from step 5: steps 2 to 5 keep a whole copy of the histogram in each block, so
/// 65536 `float` bins (256 KB of counters, more than an SM's 228 KB) cannot be privatized, and
/// step 1's global atomics, one per sample in the L2, are all that is left. Here the blocks of a
/// cluster (2 to 8 of them, scheduled together on one GPU processing cluster) share one copy of
/// the histogram: block r holds the slice of bins `[r * slice, (r + 1) * slice)`
/// (cluster_rank(), cluster_word()), and a sample's atomic goes to the shared memory of the block
/// that holds its bin, `cluster.map_shared_rank(hist, rank)`, over the SM-to-SM network: farther
/// than the block's own shared memory, much nearer than the L2, and the L2 sees one atomic per bin
/// per cluster. The loads are step 5's (for_each_sample_vectorized(), from its header, which this
/// step extends), the runs step 4's (Run).
///
/// The barriers are the cluster's: every slice is zeroed before any block of the cluster adds to
/// it, and every add has landed before a block merges its slice and before any block exits (a
/// block's shared memory must outlive the other blocks' adds to it). The cluster is the smallest
/// power of two from 2 whose slices fit kSharedBudget: 2 up to 32768 `float` bins, 4 for 65536,
/// 8 (the portable maximum) up to 131072. Fewer bins run too, with a cluster of 2, but steps 2 to
/// 5 are the ones to use there.
#pragma once
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "histogram_05_vectorized.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "histogram_06_cluster.cuh needs thread block clusters: compile for sm_90 or newer (e.g. -arch=sm_90)"
#endif

namespace smem::histogram {

/// 16-byte loads each thread of step 6 has in flight.
inline constexpr int kUnroll = 4;

/// The portable maximum of blocks in a cluster.
inline constexpr int kMaxCluster = 8;

/// Counters per block for `pbins` privatized bins split over `cluster` blocks (no overflow at INT_MAX).
constexpr int cluster_slice(int pbins, int cluster) { return pbins / cluster + (pbins % cluster != 0); }

/// Blocks per cluster for `pbins` privatized bins: the smallest power of two from 2 whose slices
/// fit kSharedBudget (kMaxCluster when none does; cluster_fits() rejects that case).
constexpr int cluster_blocks(int pbins) {
  int c = 2;
  while (c < kMaxCluster && cluster_slice(pbins, c) > kMaxSharedBins) c *= 2;
  return c;
}

//! [cluster maps]
/// The block of the cluster that holds privatized bin `bin`, and the bin's word in its slice.
__host__ __device__ constexpr int cluster_rank(int bin, int slice) { return bin / slice; }
__host__ __device__ constexpr int cluster_word(int bin, int slice) { return bin % slice; }
//! [cluster maps]

//! [cluster]
template <class T>
__global__ void __launch_bounds__(kThreads)
    cluster_kernel(const T* __restrict__ samples, long long n, Counter* __restrict__ counts, Even<T> rule, int slice) {
  namespace cg = cooperative_groups;
  extern __shared__ Counter hist[];  // this block's slice of the cluster's histogram
  const cg::cluster_group cluster = cg::this_cluster();
  zero_shared(hist, slice);
  cluster.sync();  // every slice is zero before any block adds to it
  auto add = [&](int b, Counter c) {
    Counter* owner = cluster.map_shared_rank(hist, cluster_rank(b, slice));
    atomicAdd(owner + cluster_word(b, slice), c);
  };
  Run run;
  for_each_sample_vectorized<kUnroll>(samples, n, [&](T x) { run.take(rule.privatized(x), add); });
  run.flush(add);
  cluster.sync();  // every add of the cluster has landed; no block exits before the others are done
  const int first = int(cluster.block_rank()) * slice, pbins = rule.privatized_bins();
  for (int i = threadIdx.x; i < slice && first + i < pbins; i += kThreads)
    add_to_output(rule, first + i, hist[i], counts);
}
//! [cluster]

/// At most kMaxCluster slices of kMaxSharedBins counters.
template <class T>
constexpr bool cluster_fits(int bins) {
  return bins >= 1 && privatized_bins<T>(bins) <= kMaxCluster * kMaxSharedBins;
}

/// SMs' worth of resident blocks of the cluster kernel in clusters of `cluster` blocks with
/// `smem` bytes each (cudaOccupancyMaxActiveClusters), cached per device; 0 when unknown.
template <class T>
int resident_cluster_blocks(int cluster, unsigned smem) {
  return per_device<cluster_kernel<T>>(smem << 4 | unsigned(cluster), [=](int) {
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = unsigned(cluster);
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(cluster));
    config.blockDim = dim3(unsigned(kThreads));
    config.dynamicSmemBytes = smem;
    config.attrs = &attr;
    config.numAttrs = 1;
    int clusters = 0;
    if (opt_in(cluster_kernel<T>, smem) != cudaSuccess ||
        cudaOccupancyMaxActiveClusters(&clusters, cluster_kernel<T>, &config) != cudaSuccess)
      return 0;
    return clusters * cluster;
  });
}

/// A resident grid of whole clusters (`cluster_blocks(privatized bins)` blocks each).
template <class T>
Plan<void (*)(const T*, long long, Counter*, Even<T>, int)> cluster_plan(long long n, int bins) {
  if (!cluster_fits<T>(bins)) return {nullptr, dim3(), dim3(), 0};
  const int pbins = privatized_bins<T>(bins), cluster = cluster_blocks(pbins);
  const unsigned smem = unsigned(cluster_slice(pbins, cluster) * sizeof(Counter));
  const long long blocks = grid_blocks(n, 64LL * kThreads, resident_cluster_blocks<T>(cluster, smem));
  return {cluster_kernel<T>, dim3(unsigned((blocks + cluster - 1) / cluster * cluster)), dim3(unsigned(kThreads)),
          smem};
}

/// counts = histogram of samples[0, n), the bins spread over a cluster's shared memory; see
/// histogram_common.cuh for the contract. Needs sm_90; `float` samples: at most kMaxCluster x
/// kMaxSharedBins (131072) bins.
template <class T>
cudaError_t cluster(const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                    cudaStream_t stream = nullptr) {
  const Even<T> rule = Even<T>::make(bins, lower, upper);
  if (!valid_args(samples, n, counts, rule.valid, cluster_fits<T>(bins))) return cudaErrorInvalidValue;
  const int pbins = privatized_bins<T>(bins), cluster = cluster_blocks(pbins);
  return zero_and_launch(cluster_plan<T>(n, bins), cluster, counts, bins, n, stream, samples, n, counts, rule,
                         cluster_slice(pbins, cluster));
}

}  // namespace smem::histogram
