/// \file histogram_common.cuh
/// \brief What every histogram step shares: the bin rule (`cub::DeviceHistogram`'s HistogramEven,
/// for `std::uint8_t` and `float` samples), the launcher contract, the launch plan and grid, the
/// shared-memory maps of the per-lane sub-histograms, the merge, the per-lane block of steps 4
/// and 5 and the runs of steps 4 and 6.
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
/// The bin-edge variant (`shared_atomics_range`, step 2, its rule `Range`) follows HistogramRange:
/// `levels[0 .. bins]` in device memory, ascending (not checked, as in CUB), and
/// `bin = upper_bound(levels, x) - 1`, dropped unless `levels[0] <= x < levels[bins]`.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>

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

/// `query(dev)` (an int, 0 when the device cannot answer) on the current device for one `key` of
/// `Kernel` (its shared memory), kept per device for the first kKeys keys asked (PerDevice) and
/// asked again for any other; 0 when the device cannot be queried.
template <auto Kernel, class Query>
int per_device(unsigned key, Query query) {
  constexpr int kKeys = 4;
  struct Keyed {
    unsigned key;
    int value;
  };
  static detail::PerDevice<Keyed, detail::kMaxDevices * kKeys> cache;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  const auto ask = [&] {
    const int value = query(dev);
    if (value > 0) return value;
    cudaGetLastError();
    return 0;
  };
  for (int i = 0; dev >= 0 && dev < detail::kMaxDevices && i < kKeys; ++i) {
    const Keyed* k = cache.made_once(dev * kKeys + i, [&](Keyed& made) {
      made = {key, ask()};
      return made.value > 0;
    });
    if (k == nullptr) return 0;  // the device cannot answer: nothing kept
    if (k->key == key) return k->value;
  }
  return ask();
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

/// The block of steps 4 and 5 on the kernel's shared counters `hist` (copies x privatized bins,
/// step 3's per-lane layout): zeroes the block's per-lane copies, runs `count(add)`, the step's
/// loop over its share of the input, in which add(b, c) adds c to privatized counter b of the
/// lane's copy with one shared atomic, and merges the copies into the output.
template <class Rule, class Count>
__device__ void count_in_lane_copies(Counter* hist, const Rule& rule, int copies, Counter* counts, Count&& count) {
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

}  // namespace smem::histogram
