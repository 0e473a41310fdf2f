/// \file reduction_07_grid_stride.cuh
/// \brief Step 7, grid-stride loop with 16-byte vector loads and many elements per thread.
///
/// What changes from step 6, and why it is faster:
/// - A fixed grid that just fills the GPU: (number of SMs) x (resident blocks per SM, from the
///   occupancy calculator), fewer for small inputs. Each thread walks the input with a
///   grid-wide stride and keeps its running result in registers: the per-element cost is one
///   load and one `op`, and the tree runs once per block instead of once per 512 elements.
/// - 16-byte loads (`float4`-sized: 4 floats or ints, 2 doubles or long longs), kUnroll of them
///   issued back to back before the first use: 16 x kUnroll bytes in flight per thread, enough
///   to cover the DRAM latency at full occupancy. Elements before the first 16-byte boundary
///   (any T-aligned pointer works) and after the last whole vector are read one by one.
/// - The block's result goes through a warp-shuffle block reduction (one shared word per warp,
///   one barrier) instead of a shared-memory tree.
/// Two launches: the grid writes one partial per block, then one block reduces the partials.
/// Deterministic: the grid, and so the grouping of the operands, depends only on n and the GPU.
/// On an H200 this step reads 2^28 floats within about 1% of `cub::DeviceReduce` (README.md).
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "reduction_05_warp_shuffle.cuh"

namespace smem::reduction {

/// Largest grid of steps 7-9 (the workspace holds one partial per block): above any GPU's
/// SMs x resident blocks, so it never limits in practice, and lets the size query stay host-only.
inline constexpr long long kMaxGridBlocks = 8192;

/// Elements of T in one 16-byte vector.
template <class T>
inline constexpr int kVecElems = 16 / int(sizeof(T));

template <class T>
struct alignas(16) Vec16 {
  T v[kVecElems<T>];
};

/// How the 16-byte loads are issued: through the read-only (non-coherent) path, or as
/// streaming loads (evict-first: the data is used once).
enum class Load { ldg, streaming };

template <Load kLoad, class T>
__device__ Vec16<T> load16(const Vec16<T>* p) {
  uint4 r;
  if constexpr (kLoad == Load::ldg) r = __ldg(reinterpret_cast<const uint4*>(p));
  else r = __ldcs(reinterpret_cast<const uint4*>(p));
  Vec16<T> x;
  memcpy(&x, &r, sizeof(x));
  return x;
}

//! [thread reduce]
/// The calling thread's share of in[0, n): the grid-stride loop over 16-byte vectors, with the
/// unaligned head and the tail elements taken one by one.
template <int kThreads, int kUnroll, Load kLoad, class T, class Op>
__device__ T thread_reduce(const T* __restrict__ in, long long n, Op op, T identity) {
  constexpr int V = kVecElems<T>;
  const auto misalign = reinterpret_cast<std::uintptr_t>(in) % 16;
  long long head = misalign ? (16 - misalign) / sizeof(T) : 0;  // elements before a 16-byte boundary
  if (head > n) head = n;
  const auto* body = reinterpret_cast<const Vec16<T>*>(in + head);
  const long long nv = (n - head) / V, tail = head + nv * V;  // vectors; first tail element
  const long long tid = (long long)blockIdx.x * kThreads + threadIdx.x;
  const long long stride = (long long)gridDim.x * kThreads;

  T acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = identity;
  long long i = tid;
  for (; i + (kUnroll - 1) * stride < nv; i += kUnroll * stride) {
    Vec16<T> x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = load16<kLoad>(body + i + u * stride);  // all in flight
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < V; ++k) acc[u] = op(acc[u], x[u].v[k]);
  }
  for (; i < nv; i += stride) {  // fewer than kUnroll vectors left for this thread
    const Vec16<T> x = load16<kLoad>(body + i);
#pragma unroll
    for (int k = 0; k < V; ++k) acc[0] = op(acc[0], x.v[k]);
  }
  if (tid < head) acc[0] = op(acc[0], in[tid]);
  if (tail + tid < n) acc[0] = op(acc[0], in[tail + tid]);  // fewer than V tail elements
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) acc[0] = op(acc[0], acc[u]);
  return acc[0];
}
//! [thread reduce]

