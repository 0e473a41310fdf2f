/// \file reduction_common.cuh
/// \brief What every reduction step shares: the operations (sum, max) with their identities,
/// the launcher contract, the launch plan, the multi-pass driver of steps 1 to 6, and the
/// building blocks of several steps (the warp and block reductions, the grid-stride loop of
/// steps 7 to 10 and the grid that fills the GPU).
///
/// Every launcher has the shape of `cub::DeviceReduce`:
/// \code
/// template <class T, class Op>
/// cudaError_t <step>(void* d_temp, std::size_t& temp_bytes, const T* in, long long n,
///                    T* out, Op op, T identity, cudaStream_t stream = nullptr);
/// \endcode
/// - `d_temp == nullptr`: size query. Sets `temp_bytes` to the workspace the call needs for this
///   `n` and returns, touching nothing (the pointers may be null then). Needs no CUDA call.
/// - Otherwise writes `*out = identity op in[0] op ... op in[n-1]` (device memory), on `stream`,
///   using the caller's workspace; no allocation, no synchronization: capturable in a CUDA graph.
/// - `n == 0` writes `identity`. Indices are 64-bit.
/// - Invalid (returns `cudaErrorInvalidValue` before any CUDA call, writes nothing): `n < 0`,
///   `out == nullptr`, `in == nullptr` with `n > 0`, `in` or `out` not aligned to `alignof(T)`,
///   `d_temp` not 16-byte aligned, `temp_bytes` smaller than the size query's answer, and an `n`
///   above the step's limit (then the size query is refused too).
/// - Accepted sizes: steps 7 to 10, any `n` up to LLONG_MAX (a grid of at most kMaxGridBlocks
///   blocks walks the input; the workspace is at most kMaxGridBlocks partials and 16 bytes).
///   Steps 1 to 6 launch one block per tile of `per_block` elements (256 for steps 1 to 3, 512
///   for 4 and 5, 2 kBlock for 6: 512 by default) and a grid holds 2^31 - 1 blocks, so they take
///   `n <= (2^31 - 1) per_block`: 549,755,813,632 and 1,099,511,627,264 elements, more than any
///   GPU holds.
/// - `op` must be associative; the result is bitwise identical from run to run on the same GPU
///   (a fixed reduction order: no atomics on values), but it depends on the step, since each
///   step groups the operands differently.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace smem::reduction {

//! [ops]
/// a + b; identity 0.
struct Sum {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const { return a + b; }
  template <class T>
  static constexpr T identity() { return T(0); }
};

/// The larger of a and b; identity -infinity for floating point, the lowest value otherwise.
/// A NaN operand wins, as in numpy.max and torch.max: a reduction over data with a NaN is NaN
/// whatever the order of the operands (`a < b ? b : a` alone keeps a NaN only when it is `a`).
struct Max {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b != b) return b;  // b is NaN
    }
    return a < b ? b : a;  // a NaN `a` compares false and is kept
  }
  template <class T>
  static constexpr T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
};
//! [ops]

/// What a launcher does with its arguments: answer a size query, launch, or reject them.
enum class Args { query, launch, invalid };

/// Workspace offsets and sizes are rounded up to this (also the required d_temp alignment).
inline constexpr std::size_t kTempAlign = 16;
constexpr std::size_t align_up(std::size_t x) { return (x + kTempAlign - 1) / kTempAlign * kTempAlign; }

//! [contract]
/// Checks a launcher's arguments against `needed`, the workspace bytes this call needs (from the
/// step's own size function, which is plain host arithmetic). Makes no CUDA call.
template <class T>
Args check_args(const void* d_temp, std::size_t temp_bytes, std::size_t needed, const T* in,
                long long n, const T* out) {
  if (n < 0) return Args::invalid;
  if (d_temp == nullptr) return Args::query;
  if (out == nullptr || (in == nullptr && n > 0)) return Args::invalid;
  const auto a = reinterpret_cast<std::uintptr_t>(in), o = reinterpret_cast<std::uintptr_t>(out),
             t = reinterpret_cast<std::uintptr_t>(d_temp);
  if (a % alignof(T) != 0 || o % alignof(T) != 0 || t % kTempAlign != 0) return Args::invalid;
  if (temp_bytes < needed) return Args::invalid;
  return Args::launch;
}
//! [contract]

/// The common head of every launcher: the size query, or the error to return, or "go on"
/// (returns false with `err` unset only when the launcher should launch).
template <class T>
bool handle_args(void* d_temp, std::size_t& temp_bytes, std::size_t needed, const T* in, long long n,
                 const T* out, cudaError_t& err) {
  switch (check_args(d_temp, temp_bytes, needed, in, n, out)) {
    case Args::query: temp_bytes = needed; err = cudaSuccess; return true;
    case Args::invalid: err = cudaErrorInvalidValue; return true;
    case Args::launch: break;
  }
  return false;
}

