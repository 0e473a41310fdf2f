/// \file histogram_common.cuh
/// \brief What every histogram step shares: the bin rules (`cub::DeviceHistogram`'s HistogramEven
/// and HistogramRange, for `std::uint8_t` and `float` samples), the launcher contract, the launch
/// plan and grid, the shared-memory maps of the sub-histograms, the merge, the per-lane block of
/// steps 4 and 5, the runs of steps 4 and 6 and the vectorized sample loop of steps 5 and 6.
///
/// Every launcher has the shape of `cub::DeviceHistogram::HistogramEven`, without its workspace:
/// \code
/// template <class T>  // std::uint8_t or float
/// cudaError_t <step>(const T* samples, long long n, unsigned* counts, int bins,
///                    Level<T> lower, Level<T> upper, cudaStream_t stream = nullptr);
/// \endcode
/// - `counts[b]` (device memory, `bins` counters) becomes the number of samples `x` of
///   `samples[0, n)` with `lower <= x < upper` whose bin is `b` (the rule below). Like CUB, the
///   launcher overwrites `counts`: it zeroes them itself, on `stream`, before its kernel
///   (`cudaMemsetAsync`, which a CUDA graph captures). Samples outside `[lower, upper)` and NaN
///   are dropped, as in CUB. The levels are `int` for `std::uint8_t` samples and `float` for
///   `float` samples.
/// - `n == 0`: `counts` zeroed, no kernel. Indices are 64-bit.
/// - No allocation, no synchronization: capturable in a CUDA graph, on any stream.
/// - Invalid (returns `cudaErrorInvalidValue` before any CUDA call, `counts` untouched): `n < 0`,
///   `bins < 1`, `lower >= upper`, a non-finite level or `upper - lower` or `bins / (upper -
///   lower)` not finite in `float`, a null `counts`, a null `samples` with `n > 0`, `samples` or
///   `counts` not aligned to their type, and more bins than the step holds (its header says how
///   many; `fits` in the family header answers without launching).
/// - Accepted sizes: any `n` from 0 to LLONG_MAX (the grids are resident and stride over the
///   input; the grid math is 64-bit and capped at kMaxGrid blocks). `bins` from 1 to INT_MAX for
///   step 1, and for `std::uint8_t` samples in every step and in the bin-edge variant (256
///   counters per copy whatever `bins` is); `float` samples: at most kMaxSharedBins (16384) bins
///   in steps 2 to 5 and the bin-edge variant, kMaxCluster x kMaxSharedBins (131072) in step 6.
/// - Counters are `unsigned int`, CUB's usual `CounterT`: every count is exact modulo 2^32. A bin
///   that receives 2^32 samples or more (possible from n = 2^32) wraps, as in CUB: the per-block,
///   per-run and output counters all add modulo 2^32, so the output is the true count modulo
///   2^32, whichever counter wrapped; below 2^32 samples in a bin no count overflows.
///
/// The float rule is CUB's to the bit (`ScaleTransform` in cub/device/dispatch/dispatch_histogram.cuh):
/// `scale = float(bins) / float(upper - lower)` computed once in `float` on the host, then
/// `bin = int((x - lower) * scale)`, a subtraction and a multiplication each rounded to nearest
/// (no FMA can contract them). A sample just below `upper` can round to `bins`: CUB's kernels then
/// add to a counter past the end of their privatized histogram; here it is counted in the last
/// bin (it is inside `[lower, upper)`). A sample on an interior edge goes wherever the rounded
/// product puts it, as in CUB: usually the bin that starts there. For `std::uint8_t` samples the
/// rule is CUB's exact integer one: `bin = (x - lower) * bins / (upper - lower)` in 64 bits.
///
/// The bin-edge variant (`shared_atomics_range`, step 2) follows HistogramRange: `levels[0 .. bins]`
/// in device memory, ascending (not checked, as in CUB), and `bin = upper_bound(levels, x) - 1`,
/// dropped unless `levels[0] <= x < levels[bins]`.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace smem::histogram {

/// The counter type of every launcher's output.
using Counter = unsigned int;