//! [block reduce]
/// Block-wide reduction by warp shuffles: each warp reduces its 32 values, lane 0 of each warp
/// stores one word, and warp 0 reduces those. The result is valid in thread 0. A caller that
/// reduces twice must put a __syncthreads() between the two calls.
template <int kThreads>
struct ShuffleBlockReduce {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024 && ((kThreads / 32) & (kThreads / 32 - 1)) == 0,
                "a power-of-two number of warps");
  template <class T, class Op>
  __device__ static T reduce(T v, Op op) {
    constexpr int kWarps = kThreads / 32;
    __shared__ T warp_results[kWarps];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    v = warp_reduce(v, op);
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    if (warp == 0) {
      v = warp_results[lane % kWarps];  // lanes >= kWarps hold copies that lane 0 never uses
#pragma unroll
      for (int offset = kWarps / 2; offset > 0; offset /= 2)
        v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
    return v;
  }
};
//! [block reduce]

/// Minimum resident blocks per SM asked of the compiler (__launch_bounds__): a full SM (2048
/// threads, so at most 32 registers) while the loads in flight fit; half of it for 8 or more
/// vectors per thread, which would otherwise spill.
template <int kThreads, int kUnroll>
inline constexpr int kMinBlocks = (kUnroll <= 4 ? 2048 : 1024) / kThreads;

/// Default configuration of steps 7-9: threads per block, vectors in flight per thread, the
/// load flavour, and (steps 8-9) the grid as a multiple of what the GPU holds at once. Chosen by
/// the benchmark's sweep of the single-pass kernel (SMEM_REDUCTION_TUNE=1), see README.md.
//! [stride config]
inline constexpr int kStrideThreads = 1024;
inline constexpr int kStrideUnroll = 2;
inline constexpr Load kStrideLoad = Load::ldg;
inline constexpr int kStrideWaves = 1;
//! [stride config]

/// Blocks a grid-stride launch over n elements of T may use, before the GPU's limit: one
/// vector per thread at most, at least one block, at most kMaxGridBlocks.
template <class T, int kThreads>
constexpr long long stride_tiles(long long n) {
  const long long per_block = (long long)kThreads * kVecElems<T>;
  const long long tiles = (n + per_block - 1) / per_block;
  return tiles < 1 ? 1 : tiles > kMaxGridBlocks ? kMaxGridBlocks : tiles;
}

/// SMs x resident blocks per SM of `Kernel` at kThreads threads per block, on the current
/// device; cached per device after the first call (two attribute queries).
template <auto Kernel, int kThreads>
cudaError_t resident_grid(int& blocks) {
  static std::atomic<int> cache[64] = {};
  int dev = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err != cudaSuccess) return err;
  if (dev < 64 && (blocks = cache[dev].load(std::memory_order_relaxed)) > 0) return cudaSuccess;
  int sms = 0, per_sm = 0;
  if ((err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess) return err;
  if ((err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, kThreads, 0)) != cudaSuccess)
    return err;
  blocks = sms * (per_sm > 0 ? per_sm : 1);
  if (dev < 64) cache[dev].store(blocks, std::memory_order_relaxed);
  return cudaSuccess;
}

template <class T, class Op, int kThreads, int kUnroll, Load kLoad>
__global__ void __launch_bounds__(kThreads, kMinBlocks<kThreads, kUnroll>)
    grid_stride_kernel(const T* __restrict__ in, long long n, T* __restrict__ out, Op op, T identity) {
  T v = thread_reduce<kThreads, kUnroll, kLoad>(in, n, op, identity);
  v = ShuffleBlockReduce<kThreads>::reduce(v, op);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

/// Workspace of step 7: one partial per block.
template <class T, int kThreads = kStrideThreads>
constexpr std::size_t grid_stride_bytes(long long n) {
  return align_up(std::size_t(stride_tiles<T, kThreads>(n)) * sizeof(T));
}

/// *out = reduction of in[0, n) with `op`; see reduction_args.cuh for the contract.
template <int kThreads = kStrideThreads, int kUnroll = kStrideUnroll, Load kLoad = kStrideLoad, class T, class Op>
cudaError_t reduce_grid_stride(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                               T identity, cudaStream_t stream = nullptr) {
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, grid_stride_bytes<T, kThreads>(n), in, n, out, err)) return err;
  constexpr auto kernel = grid_stride_kernel<T, Op, kThreads, kUnroll, kLoad>;
  int resident = 0;
  if ((err = resident_grid<kernel, kThreads>(resident)) != cudaSuccess) return err;
  const long long tiles = stride_tiles<T, kThreads>(n);
  const unsigned blocks = unsigned(tiles < resident ? tiles : resident);
  if (blocks == 1) {
    kernel<<<1, kThreads, 0, stream>>>(in, n, out, op, identity);
    return cudaGetLastError();
  }
  T* partials = static_cast<T*>(d_temp);
  kernel<<<blocks, kThreads, 0, stream>>>(in, n, partials, op, identity);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  kernel<<<1, kThreads, 0, stream>>>(partials, blocks, out, op, identity);  // reduce the partials
  return cudaGetLastError();
}

}  // namespace smem::reduction