//! [plan]
/// What a launcher launches (its first kernel, for the steps that launch several): the kernel,
/// its grid and block, and its dynamic shared memory. The benchmark reads the same plan, so what
/// it reports is what ran. A null kernel: the input does not fit the grid (cudaErrorInvalidValue).
template <class Kernel>
struct Plan {
  Kernel kernel;
  dim3 grid, block;
  unsigned smem;
  Plan<const void*> erased() const { return {reinterpret_cast<const void*>(kernel), grid, block, smem}; }
};
//! [plan]

/// The kernel of steps 1 to 7: reduces in[0, count) to one partial per block, out[blockIdx.x].
template <class T, class Op>
using PassKernel = void (*)(const T*, long long, T*, Op, T);

// ---- Steps 1 to 6: one block per tile of the input, then the same kernel on the partials. ----

/// Threads per block of steps 1 to 5 (step 6 takes it as a template parameter).
inline constexpr int kTreeThreads = 256;

/// The plan of one pass over `count` elements: one block of `threads` per `per_block` elements,
/// at least one block (an empty input still yields one partial: the identity). Null above 2^31 - 1
/// blocks, the most a grid holds.
template <class Kernel>
Plan<Kernel> pass_plan(Kernel kernel, long long count, int threads, long long per_block) {
  const long long blocks = count <= per_block ? 1 : (count - 1) / per_block + 1;  // no overflow near LLONG_MAX
  if (blocks > INT_MAX) return {nullptr, dim3(), dim3(), 0};
  return {kernel, dim3(unsigned(blocks)), dim3(unsigned(threads)), 0};
}

/// Workspace of the multi-pass driver: two ping-pong buffers of partials, sized for the first
/// and second passes (every later pass is smaller and reuses them); the last pass writes `out`.
/// `bytes` is never 0, so that a caller who allocates what the query says never passes null.
struct MultiPassLayout {
  std::size_t second;  ///< offset of the second buffer
  std::size_t bytes;   ///< total
};
template <class T, class PlanOf>
MultiPassLayout multi_pass_layout(long long n, PlanOf plan_of) {
  const long long b1 = plan_of(n).grid.x;
  if (b1 <= 1) return {0, kTempAlign};
  const long long b2 = plan_of(b1).grid.x;
  const std::size_t first = align_up(std::size_t(b1) * sizeof(T));
  return {first, first + (b2 > 1 ? align_up(std::size_t(b2) * sizeof(T)) : 0)};
}

/// Runs `plan_of(count)`'s kernel pass after pass until one block is left, which writes `out`.
/// Pass k reads the partials of pass k-1: the reduction needs no atomics and no second kernel.
/// An `n` whose first pass needs more blocks than a grid holds is refused, the size query too
/// (every later pass is smaller).
template <class T, class Op, class PlanOf>
cudaError_t multi_pass(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                       T identity, cudaStream_t stream, PlanOf plan_of) {
  if (n < 0 || plan_of(n).kernel == nullptr) return cudaErrorInvalidValue;
  const MultiPassLayout w = multi_pass_layout<T>(n, plan_of);
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, w.bytes, in, n, out, err)) return err;
  T* buf[2] = {static_cast<T*>(d_temp), reinterpret_cast<T*>(static_cast<char*>(d_temp) + w.second)};
  const T* src = in;
  for (long long count = n, pass = 0;; ++pass) {
    const auto p = plan_of(count);
    T* dst = p.grid.x == 1 ? out : buf[pass % 2];
    p.kernel<<<p.grid, p.block, p.smem, stream>>>(src, count, dst, op, identity);
    if ((err = cudaGetLastError()) != cudaSuccess || p.grid.x == 1) return err;
    src = dst;
    count = p.grid.x;
  }
}

//! [sequential index]
/// Shared-memory index that thread `tid` combines into s[tid] in a round of `stride` (steps 3-6).
__host__ __device__ constexpr unsigned sequential_partner(unsigned stride, unsigned tid) { return tid + stride; }
//! [sequential index]

//! [warp reduce]
/// Reduces v over the 32 lanes of the calling warp (every lane must call it); lane 0 gets the
/// result. After round `offset`, lane l holds the reduction of lanes l .. l + 2 offset - 1.
template <class T, class Op>
__device__ T warp_reduce(T v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}
//! [warp reduce]