/// The type of the levels for samples of type T: `int` for `std::uint8_t`, `float` for `float`.
/// Other sample types are not provided (the struct is left undefined for them).
template <class T>
struct LevelOf;
template <>
struct LevelOf<std::uint8_t> {
  using type = int;
};
template <>
struct LevelOf<float> {
  using type = float;
};
template <class T>
using Level = typename LevelOf<T>::type;

//! [even rule]
/// The bins of HistogramEven: `bins` equal bins over `[lower, upper)`.
///
/// A step keeps `privatized_bins()` counters per copy: one per bin for `float`, and for
/// `std::uint8_t` one per byte value (256, whatever `bins` is: the sample itself is the index, and
/// the byte value is mapped to its bin once per counter when the copies are merged, as CUB does).
/// `privatized(x)` is a sample's counter (-1: dropped), `output(i)` the bin of counter i (-1:
/// dropped).
template <class T>
struct Even;

template <>
struct Even<float> {
  float lower, upper, scale;
  int bins;
  bool valid;  ///< the levels can be used (checked on the host)

  static Even make(int bins, float lower, float upper) {
    const float range = upper - lower, scale = float(bins) / range;
    const bool ok = bins >= 1 && std::isfinite(lower) && std::isfinite(upper) && lower < upper &&
                    std::isfinite(range) && std::isfinite(scale);
    return {lower, upper, scale, bins, ok};
  }
  __host__ __device__ int bin(float x) const {
    if (!(x >= lower && x < upper)) return -1;  // out of range, or NaN
#ifdef __CUDA_ARCH__
    const float p = __fmul_rn(__fsub_rn(x, lower), scale);  // rounded like the host's two operations
#else
    const float p = (x - lower) * scale;
#endif
    const int b = p < 2147483648.0f ? int(p) : INT_MAX;
    return b < bins ? b : bins - 1;  // x just below upper can round up to bins
  }
  __host__ __device__ int privatized_bins() const { return bins; }
  __host__ __device__ int privatized(float x) const { return bin(x); }
  __host__ __device__ int output(int i) const { return i; }
};

template <>
struct Even<std::uint8_t> {
  int lower;
  unsigned range;  ///< upper - lower, from 1 to 2^32 - 1
  int bins;
  bool valid;

  static Even make(int bins, int lower, int upper) {
    const bool ok = bins >= 1 && lower < upper;
    return {lower, ok ? unsigned((long long)upper - lower) : 1u, bins, ok};
  }
  __host__ __device__ int bin(std::uint8_t x) const {
    const long long d = (long long)x - lower;
    if (d < 0 || d >= (long long)range) return -1;
    return int((unsigned long long)d * unsigned(bins) / range);
  }
  __host__ __device__ int privatized_bins() const { return 256; }
  __host__ __device__ int privatized(std::uint8_t x) const { return x; }
  __host__ __device__ int output(int i) const { return bin(std::uint8_t(i)); }
};
//! [even rule]

//! [range rule]
/// The bins of HistogramRange: bin b is `[levels[b], levels[b + 1])`, `levels` ascending in
/// device memory. The bin of x is CUB's `UpperBound(levels, bins + 1, x) - 1` (the binary search
/// of cub/device/dispatch/dispatch_histogram.cuh, SearchTransform), dropped when it is -1 or
/// `bins` (NaN compares false everywhere and lands on `bins`). Privatized like Even: byte values
/// for `std::uint8_t` (searched once per counter, in the merge), bins for `float`.
template <class T>
struct Range {
  const Level<T>* levels;
  int bins;
  bool valid;

  static Range make(int bins, const Level<T>* levels) { return {levels, bins, bins >= 1 && levels != nullptr}; }
  __device__ int bin(Level<T> x) const {
    unsigned lo = 0, count = unsigned(bins) + 1;  // CUB's UpperBound; unsigned: bins + 1 may be 2^31
    while (count > 0) {
      const unsigned half = count / 2;
      if (x < __ldg(levels + lo + half)) {
        count = half;
      } else {
        lo += half + 1;
        count -= half + 1;
      }
    }
    return lo >= 1 && lo <= unsigned(bins) ? int(lo - 1) : -1;
  }
  __host__ __device__ int privatized_bins() const { return sizeof(T) == 1 ? 256 : bins; }
  __device__ int privatized(T x) const { return sizeof(T) == 1 ? int(x) : bin(Level<T>(x)); }
  __device__ int output(int i) const { return sizeof(T) == 1 ? bin(Level<T>(i)) : i; }
};
//! [range rule]

//! [contract]
/// Checks a launcher's arguments: `rule_ok`, the levels are valid; `fits`, the step holds this
/// many bins. Makes no CUDA call.
template <class T>
bool valid_args(const T* samples, long long n, const Counter* counts, bool rule_ok, bool fits) {
  if (n < 0 || !rule_ok || !fits) return false;
  if (counts == nullptr || (samples == nullptr && n > 0)) return false;
  const auto s = reinterpret_cast<std::uintptr_t>(samples), c = reinterpret_cast<std::uintptr_t>(counts);
  return s % alignof(T) == 0 && c % alignof(Counter) == 0;
}
//! [contract]

//! [plan]
/// What a launcher launches (its one kernel): the kernel, its grid and block, and its dynamic
/// shared memory. The benchmark reads the same plan, so what it reports is what ran. A null
/// kernel: the step cannot run this problem (the launcher returns cudaErrorInvalidValue).
template <class Kernel>
struct Plan {
  Kernel kernel;
  dim3 grid, block;
  unsigned smem;
  Plan<const void*> erased() const { return {reinterpret_cast<const void*>(kernel), grid, block, smem}; }
};
//! [plan]

/// Above the 48 KB every kernel may take, a kernel must opt in to its dynamic shared memory
/// (per device; cheap to repeat).
template <class Kernel>
cudaError_t opt_in(Kernel kernel, unsigned smem) {
  if (smem <= 48u * 1024u) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
}

/// The tail of every launcher: `counts` zeroed on the stream, then the plan's kernel (none for an
/// empty input), in clusters of `cluster` blocks when `cluster` > 1 (step 6). A null plan is
/// rejected before anything is written.
template <class... P, class... A>
cudaError_t zero_and_launch(const Plan<void (*)(P...)>& p, int cluster, Counter* counts, int bins, long long n,
                            cudaStream_t stream, A... args) {
  if (p.kernel == nullptr) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaMemsetAsync(counts, 0, std::size_t(bins) * sizeof(Counter), stream); e != cudaSuccess)
    return e;
  if (n == 0) return cudaSuccess;
  if (cudaError_t e = opt_in(p.kernel, p.smem); e != cudaSuccess) return e;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = unsigned(cluster);
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = p.grid;
  config.blockDim = p.block;
  config.dynamicSmemBytes = p.smem;
  config.stream = stream;
  config.attrs = &attr;
  config.numAttrs = cluster > 1 ? 1 : 0;
  if (cudaError_t e = cudaLaunchKernelEx(&config, p.kernel, args...); e != cudaSuccess) return e;
  return cudaGetLastError();
}

// ---- The grid: as many blocks as the GPU holds at once, fewer for a small input. ----

/// Threads per block of every step.
inline constexpr int kThreads = 256;

/// `query()` (an int, 0 when the device cannot answer) on the current device, cached per device
/// for one `key` of `Kernel` (the last key asked); 0 when the device cannot be queried.
template <auto Kernel, class Query>
int per_device(unsigned key, Query query) {
  static std::atomic<long long> cache[64] = {};  // per device: key << 32 | value
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  if (dev < 64) {
    const long long c = cache[dev].load(std::memory_order_relaxed);
    if (c > 0 && (unsigned long long)c >> 32 == key) return int(c & 0xffffffff);
  }
  const int value = query(dev);
  if (value <= 0) {
    cudaGetLastError();
    return 0;
  }
  if (dev < 64) cache[dev].store((long long)key << 32 | value, std::memory_order_relaxed);
  return value;
}

/// SMs x resident blocks per SM of `Kernel` with `Threads` threads and `smem` bytes of dynamic
/// shared memory on the current device; 0 when the device cannot be queried (the launch that
/// follows then reports the error).
template <auto Kernel, int Threads = kThreads>
int resident_grid(unsigned smem) {
  return per_device<Kernel>(smem, [smem](int dev) {
    int sms = 0, per_sm = 0;
    if (opt_in(Kernel, smem) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, Threads, smem) != cudaSuccess)
      return 0;
    return sms * (per_sm > 0 ? per_sm : 1);
  });
}