//! [block reduce]
/// Block-wide reduction by warp shuffles: each warp reduces its 32 values, lane 0 of each warp
/// stores one word in the kernel's shared TempStorage, and warp 0 reduces those. The result is
/// valid in thread 0. A caller that reduces twice into the same storage must put a
/// __syncthreads() between the two calls.
template <int kThreads>
struct ShuffleBlockReduce {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024 && ((kThreads / 32) & (kThreads / 32 - 1)) == 0,
                "a power-of-two number of warps");
  static constexpr int kWarps = kThreads / 32;
  /// The shared memory of a reduction of T, one word per warp: the kernel declares it
  /// (`__shared__ typename BlockReduce::template TempStorage<T> storage;`) and passes it to reduce().
  template <class T>
  struct TempStorage {
    T warp_results[kWarps];
  };
  template <class T, class Op>
  __device__ static T reduce(T v, Op op, TempStorage<T>& storage) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    v = warp_reduce(v, op);
    if (lane == 0) storage.warp_results[warp] = v;
    __syncthreads();
    if (warp == 0) {
      v = storage.warp_results[lane % kWarps];  // lanes >= kWarps hold copies that lane 0 never uses
#pragma unroll
      for (int offset = kWarps / 2; offset > 0; offset /= 2)
        v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
    return v;
  }
};
//! [block reduce]

// ---- Steps 7 to 10: a grid that fills the GPU, each thread walking the input grid-stride. ----

/// Largest grid of steps 7-10 (the workspace holds one partial per block): above any GPU's
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

/// Minimum resident blocks per SM asked of the compiler (__launch_bounds__): a full SM (2048
/// threads, so at most 32 registers) while the loads in flight fit; half of it for 8 or more
/// vectors per thread, which would otherwise spill.
template <int kThreads, int kUnroll>
inline constexpr int kMinBlocks = (kUnroll <= 4 ? 2048 : 1024) / kThreads;

/// Default configuration of steps 7-10: threads per block, vectors in flight per thread, the
/// load flavour, and (steps 8-10) the grid as a multiple of what the GPU holds at once. Chosen by
/// the benchmark's sweep of the single-pass kernel (SMEM_REDUCTION_TUNE=1), see the page.
//! [stride config]
inline constexpr int kStrideThreads = 1024;
inline constexpr int kStrideUnroll = 2;
inline constexpr Load kStrideLoad = Load::ldg;
inline constexpr int kStrideWaves = 1;
//! [stride config]

/// Blocks a grid-stride launch over n elements of T may use, before the GPU's limit: one
/// vector per thread at most, at least one block, at most kMaxGridBlocks (for any n up to LLONG_MAX).
template <class T, int kThreads>
constexpr long long stride_tiles(long long n) {
  const long long per_block = (long long)kThreads * kVecElems<T>;
  const long long tiles = n <= per_block ? 1 : (n - 1) / per_block + 1;  // no overflow near LLONG_MAX
  return tiles > kMaxGridBlocks ? kMaxGridBlocks : tiles;
}

namespace detail {

/// The most devices whose values the launchers keep.
constexpr int kMaxDevices = 64;

/// The family's one per-device cache: kSlots values of T (one per device, or per device and
/// variant), each made once by the first caller and kept. Fixed size, nothing allocated or thrown,
/// thread-safe: a caller that comes while another makes a value waits for it.
template <class T, int kSlots>
struct PerDevice {
  T value[kSlots];
  std::atomic<int> state[kSlots];  // 0 not made, 1 being made, 2 made
  /// Value s, made by make(value) unless it was made before. make returns false when it failed:
  /// then nothing is kept (a later call makes it again) and the result is null.
  template <class Make>
  const T* made_once(int s, Make make) {
    for (int expected = 0; !state[s].compare_exchange_strong(expected, 1); expected = 0)
      if (expected == 2) return &value[s];
    const bool made = make(value[s]);
    state[s].store(made ? 2 : 0);
    return made ? &value[s] : nullptr;
  }
};

}  // namespace detail

/// SMs x resident blocks per SM of `Kernel` at kThreads threads per block on the current
/// device, kept per device after the first call (PerDevice); 0 when the device cannot be queried
/// (the launch that follows then reports the error).
template <auto Kernel, int kThreads>
int resident_grid() {
  static detail::PerDevice<int, detail::kMaxDevices> resident;
  const auto ask = [](int dev, int& blocks) {
    int sms = 0, per_sm = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, kThreads, 0) != cudaSuccess)
      return false;
    blocks = sms * (per_sm > 0 ? per_sm : 1);
    return true;
  };
  int dev = 0, blocks = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  if (dev < 0 || dev >= detail::kMaxDevices) return ask(dev, blocks) ? blocks : 0;
  const int* kept = resident.made_once(dev, [&](int& b) { return ask(dev, b); });
  return kept != nullptr ? *kept : 0;
}

/// The plan of steps 7 to 10: a grid of at most `kWaves` times what the GPU holds at once
/// (SMs x resident blocks per SM), capped by the input size.
template <class T, int kThreads, int kWaves, auto Kernel>
Plan<decltype(Kernel)> stride_plan(long long n) {
  const long long tiles = stride_tiles<T, kThreads>(n);
  const long long full = (long long)resident_grid<Kernel, kThreads>() * kWaves;
  const long long blocks = tiles < full ? tiles : full > 0 ? full : 1;
  return {Kernel, dim3(unsigned(blocks)), dim3(kThreads), 0};
}

}  // namespace smem::reduction