/// The most blocks a plan launches when the device cannot say how many it holds: within the 2^31 - 1
/// of a grid, and a multiple of every cluster size (step 6 rounds its grid up to whole clusters).
inline constexpr long long kMaxGrid = 1LL << 30;

/// Blocks for n samples: at most `resident` (when known, else kMaxGrid), at least 1, and no more
/// than give each block `per_block` samples. Exact for any n up to LLONG_MAX.
constexpr long long grid_blocks(long long n, long long per_block, long long resident) {
  const long long want = n <= per_block ? 1 : (n - 1) / per_block + 1;
  const long long cap = resident > 0 && resident < kMaxGrid ? resident : kMaxGrid;
  return want < cap ? want : cap;
}

/// The samples a block of a privatized step should have before its merge is worth it: 16 per
/// thread, and 4 per shared counter it zeroes and merges.
constexpr long long privatized_per_block(long long words) {
  const long long a = 16LL * kThreads, b = 4 * words;
  return a > b ? a : b;
}

/// The plan of steps 1 to 5: Kernel in blocks of `Threads` on a grid that fills the GPU once,
/// `smem` bytes of counters.
template <auto Kernel, int Threads = kThreads>
Plan<decltype(Kernel)> fill_plan(long long n, unsigned smem, long long per_block) {
  const long long blocks = grid_blocks(n, per_block, resident_grid<Kernel, Threads>(smem));
  return {Kernel, dim3(unsigned(blocks)), dim3(unsigned(Threads)), smem};
}

// ---- Shared-memory sub-histograms (steps 2 to 6). ----

/// Shared memory a block may give its copies of the histogram: 64 KB (opted in above 48 KB), so
/// that three blocks share an SM of 228 KB.
inline constexpr int kSharedBudget = 64 * 1024;
/// Privatized counters one block holds at most (steps 2 to 5): one copy in the budget.
inline constexpr int kMaxSharedBins = kSharedBudget / int(sizeof(Counter));

/// Counters per copy of the histogram for samples of type T: 256 byte values for `std::uint8_t`
/// (whatever `bins` is), one per bin for `float` (the rules' privatized_bins(), before a rule exists).
template <class T>
constexpr int privatized_bins(int bins) {
  return sizeof(T) == 1 ? 256 : bins;
}
/// Whether steps 2 to 5 hold this many bins: one copy of the privatized counters in the budget.
template <class T>
constexpr bool fits_shared(int bins) {
  return bins >= 1 && privatized_bins<T>(bins) <= kMaxSharedBins;
}

/// The most copies, a power of two no larger than `most`, that fit the budget with `pbins`
/// counters each (at least 1).
constexpr int copies_that_fit(int pbins, int most) {
  int c = 1;
  while (2 * c <= most && 2LL * c * pbins * int(sizeof(Counter)) <= kSharedBudget) c *= 2;
  return c;
}

//! [maps]
/// Step 3's per-warp copies: copy c (used by warps c, c + copies, ...) is a whole histogram of
/// `pbins` counters, and the counter of bin b is word `c * pbins + b`.
__host__ __device__ constexpr int warp_copy_offset(int bin, int copy, int pbins) { return copy * pbins + bin; }

/// Steps 3 to 5's per-lane copies: lane l uses copy `l % copies`, and the copies of a bin are
/// side by side: word `b * copies + c`. With 32 copies, lane l's word is always in bank l.
__host__ __device__ constexpr int lane_copy_offset(int bin, int copy, int copies) { return bin * copies + copy; }

/// In the merge of per-lane copies, the thread of bin b adds the copies in the order
/// `lane_merge_copy(b, 0 .. copies - 1)`: rotated so that in each round the 32 lanes of a warp
/// (32 consecutive bins) read 32 different banks. copies is a power of two up to 32.
__host__ __device__ constexpr int lane_merge_copy(int bin, int round, int copies) {
  return (bin / (32 / copies) + round) % copies;
}
//! [maps]

/// Zeroes `words` counters of shared memory, thread i the words i, i + blockDim.x, ...
__device__ inline void zero_shared(Counter* s, int words) {
  for (int i = threadIdx.x; i < words; i += blockDim.x) s[i] = 0;
}

/// Adds a block's privatized counter i, holding `c`, to the output with one global atomic
/// (none for a zero or a counter whose bin is dropped).
template <class Rule>
__device__ void add_to_output(const Rule& rule, int i, Counter c, Counter* counts) {
  const int out = c != 0 ? rule.output(i) : -1;
  if (out >= 0) atomicAdd(counts + out, c);
}

//! [merge]
/// Adds a block's per-lane copies to the output: the thread of privatized bin i sums its copies
/// and adds the total with add_to_output().
template <class Rule>
__device__ void merge_lane_copies(const Counter* s, int pbins, int copies, const Rule& rule, Counter* counts) {
  for (int i = threadIdx.x; i < pbins; i += blockDim.x) {
    Counter c = 0;
    for (int r = 0; r < copies; ++r) c += s[lane_copy_offset(i, lane_merge_copy(i, r, copies), copies)];
    add_to_output(rule, i, c, counts);
  }
}
//! [merge]

//! [run]
/// Run aggregation (steps 4 and 6): a thread remembers the counter of its last samples and how
/// many there were, and adds them with one atomic when a sample with another counter comes
/// (or at the end). Dropped samples (-1) make runs that are never added.
struct Run {
  int bin = -1;
  Counter count = 0;

  template <class Add>
  __device__ void take(int b, Add& add) {
    if (b != bin) {
      if (bin >= 0) add(bin, count);
      bin = b;
      count = 0;
    }
    ++count;
  }
  template <class Add>
  __device__ void flush(Add& add) {
    if (bin >= 0) add(bin, count);
  }
};

/// The block of steps 4 and 5: zeroes the block's per-lane copies, runs `count(add)`, the step's
/// loop over its share of the input, in which add(b, c) adds c to privatized counter b of the
/// lane's copy with one shared atomic, and merges the copies into the output.
template <class Rule, class Count>
__device__ void count_in_lane_copies(const Rule& rule, int copies, Counter* counts, Count&& count) {
  extern __shared__ Counter hist[];  // copies x privatized bins, as step 3's per-lane layout
  const int pbins = rule.privatized_bins();
  zero_shared(hist, copies * pbins);
  __syncthreads();
  const int copy = threadIdx.x % 32 % copies;
  auto add = [&](int b, Counter c) { atomicAdd(&hist[lane_copy_offset(b, copy, copies)], c); };
  count(add);
  __syncthreads();
  merge_lane_copies(hist, pbins, copies, rule, counts);
}
//! [run]

//! [vector loop]
/// 16-byte loads each thread of step 6 has in flight.
inline constexpr int kUnroll = 4;

/// Calls f(x) for every sample of samples[0, n), spread over the grid (steps 5 and 6). The
/// samples before the first 16-byte boundary and after the last whole vector (fewer than 16 bytes
/// each) go one to a thread; the rest is read as 16-byte vectors (`uint4`), Unroll of them per
/// thread in flight: vector `base + u * threads` for u < Unroll, `base` striding over the grid,
/// so that each of the Unroll loads of a warp reads 512 consecutive bytes.
template <int Unroll, class T, class F>
__device__ void for_each_sample_vectorized(const T* __restrict__ samples, long long n, F&& f) {
  constexpr int kVec = 16 / int(sizeof(T));
  const long long misalign = (long long)(reinterpret_cast<std::uintptr_t>(samples) % 16 / sizeof(T));
  const long long head = misalign == 0 ? 0 : (kVec - misalign < n ? kVec - misalign : n);
  const long long vecs = (n - head) / kVec, tail = head + vecs * kVec;
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x, threads = (long long)gridDim.x * blockDim.x;
  if (tid < head) f(samples[tid]);
  if (tid < n - tail) f(samples[tail + tid]);
  const uint4* v = reinterpret_cast<const uint4*>(samples + head);
  for (long long base = tid; base < vecs; base += threads * Unroll) {
    uint4 r[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      if (base + u * threads < vecs) r[u] = __ldcs(v + base + u * threads);  // streamed: read once
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      if (base + u * threads >= vecs) break;
      T x[kVec];
      memcpy(x, &r[u], sizeof(x));
#pragma unroll
      for (int k = 0; k < kVec; ++k) f(x[k]);
    }
  }
}
//! [vector loop]

}  // namespace smem::histogram
